//! Parse errors as users can act on them: the line (also for the reader's byte positions) and the
//! field path serde puts in front of the message.

/// The 1-based line of byte `offset` of `text`, lines ending at `\n` as editors count them. Not
/// libyaml's own line: it also breaks lines at a lone CR, NEL and the Unicode line and paragraph
/// separators, so a file holding one named a line past its end.
pub fn line_at(text: &str, offset: usize) -> u32 {
    let before = &text.as_bytes()[..offset.min(text.len())];
    before.iter().filter(|&&b| b == b'\n').count() as u32 + 1
}

/// YAML errors start with the path of the field (`rules[0].keywords: ...`), as serde_norway's do.
pub fn split_path(message: &str) -> (Option<String>, String) {
    if let Some((path, rest)) = message.split_once(": ") {
        let looks_like_path = !path.is_empty()
            && !path.contains(' ')
            && path
                .chars()
                .all(|c| c.is_alphanumeric() || "_.[]-".contains(c));
        if looks_like_path {
            return (Some(path.to_string()), rest.to_string());
        }
    }
    let field = message
        .split('`')
        .nth(1)
        .filter(|_| message.starts_with("unknown field") || message.starts_with("missing field"))
        .map(str::to_string);
    (field, message.to_string())
}

pub fn strip_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}
