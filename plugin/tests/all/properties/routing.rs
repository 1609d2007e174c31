//! Routing over the example configuration: arbitrary prompts (keywords, near misses, continuation
//! signals, hostile text) and arbitrary recalled data. No panic; the same input gives the same bytes
//! on any engine (P2); no keyword, no pack (P1); a rule is a candidate exactly when its keyword is in
//! the prompt, recall only adds (P4); group chats never get a private pack (P5).

use super::support::{config, example_engine, fragment, json_value, offline_example_engine};
use graphiti_openclaw::Engine;
use graphiti_openclaw::config::Scope;
use graphiti_openclaw::memory::graphiti::http::NoNetwork;
use graphiti_openclaw::platform::api::{Command, IntentTestRequest, OutputFormat};
use graphiti_openclaw::platform::text::is_spaceless_script;
use graphiti_openclaw::routing::decision::Injection;
use proptest::prelude::*;
use serde_json::json;
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::LazyLock;

/// What the example configuration routes on.
struct Vocabulary {
    /// (rule id, keyword), keywords as the router holds them (normalized).
    keywords: Vec<(String, String)>,
    rule_ids: Vec<String>,
    pack_ids: Vec<String>,
    private_rules: HashSet<String>,
    private_packs: HashSet<String>,
}

static VOCABULARY: LazyLock<Vocabulary> = LazyLock::new(|| {
    let mut engine = offline_example_engine();
    let router = engine.router().expect("loaded");
    Vocabulary {
        keywords: router
            .rules
            .iter()
            .flat_map(|r| r.keywords.iter().map(|k| (r.id.clone(), k.clone())))
            .collect(),
        rule_ids: router.rules.iter().map(|r| r.id.clone()).collect(),
        pack_ids: router.registry.packs.iter().map(|p| p.id.clone()).collect(),
        private_rules: router
            .rules
            .iter()
            .filter(|r| r.scope == Scope::Private)
            .map(|r| r.id.clone())
            .collect(),
        private_packs: router
            .registry
            .packs
            .iter()
            .filter(|p| p.scope == Scope::Private)
            .map(|p| p.id.clone())
            .collect(),
    }
});

thread_local! {
    /// Two engines over the same configuration: each has its own hash seeds, so an answer that
    /// depended on a hash map's order would differ between them.
    static ENGINES: RefCell<(Engine, Engine)> =
        RefCell::new((offline_example_engine(), offline_example_engine()));
}

fn keyword() -> impl Strategy<Value = String> {
    let keywords: Vec<String> = VOCABULARY.keywords.iter().map(|(_, k)| k.clone()).collect();
    (prop::sample::select(keywords), 0u8..4).prop_map(|(k, style)| match style {
        0 => k,
        1 => k.to_uppercase(),
        2 => k.replace(' ', "\n "),
        _ => k.replace(' ', "\t"),
    })
}

/// A keyword glued into a longer word: not a keyword on word boundaries.
fn near_miss() -> impl Strategy<Value = String> {
    (
        keyword(),
        prop::sample::select(vec!["", "un", "x", "_", "9"]),
        prop::sample::select(vec!["", "s", "er", "ing", "_x", "9"]),
    )
        .prop_map(|(k, before, after)| format!("{before}{k}{after}"))
}

fn prompt() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => keyword(),
        2 => near_miss(),
        1 => prop::sample::select(vec!["also", "what about", "And also", "continue", "same for"])
            .prop_map(str::to_string),
        5 => fragment(),
    ];
    let separator = prop::sample::select(vec![" ", " ", "", "\n", ", ", "-", "你", "."]);
    prop::collection::vec((piece, separator), 0..12)
        .prop_map(|parts| parts.into_iter().map(|(p, s)| p + s).collect())
}

/// Recalled data as a search returns it, made to hit the example rules' boosts, or anything at all.
fn recall_json() -> impl Strategy<Value = Option<String>> {
    let words = prop::sample::select(vec![
        "restaurant",
        "startup",
        "fund",
        "chef at the bistro",
        "raised a seed",
        "led the round",
        "tweet",
        "newsletter",
        "audience",
        "company",
        "Entity",
        "",
    ]);
    let node = (
        words.clone(),
        words.clone(),
        prop::collection::vec(words.clone(), 0..3),
    )
        .prop_map(
            |(name, summary, labels)| json!({"name": name, "summary": summary, "labels": labels}),
        );
    let fact = (words, any::<bool>()).prop_map(|(fact, past)| {
        if past {
            json!({"fact": fact, "invalid_at": "2025-01-01T00:00:00Z"})
        } else {
            json!({"fact": fact})
        }
    });
    let structured = (
        prop::collection::vec(node, 0..4),
        prop::collection::vec(fact, 0..4),
    )
        .prop_map(|(nodes, facts)| json!({"nodes": nodes, "facts": facts}).to_string());
    prop_oneof![
        2 => Just(None),
        3 => structured.prop_map(Some),
        1 => json_value().prop_map(|v| Some(v.to_string())),
        1 => fragment().prop_map(Some),
    ]
}

fn previous() -> impl Strategy<Value = Option<String>> {
    let known: Vec<String> = VOCABULARY
        .rule_ids
        .iter()
        .chain(&VOCABULARY.pack_ids)
        .cloned()
        .collect();
    prop_oneof![
        2 => Just(None),
        2 => prop::sample::select(known).prop_map(Some),
        1 => fragment().prop_map(Some),
    ]
}

/// The time and what the previous turn left (stickiness' inputs): a moment, an age up to three hours
/// (either side of the default 30-minute window), turns already carried, the previous prompt.
type Times = (Option<u64>, Option<u64>, Option<u32>, Option<String>);

fn times() -> impl Strategy<Value = Times> {
    let moments = (1_700_000_000_000u64..1_800_000_000_000, 0u64..3 * 3_600_000)
        .prop_map(|(now, age)| (Some(now), Some(now - age)));
    let moments = prop_oneof![1 => Just((None, None)), 3 => moments];
    (
        moments,
        prop::option::of(0u32..6),
        prop::option::of(prompt()),
    )
        .prop_map(|((now, at), carried, prompt)| (now, at, carried, prompt))
}

fn request() -> impl Strategy<Value = IntentTestRequest> {
    (prompt(), recall_json(), any::<bool>(), previous(), times()).prop_map(
        |(prompt, recall_json, group_chat, previous_pack, times)| {
            // Descriptions of a previous turn come with a previous pack (else the request is refused).
            let (now_ms, previous_at_ms, carried_turns, previous_prompt) = match previous_pack {
                Some(_) => times,
                None => (times.0, None, None, None),
            };
            IntentTestRequest {
                prompt,
                recall_json,
                group_chat,
                previous_pack,
                now_ms,
                previous_at_ms,
                carried_turns,
                previous_prompt,
            }
        },
    )
}

/// The prompt as matching sees it: lower case, white space folded.
fn normalized(prompt: &str) -> String {
    prompt
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Words: runs of letters, digits and '_' in scripts written with spaces. Every other character
/// separates words, and each character of a spaceless script (CJK...) stands alone.
fn words(text: &str) -> Vec<String> {
    let mut words = vec![];
    let mut word = String::new();
    for c in text.chars() {
        let in_word = (c.is_alphanumeric() || c == '_') && !is_spaceless_script(c);
        if in_word {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if is_spaceless_script(c) {
            words.push(c.to_string());
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether `keyword` may occur in the normalized prompt as a keyword (never false when it does): its
/// words in a row, or, written in a spaceless script, anywhere.
fn may_contain(prompt: &str, keyword: &str) -> bool {
    if keyword.chars().any(is_spaceless_script) {
        return prompt.contains(keyword);
    }
    let (prompt, keyword) = (words(prompt), words(keyword));
    keyword.is_empty()
        || prompt
            .windows(keyword.len())
            .any(|w| w == keyword.as_slice())
}

/// Whether `keyword` certainly occurs as a keyword: with a space or an end on either side.
fn surely_contains(prompt: &str, keyword: &str) -> bool {
    prompt.match_indices(keyword).any(|(at, k)| {
        let before = prompt[..at].chars().next_back();
        let after = prompt[at + k.len()..].chars().next();
        before.is_none_or(|c| c == ' ') && after.is_none_or(|c| c == ' ')
    })
}

fn dry_run(engine: &mut Engine, request: &IntentTestRequest) -> Result<Injection, String> {
    engine.dry_run(request)
}

proptest! {
    #![proptest_config(config(256))]

    /// P2: the same request gives byte-identical results, on the same engine and on another one.
    #[test]
    fn routing_is_deterministic(request in request()) {
        ENGINES.with_borrow_mut(|(a, b)| {
            let first = dry_run(a, &request);
            prop_assert_eq!(&first, &dry_run(a, &request));
            prop_assert_eq!(&first, &dry_run(b, &request));
            if let Err(e) = &first {
                prop_assert!(!e.is_empty());
            }
            let command = Command::IntentTest(request.clone(), OutputFormat::Json);
            let out = a.run_command(&command);
            prop_assert_eq!(&out, &b.run_command(&command));
            let text = Command::IntentTest(request.clone(), OutputFormat::Text);
            prop_assert_eq!(a.run_command(&text), b.run_command(&text));
            Ok(())
        })?;
    }

    /// Stickiness expires: a pack is carried only within the time window (30 min by default) and for
    /// at most `max_carried_turns` (3) turns in a row; and it is carried again when neither limit is
    /// reached, whatever the time, for a short prompt without a keyword.
    #[test]
    fn a_pack_is_carried_only_within_the_window_and_the_turn_limit(request in request()) {
        let Ok(routed) = ENGINES.with_borrow_mut(|(a, _)| dry_run(a, &request)) else {
            return Ok(());
        };
        let now = request.now_ms.unwrap_or(0);
        let age_ms = now - request.previous_at_ms.unwrap_or(now);
        let carried = request.carried_turns.unwrap_or(0);
        if routed.decision.sticky {
            prop_assert!(age_ms <= 30 * 60_000, "carried {} ms after", age_ms);
            prop_assert!(carried < 3, "carried after {} carried turns", carried);
        }
        let short = graphiti_openclaw::platform::text::word_count(&normalized(&request.prompt)) < 20;
        let no_keyword = routed.decision.candidates.is_empty();
        let known = request.previous_pack.as_ref().is_some_and(|p| VOCABULARY.rule_ids.contains(p));
        if short && no_keyword && known && age_ms <= 30 * 60_000 && carried < 3 && !request.group_chat {
            prop_assert!(routed.decision.sticky, "{:?}", routed.decision.trace);
        }
    }

    /// P1 and matching: without a keyword (and no earlier turn to follow up) there is no pack; a
    /// rule is a candidate only for keywords that are in the prompt, and always when one stands
    /// between spaces; recall never adds a candidate, and its boosts only add to a score (P4).
    #[test]
    fn a_rule_is_a_candidate_exactly_when_its_keyword_is_in_the_prompt(
        prompt in prompt(),
        recall_json in recall_json(),
    ) {
        let with_recall = IntentTestRequest { prompt: prompt.clone(), recall_json, ..Default::default() };
        let without = IntentTestRequest { prompt: prompt.clone(), ..Default::default() };
        let (with_recall, without) = ENGINES.with_borrow_mut(|(a, _)| {
            (dry_run(a, &with_recall), dry_run(a, &without).expect("no recall, no error"))
        });
        let text = normalized(&prompt);
        let keywords = &VOCABULARY.keywords;
        if !keywords.iter().any(|(_, k)| may_contain(&text, k)) {
            prop_assert_eq!(&without.prepend_context, &None);
            prop_assert_eq!(&without.decision.intent, &None);
            prop_assert!(without.decision.candidates.is_empty());
        }
        let candidates: HashSet<&str> =
            without.decision.candidates.iter().map(|c| c.intent.as_str()).collect();
        for (rule, keyword) in keywords {
            if surely_contains(&text, keyword) {
                prop_assert!(candidates.contains(rule.as_str()), "{} has {:?}", rule, keyword);
            }
        }
        for candidate in &without.decision.candidates {
            for keyword in &candidate.keywords {
                prop_assert!(may_contain(&text, keyword), "{:?} is not in {:?}", keyword, text);
            }
        }
        if let Ok(with_recall) = with_recall {
            let boosted: Vec<(&str, f64)> = with_recall.decision.candidates.iter()
                .map(|c| (c.intent.as_str(), c.keyword_score)).collect();
            let plain: Vec<(&str, f64)> = without.decision.candidates.iter()
                .map(|c| (c.intent.as_str(), c.keyword_score)).collect();
            prop_assert_eq!(boosted, plain, "recall changed the candidates or their keyword scores");
            for c in &with_recall.decision.candidates {
                let boosts: f64 = c.boosts.iter().map(|b| b.weight).sum();
                prop_assert!(c.boosts.iter().all(|b| b.weight >= 0.0));
                prop_assert!((c.score - c.keyword_score - boosts).abs() < 1e-9, "{:?}", c);
            }
        }
    }

    /// P5: a group chat never gets a private pack, whatever was said or recalled or came before.
    #[test]
    fn group_chats_never_get_a_private_pack(mut request in request()) {
        request.group_chat = true;
        let Ok(injection) = ENGINES.with_borrow_mut(|(a, _)| dry_run(a, &request)) else {
            return Ok(());
        };
        let d = &injection.decision;
        if let Some(block) = &injection.prepend_context {
            prop_assert!(block.contains("scope=\"public\""), "{}", block);
            prop_assert!(!block.contains("scope=\"private\""), "{}", block);
        }
        if let Some(intent) = &d.intent {
            prop_assert!(!VOCABULARY.private_rules.contains(intent), "{}", intent);
        }
        for pack in d.primary_pack.iter().chain(&d.additional_packs) {
            let id = pack.split(' ').next().unwrap_or_default(); // "id (mode)"
            prop_assert!(!VOCABULARY.private_packs.contains(id), "{}", pack);
        }
    }
}

/// An eval cases file: cases built from the generators above, or any JSON.
fn cases_json() -> impl Strategy<Value = String> {
    let expected = prop_oneof![
        Just(serde_json::Value::Null),
        prop::sample::select(vec!["dining", "vc_deal", "content_tweet", "nonsense"])
            .prop_map(|t| json!(t)),
    ];
    let case = (prompt(), expected, recall_json(), any::<bool>(), previous()).prop_map(
        |(prompt, expected, recall, group_chat, previous)| {
            let recall = recall.and_then(|r| serde_json::from_str::<serde_json::Value>(&r).ok());
            json!({"prompt": prompt, "expected_pack_type": expected, "recall": recall,
                   "group_chat": group_chat, "previous_pack": previous})
        },
    );
    prop_oneof![
        3 => prop::collection::vec(case, 0..6).prop_map(|cases| json!({"cases": cases}).to_string()),
        1 => json_value().prop_map(|v| v.to_string()),
    ]
}

proptest! {
    #![proptest_config(config(128))]

    /// `eval` over any cases file: a report or an error saying what is wrong, the same on any engine.
    #[test]
    fn eval_reports_or_says_what_is_wrong(cases in cases_json(), threshold in prop_oneof![0.0..=1.0, -1.0..2.0f64]) {
        let command = Command::Eval(cases.clone(), threshold);
        let cases = cases.as_str();
        let out = ENGINES.with_borrow_mut(|(a, b)| {
            let out = a.run_command(&command);
            assert_eq!(out, b.run_command(&command), "the same on another engine");
            out
        });
        match out.exit_code {
            0 | 1 => {
                // "eval: 3/4 correct, accuracy 75.0% …", over every case of the file.
                let counts = out.stdout.strip_prefix("eval: ").and_then(|r| r.split_once(" correct"));
                let (correct, total) = counts
                    .and_then(|(c, _)| c.split_once('/'))
                    .and_then(|(c, t)| Some((c.parse::<usize>().ok()?, t.parse::<usize>().ok()?)))
                    .unwrap_or_else(|| panic!("no counts: {}", out.stdout));
                let value: serde_json::Value = serde_json::from_str(cases).unwrap();
                let listed = value.get("cases").unwrap_or(&value).as_array().map_or(0, Vec::len);
                prop_assert_eq!(total, listed);
                prop_assert!(correct <= total);
                let passed = correct as f64 / total as f64 + 1e-12 >= threshold;
                prop_assert_eq!(out.exit_code == 0, passed, "{}", out.stdout);
            }
            2 => prop_assert!(!out.stderr.trim().is_empty(), "{:?}", out),
            other => prop_assert!(false, "exit code {}: {:?}", other, out),
        }
    }

    /// A prompt longer than `routing.max_prompt_chars` is cut on a character boundary, said in the
    /// trace, and routes like its first characters.
    #[test]
    fn long_prompts_are_cut_on_a_character(prompt in prompt(), max in 1usize..24) {
        let mut engine = example_engine(None, Box::new(NoNetwork));
        engine.set_host_settings(Some(json!({"routing": {"max_prompt_chars": max}}).to_string()));
        engine.reload().expect("configuration loads");
        let request = IntentTestRequest { prompt: prompt.clone(), ..Default::default() };
        let injection = dry_run(&mut engine, &request).expect("routes");
        let cut = prompt.chars().count() > max;
        let said = injection.decision.trace.iter().any(|t| t.starts_with("prompt cut to its first"));
        prop_assert_eq!(cut, said, "{:?}", injection.decision.trace);
        let head: String = prompt.chars().take(max).collect();
        let short = IntentTestRequest { prompt: head, ..Default::default() };
        let mut expected = dry_run(&mut engine, &short).expect("routes");
        if cut {
            expected.decision.trace.insert(0, injection.decision.trace[0].clone());
        }
        prop_assert_eq!(injection, expected);
    }
}
