//! What the expert runtime's own turns are not: a delivery in the main session is not the user's
//! words, and an expert run's session is not the user's conversation.

mod expert_runs_common;

use expert_runs_common::*;
use graphiti_openclaw_tests::{hook_context, prompt};
use host_shim::{AgentEndEvent, CaptureOutcome, ChatType, DeliveryKind};

/// Recall on (Graphiti unreachable: a recall that runs leaves its fallback note), routing by the
/// example configuration, the fixture's channel trigger bound to telegram.
fn settings() -> String {
    format!(
        r#"{{"experts": {{"webhook_token": "{TOKEN}", "channels": {{"ops-expert/support_chat": ["telegram"]}}}}}}"#
    )
}

/// A user message and the assistant's answer, as `agent_end` gets them.
fn exchange(user: &str, assistant: &str) -> AgentEndEvent {
    AgentEndEvent {
        success: true,
        error: None,
        messages_json: serde_json::json!([
            {"role": "user", "content": user},
            {"role": "assistant", "content": assistant},
        ])
        .to_string(),
        duration_ms: None,
    }
}

#[test]
fn a_delivery_turn_is_the_plugins_not_the_users_no_recall_no_pack_no_capture() {
    let mut s = setup_with(&settings());
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let work = s.completed(
        &run,
        "Book a bistro for dinner on Friday for the on-call team.",
    );
    let result = delivered(&work, DeliveryKind::Result)[0].clone();
    assert!(
        result.text.contains("dinner"),
        "the text routes to a pack if it is routed: {}",
        result.text
    );

    // OpenClaw runs the delivery as a turn of the main session with the trigger "user" and no
    // provenance; its run id is the one the component gave.
    let mut turn = hook_context(MAIN, ChatType::Direct);
    turn.run_id = Some(result.run_id.clone());
    let injection = s.shim.before_agent_start(&prompt(&result.text), &turn);
    assert!(
        injection.prepend_context.is_none(),
        "neither recalled for nor routed: {injection:?}"
    );
    let reason = injection.decision.no_pack_reason.unwrap_or_default();
    assert!(
        reason.contains("not the user's") && reason.contains("delivery"),
        "{reason}"
    );

    match s
        .shim
        .agent_end(&exchange(&result.text, "Relayed to the user."), &turn)
    {
        CaptureOutcome::Skipped(why) => assert!(why.contains("not the user's"), "{why}"),
        other => panic!("a delivery is not captured: {other:?}"),
    }

    // The user's next turn in the session is theirs again, and carries no pack from the delivery.
    let mut next = hook_context(MAIN, ChatType::Direct);
    next.run_id = Some("run-user-1".into());
    let follow = s.shim.before_agent_start(&prompt("and Saturday?"), &next);
    assert!(
        follow.decision.primary_pack.is_none() && !follow.decision.sticky,
        "{:?}",
        follow.decision
    );
    assert!(
        matches!(
            s.shim
                .agent_end(&exchange("and Saturday?", "Saturday works."), &next),
            CaptureOutcome::Spooled(_)
        ),
        "the user's own turn is captured"
    );
}

#[test]
fn an_expert_runs_session_gets_no_recall_and_no_pack_only_its_expert_prompt() {
    let mut s = setup_with(&settings());
    let work = s.channel(
        "telegram",
        "u-1",
        "Book a bistro for dinner on Friday for the team",
    );
    assert!(work.tick_in_ms.is_some(), "{:?}", work.notes);
    let run = s.tick().start.remove(0);
    assert!(run.message.contains("bistro"), "{}", run.message);

    let injection = s.shim.before_agent_start(&prompt(&run.message), &run_context(&run));
    assert!(
        injection.prepend_context.is_none(),
        "no <graphiti-context> (nor its fallback) and no <pack-context>: {:?}",
        injection.prepend_context
    );
    assert!(
        injection
            .decision
            .no_pack_reason
            .as_deref()
            .is_some_and(|r| r.contains(&run.invocation)),
        "{:?}",
        injection.decision
    );
    assert!(
        injection
            .system_context
            .as_deref()
            .unwrap_or_default()
            .contains("careful support operator"),
        "its expert's prompt still applies"
    );
}
