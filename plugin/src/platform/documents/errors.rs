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

/// A `key value` line that lacks its colon: libyaml gives up on a later line ("could not find
/// expected ':'"), and a nested one reads as text where a mapping was expected. The line itself and
/// what to write, when one can be found.
pub fn missing_colon(text: &str, line: Option<u32>, message: &str) -> Option<(u32, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let keyless = |l: &str| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#') && !t.starts_with('-') && !t.contains(':')
    };
    let said = |t: &str| {
        let shown = crate::platform::text::truncate_chars(t.trim(), 80);
        format!("`{shown}` has no `:` after its key: write `key: value`")
    };
    let found = if message.contains("could not find expected ':'") {
        let reported = usize::try_from(line?).ok()?.min(lines.len());
        (0..reported).rev().find(|&i| keyless(lines[i]))?
    } else {
        let value = message
            .strip_prefix("invalid type: string \"")?
            .split_once("\", expected struct ")?
            .0;
        let from = line
            .and_then(|l| usize::try_from(l).ok())
            .unwrap_or(1)
            .saturating_sub(1);
        (from..lines.len()).find(|&i| keyless(lines[i]) && value.starts_with(lines[i].trim()))?
    };
    Some((u32::try_from(found + 1).ok()?, said(lines[found])))
}
