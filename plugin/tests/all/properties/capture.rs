//! Capture stripping: the blocks the plugin prepended are removed, and nothing else. The blocks come
//! from the real formatting (recall's `<graphiti-context>` over arbitrary facts, the fallback note,
//! the example configuration's `<pack-context>` blocks), prepended the way OpenClaw does:
//! `{blocks}\n\n{text}`.

use super::fake_graphiti::SearchOnly;
use super::support::{
    config, example_engine, messages_json, offline_example_engine, temp_dir, text,
};
use graphiti_openclaw::config::{InvalidFacts, RecallSettings};
use graphiti_openclaw::memory::capture::{
    Injected, last_exchange, prompt_digest, strip_injected_from_assistant,
    strip_injected_from_user, strip_leading_blocks,
};
use graphiti_openclaw::memory::recall::{Recall, RecalledFact, RecalledNode, fallback_block};
use graphiti_openclaw::platform::api::{
    AgentEndEvent, HookContext, IntentTestRequest, PromptEvent,
};
use graphiti_openclaw::routing::decision::CaptureOutcome;
use proptest::prelude::*;
use regex::Regex;
use serde_json::json;
use std::sync::LazyLock;

/// The example configuration's pack blocks, for prompts of every rule, sticky and group chats.
static PACK_BLOCKS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut engine = offline_example_engine();
    let requests = [
        ("I had dinner with the Series A founder", None, false),
        ("book a restaurant for dinner on Friday", None, false),
        ("draft a tweet thread about onboarding", None, false),
        ("write an investment memo for the IC", None, false),
        ("due diligence: churn and cohort retention", None, false),
        ("an article for the newsletter", None, true),
        ("and what about Friday?", Some("dining"), false),
        ("same for the other one", Some("content_tweet"), true),
    ];
    let mut blocks: Vec<String> = requests
        .iter()
        .filter_map(|(prompt, previous, group_chat)| {
            let request = IntentTestRequest {
                prompt: prompt.to_string(),
                previous_pack: previous.map(str::to_string),
                group_chat: *group_chat,
                ..IntentTestRequest::default()
            };
            engine.dry_run(&request).ok()?.prepend_context
        })
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    assert!(blocks.len() >= 6, "the example prompts route: {blocks:?}");
    blocks
});

/// A well-formed plugin block at the start (after white space), written independently of the code:
/// `<name>` or `<name attributes>` without `<` or `>` inside, a body without `<`, `</name>`.
pub static LEADING_BLOCKS: LazyLock<Regex> = LazyLock::new(|| {
    let one = ["graphiti-context", "graphiti-fallback", "pack-context"]
        .map(|name| format!(r"<{name}(?:\s[^<>]*)?>[^<]*</{name}>"))
        .join("|");
    Regex::new(&format!(r"^(?:\s*(?:{one}))+\s*")).unwrap()
});

/// What capture without a record keeps of `text`: everything after its leading well-formed blocks.
fn expected_without_record(text: &str) -> &str {
    match LEADING_BLOCKS.find(text) {
        Some(m) => &text[m.end()..],
        None => text,
    }
}

fn recall_settings() -> impl Strategy<Value = RecallSettings> {
    (0usize..6000, 0usize..12, 0usize..6, any::<bool>()).prop_map(
        |(max_chars, max_facts, max_nodes, drop_past)| RecallSettings {
            max_chars,
            max_facts,
            max_nodes,
            invalid_facts: if drop_past {
                InvalidFacts::Drop
            } else {
                InvalidFacts::Past
            },
            ..RecallSettings::default()
        },
    )
}

fn date() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        text(3).prop_map(Some),
        Just(Some("2025-05-01T00:00:00Z".into()))
    ]
}

fn recalled() -> impl Strategy<Value = Recall> {
    let fact = (text(6), date(), date()).prop_map(|(fact, valid_at, invalid_at)| RecalledFact {
        fact,
        valid_at,
        invalid_at,
        ..RecalledFact::default()
    });
    let node = (text(3), text(6), prop::collection::vec(text(2), 0..3)).prop_map(
        |(name, summary, labels)| RecalledNode {
            name,
            summary,
            labels,
        },
    );
    (
        prop::collection::vec(node, 0..4),
        prop::collection::vec(fact, 0..6),
    )
        .prop_map(|(nodes, facts)| Recall {
            nodes,
            facts,
            cached_age_ms: None,
        })
}

/// The memory block of a turn as recall formats it: recalled data, the fallback note, or none.
fn memory_block() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        1 => Just(None),
        3 => (recalled(), text(3), recall_settings())
            .prop_map(|(recall, group, settings)| recall.context_block(&group, &settings)),
        1 => (text(4), recall_settings(), any::<bool>()).prop_map(|(reason, mut settings, no_tools)| {
            // With memory-core's tools or, as in OpenClaw without memory-core, none.
            if no_tools {
                settings.fallback_tools.clear();
            }
            Some(fallback_block(&reason, &settings))
        }),
    ]
}

fn pack_block() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        prop::sample::select(PACK_BLOCKS.clone()).prop_map(Some)
    ]
}

/// The blocks before-agent-start prepends, in order (empty: nothing).
fn blocks() -> impl Strategy<Value = Vec<String>> {
    (memory_block(), pack_block())
        .prop_map(|(memory, pack)| memory.into_iter().chain(pack).collect())
}

/// What before-agent-start prepends: the blocks joined as the engine joins them; None: nothing.
fn injection() -> impl Strategy<Value = Option<String>> {
    blocks().prop_map(|blocks| (!blocks.is_empty()).then(|| blocks.join("\n\n")))
}

/// Text that may itself start with block-like tags, well-formed or not.
fn user_text() -> impl Strategy<Value = String> {
    let tag = prop::sample::select(vec![
        "graphiti-context",
        "graphiti-fallback",
        "pack-context",
    ]);
    let block = (tag, prop::option::of(text(2)), text(3)).prop_map(|(name, attributes, body)| {
        let attributes = attributes.map_or(String::new(), |a| format!(" {a}"));
        format!("<{name}{attributes}>{body}</{name}>")
    });
    (prop::collection::vec((block, text(1)), 0..3), text(10)).prop_map(|(leading, rest)| {
        let mut out: String = leading.into_iter().map(|(b, sep)| b + &sep).collect();
        out.push_str(&rest);
        out
    })
}

proptest! {
    #![proptest_config(config(256))]

    /// (a) With the turn's record, exactly the user's text (trimmed) is captured; without a
    /// record, too, unless the user's own text starts with a well-formed block of ours.
    #[test]
    fn prepended_blocks_go_and_the_users_text_stays(
        injected in injection(),
        user in user_text(),
        quotes_them in any::<bool>(),
    ) {
        let Some(blocks) = injected else { return Ok(()); };
        // A user may paste the blocks (from a log, say): that copy is theirs.
        let user = if quotes_them { format!("{user}{blocks}") } else { user };
        let message = format!("{blocks}\n\n{user}");
        let with_record = strip_injected_from_user(&message, std::slice::from_ref(&blocks));
        prop_assert_eq!(&with_record, user.trim());
        prop_assert_eq!(
            strip_injected_from_user(&message, std::slice::from_ref(&blocks)),
            with_record,
            "same inputs, same bytes"
        );
        // The real blocks are well-formed, so a missing record costs nothing either...
        prop_assert!(LEADING_BLOCKS.is_match(&blocks), "not well-formed: {:?}", blocks);
        let without_record = strip_injected_from_user(&message, &[]);
        if !LEADING_BLOCKS.is_match(&user) {
            prop_assert_eq!(without_record, user.trim_start());
        } else {
            // ...except that a user's text starting with a well-formed block goes with ours.
            prop_assert_eq!(&without_record, expected_without_record(&message));
        }
    }

    /// (b) Without a record, text that does not start with a well-formed block is returned as is;
    /// text that does loses exactly its leading well-formed blocks, nothing after them. A stale
    /// record (a block not in the text) changes nothing.
    #[test]
    fn without_a_record_only_leading_well_formed_blocks_go(
        user in user_text(),
        stale in injection(),
    ) {
        let stripped = strip_leading_blocks(&user);
        prop_assert_eq!(&stripped, expected_without_record(&user));
        if !LEADING_BLOCKS.is_match(&user) {
            prop_assert_eq!(&stripped, &user, "unchanged");
        }
        prop_assert_eq!(strip_injected_from_user(&user, &[]), stripped.clone());
        if let Some(stale) = stale.filter(|s| !user.contains(s.as_str())) {
            prop_assert_eq!(strip_injected_from_user(&user, &[stale]), stripped);
        }
    }

    /// (c) The assistant's text is never changed unless it contains a recorded block verbatim; then
    /// exactly those copies go.
    #[test]
    fn the_assistants_text_changes_only_where_it_echoes_a_block(
        injected in injection(),
        before in text(8),
        echo in any::<bool>(),
        after in text(8),
    ) {
        let Some(blocks) = injected else { return Ok(()); };
        let answer = if echo { format!("{before}{blocks}{after}") } else { format!("{before}{after}") };
        let stripped = strip_injected_from_assistant(&answer, std::slice::from_ref(&blocks));
        if answer.contains(blocks.as_str()) {
            let without = answer.replace(blocks.as_str(), "");
            prop_assert_eq!(&stripped, without.trim());
        } else {
            prop_assert_eq!(&stripped, &answer);
        }
        prop_assert_eq!(strip_injected_from_assistant(&answer, &[blocks]), stripped);
    }

    /// (c') A model that echoes one of the turn's blocks (the recalled facts, say, and not the pack)
    /// echoes the plugin's text all the same: that block goes too, and only it.
    #[test]
    fn an_echo_of_any_one_injected_block_goes(
        blocks in blocks().prop_filter("two blocks", |b| b.len() == 2),
        which in any::<prop::sample::Index>(),
        before in text(8),
        after in text(8),
    ) {
        let record = vec![blocks.join("\n\n")];
        let echoed = &blocks[which.index(blocks.len())];
        let answer = format!("{before}{echoed}{after}");
        let without = answer.replace(echoed.as_str(), "");
        prop_assert_eq!(strip_injected_from_assistant(&answer, &record), without.trim());
    }

    /// `last_exchange` over OpenClaw's message list: the user's text and the answer, either as a
    /// string or as one text part, with earlier turns and tool results around them.
    #[test]
    fn the_last_exchange_is_the_users_text_and_the_answer(
        injected in injection(),
        user in text(10),
        answer in text(8),
        as_parts in any::<bool>(),
    ) {
        let prompt = match &injected {
            Some(blocks) => format!("{blocks}\n\n{user}"),
            None => user.clone(),
        };
        let content = |t: &str| if as_parts { json!([{"type": "text", "text": t}]) } else { json!(t) };
        let messages = json!([
            {"role": "user", "content": "an earlier question"},
            {"role": "assistant", "content": "an earlier answer"},
            {"role": "user", "content": content(&prompt)},
            {"role": "toolResult", "content": "tool output"},
            {"role": "assistant", "content": content(&answer)},
        ]);
        let want_user = match &injected {
            Some(_) => user.trim(),
            None => expected_without_record(&user),
        };
        let record = injected.map(|text| Injected { prompt_digest: prompt_digest(&user), text: Some(text) });
        let got = last_exchange(&messages.to_string(), record.as_ref());
        let recorded: Vec<String> = record.iter().filter_map(|r| r.text.clone()).collect();
        let want_answer = strip_injected_from_assistant(&answer, &recorded);
        if want_user.trim().is_empty() {
            prop_assert!(got.unwrap_err().contains("user message is empty"));
        } else if want_answer.trim().is_empty() {
            prop_assert!(got.unwrap_err().contains("no assistant answer"));
        } else {
            prop_assert_eq!(got.unwrap(), (want_user.to_string(), want_answer));
        }
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// The whole path, through the engine: before-agent-start recalls arbitrary facts from Graphiti
    /// (REST), routes and records the turn; agent-end captures exactly the user's text and answer.
    #[test]
    fn the_engine_captures_what_was_said_and_nothing_it_injected(
        facts in prop::collection::vec(text(6), 0..5),
        prompt in text(10),
        answer in text(8),
        record_lost in any::<bool>(),
    ) {
        let state = temp_dir("capture");
        let facts = facts.iter().map(|f| json!({"fact": f, "uuid": "u"})).collect();
        let mut engine = example_engine(Some(state.path()), Box::new(SearchOnly { facts }));
        engine.set_host_settings(Some(
            json!({"graphiti": {"url": "http://graphiti.test", "transport": "rest"}}).to_string(),
        ));
        engine.reload().expect("configuration loads");
        let ctx = HookContext {
            session_key: Some("agent:main:s".into()),
            sender_id: Some("u1".into()),
            run_id: Some("run-1".into()),
            ..HookContext::default()
        };
        let injection = engine.before_agent_start(
            &PromptEvent { prompt: prompt.clone(), messages_json: "[]".into() },
            &ctx,
        );
        let user_message = match &injection.prepend_context {
            Some(blocks) => format!("{blocks}\n\n{prompt}"),
            None => prompt.clone(),
        };
        if record_lost {
            // The process was killed before the record was written, or it was pruned.
            std::fs::remove_dir_all(state.path().join("last-turns")).ok();
        }
        let messages = json!([{"role": "user", "content": user_message},
                              {"role": "assistant", "content": answer}]);
        let outcome = engine.agent_end(
            &AgentEndEvent { success: true, messages_json: messages.to_string(), ..AgentEndEvent::default() },
            &ctx,
        );
        // With the record the text is exactly the prompt (nothing injected: kept as written); only
        // without one does a leading well-formed block go.
        let want_user = if record_lost {
            expected_without_record(&user_message)
        } else {
            prompt.trim()
        };
        match outcome {
            CaptureOutcome::Spooled { user, assistant, .. } => {
                prop_assert_eq!(user.as_str(), want_user);
                prop_assert_eq!(assistant, answer);
            }
            CaptureOutcome::Skipped(why) => prop_assert!(
                want_user.trim().chars().count() < 8 || answer.trim().is_empty(),
                "skipped a turn with text: {}", why
            ),
            CaptureOutcome::Dropped(why) => prop_assert!(false, "dropped: {}", why),
        }
    }
}

proptest! {
    #![proptest_config(config(96))]

    /// Whatever OpenClaw's message list holds, agent-end captures a turn or says why not; with a
    /// writable state directory it never drops one.
    #[test]
    fn any_message_list_is_captured_or_skipped_with_a_reason(messages_json in messages_json()) {
        let state = temp_dir("messages");
        let mut engine = example_engine(Some(state.path()), Box::new(SearchOnly { facts: vec![] }));
        engine.reload().expect("configuration loads");
        let ctx = HookContext { session_key: Some("s".into()), ..HookContext::default() };
        let event = AgentEndEvent { success: true, messages_json: messages_json.clone(), ..AgentEndEvent::default() };
        match engine.agent_end(&event, &ctx) {
            CaptureOutcome::Spooled { user, assistant, .. } => {
                let (want_user, want_answer) = last_exchange(&messages_json, None).expect("captured");
                prop_assert_eq!((user, assistant), (want_user, want_answer));
            }
            CaptureOutcome::Skipped(why) => prop_assert!(!why.trim().is_empty()),
            CaptureOutcome::Dropped(why) => prop_assert!(false, "dropped: {}", why),
        }
    }
}

/// Found by `the_engine_captures_what_was_said_and_nothing_it_injected`: when the turn's record says
/// nothing was injected, capture still falls back to removing a well-formed block the user's own
/// message starts with, so that text never reaches Graphiti. The record is there and says there is
/// nothing to remove; the fallback is meant for a missing record.
#[test]
fn a_turn_with_nothing_injected_keeps_the_users_leading_block() {
    let state = temp_dir("nothing-injected");
    let mut engine = example_engine(Some(state.path()), Box::new(SearchOnly { facts: vec![] }));
    engine.set_host_settings(Some(
        json!({"graphiti": {"url": "http://graphiti.test", "transport": "rest"}}).to_string(),
    ));
    engine.reload().expect("configuration loads");
    let ctx = HookContext {
        session_key: Some("agent:main:s".into()),
        run_id: Some("run-1".into()),
        ..HookContext::default()
    };
    let prompt = "<pack-context>my own notes</pack-context> keep these with the question";
    let injection = engine.before_agent_start(
        &PromptEvent {
            prompt: prompt.into(),
            messages_json: "[]".into(),
        },
        &ctx,
    );
    assert_eq!(injection.prepend_context, None, "nothing recalled, no pack");
    let messages = json!([{"role": "user", "content": prompt},
                          {"role": "assistant", "content": "noted"}]);
    let outcome = engine.agent_end(
        &AgentEndEvent {
            success: true,
            messages_json: messages.to_string(),
            ..AgentEndEvent::default()
        },
        &ctx,
    );
    let CaptureOutcome::Spooled { user, .. } = outcome else {
        panic!("not captured: {outcome:?}");
    };
    assert_eq!(user, prompt);
}

/// Found by `an_echo_of_any_one_injected_block_goes`: the turn's record holds the injection as one
/// string (recalled facts, then the pack), so a model echoing only the recalled facts had them
/// captured as its own words, and the next recall found them again as new facts.
#[test]
fn an_echo_of_the_recalled_facts_alone_is_removed() {
    let recall = Recall {
        facts: vec![RecalledFact {
            fact: "Alice prefers the window table at Chez Lune".into(),
            ..RecalledFact::default()
        }],
        ..Recall::default()
    };
    let memory = recall
        .context_block("agent-dm-u1", &RecallSettings::default())
        .unwrap();
    let pack = PACK_BLOCKS[0].clone();
    let record = vec![format!("{memory}\n\n{pack}")];
    let answer = format!("As you asked:\n{memory}\nBooked the window table for 8.");
    assert_eq!(
        strip_injected_from_assistant(&answer, &record),
        "As you asked:\n\nBooked the window table for 8."
    );
    // The whole injection echoed goes as one, as before.
    let answer = format!("{}\nBooked.", record[0]);
    assert_eq!(strip_injected_from_assistant(&answer, &record), "Booked.");
}
