//! Graphiti answers: arbitrary bytes, arbitrary JSON and arbitrary JSON-RPC answers, framed as plain
//! JSON or as SSE (random `data:` line splits, CRLF, comments, other events first), through the real
//! clients (MCP and REST) with a fake `Http`. No panic: an error, in one printable line; a send is
//! "in doubt" only when it was sent; the framing never changes what an answer means; the bounded
//! parser agrees with serde_json within its budget.

use super::capture::LEADING_BLOCKS;
use super::planned_http::{
    Framing, Plan, Planned, RpcAnswer, handshake, plan, rpc_answer, sse_framing, status,
};
use super::support::{
    answer_bytes, config, example_engine, is_one_printable_line, json_value, messages_json, text,
};
use graphiti_openclaw::memory::graphiti::http::{Deadline, Http, Request};
use graphiti_openclaw::memory::graphiti::{
    self,
    Client, Episode, EpisodeKind, ErrorKind, GraphitiError, MAX_ANSWER_VALUES, Transport,
    parse_bounded,
};
use graphiti_openclaw::memory::redaction::Query;
use graphiti_openclaw::platform::api::{HookContext, PromptEvent};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::time::Duration;

#[derive(Clone, Copy, Debug)]
enum Operation {
    SearchFacts,
    SearchNodes,
    AddEpisode,
    ListEpisodes,
    Health,
}

fn operation() -> impl Strategy<Value = Operation> {
    prop::sample::select(vec![
        Operation::SearchFacts,
        Operation::SearchNodes,
        Operation::AddEpisode,
        Operation::ListEpisodes,
        Operation::Health,
    ])
}

fn episode() -> Episode {
    Episode {
        name: "openclaw-g-run-1-0000abcd".into(),
        group_id: "g".into(),
        user: "what did I book?".into(),
        assistant: "a table at 8".into(),
        user_name: Some("u1".into()),
        reference_time: "2026-01-01T00:00:00.000Z".into(),
        source_description: "test".into(),
        kind: EpisodeKind::Turn,
    }
}

/// Runs one client operation; Ok carries whatever the operation returns, as JSON.
fn run(client: &mut Client, http: &mut dyn Http, op: Operation) -> Result<Value, GraphitiError> {
    let deadline = Deadline::after(Duration::from_secs(5));
    match op {
        Operation::SearchFacts => client
            .search_facts(http, &Query::new("q", &[]), "g", 10, deadline)
            .map(Value::Array),
        Operation::SearchNodes => client
            .search_nodes(http, &Query::new("q", &[]), "g", 5, deadline)
            .map(Value::Array),
        Operation::AddEpisode => client
            .add_episode(http, &episode(), deadline)
            .map(|()| Value::Null),
        Operation::ListEpisodes => client
            .recent_episode_names(http, "g", deadline)
            .map(|names| json!(names)),
        Operation::Health => client.health(http, deadline).map(Value::String),
    }
}

/// Whether the request that stores the episode went out (MCP `add_memory`, REST `/messages`).
fn episode_was_sent(sent: &[Request]) -> bool {
    sent.iter().any(|r| {
        r.url.ends_with("/messages")
            || serde_json::from_slice::<Value>(&r.body)
                .is_ok_and(|m| m.pointer("/params/name") == Some(&json!("add_memory")))
    })
}

proptest! {
    #![proptest_config(config(256))]

    /// Within its budget, the bounded parser is serde_json: same value, or an error for both.
    #[test]
    fn the_bounded_parser_agrees_with_serde_json(bytes in answer_bytes()) {
        let ours = parse_bounded(&bytes);
        let theirs = serde_json::from_slice::<Value>(&bytes);
        match (ours, theirs) {
            (Ok(ours), Ok(theirs)) => prop_assert_eq!(ours, theirs),
            (Err(_), Err(_)) => {}
            (ours, theirs) => prop_assert!(false, "ours {:?}, serde_json {:?}", ours, theirs),
        }
    }

    /// Whatever Graphiti answers (or fails to), every client operation of either API returns, and
    /// an error is one printable line; an outcome is "unknown" only when the episode was sent.
    #[test]
    fn any_answer_is_a_result_or_an_error_never_a_panic(
        mcp in any::<bool>(),
        op in operation(),
        valid_handshake in any::<bool>(),
        plans in prop::collection::vec(plan(), 0..6),
    ) {
        let transport = if mcp { Transport::Mcp } else { Transport::Rest };
        let mut client = graphiti::connect(transport, "http://graphiti.test/mcp");
        let mut script: VecDeque<Plan> = plans.into();
        if mcp && valid_handshake {
            for plan in handshake().into_iter().rev() {
                script.push_front(plan);
            }
        }
        let mut http = Planned { plans: script, sent: vec![] };
        match run(&mut client, &mut http, op) {
            Ok(_) => {}
            Err(e) => {
                prop_assert!(!e.message.is_empty());
                prop_assert!(is_one_printable_line(&e.message), "{:?}", e.message);
                if e.kind == ErrorKind::Unknown && matches!(op, Operation::AddEpisode) {
                    prop_assert!(episode_was_sent(&http.sent), "in doubt without a send: {:?}", e);
                }
            }
        }
    }

    /// The same JSON-RPC answer means the same thing as plain JSON and as SSE, however its `data:`
    /// lines are split, with CRLF or LF, comments, and other events before it.
    #[test]
    fn sse_framing_never_changes_what_an_answer_means(
        op in prop::sample::select(vec![Operation::SearchFacts, Operation::AddEpisode, Operation::ListEpisodes]),
        answer in rpc_answer().prop_filter("an id of its own", |a| !matches!(a, RpcAnswer::Anything(_))),
        framing in sse_framing(),
        status in prop_oneof![4 => Just(200u16), 1 => status()],
    ) {
        let outcome = |framing: Framing| {
            let mut script: VecDeque<Plan> = handshake().into();
            script.push_back(Plan::Rpc { status, framing, answer: answer.clone() });
            let mut client = graphiti::connect(Transport::Mcp, "http://graphiti.test/mcp");
            let mut http = Planned { plans: script, sent: vec![] };
            run(&mut client, &mut http, op).map_err(|e| e.kind)
        };
        let plain = outcome(Framing::Plain);
        let sse = outcome(framing);
        prop_assert_eq!(plain, sse);
    }

    /// Whatever Graphiti answers a recall with, the turn gets well-formed blocks only (so capture
    /// removes them even without a record), and a failed recall says why in one line.
    #[test]
    fn any_search_answer_gives_well_formed_blocks(
        mcp in any::<bool>(),
        plans in prop::collection::vec(plan(), 0..6),
        prompt in text(8),
        messages_json in messages_json(),
    ) {
        let mut script: VecDeque<Plan> = plans.into();
        if mcp {
            for plan in handshake().into_iter().rev() {
                script.push_front(plan);
            }
        }
        let mut engine = example_engine(None, Box::new(Planned { plans: script, sent: vec![] }));
        let transport = if mcp { "mcp" } else { "rest" };
        engine.set_host_settings(Some(
            json!({"graphiti": {"url": "http://graphiti.test/mcp", "transport": transport}}).to_string(),
        ));
        engine.reload().expect("configuration loads");
        let injection = engine.before_agent_start(
            &PromptEvent { prompt: format!("{prompt} dinner plans"), messages_json },
            &HookContext::default(),
        );
        if let Some(blocks) = &injection.prepend_context {
            let m = LEADING_BLOCKS.find(blocks);
            prop_assert!(m.is_some_and(|m| m.end() == blocks.len()), "not well-formed: {:?}", blocks);
        }
        for note in injection.notes.iter().filter(|n| n.starts_with("recall")) {
            prop_assert!(is_one_printable_line(note), "{:?}", note);
        }
    }
}

/// Counts the values the bounded parser counts (every scalar, list and object; not keys).
fn count(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count).sum(),
        Value::Object(fields) => fields.values().map(count).sum(),
        _ => 0,
    }
}

/// Whether `part` is `whole` with lists cut short and fields left out (what the budget does).
fn is_part_of(part: &Value, whole: &Value) -> bool {
    match (part, whole) {
        (Value::Array(p), Value::Array(w)) => {
            p.len() <= w.len() && p.iter().zip(w).all(|(p, w)| is_part_of(p, w))
        }
        (Value::Object(p), Value::Object(w)) => p
            .iter()
            .all(|(k, v)| w.get(k).is_some_and(|w| is_part_of(v, w))),
        _ => part == whole,
    }
}

proptest! {
    #![proptest_config(config(12))]

    /// Around the budget: an answer within it is parsed whole, a larger one is parsed in part, never
    /// more than the budget, never wrongly.
    #[test]
    fn the_budget_cuts_large_answers_and_only_those(
        extra in -3i64..4,
        nested in any::<bool>(),
        tail in json_value(),
    ) {
        // {"facts": [items...], "tail": tail}: 1 + 1 + items × per_item + count(tail) values.
        let per_item = if nested { 3 } else { 1 };
        let fixed = 2 + count(&tail);
        let items = ((MAX_ANSWER_VALUES as i64 - fixed as i64) / per_item + extra).max(0) as usize;
        let item = if nested { json!({"fact": "f", "n": 1}) } else { json!(1) };
        let whole = json!({"facts": vec![item; items], "tail": tail});
        let bytes = whole.to_string().into_bytes();
        // serde_json's own reading of the text (its float parsing may differ from `whole` in the
        // last bit) is what the budget must agree with.
        let whole: Value = serde_json::from_slice(&bytes).unwrap();
        let parsed = parse_bounded(&bytes).expect("valid JSON parses");
        let (kept, all) = (count(&parsed), count(&whole));
        prop_assert!(kept <= MAX_ANSWER_VALUES, "{} values kept", kept);
        if all <= MAX_ANSWER_VALUES {
            prop_assert!(parsed == whole, "{} values, within the budget; {} kept", all, kept);
        } else {
            prop_assert!(is_part_of(&parsed, &whole), "{} values kept of {}", kept, all);
        }
    }
}

/// Found by `sse_framing_never_changes_what_an_answer_means`: an event stream whose lines end with a
/// lone CR (allowed by the event-stream format, like LF and CRLF) was read as one line, so the answer
/// was "not found" and the recall failed.
#[test]
fn an_event_stream_with_lone_cr_line_ends_is_read() {
    let answer =
        RpcAnswer::Structured(json!({"message": "ok", "facts": [{"fact": "Alice works at Acme"}]}));
    let framing = Framing::Sse {
        line_end: "\r",
        splits: vec![],
        space_after_colon: true,
        event_line: true,
        comment: false,
        before: vec![json!({"jsonrpc": "2.0", "method": "notifications/message"})],
    };
    let mut script: VecDeque<Plan> = handshake().into();
    script.push_back(Plan::Rpc {
        status: 200,
        framing,
        answer,
    });
    let mut client = graphiti::connect(Transport::Mcp, "http://graphiti.test/mcp");
    let mut http = Planned {
        plans: script,
        sent: vec![],
    };
    let facts = run(&mut client, &mut http, Operation::SearchFacts).expect("the answer is read");
    assert_eq!(facts, json!([{"fact": "Alice works at Acme"}]));
}
