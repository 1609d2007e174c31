//! Checks of single values shared by the manifest and component frontmatter: one of a set of words,
//! a duration, a payload path, a time zone name. Each reports through [`Report`], which knows the file.

use crate::experts::findings::{Finding, Rule, finding};
use crate::experts::policy::parse_duration;
use crate::experts::yaml::{FieldPath, Lines, Seg};

/// Where findings about one file's fields go, with the lines of those fields.
pub(crate) trait Report {
    fn report(&mut self, rule: Rule, field: FieldPath, message: impl Into<String>);
}

/// Findings about a markdown component's frontmatter (a process's `execution`, say).
pub(crate) struct FrontmatterCtx<'a> {
    pub path: &'a str,
    pub lines: &'a Lines,
    pub findings: &'a mut Vec<Finding>,
}

impl Report for FrontmatterCtx<'_> {
    fn report(&mut self, rule: Rule, field: FieldPath, message: impl Into<String>) {
        let line = self.lines.line(&field).or(Some(1));
        let field = (!field.0.is_empty()).then(|| field.to_string());
        self.findings
            .push(finding(self.path, line, rule, field, message));
    }
}

/// Reports `value` unless it is one of `allowed`; true when it is (or absent).
pub(crate) fn check_enum(
    m: &mut impl Report,
    rule: Rule,
    field: FieldPath,
    value: Option<&str>,
    allowed: &[&str],
) -> bool {
    match value {
        Some(v) if !allowed.contains(&v) => {
            let list = allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ");
            m.report(rule, field, format!("{v:?} is not one of {list}"));
            false
        }
        _ => true,
    }
}

/// The value `value` names among `choices`; reported (and `None`) when it names none.
pub(crate) fn check_choice<T: Copy>(
    m: &mut impl Report,
    rule: Rule,
    field: FieldPath,
    value: Option<&str>,
    choices: &[(&str, T)],
) -> Option<T> {
    let value = value?;
    if let Some((_, choice)) = choices.iter().find(|(word, _)| *word == value) {
        return Some(*choice);
    }
    let words: Vec<&str> = choices.iter().map(|(word, _)| *word).collect();
    check_enum(m, rule, field, Some(value), &words);
    None
}

/// A duration such as `30s`, `5m`, `2h` or `1d` in seconds; reported (and `None`) when it is not one
/// or is zero.
pub(crate) fn check_duration(
    m: &mut impl Report,
    rule: Rule,
    field: FieldPath,
    value: Option<&str>,
) -> Option<u64> {
    let value = value?;
    match parse_duration(value) {
        Ok(0) => {
            m.report(rule, field, format!("{value:?} must be longer than zero"));
            None
        }
        Ok(secs) => Some(secs),
        Err(why) => {
            m.report(rule, field, why);
            None
        }
    }
}

/// Parses a payload path such as `contact_id` or `messages[0].id`: keys of letters, digits, `_` or
/// `-`, joined by `.`, each followed by any number of `[index]`.
pub fn parse_payload_path(text: &str) -> Result<FieldPath, String> {
    let mut path = FieldPath::default();
    for part in text.split('.') {
        push_part(part, &mut path).map_err(|why| {
            format!("{text:?} is not a payload path such as messages[0].id: {why}")
        })?;
    }
    Ok(path)
}

/// One `.`-separated part: a key, then its indexes.
fn push_part(part: &str, path: &mut FieldPath) -> Result<(), &'static str> {
    let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
    let is_key_char = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    if key.is_empty() || !key.chars().all(is_key_char) {
        return Err("each part is a name of letters, digits, `_` or `-`");
    }
    path.0.push(Seg::Key(key.to_string()));
    let bad_index = "an index is a number in brackets, as in [0]";
    while !rest.is_empty() {
        let (digits, after) = rest
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
            .ok_or(bad_index)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad_index);
        }
        path.0
            .push(Seg::Index(digits.parse().map_err(|_| bad_index)?));
        rest = after;
    }
    Ok(())
}

/// Reports `value` unless it is a well-formed payload path.
pub(crate) fn check_payload_path(m: &mut impl Report, rule: Rule, field: FieldPath, value: &str) {
    if let Err(why) = parse_payload_path(value) {
        m.report(rule, field, why);
    }
}

/// Whether `name` looks like an IANA time zone name (`UTC`, `Europe/Berlin`, `Etc/GMT+5`,
/// `America/Argentina/Buenos_Aires`): parts starting with a letter, of letters, digits, `_`, `+`, `-`,
/// joined by `/`. Whether the zone exists is for the host to say.
pub fn looks_like_time_zone(name: &str) -> bool {
    name.len() <= 64
        && name.split('/').all(|part| {
            part.starts_with(|c: char| c.is_ascii_alphabetic())
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_paths() {
        for (text, shown) in [
            ("contact_id", "contact_id"),
            ("messages[0].id", "messages[0].id"),
            ("a.b[0][12].c-d", "a.b[0][12].c-d"),
            ("données.clé", "données.clé"),
        ] {
            assert_eq!(
                parse_payload_path(text).map(|p| p.to_string()),
                Ok(shown.into())
            );
        }
        for bad in [
            "", ".a", "a.", "a..b", "a[", "a[]", "a[x]", "a[-1]", "a]", "[0].a", "a b", "a[0]b",
            "a[+1]",
        ] {
            assert!(parse_payload_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn time_zone_names() {
        for good in [
            "UTC",
            "Europe/Berlin",
            "Etc/GMT+5",
            "Etc/GMT-14",
            "America/Argentina/Buenos_Aires",
            "EST5EDT",
        ] {
            assert!(looks_like_time_zone(good), "{good}");
        }
        for bad in [
            "",
            "/UTC",
            "Europe/",
            "Europe//Berlin",
            "+05:00",
            "Europe/Berlin ",
            "../etc",
            "Ürümqi",
            "5/6",
        ] {
            assert!(!looks_like_time_zone(bad), "{bad:?}");
        }
    }
}
