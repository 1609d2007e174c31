//! What looks private in one line of text: e-mail addresses, phone numbers, tokens and keys. Each
//! pattern is tuned against what a configuration legitimately holds (dates, times, versions, ids,
//! paths, thresholds), so that the public example configuration passes.

use regex::Regex;
use std::sync::OnceLock;

/// One thing found in a line: its kind and its byte range.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub kind: String,
    pub start: usize,
    pub end: usize,
}

fn hit(kind: impl Into<String>, start: usize, end: usize) -> Hit {
    Hit {
        kind: kind.into(),
        start,
        end,
    }
}

/// Every e-mail address, phone number, token or key in `line`.
pub fn scan_line(line: &str) -> Vec<Hit> {
    let mut hits = emails(line);
    hits.extend(tokens(line));
    // A number inside a token or an address is theirs.
    let phones: Vec<Hit> = phones(line)
        .into_iter()
        .filter(|p| !hits.iter().any(|h| h.start < p.end && p.start < h.end))
        .collect();
    hits.extend(phones);
    crate::sorting::sort_by_key(&mut hits, |h| h.start);
    hits
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid built-in pattern"))
}

/// Domains reserved for documentation by RFC 2606 and RFC 6761: addresses there are synthetic.
const RESERVED_DOMAINS: [&str; 3] = ["example.com", "example.net", "example.org"];
const RESERVED_TLDS: [&str; 4] = ["example", "test", "invalid", "localhost"];

pub fn is_reserved_domain(domain: &str) -> bool {
    let domain = domain.to_ascii_lowercase();
    let under = |base: &str| domain == base || domain.ends_with(&format!(".{base}"));
    RESERVED_DOMAINS.iter().any(|base| under(base))
        || RESERVED_TLDS
            .iter()
            .any(|tld| domain.ends_with(&format!(".{tld}")))
}

fn emails(line: &str) -> Vec<Hit> {
    static EMAIL: OnceLock<Regex> = OnceLock::new();
    let email = regex(
        &EMAIL,
        r"[A-Za-z0-9._%+-]+@((?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24})\b",
    );
    email
        .captures_iter(line)
        .filter(|c| !is_reserved_domain(&c[1]))
        .map(|c| {
            let m = c.get(0).expect("the whole match");
            hit("e-mail address", m.start(), m.end())
        })
        .collect()
}

/// Tokens by their issuers' prefixes, JWTs, PEM private keys, then long random-looking strings.
fn tokens(line: &str) -> Vec<Hit> {
    static KNOWN: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    let known = KNOWN.get_or_init(|| {
        [
            (
                "API key (sk-)",
                r"\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}",
            ),
            (
                "GitHub token",
                r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}",
            ),
            ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
            ("AWS access key id", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"),
            ("Google API key", r"\bAIza[A-Za-z0-9_-]{35}"),
            ("GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
            ("npm token", r"\bnpm_[A-Za-z0-9]{36}"),
            ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
            (
                "JWT",
                r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            ),
            (
                "PEM private key",
                r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----",
            ),
        ]
        .into_iter()
        .map(|(kind, pattern)| (kind, Regex::new(pattern).expect("a valid built-in pattern")))
        .collect()
    });
    let mut hits: Vec<Hit> = Vec::new();
    for (kind, pattern) in known {
        for m in pattern.find_iter(line) {
            hits.push(hit(format!("token: {kind}"), m.start(), m.end()));
        }
    }
    static LONG: OnceLock<Regex> = OnceLock::new();
    for m in regex(&LONG, r"[A-Za-z0-9+/=_-]{32,}").find_iter(line) {
        let overlaps = hits.iter().any(|h| h.start < m.end() && m.start() < h.end);
        if !overlaps && looks_random(m.as_str()) {
            hits.push(hit("token: long random string", m.start(), m.end()));
        }
    }
    hits
}

/// Letters and digits mixed, at least 4 bits of entropy per character: random base64 or
/// URL-safe text, not words joined by dashes (no digits) and not hex digests (at most 4 bits).
pub fn looks_random(text: &str) -> bool {
    let has_digit = text.bytes().any(|b| b.is_ascii_digit());
    let has_letter = text.bytes().any(|b| b.is_ascii_alphabetic());
    has_digit && has_letter && entropy_bits_per_char(text) > 4.0
}

fn entropy_bits_per_char(text: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in text.bytes() {
        counts[b as usize] += 1;
    }
    let n = text.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Phone numbers: `+` and 8 to 15 digits in groups (international), or 10 or 11 digits in groups
/// separated by spaces, dashes, dots or a parenthesised area code (national: `(415) 555-0134`,
/// `415-555-0134`, `020 7946 0958`). Not dates (`2026-01-05`), times, versions, thousands (`1 000 000`)
/// nor runs of digits without separators (ids, timestamps).
fn phones(line: &str) -> Vec<Hit> {
    static CANDIDATE: OnceLock<Regex> = OnceLock::new();
    let candidate = regex(
        &CANDIDATE,
        r"(?:\+\d{1,3}|\(\d{2,5}\)|\d{1,6})(?:[ .\-]?\(?\d{1,6}\)?){1,5}",
    );
    let bytes = line.as_bytes();
    candidate
        .find_iter(line)
        .filter(|m| {
            let before = line[..m.start()].chars().next_back();
            let after = line[m.end()..].chars().next();
            let glued = |c: Option<char>| {
                c.is_some_and(|c| {
                    c.is_alphanumeric() || matches!(c, '_' | '/' | ':' | '.' | '-' | '@')
                })
            };
            // Part of a longer token (an id, a version, a time, a path): not a phone number.
            !glued(before) && !glued(after) && bytes.get(m.end()) != Some(&b'%')
        })
        .filter(|m| is_phone_shaped(m.as_str()))
        .map(|m| hit("phone number", m.start(), m.end()))
        .collect()
}

fn is_phone_shaped(text: &str) -> bool {
    let digits = text.bytes().filter(u8::is_ascii_digit).count();
    let groups: Vec<&str> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter(|g| !g.is_empty())
        .collect();
    if groups.len() < 2 || text.ends_with(')') {
        return false;
    }
    if text.starts_with('+') {
        return (8..=15).contains(&digits);
    }
    let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    let date = matches!(lengths.as_slice(), [4, 2, 2, ..] | [2, 2, 4, ..]);
    let thousands = lengths[0] <= 3 && lengths[1..].iter().all(|&l| l == 3);
    let mixed_separators = text.contains('.') && (text.contains('-') || text.contains(' '));
    (10..=11).contains(&digits)
        && !date
        && !thousands
        && !mixed_separators
        && *lengths.last().expect("two groups or more") >= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(line: &str) -> Vec<String> {
        scan_line(line).into_iter().map(|h| h.kind).collect()
    }

    #[test]
    fn private_looking_text_is_found() {
        for (line, kind) in [
            ("owner: alice.wong@corp-mail.io", "e-mail address"),
            ("call +1 415 555 0134 first", "phone number"),
            ("phone: (415) 555-0134", "phone number"),
            ("tel 415-555-0134", "phone number"),
            ("uk: 020 7946 0958", "phone number"),
            ("intl: +44 20 7946 0958", "phone number"),
            (
                "key: sk-proj-abcdefghijklmnopqrstuvwx1234",
                "token: API key (sk-)",
            ),
            (
                "token: ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "token: GitHub token",
            ),
            ("slack: xoxb-1234567890-abcdefghij", "token: Slack token"),
            ("aws: AKIAIOSFODNN7EXAMPLE", "token: AWS access key id"),
            (
                "jwt: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "token: JWT",
            ),
            ("-----BEGIN RSA PRIVATE KEY-----", "token: PEM private key"),
            (
                "secret: Zx8qL2vN9pR4tY7wK1mB5cH3jD6fG0sA",
                "token: long random string",
            ),
        ] {
            assert_eq!(kinds(line), [kind], "{line}");
        }
    }

    #[test]
    fn what_a_configuration_legitimately_holds_is_not_flagged() {
        for line in [
            "contact: someone@example.com, ops@mail.example.org, me@host.test",
            "valid_at: 2024-01-01T00:00:00+00:00",
            "date: 2026-11-23 07:00",
            "version: 1.12.3, 0.6.0, 10.2.3.4",
            "at: 12:30:45",
            "ip: 127.0.0.1:8000 and [::1]:8011",
            "timeout_ms: 1500 and 1700000000000",
            "budget: 1 000 000 tokens",
            "uuid: 123e4567-e89b-12d3-a456-426614174000",
            "sha: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "path: experts/trip-planner-expert/processes/plan-trip.md",
            "keywords: [dinner, restaurant, 20-minute walk, top 3]",
            "threshold: 0.9, weights 0.25 0.5 0.75",
            "placeholder: <your-api-key>, ${GRAPHITI_TOKEN}",
            "range: 100-200 and 2025-01-03",
            "skill_keys: graphiti-openclaw-trip-planner-expert-tools",
        ] {
            assert_eq!(kinds(line), Vec::<String>::new(), "{line}");
        }
    }

    #[test]
    fn reserved_domains_are_the_rfc_2606_ones() {
        assert!(is_reserved_domain("example.com"));
        assert!(is_reserved_domain("Mail.Example.NET"));
        assert!(is_reserved_domain("graphiti.example"));
        assert!(!is_reserved_domain("example.co"));
        assert!(!is_reserved_domain("notexample.com"));
    }
}
