//! Execution and delivery policy of expert runs through the real component: timeout, retries with
//! backoff resuming from the execution log, each `on_failure`, delivery formats, SLA breaches,
//! CONFIRM and MANUAL calls in flight, and learnings.


use crate::expert_runs_common::*;
use host_shim::{
    DeliveryKind, ExpertsCommand, FunctionCall, FunctionReply, LearningProposal, RunOutcome, StepDone,
    ToolVerdict,
};

/// The nightly report's 02:00 (Berlin) slot on 2026-11-23, started.
fn nightly_run(s: &mut Setup) -> host_shim::RunStart {
    s.set_now(1_795_393_800_000);
    s.tick();
    s.advance(30 * MINUTE);
    let work = s.tick();
    work.start
        .into_iter()
        .find(|r| r.message.contains("nightly-report"))
        .expect("the 02:00 slot starts the nightly report")
}

#[test]
fn a_failing_run_is_retried_with_backoff_resuming_after_its_steps_then_escalated() {
    let mut s = setup();
    let id = s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let step = s.command(ExpertsCommand::Step(StepDone {
        step: "Read the ticket".into(),
        ctx: run_context(&run),
    }));
    assert_eq!(step.exit_code, 0, "{}", step.stderr);
    let work = s.ended(&run, RunOutcome::Failed("tickets-mcp timed out".into()));
    assert!(
        work.start.is_empty() && work.deliver.is_empty(),
        "a retry waits its delay"
    );
    s.advance(29_000);
    assert!(s.tick().start.is_empty(), "30 s delay not over");
    s.advance(1_000);
    let second = s.tick().start.remove(0);
    assert_eq!(
        (second.invocation.as_str(), second.attempt),
        (id.as_str(), 2)
    );
    assert_eq!(
        second.session_key, run.session_key,
        "the invocation keeps its session across attempts"
    );
    assert!(
        second.message.contains("- [x] Read the ticket"),
        "resume from the log: {}",
        second.message
    );
    assert!(
        second
            .message
            .contains("attempt 1 failed: tickets-mcp timed out"),
        "{}",
        second.message
    );
    s.ended(&second, RunOutcome::Failed("again".into()));
    s.advance(59_000);
    assert!(
        s.tick().start.is_empty(),
        "exponential: 60 s before the third attempt"
    );
    s.advance(1_000);
    let third = s.tick().start.remove(0);
    assert_eq!(third.attempt, 3);
    let work = s.ended(&third, RunOutcome::TimedOut);
    let escalations = delivered(&work, DeliveryKind::Escalation);
    assert_eq!(escalations.len(), 1, "{:?}", work.deliver);
    assert_eq!(escalations[0].session_key, MAIN);
    assert!(escalations[0].text.starts_with(&format!("{EXPERT} · triage ({id}, trigger new_ticket) failed after 3 attempts and is escalated: timed out after 10m")), "{}", escalations[0].text);
    assert!(
        escalations[0]
            .text
            .contains("Steps completed: Read the ticket.")
    );
    assert!(
        escalations[0]
            .text
            .contains(&format!("experts replay {id}"))
    );
    assert!(
        escalations[0].text.contains(
            "Context (its inputs):\n```json\n{\n  \"summary\": \"Checkout is down for T-1\",\n  \"ticket_id\": \"T-1\"\n}\n```"
        ),
        "the failure names the run's context: {}",
        escalations[0].text
    );
}

#[test]
fn a_run_that_never_reports_times_out() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    s.tick();
    s.advance(10 * MINUTE + 30_000);
    assert!(!s.queue().contains("retry-wait"), "within the grace");
    s.advance(1_000);
    s.tick();
    let queue = s.queue();
    assert!(
        queue.contains("retry-wait") && queue.contains("timed out after 10m"),
        "{queue}"
    );
}

#[test]
fn dead_letters_are_kept_and_replayed_and_abandoned_runs_stay_quiet() {
    let mut s = setup();
    let id = s.accepted("bulk_import", r#"{"batch": 9}"#);
    let run = s.tick().start.remove(0);
    let work = s.ended(&run, RunOutcome::Failed("disk full".into()));
    assert!(
        work.deliver.is_empty(),
        "dead_letter tells no one: {:?}",
        work.deliver
    );
    let letters = s.command(ExpertsCommand::DeadLetters).stdout;
    assert!(
        letters.contains(&format!("{id} dead-letter")) && letters.contains("disk full"),
        "{letters}"
    );
    let replay = s.command(ExpertsCommand::Replay(id.clone()));
    assert_eq!(replay.exit_code, 0, "{}", replay.stderr);
    assert_eq!(started(&s.tick()), vec![id.clone()]);
    let again = s.command(ExpertsCommand::Replay(id.clone()));
    assert_ne!(
        again.exit_code, 0,
        "only failed or dead letters are replayed"
    );

    // nightly-report: on_failure abandon after 2 attempts, fixed 1 m.
    let run = nightly_run(&mut s);
    s.ended(&run, RunOutcome::Failed("no data".into()));
    s.advance(MINUTE);
    let run = s.tick().start.remove(0);
    let work = s.ended(&run, RunOutcome::Failed("no data".into()));
    assert!(
        delivered(&work, DeliveryKind::Escalation).is_empty(),
        "abandoned silently"
    );
    assert!(s.queue().lines().all(|l| !l.contains("nightly-report")));
}

#[test]
fn delivery_formats_and_sla_breaches() {
    let mut s = setup();
    s.accepted("bulk_import", r#"{"batch": 1}"#);
    let run = s.tick().start.remove(0);
    let work = s.completed(&run, "Imported 3.\n```json\n{\"imported\": 3}\n```");
    let text = &delivered(&work, DeliveryKind::Result)[0].text;
    assert!(
        text.ends_with("Outputs:\n```json\n{\"imported\": 3}\n```")
            && !text.contains("Imported 3."),
        "structured: {text}"
    );

    let run = nightly_run(&mut s);
    s.advance(6 * MINUTE);
    let work = s.tick();
    let escalated = delivered(&work, DeliveryKind::Escalation);
    assert_eq!(
        escalated.len(),
        1,
        "sla 5m, sla_breach escalate: {:?}",
        work.deliver
    );
    assert!(
        escalated[0].text.contains("is past its SLA of 5m")
            && escalated[0].text.contains("needs your attention"),
        "{}",
        escalated[0].text
    );
    let work = s.completed(&run, "Quiet day.\n```json\n{\"tickets\": 0}\n```");
    let result = &delivered(&work, DeliveryKind::Result)[0].text;
    assert!(
        result.ends_with("Quiet day.") && !result.contains("```"),
        "narrative: {result}"
    );
    assert!(
        delivered(&work, DeliveryKind::Escalation).is_empty(),
        "the breach is told once"
    );

    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    s.tick();
    s.advance(11 * MINUTE);
    let work = s.tick();
    assert_eq!(
        delivered(&work, DeliveryKind::SlaWarning).len(),
        1,
        "triage: sla 10m, warn: {:?}",
        work.deliver
    );
}

#[test]
fn a_confirm_call_pauses_the_run_until_approved_then_runs_once() {
    let mut s = setup();
    let id = s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    assert!(
        matches!(
            s.tool_call(&run, "get_ticket", r#"{"id": "T-1"}"#),
            ToolVerdict::Allow
        ),
        "auto"
    );
    let args = r#"{"id": "T-1", "priority": "high"}"#;
    let ToolVerdict::Block(said) = s.tool_call(&run, "update_ticket", args) else {
        panic!("confirm is held")
    };
    assert!(said.contains("End this run now"), "{said}");
    let work = s.completed(&run, "Proposed raising T-1 to high.");
    assert!(
        delivered(&work, DeliveryKind::Result).is_empty(),
        "a paused run delivers no result"
    );
    let asks = delivered(&work, DeliveryKind::Approval);
    assert_eq!(asks.len(), 1, "{:?}", work.deliver);
    assert!(
        asks[0].text.contains("tickets.update_ticket") && asks[0].text.contains("experts approve "),
        "{}",
        asks[0].text
    );
    let request = asks[0]
        .text
        .split("experts approve ")
        .nth(1)
        .unwrap()
        .split('`')
        .next()
        .unwrap()
        .to_string();
    assert!(s.queue().contains("waiting-approval"));
    s.advance(20 * MINUTE);
    assert!(
        s.tick().start.is_empty(),
        "waiting does not count against execution.timeout"
    );

    let approved = s.command(ExpertsCommand::Approve(request.clone()));
    assert!(
        approved.stdout.contains(&format!("{id} resumes")),
        "{}",
        approved.stdout
    );
    let resumed = s.tick().start.remove(0);
    assert_eq!(
        (resumed.invocation.as_str(), resumed.attempt),
        (id.as_str(), 2)
    );
    assert!(
        resumed.message.contains("approved: tickets.update_ticket"),
        "{}",
        resumed.message
    );
    let verdict = s.tool_call(&resumed, "update_ticket", args);
    assert!(
        matches!(verdict, ToolVerdict::Allow),
        "the approved call runs: {verdict:?}"
    );
    let work = s.completed(&resumed, "Raised.");
    assert_eq!(
        delivered(&work, DeliveryKind::Result).len(),
        1,
        "{:?}",
        work.deliver
    );
    assert!(
        matches!(
            s.tool_call(&resumed, "update_ticket", args),
            ToolVerdict::Block(_)
        ),
        "the approval is used once"
    );
}

#[test]
fn a_rejected_or_lapsed_confirm_fails_the_step_and_escalates() {
    for reject in [true, false] {
        let mut s = setup();
        let id = s.accepted("new_ticket", &ticket("e-1", "T-1"));
        let run = s.tick().start.remove(0);
        s.tool_call(&run, "update_ticket", r#"{"id": "T-1"}"#);
        let work = s.completed(&run, "asked");
        let text = &delivered(&work, DeliveryKind::Approval)[0].text;
        let request = text
            .split("experts reject ")
            .nth(1)
            .unwrap()
            .split('`')
            .next()
            .unwrap()
            .to_string();
        let work = if reject {
            let out = s.command(ExpertsCommand::Reject(request));
            assert!(
                out.stdout.contains(&format!(
                    "{id} stopped: the user rejected tickets.update_ticket"
                )),
                "{}",
                out.stdout
            );
            s.tick()
        } else {
            s.advance(61 * MINUTE);
            s.tick()
        };
        let escalated = delivered(&work, DeliveryKind::Escalation);
        assert_eq!(escalated.len(), 1, "reject={reject}: {:?}", work.deliver);
        assert!(
            escalated[0].text.contains("tickets.update_ticket"),
            "{}",
            escalated[0].text
        );
    }
}

/// `on_timeout: escalate`: past the timeout the user is told once, with the run's context and what
/// to do; the request stays open and a late approval still resumes the run.
#[test]
fn an_overdue_approval_under_on_timeout_escalate_is_escalated_once_and_stays_open() {
    let mut s = setup();
    s.edit_manifest("on_timeout: reject", "on_timeout: escalate");
    let id = s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    s.tool_call(&run, "update_ticket", r#"{"id": "T-1"}"#);
    let work = s.completed(&run, "asked");
    let ask = &delivered(&work, DeliveryKind::Approval)[0].text;
    let request = ask.split("experts reject ").nth(1).unwrap().split('`').next().unwrap().to_string();
    s.advance(61 * MINUTE);
    let work = s.tick();
    let escalated = delivered(&work, DeliveryKind::Escalation);
    assert_eq!(escalated.len(), 1, "{:?}", work.deliver);
    assert_eq!(
        escalated[0].text,
        format!(
            "{EXPERT} · triage ({id}, trigger new_ticket) still waits for your approval of tickets.update_ticket, \
             past the approval timeout; the request stays open.\nContext (its inputs):\n```json\n{{\n  \
             \"summary\": \"Checkout is down for T-1\",\n  \"ticket_id\": \"T-1\"\n}}\n```\n\
             Approve it with `/experts approve {request}` (the run resumes and makes the call once) or reject it \
             with `/experts reject {request}`."
        )
    );
    s.advance(MINUTE);
    assert!(delivered(&s.tick(), DeliveryKind::Escalation).is_empty(), "told once");
    let approved = s.command(ExpertsCommand::Approve(request));
    assert!(approved.stdout.contains(&format!("{id} resumes")), "a late approval counts: {}", approved.stdout);
}

/// What the calling session gets when the isolated function `classify` ends with `reply`.
fn function_ended(s: &mut Setup, run: &host_shim::RunStart, reply: &str) -> String {
    let ended = s.command(ExpertsCommand::FunctionEnded(FunctionReply {
        name: "classify".into(),
        reply: reply.into(),
        ctx: run_context(run),
    }));
    assert_eq!(ended.exit_code, 0, "{}", ended.stderr);
    ended.stdout
}

/// spec §3 `on_low_confidence` through an isolated function: the caller gets only its outputs; a
/// low `confidence` among them tells the caller to stop, and its run is escalated, not delivered.
#[test]
fn an_isolated_functions_low_confidence_escalates_the_run_that_called_it() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let sure = function_ended(&mut s, &run, "Outages are high.\n```json\n{\"priority\": \"high\", \"confidence\": \"high\"}\n```");
    assert_eq!(sure, "```json\n{\"priority\": \"high\", \"confidence\": \"high\"}\n```\n", "only the outputs");
    let unsure = function_ended(&mut s, &run, "Hard to say.\n```json\n{\"priority\": \"low\", \"confidence\": \"low\"}\n```");
    assert!(unsure.starts_with("The function classify judged its confidence low, so its outputs must not be acted on"), "{unsure}");
    let work = s.completed(&run, "I recommend a human looks at T-1.");
    assert!(delivered(&work, DeliveryKind::Result).is_empty(), "not delivered as a result: {:?}", work.deliver);
    let escalated = delivered(&work, DeliveryKind::Escalation);
    assert_eq!(escalated.len(), 1, "{:?}", work.deliver);
    assert!(escalated[0].text.contains("needs you: its function classify judged its confidence low"), "{}", escalated[0].text);
    assert!(escalated[0].text.contains("Recommended action: I recommend a human looks at T-1."), "{}", escalated[0].text);

    let mut s = setup();
    s.edit_manifest("policy:\n", "policy:\n  escalation:\n    on_low_confidence: false\n");
    s.accepted("new_ticket", &ticket("e-2", "T-2"));
    let run = s.tick().start.remove(0);
    let told = function_ended(&mut s, &run, "```json\n{\"confidence\": \"low\"}\n```");
    assert_eq!(told, "```json\n{\"confidence\": \"low\"}\n```\n", "without on_low_confidence: the outputs");
    assert_eq!(delivered(&s.completed(&run, "done"), DeliveryKind::Result).len(), 1);
}

#[test]
fn without_on_manual_ready_a_draft_goes_with_the_result_not_on_its_own() {
    let mut s = setup();
    s.edit_manifest("policy:\n", "policy:\n  escalation:\n    on_manual_ready: false\n");
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let ToolVerdict::Block(said) = s.tool_call(
        &run,
        "send_reply",
        r#"{"to": "T-1", "body": "We are on it."}"#,
    ) else {
        panic!("manual is never run")
    };
    assert!(said.contains("in your final reply"), "{said}");
    let work = s.tick();
    assert!(
        delivered(&work, DeliveryKind::Draft).is_empty(),
        "no notice of its own: {:?}",
        work.deliver
    );
    assert!(s.queue().contains("running"), "the run goes on");
}

#[test]
fn a_run_reporting_low_confidence_is_escalated_with_its_context_not_delivered() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let work = s.completed(
        &run,
        "Raise T-1 to high, but the thread is ambiguous.\n```json\n{\"priority\": \"high\", \"confidence\": \"low\"}\n```",
    );
    assert!(delivered(&work, DeliveryKind::Result).is_empty(), "{:?}", work.deliver);
    let escalated = delivered(&work, DeliveryKind::Escalation);
    assert_eq!(escalated.len(), 1, "{:?}", work.deliver);
    let text = &escalated[0].text;
    for part in [
        "ops-expert · triage (inv-1, trigger new_ticket)",
        "confidence low",
        "policy.escalation.on_low_confidence",
        "\"ticket_id\": \"T-1\"",
        "Recommended action: Raise T-1 to high",
    ] {
        assert!(text.contains(part), "{part:?} in {text}");
    }

    // A confident run is delivered as its result.
    s.accepted("new_ticket", &ticket("e-2", "T-2"));
    let run = s.tick().start.remove(0);
    let work = s.completed(&run, "Done.\n```json\n{\"confidence\": \"high\"}\n```");
    assert_eq!(delivered(&work, DeliveryKind::Result).len(), 1, "{:?}", work.deliver);
}

#[test]
fn a_manual_call_delivers_its_draft_and_the_step_is_complete() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let ToolVerdict::Block(said) = s.tool_call(
        &run,
        "send_reply",
        r#"{"to": "T-1", "body": "We are on it."}"#,
    ) else {
        panic!("manual is never run")
    };
    assert!(said.contains("delivered to the user"), "{said}");
    let work = s.tick();
    let drafts = delivered(&work, DeliveryKind::Draft);
    assert_eq!(drafts.len(), 1, "{:?}", work.deliver);
    assert!(
        drafts[0].text.contains("We are on it."),
        "{}",
        drafts[0].text
    );
    assert!(s.queue().contains("running"), "the run goes on");
}

/// Proposes a learning from `run`'s session; the id its approval takes.
fn propose_learning(s: &mut Setup, run: &host_shim::RunStart, proposal: &str) -> String {
    let out = s.command(ExpertsCommand::Learn(LearningProposal {
        proposal_json: proposal.into(),
        ctx: run_context(run),
    }));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    let id = out.stdout.split('(').nth(1).expect("an id in parentheses");
    id.trim_end().trim_end_matches(')').to_string()
}

/// The system context a turn in `run`'s session gets.
fn prompt_of(s: &mut Setup, run: &host_shim::RunStart) -> String {
    s.shim
        .before_agent_start(&graphiti_openclaw_tests::prompt("go"), &run_context(run))
        .system_context
        .unwrap_or_default()
}

#[test]
fn a_package_wide_learning_reaches_the_experts_prompt() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let id = propose_learning(
        &mut s,
        &run,
        r#"{"scope": "package", "title": "Lesson for all", "observation": "o", "correction": "c", "confidence": "high"}"#,
    );
    assert!(!prompt_of(&mut s, &run).contains("Lesson for all"), "not before approval");
    s.command(ExpertsCommand::Approve(id));
    assert!(prompt_of(&mut s, &run).contains("## Learnings: package\n\n### Lesson for all"));
}

#[test]
fn proposed_learnings_need_approval_and_reach_the_prompt_within_the_limit() {
    let mut s = setup();
    let run = {
        s.accepted("new_ticket", &ticket("e-1", "T-1"));
        s.tick().start.remove(0)
    };
    let propose = |n: u32| {
        format!(
            r#"{{"scope": "classify", "title": "Lesson {n}", "observation": "seen {n}", "correction": "do {n}", "confidence": "high"}}"#
        )
    };
    let ids: Vec<String> = (1..=5).map(|n| propose_learning(&mut s, &run, &propose(n))).collect();
    assert!(
        !prompt_of(&mut s, &run).contains("Lesson 1"),
        "not before approval"
    );
    let rejected = s.command(ExpertsCommand::Reject(ids[0].clone()));
    assert!(rejected.stdout.contains("rejected"), "{}", rejected.stdout);
    for id in &ids[1..] {
        let out = s.command(ExpertsCommand::Approve(id.clone()));
        assert!(
            out.stdout.contains("learnings/classify.md"),
            "{}",
            out.stdout
        );
    }
    // A function's learnings apply when it runs (spec §12): the prompt says where they are, and
    // an isolated run of the function gets them in its message.
    let prompt = prompt_of(&mut s, &run);
    assert!(
        !prompt.contains("Lesson 5")
            && prompt.contains("- classify: 3 learning(s) in ")
            && prompt.contains("expert-state/ops-expert/learnings/classify.md"),
        "{prompt}"
    );
    let function = s.command(ExpertsCommand::Function(FunctionCall {
        name: "classify".into(),
        inputs_json: r#"{"summary": "Checkout is down"}"#.into(),
        ctx: run_context(&run),
    }));
    let message: serde_json::Value = serde_json::from_str(&function.stdout).expect("a call");
    let message = message["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Lesson 5") && message.contains("Lesson 3"),
        "{message}"
    );
    assert!(
        !message.contains("Lesson 2") && !message.contains("Lesson 1"),
        "beyond max_entries_per_file, or rejected: {message}"
    );
    let file = std::fs::read_to_string(
        s.workspace
            .join("expert-state/ops-expert/learnings/classify.md"),
    )
    .unwrap();
    assert!(file.contains("entry_count: 3"), "{file}");
    let bad = s.command(ExpertsCommand::Learn(LearningProposal { proposal_json: r#"{"scope": "nope", "title": "t", "observation": "o", "correction": "c", "confidence": "high"}"#.into(), ctx: run_context(&run) }));
    assert!(
        bad.stderr.contains("neither package nor a function"),
        "{}",
        bad.stderr
    );
}

#[test]
fn the_runtimes_own_tools_are_never_held_by_the_policy() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    for tool in [
        "expert_step",
        "expert_learning",
        "expert_function",
        "expert_knowledge",
    ] {
        let verdict = s.tool_call(&run, tool, r#"{"step": "Read the ticket"}"#);
        assert!(
            matches!(verdict, ToolVerdict::Allow),
            "{tool} (default: confirm): {verdict:?}"
        );
    }
    assert!(
        s.queue().contains("running"),
        "the run was not paused: {}",
        s.queue()
    );
    let verdict = s.tool_call(&run, "exec", r#"{"command": "ls"}"#);
    assert!(
        matches!(verdict, ToolVerdict::Block(_)),
        "anything else undeclared asks: {verdict:?}"
    );
    assert!(
        s.queue().contains("waits for exec"),
        "and pauses the run: {}",
        s.queue()
    );
}

#[test]
fn a_webhook_with_a_lower_case_bearer_or_a_bom_before_its_json_is_accepted() {
    let mut s = setup();
    // RFC 9110: the authentication scheme is case-insensitive; a BOM is what some senders put first.
    let request = host_shim::WebhookRequest {
        path: format!("{EXPERT}/new_ticket"),
        headers: vec![("Authorization".into(), format!("bearer {TOKEN}"))],
        body: [&b"\xef\xbb\xbf"[..], ticket("e-bom", "T-9").as_bytes()].concat(),
    };
    let answer = s.shim.expert_webhook(&request, s.now);
    assert_eq!(answer.status, 202, "{}", answer.body);
}

#[test]
fn the_example_packages_trip_requests_from_two_people_run_side_by_side() {
    let experts = graphiti_openclaw_tests::temp_dir("trip-experts");
    graphiti_openclaw_tests::copy_dir(
        &graphiti_openclaw_tests::example_config().join("experts"),
        experts.path(),
    );
    let settings = r#"{"recall": {"enabled": false}, "experts": {"channels": {"trip-planner-expert/trip_request": ["slack"]}}}"#;
    let mut s = setup_with(settings);
    s.shim = host_shim::Shim::new(options(experts.path(), &s.state, &s.workspace, settings, &s.clock))
        .expect("shim starts");
    let mut started = Vec::new();
    for sender in ["u-ana", "u-ben"] {
        let work = s.channel("slack", sender, "Book me a trip to Lisbon next week");
        started.extend(work.start);
    }
    started.extend(s.tick().start);
    // Per traveller, one at a time; two travellers need not wait for each other.
    assert_eq!(started.len(), 2, "{}", s.queue());
}

#[test]
fn a_run_resumed_after_an_approval_is_told_which_call_even_without_the_execution_log() {
    let mut s = setup();
    s.edit_manifest("resume_from_execution_log: true", "resume_from_execution_log: false");
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let args = r#"{"id": "T-1", "priority": "high"}"#;
    assert!(matches!(
        s.tool_call(&run, "update_ticket", args),
        ToolVerdict::Block(_)
    ));
    let work = s.completed(&run, "Proposed raising T-1 to high.");
    let ask = &delivered(&work, DeliveryKind::Approval)[0].text;
    let request = ask
        .split("experts approve ")
        .nth(1)
        .unwrap()
        .split('`')
        .next()
        .unwrap();
    s.command(ExpertsCommand::Approve(request.to_string()));
    let resumed = s.tick().start.remove(0);
    assert!(
        resumed.message.contains("start the process over")
            && resumed.message.contains("approved: tickets.update_ticket"),
        "the new attempt starts over and knows the approved call: {}",
        resumed.message
    );
}

#[test]
fn a_scratchpad_stays_for_the_retry_and_goes_once_the_run_succeeds() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let scratch = s
        .workspace
        .join("expert-state")
        .join(EXPERT)
        .join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let pad = scratch.join("triage-T-1.md");
    let other = scratch.join("triage-T-2.md");
    std::fs::write(&pad, "step 1: looked up T-1").unwrap();
    std::fs::write(&other, "another run's").unwrap();
    let run = s.tick().start.remove(0);
    s.ended(
        &run,
        RunOutcome::Failed("the ticket system timed out".into()),
    );
    assert!(pad.exists(), "kept for the retry");
    s.advance(10 * MINUTE);
    let retry = s.tick().start.remove(0);
    s.completed(&retry, "Triaged T-1.");
    assert!(!pad.exists(), "removed after the success: {}", s.queue());
    assert!(other.exists(), "another run's scratchpad stays");
}
