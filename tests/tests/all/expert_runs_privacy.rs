//! What the expert runtime's own turns and messages are not: a delivery in the main session is not
//! the user's words, an expert run's session is not the user's conversation, and a command or a
//! message in an expert's session is not a message for an expert.


use crate::expert_runs_common::*;
use graphiti_openclaw_tests::{exchange, hook_context, prompt};
use host_shim::{CaptureOutcome, ChatType, DeliveryKind};

/// Recall on (Graphiti unreachable: a recall that runs leaves its fallback note), routing by the
/// example configuration, the fixture's channel trigger bound to telegram.
fn settings() -> String {
    format!(
        r#"{{"experts": {{"webhook_token": "{TOKEN}", "channels": {{"ops-expert/support_chat": ["telegram"]}}}}}}"#
    )
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

/// OpenClaw's line before a user message it moved into the prompt of a run that was waiting for the
/// session (a delivery, posted a moment before the user wrote).
const QUEUED_LINE: &str = "[Queued user message from a previous active turn; preserved as context only. Continue with the active prompt below.]";

#[test]
fn a_users_message_openclaw_merged_into_a_delivery_turn_is_captured_as_theirs_without_the_delivery() {
    let mut s = setup_with(&settings());
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let work = s.completed(&run, "Handled: the checkout is back.\n\nNothing else to do.");
    let result = delivered(&work, DeliveryKind::Result)[0].clone();
    let mut turn = hook_context(MAIN, ChatType::Direct);
    turn.run_id = Some(result.run_id.clone());
    s.shim.before_agent_start(&prompt(&result.text), &turn);

    // The user's message has two paragraphs: the delivery's text, not the first blank line, ends it.
    let users = "Please remember that I prefer aisle seats.\n\nAnd window seats on trains.";
    let merged = format!("{QUEUED_LINE}\n{users}\n\n{}", result.text);
    match s.shim.agent_end(&exchange(&merged, "Noted your seats. The checkout is back."), &turn) {
        CaptureOutcome::Spooled(captured) => {
            assert_eq!(captured.user, users, "the user's words, once, without the delivery");
            assert_eq!(captured.assistant, "Noted your seats. The checkout is back.");
        }
        other => panic!("the user's words in a delivery turn are captured: {other:?}"),
    }

    // A delivery whose text OpenClaw changed cannot be told from the user's: said, not guessed.
    let altered = format!("{QUEUED_LINE}\n{users}\n\n{} (edited)", result.text);
    match s.shim.agent_end(&exchange(&altered, "Relayed."), &turn) {
        CaptureOutcome::Dropped(why) => assert!(why.contains("could not be told apart") && why.contains("NOT captured"), "{why}"),
        other => panic!("{other:?}"),
    }
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

#[test]
fn commands_and_messages_in_an_experts_session_fire_no_channel_trigger() {
    let mut s = setup();
    let mut command = channel_message("telegram", "u-1", "/experts list");
    command.command = true;
    command.session_key = Some("agent:main:telegram:direct:u-1".into());
    let work = s.channel_message(&command);
    assert!(work.tick_in_ms.is_none(), "{:?}", work.notes);

    for session in [
        format!("agent:main:expert:{EXPERT}:inv-1"),
        format!("agent:main:expert:{EXPERT}"),
    ] {
        let mut typed = channel_message("telegram", "u-1", "Where is my order?");
        typed.session_key = Some(session.clone());
        let work = s.channel_message(&typed);
        assert!(work.tick_in_ms.is_none(), "{session}: {:?}", work.notes);
    }
    assert!(s.tick().start.is_empty(), "nothing was queued");
    assert!(s.queue().contains("no expert runs"), "{}", s.queue());

    // The same message in the user's own chat fires the trigger.
    let mut plain = channel_message("telegram", "u-1", "Where is my order?");
    plain.session_key = Some("agent:main:telegram:direct:u-1".into());
    assert!(s.channel_message(&plain).tick_in_ms.is_some());
    assert_eq!(s.tick().start.len(), 1);
}
