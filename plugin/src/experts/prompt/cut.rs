//! Cutting text to a length: at a line end when one is near.

/// The first `max` characters of `text`, ending at a line break when one is in the second half.
pub(super) fn cut_at_line(text: &str, max: usize) -> &str {
    let end = text
        .char_indices()
        .nth(max)
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    let head = &text[..end];
    match head.rfind('\n') {
        Some(i) if i >= end / 2 => &head[..i],
        _ => head,
    }
}
