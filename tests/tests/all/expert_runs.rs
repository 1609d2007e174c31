//! Expert runs through the real component in the shim: triggers (webhook, channel, cron) fire the
//! right process with mapped inputs; bad webhooks are refused and never queued; dedupe; the three
//! concurrency modes; a restart with a non-empty queue loses nothing and runs nothing twice.

use crate::expert_runs_common::*;
use host_shim::{DeliveryKind, ExpertsCommand, RunOutcome, TriggerFire};

#[test]
fn a_webhook_runs_its_process_as_the_expert_and_delivers_to_the_main_session() {
    let mut s = setup();
    let id = s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let work = s.tick();
    assert_eq!(started(&work), vec![id.clone()]);
    let run = &work.start[0];
    assert_eq!(
        run.session_key,
        format!("expert:{EXPERT}:{id}"),
        "an isolated session per invocation"
    );
    assert_eq!(run.attempt, 1);
    assert_eq!(run.timeout_ms, Some(10 * MINUTE), "execution.timeout");
    assert!(
        run.message.contains("Run the process `triage`"),
        "{}",
        run.message
    );
    assert!(
        run.message.contains(r#""ticket_id": "T-1""#),
        "mapped input: {}",
        run.message
    );
    assert!(
        run.message
            .contains(r#""summary": "Checkout is down for T-1""#),
        "{}",
        run.message
    );
    assert!(
        run.message.contains("### state/queue.md"),
        "context preloaded: {}",
        run.message
    );
    assert!(run.message.contains("expert_step"), "{}", run.message);

    // The run's own turns get the expert's prompt (it is an expert session).
    let injection = s
        .shim
        .before_agent_start(&graphiti_openclaw_tests::prompt("go"), &run_context(run));
    assert!(
        injection
            .system_context
            .as_deref()
            .unwrap_or_default()
            .contains("careful support operator")
    );

    let run = run.clone();
    s.advance(2 * MINUTE);
    let work = s.completed(
        &run,
        "Triaged T-1 as high.\n```json\n{\"priority\": \"high\"}\n```",
    );
    let results = delivered(&work, DeliveryKind::Result);
    assert_eq!(results.len(), 1, "{:?}", work.deliver);
    assert_eq!(results[0].session_key, MAIN);
    assert_eq!(
        results[0].text,
        format!(
            "{EXPERT} · triage ({id}, trigger new_ticket) finished in 2m (attempt 1).\n\n\
             Triaged T-1 as high.\n\nOutputs:\n```json\n{{\"priority\": \"high\"}}\n```"
        )
    );
    assert!(s.queue().contains("no expert runs"), "done: {}", s.queue());
    assert!(s.tick().deliver.is_empty(), "delivered once");
}

/// A webhook the runtime refuses: its path, bearer token and body, the status and a part of the
/// reason it answers.
type BadWebhook = (
    &'static str,
    Option<&'static str>,
    Vec<u8>,
    u16,
    &'static str,
);

fn bad_webhooks() -> Vec<BadWebhook> {
    vec![
        (
            "ops-expert/new_ticket",
            None,
            ticket("e", "T").into_bytes(),
            401,
            "bearer token",
        ),
        (
            "ops-expert/new_ticket",
            Some("wrong"),
            ticket("e", "T").into_bytes(),
            401,
            "bearer token",
        ),
        (
            "ops-expert/new_ticket",
            Some(TOKEN),
            vec![b'x'; 300 * 1024],
            413,
            "at most 262144",
        ),
        (
            "ops-expert/new_ticket",
            Some(TOKEN),
            b"{not json".to_vec(),
            400,
            "not JSON",
        ),
        (
            "ops-expert/new_ticket",
            Some(TOKEN),
            b"[1, 2]".to_vec(),
            422,
            "not a JSON object",
        ),
        (
            "ops-expert/new_ticket",
            Some(TOKEN),
            br#"{"event_id": "e", "ticket": {"id": "T"}}"#.to_vec(),
            422,
            "summary (from ticket.summary)",
        ),
        (
            "ops-expert/new_ticket",
            Some(TOKEN),
            br#"{"ticket": {"id": "T", "summary": "s"}}"#.to_vec(),
            422,
            "dedupe key event_id",
        ),
        (
            "ops-expert/no_such",
            Some(TOKEN),
            b"{}".to_vec(),
            404,
            "has no trigger no_such",
        ),
        (
            "nobody/new_ticket",
            Some(TOKEN),
            b"{}".to_vec(),
            404,
            "no expert nobody",
        ),
        (
            "ops-expert/nightly_report",
            Some(TOKEN),
            b"{}".to_vec(),
            404,
            "not a webhook",
        ),
        (
            "ops-expert",
            Some(TOKEN),
            b"{}".to_vec(),
            404,
            "is not <expert>/<trigger>",
        ),
    ]
}

#[test]
fn bad_webhooks_are_refused_with_the_reason_and_never_queued() {
    let mut s = setup();
    for (path, token, body, status, says) in bad_webhooks() {
        let answer = s.webhook_with(path, token, &body);
        assert_eq!(answer.status, status, "{path}: {}", answer.body);
        assert!(
            answer.body.contains(says),
            "{path}: {} lacks {says:?}",
            answer.body
        );
        assert!(answer.work.start.is_empty());
    }
    assert!(s.queue().contains("no expert runs"), "{}", s.queue());
    assert!(
        s.tick().start.is_empty(),
        "nothing malformed reaches a process"
    );

    let mut off = setup_with(r#"{"recall": {"enabled": false}}"#);
    let answer = off.webhook("new_ticket", &ticket("e", "T"));
    assert_eq!(answer.status, 503, "no token configured: {}", answer.body);
    assert!(answer.body.contains("webhook_token"));
}

#[test]
fn a_duplicate_event_is_skipped_even_after_a_restart() {
    let mut s = setup();
    let first = s.accepted("new_ticket", &ticket("e-7", "T-7"));
    let again = s.webhook("new_ticket", &ticket("e-7", "T-7"));
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(
        again.body.contains(r#""duplicate":"e-7""#),
        "{}",
        again.body
    );
    s.restart();
    assert_eq!(
        s.webhook("new_ticket", &ticket("e-7", "T-7")).status,
        200,
        "remembered durably"
    );
    assert_eq!(started(&s.tick()), vec![first]);
    s.advance(25 * 60 * MINUTE);
    s.tick();
    assert_eq!(
        s.webhook("new_ticket", &ticket("e-7", "T-7")).status,
        202,
        "forgotten after the 24 h window"
    );
}

/// A key older than the dedupe window is not a duplicate before any tick has pruned it: not for a
/// webhook arriving first after a long stop, nor in `fire`'s dry run.
#[test]
fn an_expired_dedupe_key_is_not_a_duplicate_before_the_record_is_pruned() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-9", "T-9"));
    let within = s.command(ExpertsCommand::Fire(TriggerFire {
        expert: EXPERT.into(),
        trigger: "new_ticket".into(),
        payload_json: ticket("e-9", "T-9"),
    }));
    assert!(
        within.stdout.contains("this event would be skipped"),
        "{}",
        within.stdout
    );
    s.advance(25 * 60 * MINUTE);
    let fire = s.command(ExpertsCommand::Fire(TriggerFire {
        expert: EXPERT.into(),
        trigger: "new_ticket".into(),
        payload_json: ticket("e-9", "T-9"),
    }));
    assert!(
        fire.stdout.contains(
            "not seen in the last 24 h (experts.dedupe_window_hours): this event would be queued"
        ),
        "{}",
        fire.stdout
    );
    assert_eq!(
        s.webhook("new_ticket", &ticket("e-9", "T-9")).status,
        202,
        "the first event after a long stop is queued"
    );
}

#[test]
fn serial_per_key_runs_one_key_in_order_and_other_keys_beside_it() {
    let mut s = setup();
    let a = s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let b = s.accepted("new_ticket", &ticket("e-2", "T-1"));
    let c = s.accepted("new_ticket", &ticket("e-3", "T-2"));
    let work = s.tick();
    assert_eq!(
        started(&work),
        vec![a.clone(), c.clone()],
        "T-1's second waits; T-2 overlaps"
    );
    assert!(s.tick().start.is_empty(), "b still waits while a runs");
    let run_a = work.start[0].clone();
    let work = s.completed(&run_a, "done");
    assert_eq!(started(&work), vec![b], "b starts as soon as a ends");
}

#[test]
fn an_unresolvable_key_falls_back_to_serial_with_a_warning() {
    let mut s = setup();
    let a = s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let answer = s.webhook(
        "new_ticket",
        r#"{"event_id": "e-2", "ticket": {"id": {"nested": 1}, "summary": "s"}}"#,
    );
    assert_eq!(answer.status, 202, "{}", answer.body);
    assert!(
        answer
            .work
            .notes
            .iter()
            .any(|n| n.contains("concurrency key ticket.id is not in the payload")),
        "{:?}",
        answer.work.notes
    );
    let c = s.accepted("new_ticket", &ticket("e-3", "T-3"));
    let work = s.tick();
    assert_eq!(
        started(&work),
        vec![a.clone()],
        "the fallback waits for a, and c waits behind the fallback"
    );
    s.completed(&work.start[0], "ok");
    let _ = c;
}

#[test]
fn parallel_runs_start_together_and_serial_cron_runs_one_at_a_time() {
    let mut s = setup();
    let one = s.accepted("bulk_import", r#"{"batch": 1}"#);
    let two = s.accepted("bulk_import", r#"{"batch": 2}"#);
    let work = s.tick();
    assert_eq!(started(&work), vec![one, two]);
    assert!(
        work.start[0].message.contains(r#""batch": 1"#),
        "no mapping: the payload's fields are the inputs"
    );
}

/// spec §3 `serial`: every event of the trigger queues and runs one at a time, in order.
#[test]
fn a_serial_trigger_runs_its_events_one_at_a_time_in_order() {
    let mut s = setup();
    s.edit_manifest("    concurrency: parallel\n", "    concurrency: serial\n");
    let one = s.accepted("bulk_import", r#"{"batch": 1}"#);
    let two = s.accepted("bulk_import", r#"{"batch": 2}"#);
    let work = s.tick();
    assert_eq!(started(&work), vec![one], "only the first");
    assert!(s.tick().start.is_empty(), "the second waits while the first runs");
    let next = s.completed(&work.start[0], "batch 1 done");
    let second = if next.start.is_empty() { s.tick().start } else { next.start };
    assert_eq!(second.iter().map(|r| r.invocation.clone()).collect::<Vec<_>>(), vec![two]);
}

/// spec §3: a cron trigger without `tz` is read in UTC.
#[test]
fn a_cron_trigger_without_a_time_zone_runs_in_utc() {
    let mut s = setup();
    s.edit_manifest("    tz: Europe/Berlin\n", "");
    // 2026-11-23T01:30Z: the 02:00 slot is half an hour away in UTC (it was 01:00Z in Berlin).
    s.set_now(1_795_397_400_000);
    assert!(s.tick().start.is_empty(), "the first tick starts the schedule");
    s.advance(29 * MINUTE);
    assert!(s.tick().start.is_empty(), "01:59 UTC: not yet");
    s.advance(MINUTE);
    let work = s.tick();
    assert_eq!(work.start.len(), 1, "{:?}", work.notes);
    assert!(work.start[0].message.contains("cron 2026-11-23 02:00"), "{}", work.start[0].message);
}

#[test]
fn a_channel_message_fires_only_the_bound_channel_trigger() {
    let mut s = setup();
    let work = s.channel("slack", "u-1", "Where is my order?");
    assert!(
        work.notes.is_empty() && s.queue().contains("no expert runs"),
        "slack is not bound"
    );
    let work = s.channel("telegram", "u-1", "Where is my order?");
    assert!(
        work.notes
            .iter()
            .any(|n| n.contains("support_chat: message accepted")),
        "{:?}",
        work.notes
    );
    let run = s.tick().start.remove(0);
    assert!(
        run.message.contains(r#""question": "Where is my order?""#),
        "{}",
        run.message
    );
    assert!(
        run.message.contains(r#""customer": "u-1""#),
        "{}",
        run.message
    );
}

#[test]
fn a_cron_slot_in_its_time_zone_runs_once_and_missed_slots_run_once() {
    let mut s = setup();
    // 2026-11-23T00:30Z = 01:30 in Berlin (CET): the 02:00 slot is half an hour away.
    s.set_now(1_795_393_800_000);
    assert!(
        s.tick().start.is_empty(),
        "the first tick starts the schedule"
    );
    s.advance(29 * MINUTE);
    assert!(s.tick().start.is_empty(), "01:59 local: not yet");
    s.advance(MINUTE);
    let work = s.tick();
    assert_eq!(work.start.len(), 1, "{:?}", work.notes);
    assert!(
        work.start[0]
            .message
            .contains("cron 2026-11-23 02:00 +01:00"),
        "{}",
        work.start[0].message
    );
    let run = work.start[0].clone();
    s.completed(&run, "All quiet.");
    s.advance(MINUTE);
    assert!(s.tick().start.is_empty(), "the slot ran once");
    // Down for three days: three slots missed, one run, saying so.
    s.advance(3 * 24 * 60 * MINUTE);
    let work = s.tick();
    assert_eq!(work.start.len(), 1);
    assert!(
        work.start[0].message.contains("2 earlier slot(s) missed"),
        "{}",
        work.start[0].message
    );
    let due = s.command(host_shim::ExpertsCommand::Due(s.now + 24 * 60 * MINUTE));
    assert!(
        due.stdout.contains(
            "ops-expert/nightly_report (0 2 * * * Europe/Berlin): due: 2026-11-27 02:00 +01:00"
        ),
        "{}",
        due.stdout
    );
}

#[test]
fn a_restart_with_a_non_empty_queue_loses_nothing_and_runs_nothing_twice() {
    let mut s = setup();
    let ids: Vec<String> = (1..=4)
        .map(|n| {
            s.accepted(
                "new_ticket",
                &ticket(&format!("e-{n}"), &format!("T-{}", n % 2)),
            )
        })
        .collect();
    let first = s.tick();
    assert_eq!(started(&first), vec![ids[0].clone(), ids[1].clone()]);
    // The Gateway dies with two runs in flight and two waiting; another takes over.
    s.restart();
    let work = s.tick();
    assert!(
        work.start.is_empty(),
        "interrupted attempts wait for their retry: {:?}",
        started(&work)
    );
    let queue = s.queue();
    assert_eq!(queue.matches("retry-wait").count(), 2, "{queue}");
    assert_eq!(queue.matches(" queued ").count(), 2, "{queue}");
    assert!(queue.contains("interrupted"), "{queue}");
    // The old runner's late report changes nothing.
    let stale = s.completed(&first.start[0], "late");
    assert!(
        stale.deliver.is_empty() && stale.notes.iter().any(|n| n.contains("already settled")),
        "{:?}",
        stale.notes
    );
    s.advance(31_000);
    let work = s.tick();
    assert_eq!(
        started(&work),
        vec![ids[0].clone(), ids[1].clone()],
        "retried in order"
    );
    assert!(work.start.iter().all(|r| r.attempt == 2));
    let mut finished = Vec::new();
    let mut pending = work.start;
    while let Some(run) = pending.pop() {
        finished.push(run.invocation.clone());
        pending.extend(s.completed(&run, "ok").start);
    }
    finished.sort();
    let mut all = ids.clone();
    all.sort();
    assert_eq!(
        finished, all,
        "every accepted event ran to the end exactly once"
    );
    assert!(s.queue().contains("no expert runs"));
    let _ = RunOutcome::TimedOut;
}

/// A record of `n` unfinished `bulk_import` invocations.
fn record_with_open_bulk_imports(s: &Setup, n: u64) {
    let open: Vec<serde_json::Value> = (1..=n)
        .map(|n| {
            serde_json::json!({
                "id": format!("inv-{n}"), "seq": n, "expert": EXPERT, "trigger": "bulk_import",
                "process": "import-batch", "source": "webhook", "inputs": {}, "lane": {"mode": "parallel"},
                "main_session": false, "accepted_ms": s.now, "status": "queued", "attempts": 0, "failures": 0
            })
        })
        .collect();
    let record =
        serde_json::json!({"format": 1, "next_seq": n, "last_runner": 0, "invocations": open});
    std::fs::write(s.state.join("experts-runs.json"), record.to_string()).unwrap();
}

#[test]
fn a_flood_on_one_trigger_is_refused_with_429_and_leaves_the_others_room() {
    let mut s = setup();
    record_with_open_bulk_imports(&s, 200);
    let answer = s.webhook("bulk_import", r#"{"batch": "b-201"}"#);
    assert_eq!(answer.status, 429, "{}", answer.body);
    assert!(
        answer
            .body
            .contains("ops-expert's trigger bulk_import has 200 unfinished runs"),
        "{}",
        answer.body
    );
    assert_eq!(
        s.webhook("new_ticket", &ticket("e-1", "T-1")).status,
        202,
        "another trigger of the same expert still queues"
    );
    assert!(
        s.command(ExpertsCommand::Run(manual_run(EXPERT, "check the queue")))
        .stdout
        .contains("inv-"),
        "and so does a manual run"
    );
}

/// The record's size on disk.
fn record_bytes(s: &Setup) -> u64 {
    std::fs::metadata(s.state.join("experts-runs.json")).map_or(0, |m| m.len())
}

/// Manual runs count against the record's bound as events do: they cannot grow it past 8 MiB.
#[test]
fn manual_runs_are_refused_once_the_record_is_full() {
    const BOUND: u64 = 8 << 20;
    let mut s = setup();
    let big = "x".repeat(120 << 10);
    let mut refused = None;
    for n in 0..80 {
        let out = s.command(ExpertsCommand::Run(manual_run(EXPERT, &format!("run {n}: {big}"))));
        if out.exit_code != 0 {
            refused = Some(out.stderr);
            break;
        }
    }
    let refused = refused.expect("80 manual runs of 120 KiB do not all fit in 8 MiB");
    assert!(
        refused.contains("the expert runs record holds"),
        "{refused}"
    );
    assert!(record_bytes(&s) <= BOUND, "{} bytes", record_bytes(&s));
}

#[test]
fn the_record_is_bounded_in_bytes_and_a_finished_run_keeps_no_large_inputs() {
    const BOUND: u64 = 8 << 20;
    let mut s = setup();
    let big = "x".repeat(250 << 10);
    let mut accepted = Vec::new();
    let mut refused = None;
    for n in 0..60 {
        let body = serde_json::json!({"event_id": format!("e-{n}"), "ticket": {"id": format!("T-{n}"), "summary": big}});
        let answer = s.webhook("new_ticket", &body.to_string());
        match answer.status {
            202 => accepted.push(answer),
            429 => {
                refused = Some(answer.body);
                break;
            }
            other => panic!("{other}: {}", answer.body),
        }
    }
    println!(
        "{} webhooks of 250 KiB accepted, the record {} bytes",
        accepted.len(),
        record_bytes(&s)
    );
    let refused = refused.expect("webhooks beyond the bound are refused");
    assert!(
        refused.contains("the expert runs record holds"),
        "{refused}"
    );
    assert!(record_bytes(&s) <= BOUND, "{} bytes", record_bytes(&s));
    let retried =
        serde_json::json!({"event_id": "e-late", "ticket": {"id": "T-late", "summary": "small"}});
    assert_eq!(
        s.webhook("new_ticket", &retried.to_string()).status,
        202,
        "a small event still fits"
    );
    // Runs finish one at a time (one lane per trigger): each keeps its log, not its 250 KiB.
    let mut pending = s.tick().start;
    while let Some(run) = pending.pop() {
        pending.extend(s.completed(&run, "done").start);
    }
    assert!(s.queue().contains("no expert runs"), "{}", s.queue());
    assert!(
        record_bytes(&s) < 1 << 20,
        "finished runs dropped their inputs: {} bytes",
        record_bytes(&s)
    );
}

#[test]
fn a_channel_message_is_bounded_as_a_webhook_body_is() {
    let mut s = setup();
    let work = s.channel("telegram", "u-1", &"y".repeat(300 << 10));
    assert!(
        work.start.is_empty() && record_bytes(&s) == 0,
        "not queued: {:?}",
        work.notes
    );
    assert!(
        work.notes
            .iter()
            .any(|n| n.contains("at most 262144 are accepted")),
        "{:?}",
        work.notes
    );
}

const PRIVATE_TEXT: &str = "PRIVATE-RATE-CODE-9913";

/// Gives the fixture private knowledge named in the context of `triage` (isolated runs) and of
/// `import-batch`, whose trigger then runs in the main session.
fn with_private_context(s: &mut Setup) {
    let dir = s.experts.join(EXPERT);
    let edit = |path: &str, from: &str, to: &str| {
        let text = std::fs::read_to_string(dir.join(path)).unwrap();
        assert!(text.contains(from), "{path}: {from}");
        std::fs::write(dir.join(path), text.replacen(from, to, 1)).unwrap();
    };
    std::fs::create_dir_all(dir.join("knowledge")).unwrap();
    std::fs::write(
        dir.join("knowledge/rates.md"),
        format!(
            "---\nname: rates\ndescription: Negotiated rates\ntype: private\n---\n{PRIVATE_TEXT}\n"
        ),
    )
    .unwrap();
    edit(
        "expert.yaml",
        "  state:\n",
        "  knowledge:\n    - knowledge/rates.md\n  state:\n",
    );
    edit(
        "expert.yaml",
        "  - name: bulk_import\n    type: webhook\n",
        "  - name: bulk_import\n    type: webhook\n    session: main\n",
    );
    edit(
        "processes/triage.md",
        "  - state/queue.md\n",
        "  - state/queue.md\n  - knowledge/rates.md\n",
    );
    edit(
        "processes/import-batch.md",
        "trigger: bulk_import\n",
        "trigger: bulk_import\ncontext:\n  - knowledge/rates.md\n",
    );
    s.restart();
}

#[test]
fn private_knowledge_is_preloaded_only_into_the_experts_own_run_session() {
    let mut s = setup();
    with_private_context(&mut s);
    let validate = s.command(host_shim::ExpertsCommand::Validate(EXPERT.into()));
    assert!(
        validate.stdout.contains(
            "warning [xref.private-context] processes/import-batch.md:6: context[0]: this is private \
             knowledge and import-batch runs in the main session (trigger bulk_import): it is not \
             preloaded there"
        ),
        "{}{}",
        validate.stdout,
        validate.stderr
    );

    let fire = s.command(host_shim::ExpertsCommand::Fire(TriggerFire {
        expert: EXPERT.into(),
        trigger: "new_ticket".into(),
        payload_json: ticket("e-1", "T-1"),
    }));
    assert_eq!(fire.exit_code, 0, "{}", fire.stderr);
    assert!(
        fire.stdout.contains(
            "### knowledge/rates.md\n\n(private knowledge: preloaded into the run's own \
             session, not shown here)"
        ),
        "{}",
        fire.stdout
    );
    assert!(!fire.stdout.contains(PRIVATE_TEXT), "{}", fire.stdout);

    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let isolated = s.tick().start.remove(0);
    assert!(
        isolated.message.contains(PRIVATE_TEXT),
        "an isolated run is the expert's own session: {}",
        isolated.message
    );

    s.accepted("bulk_import", r#"{"batch": 1}"#);
    let work = s.tick();
    let main = work
        .start
        .iter()
        .find(|r| r.session_key == MAIN)
        .expect("the main-session run starts");
    assert!(!main.message.contains(PRIVATE_TEXT), "{}", main.message);
    assert!(
        main.message
            .contains("(The process's private knowledge is not preloaded into the main session.)"),
        "{}",
        main.message
    );
}

#[test]
fn an_unknown_preset_leaves_its_trigger_inactive_and_the_package_loads() {
    let fixture = graphiti_openclaw_tests::workspace().join("tests/fixtures/experts-preset");
    let settings =
        format!(r#"{{"recall": {{"enabled": false}}, "experts": {{"webhook_token": "{TOKEN}"}}}}"#);
    // 2026-01-01T00:00:00Z, a Thursday
    let mut s = setup_from(&fixture, &settings, 1_767_225_600_000);
    let validate = s.command(host_shim::ExpertsCommand::Validate("inbox-expert".into()));
    assert_eq!(
        validate.exit_code, 0,
        "{}{}",
        validate.stdout, validate.stderr
    );
    assert!(
        validate.stdout.contains(
            "warning [trigger.preset] expert.yaml:14: triggers[0].preset: preset \"gmail\" is not one \
             this runtime provides (it provides none): trigger new_email stays inactive; remove \
             `preset` to make it a plain webhook"
        ),
        "{}",
        validate.stdout
    );
    let list = s.command(host_shim::ExpertsCommand::List);
    assert!(
        list.stdout.contains("✓ inbox-expert 0.1.0"),
        "{}",
        list.stdout
    );
    let registry = s.command(host_shim::ExpertsCommand::Registry);
    assert!(
        registry
            .stdout
            .contains("new_email (webhook/gmail, inactive) → inbound-email-triage"),
        "{}",
        registry.stdout
    );

    let refused = s.webhook_with(
        "inbox-expert/new_email",
        Some(TOKEN),
        br#"{"messages": [{"id": "m-1"}]}"#,
    );
    assert_eq!(refused.status, 404, "{}", refused.body);
    assert!(
        refused
            .body
            .contains("trigger new_email of inbox-expert is inactive"),
        "{}",
        refused.body
    );
    assert!(s.queue().contains("no expert runs"), "nothing queued");

    // The cron trigger beside it runs: its first slot after the schedule starts.
    s.tick();
    s.advance(24 * 60 * MINUTE);
    let work = s.tick();
    assert_eq!(work.start.len(), 1, "{:?}", work.notes);
    assert!(
        work.start[0]
            .message
            .contains("Run the process `scan-inbox`"),
        "{}",
        work.start[0].message
    );
}

#[test]
fn a_retry_preloads_its_own_sessions_state_never_another_runs() {
    let mut s = setup();
    let dir = s.experts.join(EXPERT);
    std::fs::write(
        dir.join("state/notes.md"),
        "---\nname: notes\ndescription: This run's notes\nscope: session\n---\n(none yet)\n",
    )
    .unwrap();
    let edit = |path: &str, from: &str, to: &str| {
        let text = std::fs::read_to_string(dir.join(path)).unwrap();
        assert!(text.contains(from), "{path}: {from}");
        std::fs::write(dir.join(path), text.replacen(from, to, 1)).unwrap();
    };
    edit(
        "expert.yaml",
        "    - state/queue.md\n",
        "    - state/queue.md\n    - state/notes.md\n",
    );
    edit(
        "processes/triage.md",
        "  - state/queue.md\n",
        "  - state/queue.md\n  - state/notes.md\n",
    );
    s.restart();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    s.accepted("new_ticket", &ticket("e-2", "T-2"));
    let runs = s.tick().start;
    assert_eq!(runs.len(), 2, "two keys run side by side");
    for run in &runs {
        assert!(run.message.contains("(none yet)"), "{}", run.message);
        // The run's first turn prepares its session; it then writes its notes where it was told.
        let injection = s
            .shim
            .before_agent_start(&graphiti_openclaw_tests::prompt("go"), &run_context(run));
        let prompt = injection.system_context.unwrap_or_default();
        let own = format!("/sessions/{}/{{path}}", run.invocation);
        assert!(prompt.contains(&own), "{prompt}");
        let notes = s.workspace.join(format!(
            "expert-state/{EXPERT}/sessions/{}/state/notes.md",
            run.invocation
        ));
        assert!(notes.is_file(), "{}", notes.display());
        std::fs::write(notes, format!("progress of {}\n", run.invocation)).unwrap();
    }
    s.ended(&runs[0], RunOutcome::Failed("tickets-mcp timed out".into()));
    s.advance(30_000);
    let retry = s.tick().start.remove(0);
    assert_eq!(retry.attempt, 2);
    assert!(
        retry
            .message
            .contains(&format!("progress of {}", runs[0].invocation)),
        "{}",
        retry.message
    );
    assert!(
        !retry
            .message
            .contains(&format!("progress of {}", runs[1].invocation)),
        "{}",
        retry.message
    );
}

#[test]
fn a_result_handed_to_a_gateway_that_stopped_before_posting_it_is_handed_out_again() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    s.posts = false;
    let work = s.completed(&run, "Triaged T-1.");
    let handed = delivered(&work, DeliveryKind::Result);
    assert_eq!(handed.len(), 1, "{:?}", work.deliver);
    let run_id = handed[0].run_id.clone();
    // The Gateway is killed before it posts the result; another starts on the same directory.
    s.restart();
    s.posts = true;
    s.advance(MINUTE);
    let again = s.tick();
    let results = delivered(&again, DeliveryKind::Result);
    assert_eq!(results.len(), 1, "handed out again: {:?}", again.deliver);
    assert_eq!(
        results[0].run_id, run_id,
        "under the same run id (one turn in OpenClaw)"
    );
    s.restart();
    s.advance(60 * MINUTE);
    assert!(s.tick().deliver.is_empty(), "posted now: never again");
}

#[test]
fn a_delivery_the_host_never_reports_posted_is_retried_not_dropped() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    s.posts = false;
    assert_eq!(
        delivered(&s.completed(&run, "Triaged."), DeliveryKind::Result).len(),
        1
    );
    s.advance(MINUTE);
    assert!(
        s.tick().deliver.is_empty(),
        "not twice while the host may still be posting it"
    );
    s.advance(10 * MINUTE);
    s.posts = true;
    assert_eq!(
        delivered(&s.tick(), DeliveryKind::Result).len(),
        1,
        "handed out again"
    );
    s.advance(20 * MINUTE);
    assert!(s.tick().deliver.is_empty());
}

#[test]
fn a_finished_invocations_session_is_handed_over_once_to_be_deleted() {
    let mut s = setup();
    s.accepted("new_ticket", &ticket("e-1", "T-1"));
    let run = s.tick().start.remove(0);
    let failed = s.ended(
        &run,
        RunOutcome::Failed("the ticket system timed out".into()),
    );
    assert!(
        failed.end_sessions.is_empty(),
        "a retry runs in the same session"
    );
    s.advance(10 * MINUTE);
    let retry = s.tick().start.remove(0);
    let done = s.completed(&retry, "Triaged.");
    assert_eq!(done.end_sessions, vec![retry.session_key.clone()]);
    s.advance(MINUTE);
    assert!(s.tick().end_sessions.is_empty(), "once");
}
