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

/// Shapes users paste, each with what redaction leaves of it.
#[test]
fn the_shapes_users_paste_are_replaced() {
    for (text, expected) in [
        (
            "card 4111 1111 1111 1111 12/29 thanks",
            "card [redacted card number] 12/29 thanks",
        ),
        ("4111111111111111 123", "[redacted card number] 123"),
        (
            "ref 12 4111 1111 1111 1111",
            "ref 12 [redacted card number]",
        ),
        ("4111.1111.1111.1111", "[redacted card number]"),
        (
            r#"{"password": "Zebra-42-Lamp"}"#,
            r#"{"password": [redacted password]}"#,
        ),
        ("DB_PASSWORD=s3cr3t!x", "DB_PASSWORD=[redacted password]"),
        (
            "export PGPASSWORD=hunter22 && psql",
            "export PGPASSWORD=[redacted password] && psql",
        ),
        ("db_password: Tr0ub4dor", "db_password: [redacted password]"),
        (
            "password: \"never closed and more",
            "password: [redacted password]",
        ),
        (
            "password: “Zebra 42”, ok",
            "password: [redacted password], ok",
        ),
        (
            "my password is Zebra-42-Lamp.",
            "my password is [redacted password].",
        ),
        (
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc please",
            "[redacted API key] please",
        ),
        ("rk_test_51HxYz0aBcDeFgHiJk", "[redacted API key]"),
        (
            "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "[redacted API key] [redacted API key]",
        ),
        (
            "hook https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX ok",
            "hook [redacted API key] ok",
        ),
        (
            "postgres://ana:Pa55word@db.internal:5432/app",
            "postgres://ana:[redacted password]@db.internal:5432/app",
        ),
        (
            "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 live",
            "bot [redacted API key] live",
        ),
        (
            "MTAzMTIzNDU2Nzg5MDEyMzQ1Ng.GaBcDe.abcdefghijklmnopqrstuvwxyz012345",
            "[redacted API key]",
        ),
        (
            "SECRET_KEY=Zx8qL2vN9pR4tY7wK1mB",
            "SECRET_KEY=[redacted API key]",
        ),
    ] {
        assert_eq!(default(text), expected, "{text}");
    }
    let pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0bx\n-----END PGP PRIVATE KEY BLOCK-----\nbye";
    assert_eq!(default(pgp), "[redacted private key]\nbye");
}

#[test]
fn evasions_are_seen_through() {
    let key = "sk-proj-4fG7hJ2kL9mN3pQ8rS5tV1wXa2B3c4D5e6F7g8H9";
    for evaded in [
        format!("key {}\u{200B}{} end", &key[..20], &key[20..]),
        format!("key {}\n{} end", &key[..32], &key[32..]),
        format!("key {}\r\n{} end", &key[..16], &key[16..]),
        format!("key {} end", full_width(key)),
        format!("key {}\u{AD}{} end", &key[..10], &key[10..]),
    ] {
        assert_eq!(default(&evaded), "key [redacted API key] end", "{evaded:?}");
    }
    for cut in [12, 28] {
        let split = format!("key {} {} end", &key[..cut], &key[cut..]);
        assert_eq!(default(&split), "key [redacted API key] end", "{split}");
    }
    // A word after a key is a word.
    assert_eq!(default(&format!("{key} works")), "[redacted API key] works");
    assert_eq!(
        default("ｐａｓｓｗｏｒｄ： ｈｕｎｔｅｒ２"),
        "ｐａｓｓｗｏｒｄ： [redacted password]"
    );
}

#[test]
fn what_is_no_secret_stays_whole() {
    for text in [
        "set pin=13 as output",
        "pwd: /home/ana/projects",
        "Passcode: see the e-mail",
        "use sk-learn-compatible-estimators here",
        "the password is required",
        "password_hint: blue",
        "max_tokens: 2048",
        "postgres://db.internal:5432/app",
        "order 2024 4111 1111 1111 1112",
        "PIN: $DOOR_PIN",
    ] {
        assert_eq!(default(text), text, "{text}");
    }
}

#[test]
fn a_value_redacted_in_a_message_is_replaced_in_its_reply() {
    let [user, reply] = redact_exchange(
        &[
            "my wifi password: Zebra-42-Lamp",
            "Saved Zebra-42-Lamp for the router; the key sk-ant-4fG7hJ2kL9mN3pQ8rS5tV1wX too.",
        ],
        &Redact::DEFAULT,
    );
    assert_eq!(user.text, "my wifi password: [redacted password]");
    assert_eq!(
        reply.text,
        "Saved [redacted password] for the router; the key [redacted API key] too."
    );
    let [_, quoted] = redact_exchange(
        &[
            "use sk-ant-api03-Rt5Yu6Io7Pa8Sd9Fg0Hj1Kl2",
            "Stored Rt5Yu6Io7Pa8Sd9Fg0Hj1Kl2.",
        ],
        &Redact::DEFAULT,
    );
    assert_eq!(quoted.text, "Stored [redacted API key].");
}

fn full_width(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '!'..='~' => char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap(),
            other => other,
        })
        .collect()
}

mod property {
    //! Random secrets of each kind in random text, perturbed as evasions are: nothing of the
    //! secret survives redaction, in the text as written or as matched.
    use super::*;
    use proptest::prelude::*;

    const ALNUM: &str = "[A-Za-z0-9]";

    /// A secret as written, and its random part (what must not survive).
    fn secret() -> impl Strategy<Value = (String, String)> {
        let token = |prefix: &'static str, body: String| token_owned(prefix.to_string(), &body);
        prop_oneof![
            token("sk-proj-", format!("{ALNUM}{{40,60}}")),
            token("sk-ant-api03-", "[A-Za-z0-9_-]{60,90}".to_string()),
            token("ghp_", format!("{ALNUM}{{36}}")),
            token("github_pat_", "[A-Za-z0-9_]{60,82}".to_string()),
            token("sk_live_", format!("{ALNUM}{{24,40}}")),
            token("rk_live_", format!("{ALNUM}{{24,40}}")),
            token("glpat-", "[A-Za-z0-9_-]{20}".to_string()),
            token("hf_", format!("{ALNUM}{{34}}")),
            token("AIza", "[A-Za-z0-9_-]{35}".to_string()),
            token(
                "https://hooks.slack.com/services/T0ABC/B0DEF/",
                format!("{ALNUM}{{24}}")
            ),
            "[0-9]{8,10}".prop_flat_map(|id| token_owned(format!("{id}:A"), "[A-Za-z0-9_-]{34}")),
            "[A-Z0-9]{16}"
                .prop_flat_map(|id| token_owned(format!("AKIA{id} "), "[A-Za-z0-9/+]{40}")),
            card(),
            "[A-Za-z0-9!#%&*+=?@^_~-]{8,20}".prop_map(|p| (format!("password: {p}"), p)),
            "[A-Za-z0-9!#%&*+=?@^_~ -]{8,20}".prop_map(|p| (format!("\"password\": \"{p}\""), p)),
            "[A-Za-z0-9]{8,16}".prop_map(|p| (format!("postgres://app:{p}@db:5432/x"), p)),
            "[A-Za-z0-9+/]{64}".prop_map(|b| (
                format!("-----BEGIN RSA PRIVATE KEY-----\n{b}\n{b}\n-----END RSA PRIVATE KEY-----"),
                b
            )),
        ]
        .prop_filter("a random part with letters and digits", |(_, part)| {
            part.bytes().any(|b| b.is_ascii_digit())
                && part.bytes().any(|b| b.is_ascii_alphabetic())
        })
    }

    fn token_owned(prefix: String, body: &str) -> BoxedStrategy<(String, String)> {
        proptest::string::string_regex(body)
            .expect("a valid pattern")
            .prop_map(move |b| (format!("{prefix}{b}"), b))
            .boxed()
    }

    /// A Visa, Mastercard or Amex number with its check digit, grouped by a space, dash or dot,
    /// or not at all.
    fn card() -> impl Strategy<Value = (String, String)> {
        (
            prop_oneof![Just("4"), Just("51"), Just("55"), Just("37")],
            proptest::collection::vec(0u32..10, 14),
            prop_oneof![Just(""), Just(" "), Just("-"), Just(".")],
        )
            .prop_map(|(prefix, random, separator)| {
                let length = if prefix == "37" { 15 } else { 16 };
                let mut digits: Vec<u32> =
                    prefix.chars().map(|c| c.to_digit(10).unwrap()).collect();
                digits.extend(random.iter().take(length - 1 - digits.len()));
                let check = (0..10).find(|&d| {
                    let mut all = digits.clone();
                    all.push(d);
                    cards::luhn_valid(&all)
                });
                digits.push(check.unwrap_or(0));
                let plain: String = digits
                    .iter()
                    .map(|d| char::from_digit(*d, 10).unwrap())
                    .collect();
                let grouped = plain
                    .as_bytes()
                    .chunks(4)
                    .map(|g| std::str::from_utf8(g).unwrap())
                    .collect::<Vec<_>>()
                    .join(separator);
                (grouped, plain)
            })
            .prop_filter("Luhn-valid and not one digit", |(_, plain)| {
                let digits: Vec<u32> = plain.chars().filter_map(|c| c.to_digit(10)).collect();
                cards::luhn_valid(&digits)
            })
    }

    #[derive(Clone, Debug)]
    enum Perturbation {
        None,
        ZeroWidth(usize),
        FullWidth,
        /// A line break after this many characters of the random part, as a wrapped key.
        Wrapped(usize),
        SmartQuotes,
        DigitsAround,
    }

    fn perturbation() -> impl Strategy<Value = Perturbation> {
        prop_oneof![
            Just(Perturbation::None),
            (0usize..64).prop_map(Perturbation::ZeroWidth),
            Just(Perturbation::FullWidth),
            (12usize..40).prop_map(Perturbation::Wrapped),
            Just(Perturbation::SmartQuotes),
            Just(Perturbation::DigitsAround),
        ]
    }

    fn perturbed(secret: &str, part: &str, how: &Perturbation) -> String {
        match how {
            Perturbation::None => secret.to_string(),
            Perturbation::ZeroWidth(at) => {
                let cut = secret
                    .char_indices()
                    .nth(at % secret.chars().count())
                    .map_or(0, |(i, _)| i);
                format!("{}\u{200B}{}", &secret[..cut], &secret[cut..])
            }
            Perturbation::FullWidth => full_width(secret),
            Perturbation::Wrapped(after) => match secret.find(part) {
                // Wrapped keys are long tokens; a password or card is not wrapped.
                Some(start) if part.len() > 24 && !secret.contains(' ') => {
                    let cut = start + after.min(&(part.len() - 1));
                    format!("{}\n{}", &secret[..cut], &secret[cut..])
                }
                _ => secret.to_string(),
            },
            Perturbation::SmartQuotes => secret.replace('"', "\u{201C}"),
            Perturbation::DigitsAround => format!("12 {secret} 345"),
        }
    }

    /// Any run of 8 characters of the random part (all of it when shorter) left in `text`, as
    /// written or as matched.
    fn survivor(text: &str, part: &str) -> Option<String> {
        let matched = Normalized::new(text, Options::SECRETS).text().to_string();
        let chars: Vec<char> = part.chars().collect();
        let width = chars.len().min(8);
        chars
            .windows(width)
            .map(|w| w.iter().collect::<String>())
            .find(|piece| text.contains(piece.as_str()) || matched.contains(piece.as_str()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn no_secret_survives(
            (secret, part) in secret(),
            how in perturbation(),
            before in "[a-z ]{0,30}",
            after in "[a-z ]{0,30}",
            echoed in any::<bool>(),
        ) {
            let written = perturbed(&secret, &part, &how);
            let user = format!("{before} {written} {after}");
            let reply = if echoed { format!("Saved {written}.") } else { "Noted.".to_string() };
            let redacted = redact_exchange(&[&user, &reply], &Redact::DEFAULT);
            for out in &redacted {
                prop_assert!(
                    survivor(&out.text, &part).is_none(),
                    "{:?} survives in {:?} (from {:?})", survivor(&out.text, &part), out.text, user
                );
            }
            prop_assert!(!redacted[0].replaced.is_empty());
        }
    }
}

mod engines {
    //! The component's engines find what the `regex` crate finds, groups included, for every
    //! pattern of redaction's own.
    use super::super::{cards, keys, passwords};
    use crate::platform::sensitive::Pattern;
    use proptest::prelude::*;

    fn patterns() -> Vec<&'static str> {
        let mut all = vec![
            cards::CANDIDATE_PATTERN,
            keys::NAMED_PATTERN,
            keys::SPLIT_PATTERN,
            keys::AWS_SECRET_PATTERN,
            keys::AWS_KEY_ID_PATTERN,
            passwords::GIVEN_PATTERN,
            passwords::SAID_PATTERN,
            passwords::URL_PATTERN,
        ];
        all.extend(keys::SHAPES);
        all
    }

    fn line() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("password".to_string()),
            Just("DB_PASSWORD".to_string()),
            Just("contraseña".to_string()),
            Just("PIN".to_string()),
            Just(": ".to_string()),
            Just("=".to_string()),
            Just(" is ".to_string()),
            Just("\"".to_string()),
            Just("'".to_string()),
            Just("\n".to_string()),
            Just(" ".to_string()),
            Just("-".to_string()),
            Just(".".to_string()),
            Just("postgres://".to_string()),
            Just("@".to_string()),
            Just("sk-proj-".to_string()),
            Just("sk_live_".to_string()),
            Just("AKIA".to_string()),
            Just("https://hooks.slack.com/services/".to_string()),
            Just("SECRET_KEY".to_string()),
            Just("é".to_string()),
            "[A-Za-z0-9/+_]{1,45}",
            "[0-9]{1,6}",
        ];
        prop::collection::vec(piece, 0..20).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn every_pattern_matches_as_the_regex_crate_does(line in line()) {
            for source in patterns() {
                let oracle = regex::Regex::new(source).unwrap();
                let expected: Vec<_> = oracle
                    .captures_iter(&line)
                    .map(|c| {
                        let groups = (1..c.len()).map(|g| c.get(g).map(|m| m.range())).collect::<Vec<_>>();
                        (c.get(0).unwrap().range(), groups)
                    })
                    .collect();
                prop_assert_eq!(Pattern::new(source).all_groups(&line), expected, "{} on {:?}", source, line);
            }
        }
    }
}
