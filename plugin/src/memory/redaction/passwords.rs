//! Passwords: the value given to a password's name (`password: …`, `"password": "…"`,
//! `DB_PASSWORD=…`, `export PGPASSWORD=…`, and the word in a few other languages), the value after
//! "password is" when it has a digit, and the password of a URL's credentials
//! (`postgres://user:pw@host`).
//!
//! Kept: a value that is not one. A PIN of fewer than 4 digits (a GPIO `pin=13`), a `pwd` that is a
//! path (the working directory), a word that points elsewhere (`Passcode: see the e-mail`), a
//! variable (`$DB_PASSWORD`) and a marker already in place.

use crate::platform::sensitive::{Pattern, pattern};
use std::ops::Range;
use std::sync::OnceLock;

/// A name of a password with its value: quoted (to the quote, or to the end of the line when the
/// quote is never closed) or up to the next blank. The name may end an identifier (`db_password`,
/// `PGPASSWORD`) and be quoted itself (JSON). Group 1: the name; group 2: the value.
pub(super) const GIVEN_PATTERN: &str = r#"(?i)(?-u:\b)(?:[a-z0-9]+[_-])*(?:pg|my)?(password|passwd|pwd|passphrase|passcode|pin|passwort|kennwort|mot de passe|contraseña|senha|wachtwoord)["']?\s*[:=]\s*("[^"\n]*"?|'[^'\n]*'?|[^\s"']\S*)"#;

/// "password is X": the value only when it holds a digit (checked after), else it is prose
/// ("the password is required"). Group 1: the value.
pub(super) const SAID_PATTERN: &str =
    r"(?i)(?-u:\b)(?:password|passcode|passphrase|passwort)\s+(?:is|was|=|ist|est)\s+([^\s,;]+)";

/// A URL's user (maybe none) and password (`scheme://user:password@host`). Group 1: the
/// password.
pub(super) const URL_PATTERN: &str =
    r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@"'<>]*:([^\s@/"'<>]+)@"#;

/// Words that point elsewhere instead of being the password.
const POINTERS: [&str; 24] = [
    "see", "same", "ask", "check", "below", "above", "attached", "sent", "in", "on", "the", "is",
    "was", "none", "unknown", "changed", "reset", "required", "optional", "hidden", "not", "from",
    "via", "as",
];

pub fn passwords(text: &str) -> Vec<Range<usize>> {
    static GIVEN: OnceLock<Pattern> = OnceLock::new();
    static SAID: OnceLock<Pattern> = OnceLock::new();
    static URL: OnceLock<Pattern> = OnceLock::new();
    let mut found: Vec<Range<usize>> = Vec::new();
    for (_, groups) in pattern(&GIVEN, GIVEN_PATTERN).all_groups(text) {
        let (Some(name), Some(value)) = (&groups[0], &groups[1]) else {
            continue;
        };
        if is_a_password(&text[name.clone()], &text[value.clone()]) {
            found.push(value.clone());
        }
    }
    for (_, value) in pattern(&SAID, SAID_PATTERN).captures_all(text) {
        let Some(value) = value else { continue };
        let word = trimmed(&text[value.clone()]);
        if word.bytes().any(|b| b.is_ascii_digit()) && !word.starts_with("[redacted") {
            found.push(value.start..value.start + word.len());
        }
    }
    found.extend(
        pattern(&URL, URL_PATTERN)
            .captures_all(text)
            .into_iter()
            .filter_map(|(_, password)| password),
    );
    found
}

fn is_a_password(name: &str, value: &str) -> bool {
    let quoted = value.starts_with(['"', '\'']);
    let word = trimmed(value);
    if word.is_empty() || word.starts_with("[redacted") || word.starts_with('$') {
        return false;
    }
    let name = name.to_lowercase();
    if name == "pin" {
        return (4..=12).contains(&word.len()) && word.bytes().all(|b| b.is_ascii_digit());
    }
    if name == "pwd" && (word.starts_with(['/', '~', '.']) || word.get(1..3) == Some(":\\")) {
        return false;
    }
    quoted || !POINTERS.contains(&word.to_lowercase().as_str())
}

/// A value without its quotes and the punctuation a sentence puts after it.
pub(super) fn trimmed(value: &str) -> &str {
    value
        .trim_matches(['"', '\''])
        .trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '}'])
}
