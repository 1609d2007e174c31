//! Secrets kept out of Graphiti: before a turn or a note enters the spool, what looks like a secret
//! of a kind `capture.redact` names is replaced by a marker such as `[redacted card number]`.
//! Graphiti's own LLM provider reads every episode, and a fact extracted from one is recalled into
//! later prompts.

use crate::config::Redact;
use crate::platform::sensitive::{self, Hit};

/// Text with its secrets replaced, and the kind of each replacement, in order.
#[derive(Debug, PartialEq)]
pub struct Redacted {
    pub text: String,
    pub replaced: Vec<&'static str>,
}

/// `text` with every secret of the `kinds` replaced by its marker. Overlapping finds are one
/// replacement, the earliest (the longest when two start together).
pub fn redact(text: &str, kinds: &[Redact]) -> Redacted {
    let mut found: Vec<(Hit, &'static str)> = Vec::new();
    // Both kinds come from one pass of the token patterns, made only when one is asked for.
    let (mut tokens, mut keys) =
        if kinds.contains(&Redact::ApiKeys) || kinds.contains(&Redact::PrivateKeys) {
            sensitive::tokens_and_private_keys(text)
        } else {
            Default::default()
        };
    for kind in kinds {
        let (hits, name) = match kind {
            Redact::ApiKeys => (std::mem::take(&mut tokens), "API key"),
            Redact::PrivateKeys => (std::mem::take(&mut keys), "private key"),
            Redact::CardNumbers => (sensitive::card_numbers(text), "card number"),
            Redact::Passwords => (sensitive::passwords(text), "password"),
            Redact::EmailAddresses => (kind_of(text, "e-mail address"), "e-mail address"),
            Redact::PhoneNumbers => (kind_of(text, "phone number"), "phone number"),
        };
        found.extend(hits.into_iter().map(|hit| (hit, name)));
    }
    crate::platform::sorting::sort_by_key(&mut found, |(hit, _)| (hit.start, usize::MAX - hit.end));
    let mut out = String::with_capacity(text.len());
    let mut replaced = Vec::new();
    let mut at = 0;
    for (hit, name) in found {
        if hit.start < at {
            continue;
        }
        out.push_str(&text[at..hit.start]);
        out.push_str(&format!("[redacted {name}]"));
        replaced.push(name);
        at = hit.end;
    }
    out.push_str(&text[at..]);
    Redacted {
        text: out,
        replaced,
    }
}

/// The boundary audit's finds of one kind (e-mail addresses and phone numbers, line by line).
fn kind_of(text: &str, kind: &str) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        hits.extend(
            sensitive::scan_line(line)
                .into_iter()
                .filter(|h| h.kind == kind)
                .map(|h| Hit {
                    start: h.start + offset,
                    end: h.end + offset,
                    ..h
                }),
        );
        offset += line.len();
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default(text: &str) -> String {
        redact(text, &Redact::DEFAULT).text
    }

    #[test]
    fn each_default_kind_is_replaced_by_its_marker() {
        assert_eq!(
            default("my key is sk-proj-4fG7hJ2kL9mN3pQ8rS5tV1wX, keep it"),
            "my key is [redacted API key], keep it"
        );
        assert_eq!(
            default("token ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6 works"),
            "token [redacted API key] works"
        );
        assert_eq!(
            default("card 4111 1111 1111 1111 exp 12/29"),
            "card [redacted card number] exp 12/29"
        );
        assert_eq!(
            default("amex 3782-822463-10005."),
            "amex [redacted card number]."
        );
        assert_eq!(default("5555555555554444"), "[redacted card number]");
        assert_eq!(
            default("wifi Password: hunter2! and PIN=0420"),
            "wifi Password: [redacted password] and PIN=[redacted password]"
        );
        assert_eq!(
            default("passwort: \"zwei Wörter\" ok"),
            "passwort: [redacted password] ok"
        );
        let pem = "here:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nthanks";
        assert_eq!(default(pem), "here:\n[redacted private key]\nthanks");
        let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA";
        assert_eq!(default(cut), "[redacted private key]");
    }

    #[test]
    fn near_misses_are_kept() {
        for text in [
            // Luhn-invalid, no issuer, too short, mixed separators, part of a longer number.
            "order 4111 1111 1111 1112 shipped",
            "ticket 1234567890123456",
            "call 4111 1111 1111",
            "4111-1111 1111-1111",
            "id 94111111111111111",
            "timestamp 1795393800000",
            "invoice 2026-11-28 total 1 000 000",
            "+44 20 7946 0958",
            // A password the user talks about, not one they give.
            "I forgot my password again",
            "the password policy: 12 characters",
            "passwords: rotate them monthly",
            "reset your password at the portal",
            // Words that look like token prefixes.
            "ask-the-team and skip-this-step",
            "a sha256 of e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "-----BEGIN PUBLIC KEY-----",
        ] {
            assert_eq!(default(text), text, "{text}");
        }
    }

    #[test]
    fn e_mail_and_phone_only_when_asked_and_nothing_when_off() {
        let text = "reach me at ana@corp-mail.io or +351 912 345 678, pwd: x1";
        assert_eq!(
            default(text),
            "reach me at ana@corp-mail.io or +351 912 345 678, pwd: [redacted password]"
        );
        let all = redact(
            text,
            &[
                Redact::EmailAddresses,
                Redact::PhoneNumbers,
                Redact::Passwords,
            ],
        );
        assert_eq!(
            all.text,
            "reach me at [redacted e-mail address] or [redacted phone number], pwd: [redacted password]"
        );
        assert_eq!(all.replaced, ["e-mail address", "phone number", "password"]);
        assert_eq!(redact(text, &[]).text, text);
    }

    #[test]
    fn a_secret_found_twice_is_replaced_once() {
        // A password that is also an API key: one marker, the earliest and longest find.
        let r = redact("password=sk-ant-4fG7hJ2kL9mN3pQ8rS5tV1wX", &Redact::DEFAULT);
        assert_eq!(r.replaced.len(), 1, "{r:?}");
        assert!(!r.text.contains("4fG7"), "{r:?}");
    }
}
