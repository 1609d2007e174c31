//! The process dry run (openexperts §7) through the real component: only AUTO operations execute;
//! every other call is refused without asking anyone, recorded with its arguments and what a real
//! run would have done, and delivered with the agent's planned-execution report.

use crate::expert_runs_common::*;
use host_shim::{DeliveryKind, ExpertsCommand, ManualRun, ToolVerdict};

fn dry_run(process: &str, inputs: &str) -> ManualRun {
    ManualRun {
        expert: EXPERT.into(),
        message: String::new(),
        process: Some(process.into()),
        inputs_json: inputs.into(),
        dry_run: true,
    }
}

fn refused(verdict: &ToolVerdict) -> &str {
    match verdict {
        ToolVerdict::Block(why) => why,
        ToolVerdict::Allow => panic!("the call was let run"),
    }
}

/// A dry run of triage for T-9, queued and started: its run, checked to be marked as one.
fn started_dry_run(s: &mut Setup) -> host_shim::RunStart {
    let queued = s.command(ExpertsCommand::Run(dry_run(
        "triage",
        r#"{"ticket_id": "T-9", "summary": "Refund twice"}"#,
    )));
    assert_eq!(queued.exit_code, 0, "{}", queued.stderr);
    assert!(
        queued
            .stdout
            .contains("a dry run: only AUTO operations execute"),
        "{}",
        queued.stdout
    );
    let work = s.tick();
    let run = work.start[0].clone();
    assert_eq!(
        run.session_key,
        format!("expert:{EXPERT}:dry-run:{}", run.invocation),
        "a session of its own, marked"
    );
    for expected in [
        "Run the process `triage`",
        r#""ticket_id": "T-9""#,
        "## Dry run",
        "planned-execution report",
    ] {
        assert!(
            run.message.contains(expected),
            "{expected}: {}",
            run.message
        );
    }

    run
}

#[test]
fn a_dry_run_executes_only_auto_calls_and_reports_every_other_one() {
    let mut s = setup();
    let run = started_dry_run(&mut s);
    let read = s.tool_call(&run, "tickets.get_ticket", r#"{"id": "T-9"}"#);
    assert!(matches!(read, ToolVerdict::Allow), "AUTO runs: {read:?}");
    let update = s.tool_call(
        &run,
        "tickets.update_ticket",
        r#"{"id": "T-9", "priority": "high"}"#,
    );
    assert!(
        refused(&update).starts_with("Dry run: tickets.update_ticket (CONFIRM) was not executed"),
        "{update:?}"
    );
    let reply = s.tool_call(
        &run,
        "tickets.send_reply",
        r#"{"id": "T-9", "text": "Refunded"}"#,
    );
    assert!(
        refused(&reply).starts_with("Dry run: tickets.send_reply (MANUAL) was not executed"),
        "{reply:?}"
    );
    let learning = s.tool_call(
        &run,
        "expert_learning",
        r#"{"entry": "refunds go to billing"}"#,
    );
    assert!(
        refused(&learning).contains("(AUTO) was not executed"),
        "a learning is not proposed: {learning:?}"
    );

    // Nobody was asked and nothing was drafted: the user sees only the report.
    let pending = s.command(ExpertsCommand::Pending);
    assert!(
        !pending.stdout.contains("tickets.update_ticket"),
        "no approval request: {}",
        pending.stdout
    );
    let meanwhile = s.tick();
    assert!(
        delivered(&meanwhile, DeliveryKind::Approval).is_empty()
            && delivered(&meanwhile, DeliveryKind::Draft).is_empty(),
        "{:?}",
        meanwhile.deliver
    );

    s.advance(MINUTE);
    let work = s.completed(
        &run,
        "Planned: read T-9, set priority high, reply that the refund is on its way.",
    );
    let results = delivered(&work, DeliveryKind::Result);
    assert_eq!(results.len(), 1, "{:?}", work.deliver);
    assert_eq!(
        results[0].text,
        format!(
            "{EXPERT} · triage, a dry run ({}) finished in 1m (attempt 1). Only AUTO operations were executed.\n\n\
             Planned: read T-9, set priority high, reply that the refund is on its way.\n\n\
             Calls not executed (3):\n\
             1. tickets.update_ticket (CONFIRM) {{\"id\":\"T-9\",\"priority\":\"high\"}}: a real run would ask the user's approval, then run it once\n\
             2. tickets.send_reply (MANUAL) {{\"id\":\"T-9\",\"text\":\"Refunded\"}}: a real run would deliver it as a draft for the user to carry out\n\
             3. expert_learning (AUTO) {{\"entry\":\"refunds go to billing\"}}: a real run would run expert_learning",
            run.invocation
        )
    );
    assert!(
        delivered(&work, DeliveryKind::Escalation).is_empty(),
        "a dry run escalates nothing"
    );
}

#[test]
fn the_same_call_in_a_real_run_still_asks_for_approval() {
    let mut s = setup();
    s.command(ExpertsCommand::Run(dry_run(
        "triage",
        r#"{"ticket_id": "T-1"}"#,
    )));
    let real = ManualRun {
        dry_run: false,
        ..dry_run("triage", r#"{"ticket_id": "T-1"}"#)
    };
    s.command(ExpertsCommand::Run(real));
    // Manual runs of one expert run one at a time: the dry run first.
    let dry = s.tick().start[0].clone();
    assert!(
        refused(&s.tool_call(&dry, "tickets.update_ticket", r#"{"id": "T-1"}"#))
            .starts_with("Dry run:")
    );
    let next = s.completed(&dry, "planned");
    let run = next
        .start
        .first()
        .cloned()
        .unwrap_or_else(|| s.tick().start[0].clone());
    assert_eq!(
        run.session_key,
        format!("expert:{EXPERT}:{}", run.invocation)
    );
    let held = s.tool_call(&run, "tickets.update_ticket", r#"{"id": "T-1"}"#);
    assert!(
        refused(&held).contains("needs the user's approval"),
        "{held:?}"
    );
}

#[test]
fn a_manual_process_run_names_what_is_wrong_with_it() {
    let mut s = setup();
    let cases = [
        (
            dry_run("nope", ""),
            "expert ops-expert has no process nope (its processes: ",
        ),
        (
            dry_run("triage", r#"{"ticket": "T-1"}"#),
            "process triage takes no input ticket; its inputs: ticket_id, summary",
        ),
        (
            dry_run("triage", "[1, 2]"),
            r#"the inputs are not a JSON object (such as {"ticket_id": "…"})"#,
        ),
        (
            ManualRun {
                process: None,
                inputs_json: r#"{"a": 1}"#.into(),
                ..dry_run("triage", "")
            },
            "inputs are a process's: name the process to run with them",
        ),
    ];
    for (run, expected) in cases {
        let out = s.command(ExpertsCommand::Run(run.clone()));
        assert_eq!(out.exit_code, 1, "{run:?}");
        assert!(out.stderr.contains(expected), "{run:?}: {}", out.stderr);
    }
    assert!(s.tick().start.is_empty(), "nothing was queued");
}
