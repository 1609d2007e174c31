//! Typed reads of YAML documents with serde_norway, and its errors located as users look for them:
//! the line as editors count it, and a key given twice at its second place.

use super::errors::{line_at, strip_location};
use serde::de::DeserializeOwned;
use std::fmt;

/// A YAML error as serde_norway words it (the field path first: `rules[0].keywords: …`).
#[derive(Debug)]
pub struct Error(serde_norway::Error);

/// `text` (one YAML document) read as `T`. Its nesting is not capped here
/// ([`super::nesting::check_yaml`]): libyaml's scanner takes quadratic time on deep flow nesting.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    serde_norway::from_str(text).map_err(Error)
}

impl Error {
    /// The 1-based line of `text` (lines ending at `\n`, as editors count them) the error is about,
    /// and its message without libyaml's own line and column. libyaml also breaks lines at a lone
    /// CR, NEL and the Unicode line and paragraph separators, so its line can be past the file's
    /// last: the line is computed from the byte offset instead.
    pub fn located(&self, text: &str) -> (Option<u32>, String) {
        let message = self.0.to_string();
        if let Some((head, position)) = message.rsplit_once(" at position ")
            && let Ok(offset) = position.trim().parse::<usize>()
        {
            return (Some(line_at(text, offset)), head.to_string());
        }
        let Some(location) = self.0.location() else {
            return (None, strip_location(&message));
        };
        let message = strip_location(&message);
        // serde_norway's column is 1-based.
        let column = location.column().saturating_sub(1);
        let line = duplicate_key_line(text, &message, location.index(), column)
            .unwrap_or_else(|| line_at(text, location.index()));
        (Some(line), message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Error {}

/// serde_norway places a key given twice (`duplicate field `k``, `duplicate entry with key "k"`)
/// at the start of its mapping; the user looks for the second `k`. For a block mapping starting at
/// byte `at`, column `column`: the line of the second key `k` at that column. `None` for anything
/// else (a flow mapping is on one line anyway).
fn duplicate_key_line(text: &str, message: &str, at: usize, column: usize) -> Option<u32> {
    let key = duplicated_key(message)?;
    let rest = text.get(at..)?;
    let mut seen = 0;
    let mut offset = at;
    for (i, line) in rest.split_inclusive('\n').enumerate() {
        // The mapping's first line starts at its first key; the others are indented to it.
        let candidate = if i == 0 {
            Some(line)
        } else {
            let indent = line.len() - line.trim_start_matches(' ').len();
            let trimmed = &line[indent..];
            let inside = indent > column || trimmed.trim().is_empty() || trimmed.starts_with('#');
            if !inside && indent < column {
                return None;
            }
            (indent == column).then_some(trimmed)
        };
        if let Some(candidate) = candidate
            && names_key(candidate, key)
        {
            seen += 1;
            if seen == 2 {
                return Some(line_at(text, offset));
            }
        }
        offset += line.len();
    }
    None
}

fn duplicated_key(message: &str) -> Option<&str> {
    let (_, rest) = message
        .split_once("duplicate field `")
        .or_else(|| message.split_once("duplicate entry with key \""))?;
    rest.split(['`', '"']).next()
}

/// Whether `line` starts with `key` (plain or quoted) followed by `:`.
fn names_key(line: &str, key: &str) -> bool {
    let unquoted = line
        .strip_prefix('"')
        .or_else(|| line.strip_prefix('\''))
        .unwrap_or(line);
    unquoted.strip_prefix(key).is_some_and(|after| {
        let after = after.trim_start_matches(['"', '\'']);
        after.starts_with(':')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "read only to be refused or accepted")]
    struct Rule {
        id: String,
        #[serde(default)]
        keywords: Vec<String>,
        #[serde(default)]
        weight: Option<f64>,
    }

    #[derive(Debug, Deserialize)]
    #[expect(dead_code, reason = "read only to be refused or accepted")]
    struct Rules {
        rules: Vec<Rule>,
    }

    fn error(text: &str) -> (Option<u32>, String) {
        from_str::<Rules>(text).unwrap_err().located(text)
    }

    #[test]
    fn a_type_error_names_its_field_and_line() {
        let text = "rules:\n  - id: a\n  - id: b\n    keywords: 5\n";
        let (line, message) = error(text);
        assert_eq!(line, Some(4));
        assert!(
            message.starts_with("rules[1].keywords: invalid type: integer `5`"),
            "{message}"
        );
        assert!(!message.contains(" at line "), "{message}");
    }

    #[test]
    fn a_key_given_twice_is_located_at_the_second() {
        let text = "rules:\n  - id: a\n    keywords: [x]\n    weight: 1\n    keywords: [y]\n";
        assert_eq!(error(text).0, Some(5), "{:?}", error(text));
        let nested = "rules:\n  - id: a\n    keywords:\n      - id\n    id: b\n";
        assert_eq!(error(nested).0, Some(5), "{:?}", error(nested));
        let quoted = "rules:\n  - 'id': a\n    \"id\": b\n";
        assert_eq!(error(quoted).0, Some(3), "{:?}", error(quoted));
        let top = "rules: []\nrules: []\n";
        assert_eq!(error(top).0, Some(2), "{:?}", error(top));
    }

    #[test]
    fn a_reader_error_is_located_from_its_byte_position() {
        let text = "rules:\n  - id: a\n    keywords: [x\u{7}y]\n";
        assert_eq!(
            error(text),
            (Some(3), "control characters are not allowed".into())
        );
    }

    #[test]
    fn an_alias_bomb_is_refused() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..10 {
            let previous = if level == 1 {
                "a".to_string()
            } else {
                format!("l{}", level - 1)
            };
            let aliases = vec![format!("*{previous}"); 10].join(", ");
            text += &format!("l{level}: &l{level} [{aliases}]\n");
        }
        let refused = from_str::<serde_json::Value>(&text)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("repetition limit exceeded"), "{refused}");
    }
}
