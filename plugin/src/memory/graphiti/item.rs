//! What Graphiti deletes by uuid, and which ids can be a uuid at all.

/// What a delete removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    Fact,
    Episode,
}

/// The longest id taken for a Graphiti uuid (a uuid has 36 characters).
pub const MAX_ID_CHARS: usize = 120;

/// Whether `id` can be a Graphiti uuid: safe in a URL path and a JSON string as it is.
pub fn is_uuid_like(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
