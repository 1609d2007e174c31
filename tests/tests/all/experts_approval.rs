//! What an approval binds, through the real component in the host shim: the expert, the session, the
//! tool as called, the operation and the whole canonical arguments; used exactly once; arguments with
//! a key given twice refused; `experts pending` showing what is being approved; approvals stored by
//! an older version dropped.


use crate::experts_common::*;
use host_shim::ExpertsCommand;
use std::time::{SystemTime, UNIX_EPOCH};

/// A `confirm` call (travel.hold_booking), refused with a request id that the user then approves.
fn approved_hold(setup: &mut Setup, arguments: &str) -> String {
    let message = blocked(
        setup
            .shim
            .before_tool_call(&call("hold_booking", arguments), &expert_session()),
        "a confirm call without approval",
    );
    let id = request_id(&message);
    approve(&mut setup.shim, &id);
    id
}

#[test]
fn an_approval_does_not_cover_a_call_that_differs_after_2000_characters() {
    let mut setup = setup();
    // Keys are sorted canonically: the padding comes first, the offer after 2,100 characters.
    let padding = "x".repeat(2_100);
    let harmless = format!(r#"{{"a_padding":"{padding}","offer_id":"HARMLESS"}}"#);
    let other = format!(r#"{{"a_padding":"{padding}","offer_id":"EXPENSIVE"}}"#);
    approved_hold(&mut setup, &harmless);
    let message = blocked(
        setup
            .shim
            .before_tool_call(&call("hold_booking", &other), &expert_session()),
        "a call with other arguments after the approved call's first 2,000 characters",
    );
    assert!(message.contains("approval"), "{message}");
    assert!(
        allowed(
            setup
                .shim
                .before_tool_call(&call("hold_booking", &harmless), &expert_session())
        ),
        "the approved call itself still runs once"
    );
}

#[test]
fn an_approval_is_bound_to_its_session() {
    let mut setup = setup();
    let args = r#"{"offer_id":"X1"}"#;
    approved_hold(&mut setup, args);
    // Another session of the same expert (by its label) does not get the approval.
    let elsewhere = session("agent:main:telegram:direct:99:expert:trip-planner-expert");
    blocked(
        setup
            .shim
            .before_tool_call(&call("hold_booking", args), &elsewhere),
        "the approved call from another session",
    );
    assert!(allowed(setup.shim.before_tool_call(
        &call("hold_booking", args),
        &expert_session()
    )));
}

#[test]
fn an_approval_is_bound_to_the_tool_name_called() {
    let mut setup = setup();
    let args = r#"{"offer_id":"X1"}"#;
    approved_hold(&mut setup, args);
    // The server-qualified name maps to the same operation, travel.hold_booking.
    let message = blocked(
        setup.shim.before_tool_call(
            &call("travel-booking-mcp__hold_booking", args),
            &expert_session(),
        ),
        "the approved operation under another tool name",
    );
    assert!(message.contains("travel.hold_booking"), "{message}");
}

#[test]
fn arguments_with_a_key_given_twice_are_refused() {
    let mut setup = setup();
    approved_hold(&mut setup, r#"{"offer_id":"b"}"#);
    // A parser keeping the last value would read the approved call; a server keeping the first
    // would hold offer "a".
    let message = blocked(
        setup.shim.before_tool_call(
            &call("hold_booking", r#"{"offer_id":"a","offer_id":"b"}"#),
            &expert_session(),
        ),
        "a call with a key given twice",
    );
    assert!(
        message.contains(r#"the key "offer_id" is given twice"#),
        "{message}"
    );
    // Whatever the tier: an AUTO call is refused too.
    let message = blocked(
        setup.shim.before_tool_call(
            &call("flights_search", r#"{"to":"a","to":"b"}"#),
            &expert_session(),
        ),
        "an AUTO call with a key given twice",
    );
    assert!(message.contains(r#""to""#), "{message}");
}

#[test]
fn an_approval_is_used_exactly_once() {
    let mut setup = setup();
    let args = r#"{"offer_id":"X1"}"#;
    let id = approved_hold(&mut setup, args);
    let hold = call("hold_booking", args);
    assert!(allowed(
        setup.shim.before_tool_call(&hold, &expert_session())
    ));
    let message = blocked(
        setup.shim.before_tool_call(&hold, &expert_session()),
        "the approved call a second time",
    );
    assert_eq!(request_id(&message), id, "asked again, under the same id");
    let (code, out) = run(
        &mut setup.shim,
        ExpertsCommand::Approve("0000000000000000".into()),
    );
    assert_eq!(code, 1, "{out}");
}

#[test]
fn pending_shows_tool_operation_session_and_arguments() {
    let mut setup = setup();
    let _ = setup.shim.before_tool_call(
        &call("hold_booking", r#"{ "offer_id": "X1" }"#),
        &expert_session(),
    );
    let (code, pending) = run(&mut setup.shim, ExpertsCommand::Pending);
    assert_eq!(code, 0);
    assert_eq!(
        pending,
        "1 call is waiting for your approval:\n\
         \n\
         694af9adb30cf51b  trip-planner-expert  travel.hold_booking\n\
         \x20 tool:      hold_booking\n\
         \x20 session:   agent:main:expert:trip-planner-expert\n\
         \x20 arguments: {\"offer_id\":\"X1\"}\n\
         \x20 approve:   /experts approve 694af9adb30cf51b\n"
    );
    approve(&mut setup.shim, "694af9adb30cf51b");

    let long = format!(r#"{{"offer_id":"X2","note":"{}"}}"#, "n".repeat(600));
    let _ = setup.shim.before_tool_call(
        &call("travel-booking-mcp__hold_booking", &long),
        &expert_session(),
    );
    let (_, pending) = run(&mut setup.shim, ExpertsCommand::Pending);
    assert_eq!(
        pending,
        format!(
            "1 call is waiting for your approval:\n\
             \n\
             3775726dc6e73f8f  trip-planner-expert  travel.hold_booking\n\
             \x20 tool:      travel-booking-mcp__hold_booking\n\
             \x20 session:   agent:main:expert:trip-planner-expert\n\
             \x20 arguments: {{\"note\":\"{}… (127 more characters not shown; the approval binds all 627)\n\
             \x20 approve:   /experts approve 3775726dc6e73f8f\n",
            "n".repeat(491)
        )
    );
    let _ = setup.shim.before_tool_call(
        &call("hold_booking", r#"{"offer_id":"X1"}"#),
        &expert_session(),
    );
    approve(&mut setup.shim, "3775726dc6e73f8f");
    let (_, empty) = run(&mut setup.shim, ExpertsCommand::Pending);
    assert_eq!(empty, "no calls are waiting for approval\n");
}

#[test]
fn approvals_stored_by_an_older_version_are_dropped_with_a_note() {
    let mut setup = setup();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // Format 1 (graphiti-openclaw 0.3): keyed by a 32-bit FNV id of expert, operation and the
    // arguments' first 2,000 characters; no session. This one approves exactly the call below.
    let old_store = format!(
        r#"{{"requests":{{"3472f6f4":{{"id":"3472f6f4","expert":"{EXPERT}","operation":"travel.hold_booking",
        "tool_name":"hold_booking","arguments":"{{\"offer_id\":\"X1\"}}","requested_at":{},"status":"approved",
        "decided_at":{},"timeout_secs":86400,"on_timeout":"reject","escalated":false}}}}}}"#,
        now - 60,
        now - 30
    );
    let store_dir = setup.state.join("experts").join(EXPERT);
    std::fs::create_dir_all(&store_dir).unwrap();
    let store = store_dir.join("experts-approvals.json");
    std::fs::write(&store, &old_store).unwrap();

    let message = blocked(
        setup.shim.before_tool_call(
            &call("hold_booking", r#"{"offer_id":"X1"}"#),
            &expert_session(),
        ),
        "a call approved only by an old-format approval",
    );
    assert!(message.contains("approve request"), "{message}");
    let logs: String = setup
        .shim
        .take_logs()
        .into_iter()
        .map(|(_, line)| line + "\n")
        .collect();
    assert!(
        logs.contains("1 approval request(s) of an older graphiti-openclaw were dropped"),
        "{logs}"
    );
    let text = std::fs::read_to_string(&store).unwrap();
    assert!(
        text.contains("\"format\": 2") && !text.contains("3472f6f4"),
        "{text}"
    );
    // `experts pending` says so too when it reads the old file first.
    std::fs::write(&store, old_store).unwrap();
    let (_, pending) = run(&mut setup.shim, ExpertsCommand::Pending);
    assert_eq!(
        pending,
        "no calls are waiting for approval\n\
         note: trip-planner-expert: 1 approval request(s) of an older graphiti-openclaw were dropped: they bound \
         neither the session nor the whole arguments; the expert has to ask again\n"
    );
}
