//! The relevance floor through the component, against the stand-in answering like a hybrid search
//! (every prompt gets the group's items, matches first): an unrelated prompt gets no memories and
//! `debug` says why, a related one gets its facts and not the others, a follow-up keeps the fact of
//! the message it refers back to, `min_relevance: 0` shows everything, and a bad floor is refused.

use graphiti_openclaw_tests::{copy_dir, example_config, graphiti_shim, hook_context, temp_dir};
use graphiti_standin::{Options, StandIn};
use host_shim::{ChatType, Command, PromptEvent, Shim};
use tempfile::TempDir;

const SCHOOL: &str =
    "Maya's daughter Lena starts first grade at Birchwood Elementary on September 2.";
const THERAPY: &str = "Maya sees her therapist Dr. Reyes every Thursday at 5 pm.";
const DENTIST: &str = "Maya has a dentist appointment with Dr. Okafor on March 14 at 9:30.";
const TRIP: &str = "Maya is flying to Lisbon on May 3 and returns on May 10.";

/// The direct chat's group (`main-dm-user-1`) holds a family's facts and one entity.
fn standin() -> StandIn {
    let standin = StandIn::start(Options::default()).expect("stand-in starts");
    standin.set_search_fill(true);
    let fact = |uuid: &str, text: &str| serde_json::json!({"uuid": uuid, "name": "RELATES_TO", "fact": text});
    let seed = serde_json::json!({
        "group_id": "main-dm-user-1",
        "nodes": [{"uuid": "n1", "name": "Lena", "labels": ["Entity", "Person"], "summary": "Maya's daughter."}],
        "facts": [fact("f1", SCHOOL), fact("f2", THERAPY), fact("f3", DENTIST), fact("f4", TRIP)],
    });
    standin.seed_json(&seed.to_string()).expect("seed");
    standin
}

/// The shim over a copy of the example configuration with `recall` added, and a fresh state; the
/// configuration and state directories, removed when dropped.
fn shim(standin: &StandIn, recall: &str) -> (Shim, [TempDir; 2]) {
    let config = temp_dir("relevance-config");
    copy_dir(&example_config(), config.path());
    let settings = format!(
        "schema_version: 1\ngraphiti:\n  url: {}/mcp\n  transport: mcp\nrecall:\n  timeout_ms: 5000\n{recall}",
        standin.url()
    );
    std::fs::write(config.path().join("settings.yaml"), settings).unwrap();
    let state = temp_dir("relevance-state");
    let shim = graphiti_shim(config.path(), state.path(), &standin.url());
    (shim, [config, state])
}

/// A turn with `earlier` user messages before the prompt; what was prepended.
fn turn(shim: &mut Shim, session: &str, earlier: &[&str], prompt: &str) -> String {
    let mut messages: Vec<serde_json::Value> = earlier
        .iter()
        .flat_map(|text| {
            [
                serde_json::json!({"role": "user", "content": text}),
                serde_json::json!({"role": "assistant", "content": "Noted."}),
            ]
        })
        .collect();
    messages.push(serde_json::json!({"role": "user", "content": prompt}));
    let event = PromptEvent {
        prompt: prompt.into(),
        messages_json: serde_json::Value::Array(messages).to_string(),
    };
    let injection = shim.before_agent_start(&event, &hook_context(session, ChatType::Direct));
    injection.prepend_context.unwrap_or_default()
}

fn debug(shim: &mut Shim, session: &str) -> String {
    let out = shim.run_command(&Command::Debug(Some(session.into())));
    assert_eq!(out.exit_code, 0, "{out:?}");
    out.stdout
}

#[test]
fn an_unrelated_prompt_gets_no_memories_and_debug_says_why() {
    let standin = standin();
    let (mut shim, _dirs) = shim(&standin, "");
    let injected = turn(&mut shim, "s1", &[], "write me a haiku about autumn leaves");
    assert!(!injected.contains("<graphiti-context"), "{injected}");
    let shown = debug(&mut shim, "s1");
    assert!(
        shown.contains(
            "relevance floor 0.90: all 4 facts and 1 entities were below it, no memories shown"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("  - below 0.00 fact \"Maya's daughter Lena starts first grade"),
        "{shown}"
    );
}

#[test]
fn a_related_prompt_gets_its_facts_and_only_those() {
    let standin = standin();
    let (mut shim, _dirs) = shim(&standin, "");
    let injected = turn(
        &mut shim,
        "s2",
        &[],
        "Can you draft an email to Lena's teacher before school starts?",
    );
    assert!(injected.contains(&format!("- {SCHOOL}")), "{injected}");
    assert!(
        injected.contains("- Lena [Person]: Maya's daughter."),
        "{injected}"
    );
    for unrelated in [THERAPY, DENTIST, TRIP] {
        assert!(
            !injected.contains(unrelated),
            "{unrelated} shown: {injected}"
        );
    }
    let shown = debug(&mut shim, "s2");
    assert!(
        shown.contains("kept 1 of 4 facts and 1 of 1 entities"),
        "{shown}"
    );
    assert!(shown.contains("[lena, start]"), "{shown}");
}

#[test]
fn a_follow_up_keeps_the_fact_of_the_message_it_refers_to() {
    let standin = standin();
    let (mut shim, _dirs) = shim(&standin, "");
    let earlier = ["I think I need to reschedule my dentist appointment"];
    let injected = turn(&mut shim, "s3", &earlier, "when is it?");
    assert!(injected.contains(&format!("- {DENTIST}")), "{injected}");
    assert!(
        !injected.contains(THERAPY) && !injected.contains(SCHOOL),
        "{injected}"
    );
    // A prompt that stands on its own has left the earlier topic.
    let injected = turn(
        &mut shim,
        "s3",
        &earlier,
        "Now write a short poem about the ocean",
    );
    assert!(!injected.contains("<graphiti-context"), "{injected}");
}

#[test]
fn floor_zero_shows_everything_graphiti_returned() {
    let standin = standin();
    let (mut shim, _dirs) = shim(&standin, "  min_relevance: 0\n");
    let injected = turn(&mut shim, "s4", &[], "write me a haiku about autumn leaves");
    for fact in [SCHOOL, THERAPY, DENTIST, TRIP] {
        assert!(injected.contains(fact), "{fact} missing: {injected}");
    }
    assert!(!debug(&mut shim, "s4").contains("relevance floor"));
}

#[test]
fn a_negative_floor_is_refused_naming_the_setting() {
    let standin = standin();
    let (mut shim, _dirs) = shim(&standin, "  min_relevance: -1\n");
    let out = shim.run_command(&Command::CheckConfig);
    let text = out.stdout + &out.stderr;
    assert_ne!(out.exit_code, 0, "{text}");
    assert!(
        text.contains("recall.min_relevance") && text.contains("at least 0"),
        "{text}"
    );
}
