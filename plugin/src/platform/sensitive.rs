//! What looks private in one line of text: e-mail addresses, phone numbers, tokens and keys (the
//! boundary audit, and the tokens and keys redaction replaces). Each pattern is
//! tuned against what a configuration legitimately holds (dates, times, versions, ids, paths,
//! thresholds), so that the public example configuration passes.

use regex_automata::Input;
use regex_automata::hybrid;
use regex_automata::nfa::thompson::pikevm::{self, PikeVM};
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

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
    crate::platform::sorting::sort_by_key(&mut hits, |h| h.start);
    hits
}

/// A built-in pattern in Rust `regex` syntax, matched as `regex::Regex` matches (leftmost-first,
/// Unicode-aware) by regex-automata's engines, which routing links already: the `regex` crate's meta
/// engine grew the component markedly for the audit alone (docs/decisions/size-budget.md). A lazy DFA rules lines out
/// (most lines match nothing); the PikeVM finds the matches and groups in the others.
pub struct Pattern {
    dfa: hybrid::dfa::DFA,
    vm: PikeVM,
    /// The audit runs on one thread; the lock only makes the built patterns shareable statics.
    caches: Mutex<(hybrid::dfa::Cache, pikevm::Cache)>,
}

/// A match's byte range, and its first group's when asked for and it took part.
pub type Found = (Range<usize>, Option<Range<usize>>);

/// A match's byte range, and each of its groups' that took part.
pub type FoundGroups = (Range<usize>, Vec<Option<Range<usize>>>);

impl Pattern {
    pub fn new(pattern: &str) -> Pattern {
        // As routing's boost matcher: a Unicode `\b` makes the DFA give up on non-ASCII text.
        let dfa = hybrid::dfa::DFA::builder()
            .configure(hybrid::dfa::DFA::config().unicode_word_boundary(true))
            .build(pattern)
            .expect("a valid built-in pattern");
        let vm = PikeVM::new(pattern).expect("a valid built-in pattern");
        let caches = Mutex::new((dfa.create_cache(), vm.create_cache()));
        Pattern { dfa, vm, caches }
    }

    /// Every match, left to right, none overlapping.
    pub fn find_all(&self, text: &str) -> Vec<Range<usize>> {
        self.captures_all(text)
            .into_iter()
            .map(|(m, _)| m)
            .collect()
    }

    /// As [`Pattern::find_all`], each match with its first group.
    pub fn captures_all(&self, text: &str) -> Vec<Found> {
        let mut caches = self
            .caches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (dfa_cache, vm_cache) = &mut *caches;
        let ruled_out = self
            .dfa
            .try_search_fwd(dfa_cache, &Input::new(text).earliest(true))
            .is_ok_and(|found| found.is_none());
        if ruled_out {
            return Vec::new();
        }
        self.vm
            .captures_iter(vm_cache, text)
            .filter_map(|c| Some((c.get_match()?.range(), c.get_group(1).map(|s| s.range()))))
            .collect()
    }
    /// Every match, left to right, with each of its groups (none for a group that took no part).
    pub fn all_groups(&self, text: &str) -> Vec<FoundGroups> {
        let mut caches = self
            .caches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let ruled_out = self
            .dfa
            .try_search_fwd(&mut caches.0, &Input::new(text).earliest(true))
            .is_ok_and(|found| found.is_none());
        if ruled_out {
            return Vec::new();
        }
        let groups = self
            .vm
            .get_nfa()
            .group_info()
            .group_len(regex_automata::PatternID::ZERO);
        self.vm
            .captures_iter(&mut caches.1, text)
            .filter_map(|c| {
                let found = c.get_match()?.range();
                let each = (1..groups)
                    .map(|g| c.get_group(g).map(|s| s.range()))
                    .collect();
                Some((found, each))
            })
            .collect()
    }
}

/// Many patterns in one lazy DFA, to rule a text out in one pass when none of them matches it.
pub struct Screen {
    dfa: hybrid::dfa::DFA,
    cache: Mutex<hybrid::dfa::Cache>,
}

impl Screen {
    pub fn new(patterns: &[&str]) -> Screen {
        let dfa = hybrid::dfa::DFA::builder()
            .configure(hybrid::dfa::DFA::config().unicode_word_boundary(true))
            .build_many(patterns)
            .expect("valid built-in patterns");
        let cache = Mutex::new(dfa.create_cache());
        Screen { dfa, cache }
    }

    /// False when no pattern matches anywhere in `text`; true when one may (the DFA gave up).
    pub fn may_match(&self, text: &str) -> bool {
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        !self
            .dfa
            .try_search_fwd(&mut cache, &Input::new(text).earliest(true))
            .is_ok_and(|found| found.is_none())
    }
}

/// The token patterns, for a [`Screen`] of everything redaction looks for.
pub fn token_patterns() -> impl Iterator<Item = &'static str> {
    TOKEN_PATTERNS.iter().map(|&(_, pattern)| pattern)
}

/// The pattern built once, in `cell`.
pub fn pattern(cell: &'static OnceLock<Pattern>, pattern: &str) -> &'static Pattern {
    cell.get_or_init(|| Pattern::new(pattern))
}

const EMAIL_PATTERN: &str = r"[A-Za-z0-9._%+-]+@((?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24})(?-u:\b)";

/// Tokens by their issuers' prefixes, JWTs and PEM private keys.
const TOKEN_PATTERNS: [(&str, &str); 10] = [
    (
        SK_KIND,
        r"(?-u:\b)sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}",
    ),
    (
        "GitHub token",
        r"(?-u:\b)(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|(?-u:\b)github_pat_[A-Za-z0-9_]{30,}",
    ),
    ("Slack token", r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,}"),
    (
        "AWS access key id",
        r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
    ),
    ("Google API key", r"(?-u:\b)AIza[A-Za-z0-9_-]{35}"),
    ("GitLab token", r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}"),
    ("npm token", r"(?-u:\b)npm_[A-Za-z0-9]{36}"),
    ("Hugging Face token", r"(?-u:\b)hf_[A-Za-z0-9]{30,}"),
    (
        "JWT",
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    (
        PEM_KIND,
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    ),
];

const LONG_TOKEN_PATTERN: &str = r"[A-Za-z0-9+/=_-]{32,}";

const PHONE_CANDIDATE_PATTERN: &str =
    r"(?:\+\d{1,3}|\(\d{2,5}\)|\d{1,6})(?:[ .\-]?\(?\d{1,6}\)?){1,5}";

/// A configuration line's key (`key:`, `- key:`, `"key":`), in the first group.
pub const KEY_PATTERN: &str = r#"^\s*(?:-\s+)?"?([A-Za-z_][A-Za-z0-9_-]*)"?\s*:"#;

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
    static EMAIL: OnceLock<Pattern> = OnceLock::new();
    pattern(&EMAIL, EMAIL_PATTERN)
        .captures_all(line)
        .into_iter()
        .filter(|(_, domain)| !domain.clone().is_some_and(|d| is_reserved_domain(&line[d])))
        .map(|(m, _)| hit("e-mail address", m.start, m.end))
        .collect()
}

const PEM_KIND: &str = "PEM private key";
const SK_KIND: &str = "API key (sk-)";

/// Lower-case words joined by dashes (`learn-compatible-estimators`): a name, not a key's random
/// body.
fn is_words_with_dashes(text: &str) -> bool {
    text.split('-')
        .all(|word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase()))
}

fn known_token_hits(line: &str) -> Vec<Hit> {
    static KNOWN: OnceLock<Vec<(&'static str, Pattern)>> = OnceLock::new();
    let known = KNOWN.get_or_init(|| {
        TOKEN_PATTERNS
            .iter()
            .map(|&(kind, pattern)| (kind, Pattern::new(pattern)))
            .collect()
    });
    let mut hits: Vec<Hit> = Vec::new();
    for (kind, pattern) in known {
        for m in pattern.find_all(line) {
            if *kind == SK_KIND && is_words_with_dashes(&line[m.start + "sk-".len()..m.end]) {
                continue;
            }
            hits.push(hit(*kind, m.start, m.end));
        }
    }
    crate::platform::sorting::sort_by_key(&mut hits, |h| h.start);
    hits
}

/// Tokens by their issuers' prefixes, JWTs, PEM private keys, then long random-looking strings.
fn tokens(line: &str) -> Vec<Hit> {
    let mut hits: Vec<Hit> = known_token_hits(line)
        .into_iter()
        .map(|h| hit(format!("token: {}", h.kind), h.start, h.end))
        .collect();
    static LONG: OnceLock<Pattern> = OnceLock::new();
    for m in pattern(&LONG, LONG_TOKEN_PATTERN).find_all(line) {
        let overlaps = hits.iter().any(|h| h.start < m.end && m.start < h.end);
        if !overlaps && looks_random(&line[m.clone()]) {
            hits.push(hit("token: long random string", m.start, m.end));
        }
    }
    hits
}

/// Tokens by their issuers' prefixes and JWTs (no long-random-string guess, so ordinary text keeps
/// its hashes and ids), and PEM private keys, each from its `-----BEGIN … PRIVATE KEY-----` line
/// through its `-----END … PRIVATE KEY-----` line (to the end of the text when that is missing: a
/// key cut short is still secret). One pass of the token patterns finds both.
pub fn tokens_and_private_keys(text: &str) -> (Vec<Hit>, Vec<Hit>) {
    let (begins, tokens): (Vec<Hit>, Vec<Hit>) = known_token_hits(text)
        .into_iter()
        .partition(|h| h.kind == PEM_KIND);
    let mut keys: Vec<Hit> = Vec::new();
    for begin in begins {
        if keys.last().is_some_and(|h| begin.start < h.end) {
            continue;
        }
        let end = text[begin.end..]
            .find("-----END ")
            .and_then(|at| {
                let from = begin.end + at + "-----END ".len();
                text[from..]
                    .find("-----")
                    .map(|close| from + close + "-----".len())
            })
            .unwrap_or(text.len());
        keys.push(hit("private key", begin.start, end));
    }
    (tokens, keys)
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
    static CANDIDATE: OnceLock<Pattern> = OnceLock::new();
    let candidate = pattern(&CANDIDATE, PHONE_CANDIDATE_PATTERN);
    let bytes = line.as_bytes();
    candidate
        .find_all(line)
        .into_iter()
        .filter(|m| {
            let before = line[..m.start].chars().next_back();
            let after = line[m.end..].chars().next();
            let glued = |c: Option<char>| {
                c.is_some_and(|c| {
                    c.is_alphanumeric() || matches!(c, '_' | '/' | ':' | '.' | '-' | '@')
                })
            };
            // Part of a longer token (an id, a version, a time, a path): not a phone number.
            !glued(before) && !glued(after) && bytes.get(m.end) != Some(&b'%')
        })
        .filter(|m| is_phone_shaped(&line[m.clone()]))
        .map(|m| hit("phone number", m.start, m.end))
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
    use proptest::prelude::*;

    /// Pieces of text the patterns care about, and text around them (non-ASCII too: `\b` is Unicode).
    fn line() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("sk-proj-".to_string()),
            Just("ghp_".to_string()),
            Just("github_pat_".to_string()),
            Just("xoxb-".to_string()),
            Just("AKIA".to_string()),
            Just("AIza".to_string()),
            Just("glpat-".to_string()),
            Just("npm_".to_string()),
            Just("hf_".to_string()),
            Just("eyJ".to_string()),
            Just(".".to_string()),
            Just("-----BEGIN RSA PRIVATE KEY-----".to_string()),
            Just("@".to_string()),
            Just("@mail.example.org".to_string()),
            Just("@corp-mail.io".to_string()),
            Just("+44 ".to_string()),
            Just("(415) ".to_string()),
            Just("555-0134".to_string()),
            Just(" ".to_string()),
            Just("-".to_string()),
            Just("_".to_string()),
            Just("/".to_string()),
            Just("%".to_string()),
            Just("é".to_string()),
            Just("融资".to_string()),
            Just("Ω".to_string()),
            Just("key: ".to_string()),
            Just("Password: ".to_string()),
            Just("pin=".to_string()),
            Just("\"".to_string()),
            Just("4111 1111 ".to_string()),
            Just("- \"name\": ".to_string()),
            "[A-Za-z0-9]{1,40}",
            "[0-9]{1,6}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
    }

    fn all_patterns() -> Vec<&'static str> {
        let mut all = vec![
            EMAIL_PATTERN,
            LONG_TOKEN_PATTERN,
            PHONE_CANDIDATE_PATTERN,
            KEY_PATTERN,
        ];
        all.extend(TOKEN_PATTERNS.iter().map(|&(_, pattern)| pattern));
        all
    }

    proptest! {
        /// The PikeVM finds what the `regex` crate finds, group included, for every built-in pattern.
        #[test]
        fn every_pattern_matches_as_the_regex_crate_does(line in line()) {
            for source in all_patterns() {
                let oracle = regex::Regex::new(source).unwrap();
                let expected: Vec<Found> = oracle
                    .captures_iter(&line)
                    .map(|c| (c.get(0).unwrap().range(), c.get(1).map(|g| g.range())))
                    .collect();
                let pattern = Pattern::new(source);
                prop_assert_eq!(&pattern.captures_all(&line), &expected, "{} on {:?}", source, line);
                let spans: Vec<_> = expected.into_iter().map(|(m, _)| m).collect();
                prop_assert_eq!(pattern.find_all(&line), spans, "{} on {:?}", source, line);
            }
        }
    }

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
