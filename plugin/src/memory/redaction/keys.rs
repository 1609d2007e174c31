//! API keys the boundary audit's prefixes do not name, in the shapes users paste most: Stripe keys,
//! an AWS secret access key beside its access key id (or named), Slack and Discord webhook URLs,
//! Telegram and Discord bot tokens, a value with letters and digits given to a key's, token's or
//! secret's name (`SECRET_KEY=…`, `"api_key": "…"`), and a key by its issuer's prefix split by one
//! space.

use crate::platform::sensitive::{Pattern, pattern};
use std::ops::Range;
use std::sync::OnceLock;

pub(super) const SHAPES: [&str; 6] = [
    // Stripe secret and restricted keys, and webhook signing secrets.
    r"(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|(?-u:\b)whsec_[A-Za-z0-9+/]{20,}",
    // Slack's incoming webhooks and workflow triggers: the URL is the credential.
    r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{10,}",
    // Discord's webhooks.
    r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
    // Telegram bot tokens: the bot's id, a colon, 35 characters starting with A.
    r"(?-u:\b)\d{5,16}:A[A-Za-z0-9_-]{34}",
    // Discord bot tokens: base64 of the bot's id, a timestamp and an HMAC.
    r"(?-u:\b)[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
    // An AWS secret access key named as one.
    r#"(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+]{40}(?-u:\b)"#,
];

/// A value with letters and digits, 16 characters or more, given to a name that ends in key,
/// secret, token, auth or credential. Group 1: the value.
pub(super) const NAMED_PATTERN: &str = r#"(?i)(?-u:\b)[a-z0-9_-]*(?:key|secret|token|auth|credentials?)["']?\s*[:=]\s*["']?([A-Za-z0-9+/=_.~-]{16,})"#;

/// A key by its issuer's prefix, split in two by one space: the part after the space has letters
/// and digits (checked after). Group 1: the part after the space.
pub(super) const SPLIT_PATTERN: &str = r"(?-u:\b)(?:sk-(?:proj-|ant-(?:api\d\d-)?|svcacct-|admin-)?|(?:sk|rk)_(?:live|test)_|gh[pousr]_|github_pat_|glpat-|npm_|hf_|xox[abposr]-|AIza)[A-Za-z0-9_-]{4,} ([A-Za-z0-9_-]{6,})";

/// What an AWS secret access key looks like: 40 base64 characters.
pub(super) const AWS_SECRET_PATTERN: &str =
    r"(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)";

pub(super) const AWS_KEY_ID_PATTERN: &str = r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)";

pub fn api_keys(text: &str) -> Vec<Range<usize>> {
    static SHAPED: OnceLock<Vec<Pattern>> = OnceLock::new();
    static NAMED: OnceLock<Pattern> = OnceLock::new();
    let shaped = SHAPED.get_or_init(|| SHAPES.iter().map(|p| Pattern::new(p)).collect());
    let mut found: Vec<Range<usize>> = shaped.iter().flat_map(|p| p.find_all(text)).collect();
    found.extend(
        pattern(&NAMED, NAMED_PATTERN)
            .captures_all(text)
            .into_iter()
            .filter_map(|(_, value)| value)
            .filter(|value| has_letters_and_digits(&text[value.clone()])),
    );
    found.extend(aws_secrets_beside_key_ids(text));
    found.extend(split_keys(text));
    found
}

/// Keys split by one space; the whole key when its parts, joined, are 20 characters or more.
fn split_keys(text: &str) -> Vec<Range<usize>> {
    static SPLIT: OnceLock<Pattern> = OnceLock::new();
    pattern(&SPLIT, SPLIT_PATTERN)
        .captures_all(text)
        .into_iter()
        .filter(|(key, after)| {
            after
                .as_ref()
                .is_some_and(|after| has_letters_and_digits(&text[after.clone()]) && key.len() > 20)
        })
        .map(|(key, _)| key)
        .collect()
}

/// Forty base64 characters with letters and digits, in a text that holds an AWS access key id.
fn aws_secrets_beside_key_ids(text: &str) -> Vec<Range<usize>> {
    static KEY_ID: OnceLock<Pattern> = OnceLock::new();
    static SECRET: OnceLock<Pattern> = OnceLock::new();
    if pattern(&KEY_ID, AWS_KEY_ID_PATTERN)
        .find_all(text)
        .is_empty()
    {
        return Vec::new();
    }
    pattern(&SECRET, AWS_SECRET_PATTERN)
        .captures_all(text)
        .into_iter()
        .filter_map(|(_, secret)| secret)
        .filter(|secret| has_letters_and_digits(&text[secret.clone()]))
        .collect()
}

fn has_letters_and_digits(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_digit()) && text.bytes().any(|b| b.is_ascii_alphabetic())
}
