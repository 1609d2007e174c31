//! OpenClaw's default Tool Search through the real component in the host shim: `tool_call` judged by
//! the tool it names (and its target call, which OpenClaw runs through the hook again), the lookups
//! passing, malformed `tool_call`s refused; and `experts check-tool`, the gate's dry run.


use crate::experts_common::*;
use host_shim::{ExpertsCommand, HookContext, ToolCall, ToolCheck};
use std::path::Path;

fn tool_call(id: &str, target: &str, args: &str) -> ToolCall {
    call_with_id(
        "tool_call",
        &format!(r#"{{"id":"{target}","args":{args}}}"#),
        Some(id),
    )
}

#[test]
fn lookups_pass_and_an_auto_call_through_tool_call_runs() {
    let Setup {
        mut shim,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let s = expert_session();
    for target in [
        "flights_search",
        "travel-booking-mcp__flights_search",
        "mcp:travel-booking-mcp:travel-booking-mcp__flights_search",
    ] {
        assert!(
            allowed(shim.before_tool_call(&tool_call("c1", target, r#"{"to":"LIS"}"#), &s)),
            "AUTO through tool_call: {target}"
        );
    }
    for lookup in [
        call("tool_search", r#"{"query":"flights"}"#),
        call("tool_describe", r#"{"id":"flights_search"}"#),
    ] {
        assert!(allowed(shim.before_tool_call(&lookup, &s)), "{lookup:?}");
    }
    let message = blocked(
        shim.before_tool_call(
            &tool_call("c2", "flights_purchase", r#"{"offer_id":"X1"}"#),
            &s,
        ),
        "a MANUAL call through tool_call",
    );
    assert!(message.contains("MANUAL (draft only)"), "{message}");
}

#[test]
fn a_confirm_call_through_tool_call_waits_then_runs_once_with_its_target_call() {
    let Setup {
        mut shim,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let s = expert_session();
    let target = "travel-booking-mcp__hold_booking";
    let args = r#"{"offer_id":"X1"}"#;
    let message = blocked(
        shim.before_tool_call(&tool_call("call-1", target, args), &s),
        "a CONFIRM call through tool_call without approval",
    );
    let id = request_id(&message);
    assert_eq!(id, "1c2b0bf254cfc5f2", "bound to the tool tool_call names");
    approve(&mut shim, &id);

    assert!(allowed(
        shim.before_tool_call(&tool_call("call-2", target, args), &s)
    ));
    // OpenClaw then runs the target through before_tool_call again, with an id derived from call-2.
    let target_call = |n: u32| {
        call_with_id(
            target,
            args,
            Some(&format!("tool_search_code:call-2:{target}:{n}")),
        )
    };
    assert!(
        allowed(shim.before_tool_call(&target_call(1), &s)),
        "the target call of the approved tool_call"
    );
    let logs: Vec<String> = shim.take_logs().into_iter().map(|(_, line)| line).collect();
    let used = |how: &str| {
        logs.iter().any(|l| {
            l.starts_with("experts: trip-planner-expert: travel.hold_booking was approved by the user (request 1c2b0bf254cfc5f2)")
                && l.contains(how)
        })
    };
    assert!(
        used("; now used (travel-booking-mcp__hold_booking)")
            && used("; this is the target call of the tool_call that used it"),
        "each use of the approval is logged: {logs:?}"
    );
    blocked(
        shim.before_tool_call(&target_call(2), &s),
        "a second target call",
    );
    blocked(
        shim.before_tool_call(&tool_call("call-3", target, args), &s),
        "the approved tool_call a second time",
    );
    blocked(
        shim.before_tool_call(&call(target, args), &s),
        "the call directly after its approval was used",
    );
}

#[test]
fn malformed_tool_calls_are_refused_with_the_reason() {
    let Setup {
        mut shim,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let s = expert_session();
    for (params, reason) in [
        (r#"{"args":{"offer_id":"X1"}}"#, "names no tool"),
        (r#"{"id":"","args":{"offer_id":"X1"}}"#, "names no tool"),
        (
            r#"{"id":"hold_booking","args":"X1"}"#,
            "args are not a JSON object (a string)",
        ),
        (
            r#"{"id":"hold_booking","args":[1]}"#,
            "args are not a JSON object (an array)",
        ),
        (
            r#"{"id":"tool_call","args":{"id":"hold_booking"}}"#,
            "it names tool_call, a Tool Search tool",
        ),
        (r#"{"id":"hold_booking","name":"Lisbon"}"#, "ambiguous"),
        (r#"["hold_booking"]"#, "parameters are not a JSON object"),
    ] {
        let message = blocked(
            shim.before_tool_call(&call("tool_call", params), &s),
            params,
        );
        assert!(
            message.starts_with("tool_call refused") && message.contains(reason),
            "{params}: {message}"
        );
    }
}

fn check(
    shim: &mut host_shim::Shim,
    expert: Option<&str>,
    call: ToolCall,
    ctx: HookContext,
) -> String {
    let (code, out) = run(
        shim,
        ExpertsCommand::CheckTool(ToolCheck { expert: expert.map(Into::into), call, ctx }),
    );
    assert_eq!(code, 0, "{out}");
    out
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

const HEADER: &str =
    "session:   agent:main:expert:trip-planner-expert (expert trip-planner-expert)\n";
const DRY_RUN: &str = "(dry run: nothing was executed, recorded or used)\n";
const WAIT: &str = "travel.hold_booking needs the user's approval first (CONFIRM tier); it was not executed. \
Present the proposed action to the user (operation, inputs and your reasoning) and ask them to approve request";

/// `check-tool` on a MANUAL call, a call wrapped in `tool_call`, and a call in the main session.
fn the_other_tiers_and_the_main_session(shim: &mut host_shim::Shim, s: &HookContext) {
    let x1 = r#"{"offer_id":"X1"}"#;
    let manual = check(shim, None, call("flights_purchase", x1), s.clone());
    assert_eq!(
        manual,
        format!(
            "{HEADER}tool:      flights_purchase\noperation: travel.purchase_ticket\ntier:      MANUAL\narguments: {x1}\n\
             approval:  never: a MANUAL call is carried out by the user\n\
             verdict:   refused: MANUAL, the agent delivers a draft instead\n\
             message:   travel.purchase_ticket is MANUAL (draft only): do not execute it. Prepare the complete action \
             as a draft (operation, inputs, and your reasoning), deliver the draft to the user to carry out, and mark \
             the step done.\n{DRY_RUN}"
        )
    );

    let wrapped = check(
        shim,
        None,
        call_with_id(
            "tool_call",
            r#"{"id":"travel-booking-mcp__hold_booking","args":{"offer_id":"X1"}}"#,
            Some("c9"),
        ),
        s.clone(),
    );
    assert_eq!(
        wrapped,
        format!(
            "{HEADER}tool:      tool_call → travel-booking-mcp__hold_booking\noperation: travel.hold_booking\n\
             tier:      CONFIRM\narguments: {x1}\n\
             approval:  none for this call in this session; the call would create request 1c2b0bf254cfc5f2\n\
             verdict:   refused until the user approves request 1c2b0bf254cfc5f2\n\
             message:   {WAIT} 1c2b0bf254cfc5f2 (/experts approve 1c2b0bf254cfc5f2). Once approved, make exactly \
             the same call again in this session; it will run once. The request expires after 24h.\n{DRY_RUN}"
        )
    );

    let main = check(shim, None, call("flights_purchase", x1), main_session());
    assert_eq!(
        main,
        format!(
            "session:   agent:main:main (not an expert session)\ntool:      flights_purchase\n\
             verdict:   allowed: the approval policy applies only in expert sessions\n{DRY_RUN}"
        )
    );
}

#[test]
fn check_tool_dry_runs_the_gate_without_recording_anything() {
    let Setup {
        mut shim,
        state,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let s = expert_session();
    let x1 = r#"{"offer_id":"X1"}"#;

    let auto = check(
        &mut shim,
        None,
        call("flights_search", r#"{ "to": "LIS" }"#),
        s.clone(),
    );
    assert_eq!(
        auto,
        format!(
            "{HEADER}tool:      flights_search\noperation: travel.search_flights\ntier:      AUTO\n\
             arguments: {{\"to\":\"LIS\"}}\napproval:  not needed\nverdict:   allowed: travel.search_flights is AUTO\n{DRY_RUN}"
        )
    );

    let before = snapshot(&state);
    let confirm = check(&mut shim, None, call("hold_booking", x1), s.clone());
    assert_eq!(
        confirm,
        format!(
            "{HEADER}tool:      hold_booking\noperation: travel.hold_booking\ntier:      CONFIRM\narguments: {x1}\n\
             approval:  none for this call in this session; the call would create request 694af9adb30cf51b\n\
             verdict:   refused until the user approves request 694af9adb30cf51b\n\
             message:   {WAIT} 694af9adb30cf51b (/experts approve 694af9adb30cf51b). Once approved, make exactly \
             the same call again in this session; it will run once. The request expires after 24h.\n{DRY_RUN}"
        )
    );
    assert_eq!(snapshot(&state), before, "check-tool recorded nothing");
    let (_, pending) = run(&mut shim, ExpertsCommand::Pending);
    assert_eq!(pending, "no calls are waiting for approval\n");

    // With the user's approval in place: it would be used, and check-tool does not use it.
    let _ = shim.before_tool_call(&call("hold_booking", x1), &s);
    approve(&mut shim, "694af9adb30cf51b");
    let before = snapshot(&state);
    let approved = check(&mut shim, None, call("hold_booking", x1), s.clone());
    assert!(
        approved.contains(
            "approval:  request 694af9adb30cf51b was approved by the user; this call would use it up\n\
             verdict:   allowed: it would use up the user's approval (request 694af9adb30cf51b)\n"
        ),
        "{approved}"
    );
    assert_eq!(snapshot(&state), before, "the approval was not used");

    the_other_tiers_and_the_main_session(&mut shim, &s);

    // By expert name, without a session: approvals bind one, so none applies; the one above is shown.
    let by_name = check(
        &mut shim,
        Some(EXPERT),
        call("hold_booking", x1),
        HookContext {
            session_key: None,
            session_id: None,
            ..main_session()
        },
    );
    assert!(
        by_name.starts_with("session:   none given (judged as expert trip-planner-expert)\n")
            && by_name.contains(
                "approval:  none: an approval is bound to a session, and the call names none\n\
                 \x20          request 694af9adb30cf51b of the same call in session \
                 agent:main:expert:trip-planner-expert (approved): not usable in this one\n\
                 verdict:   refused (see the message)\n"
            ),
        "{by_name}"
    );
    // Still approved after all the dry runs: the real call runs.
    assert!(allowed(
        shim.before_tool_call(&call("hold_booking", x1), &s)
    ));
}
