//! The expert runtime under load, in the component through the shim: a webhook answered while the
//! runs record is at its bound (against an empty record) and the record's size after a flood of
//! large webhooks (against the bound); a tick with 1,000 cron triggers none of which is due (against
//! one trigger). Each answer is checked.

use crate::{median, ms};
use graphiti_openclaw_tests::bench_rows::Row;
use graphiti_openclaw_tests::{copy_dir, expert_shim_options, temp_dir, workspace};
use host_shim::{Command, ExpertsCommand, Shim, ToolBinding, WebhookRequest};
use std::path::Path;
use std::time::{Duration, Instant};

const TOKEN: &str = "bench-token";
/// The record's bound (`expert_runs::store::MAX_RECORD_BYTES`).
const RECORD_BOUND_BYTES: f64 = (8 << 20) as f64;

fn settings() -> String {
    format!(r#"{{"recall": {{"enabled": false}}, "experts": {{"webhook_token": "{TOKEN}"}}}}"#)
}

fn shim(experts: &Path, state: &Path, agents: &Path) -> Shim {
    Shim::new(expert_shim_options(experts, state, agents, &settings())).expect("shim starts")
}

fn webhook(shim: &mut Shim, n: usize, summary: &str, now_ms: u64) -> (Duration, u16) {
    let body = serde_json::json!({"event_id": format!("e-{n}"), "ticket": {"id": format!("T-{n}"), "summary": summary}});
    let request = WebhookRequest {
        path: "ops-expert/new_ticket".into(),
        headers: vec![("authorization".into(), format!("Bearer {TOKEN}"))],
        body: body.to_string().into_bytes(),
    };
    let started = Instant::now();
    let answer = shim.expert_webhook(&request, now_ms);
    (started.elapsed(), answer.status)
}

/// Webhooks just under 256 KiB (the default body limit) until the record is refused more, then a small one answered against that
/// full record and against an empty one, alternating.
pub fn full_record(runs: usize) {
    let experts = temp_dir("bench-experts");
    copy_dir(&workspace().join("tests/fixtures/experts"), experts.path());
    let (full_state, agents) = (temp_dir("bench-full"), temp_dir("bench-agents"));
    let mut full = shim(experts.path(), full_state.path(), agents.path());
    let now = 1_795_392_000_000;
    let big = "x".repeat((256 << 10) - 512);
    let mut accepted = 0;
    for n in 0..80 {
        match webhook(&mut full, n, &big, now).1 {
            202 => accepted += 1,
            429 => break,
            other => panic!("webhook answered {other}"),
        }
    }
    let record = full_state.path().join("experts-runs.json");
    let size = std::fs::metadata(&record).expect("the record").len() as f64;
    assert!(size <= RECORD_BOUND_BYTES, "{size} bytes");
    println!(
        "  {accepted} webhooks of 256 KiB accepted, then refused (429); the record {size:.0} bytes"
    );
    Row {
        what: "expert runs record after a flood of 256 KiB webhooks",
        value: size / 1e6,
        unit: "MB",
        goal: RECORD_BOUND_BYTES / 1e6,
        baseline: "its bound",
        baseline_value: RECORD_BOUND_BYTES / 1e6,
    }
    .record();

    let empty_state = temp_dir("bench-empty");
    let mut empty = shim(experts.path(), empty_state.path(), agents.path());
    let (mut at_bound, mut from_empty) = (Vec::new(), Vec::new());
    for n in 0..runs.max(3) * 5 {
        let (took, status) = webhook(&mut full, 1_000 + n, "small", now);
        assert_eq!(status, 202, "a small event fits a record at its bound");
        at_bound.push(took);
        let (took, status) = webhook(&mut empty, 1_000 + n, "small", now);
        assert_eq!(status, 202);
        from_empty.push(took);
        // Keep the empty one empty: a fresh record each time.
        let _ = std::fs::remove_file(empty_state.path().join("experts-runs.json"));
    }
    let (at_bound, from_empty) = (median(&mut at_bound), median(&mut from_empty));
    println!(
        "  a small webhook with the record at its bound {:.1} ms, with an empty record {:.1} ms",
        ms(at_bound),
        ms(from_empty)
    );
    Row {
        what: "webhook accepted with the runs record at its bound, median",
        value: ms(at_bound),
        unit: "ms",
        goal: 250.0,
        baseline: "with an empty record",
        baseline_value: ms(from_empty),
    }
    .record();
}

/// The fixture package with `count` more cron triggers on one process, none due within days.
fn cron_package(root: &Path, count: usize) {
    let dir = root.join("ops-expert");
    copy_dir(&workspace().join("tests/fixtures/experts/ops-expert"), &dir);
    let manifest = dir.join("expert.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut triggers = String::from("triggers:\n");
    for n in 0..count {
        triggers.push_str(&format!(
            "  - name: yearly_{n}\n    type: cron\n    expr: \"0 3 1 1 *\"\n    tz: Europe/Berlin\n    process: nightly-report\n"
        ));
    }
    assert!(text.contains("triggers:\n"), "the fixture has triggers");
    std::fs::write(&manifest, text.replacen("triggers:\n", &triggers, 1)).unwrap();
}

fn tick_times(triggers: usize, runs: usize) -> Duration {
    let experts = temp_dir("bench-cron");
    cron_package(experts.path(), triggers);
    let (state, agents) = (temp_dir("bench-cron-state"), temp_dir("bench-agents"));
    let mut shim = shim(experts.path(), state.path(), agents.path());
    // Monday 2026-11-23 01:00 in Berlin: the fixture's nightly 02:00 trigger is an hour away.
    let mut now = 1_795_392_000_000;
    let due = shim.run_command(&Command::Experts(ExpertsCommand::Due(now)));
    assert_eq!(
        due.stdout.matches("/yearly_").count(),
        triggers,
        "{}{}",
        due.stdout,
        due.stderr
    );
    // The first ticks note each trigger and compute its next slot.
    for _ in 0..2 {
        let work = shim.expert_tick(now);
        assert!(work.start.is_empty(), "{:?}", work.notes);
        now += 60_000;
    }
    let mut samples = Vec::new();
    for _ in 0..runs.max(3) * 10 {
        let started = Instant::now();
        let work = shim.expert_tick(now);
        samples.push(started.elapsed());
        assert!(
            work.start.is_empty() && !work.notes.iter().any(|n| n.contains("cron")),
            "{:?}",
            work.notes
        );
        now += 60_000;
    }
    median(&mut samples)
}

/// A tick with 1,000 quiet cron triggers against a tick with one.
pub fn quiet_cron(runs: usize) {
    let one = tick_times(1, runs);
    let thousand = tick_times(1_000, runs);
    println!(
        "  a tick with 1 quiet cron trigger {:.2} ms, with 1,000 {:.2} ms",
        ms(one),
        ms(thousand)
    );
    Row {
        what: "expert tick with 1,000 cron triggers none due, median",
        value: ms(thousand),
        unit: "ms",
        goal: 50.0,
        baseline: "with one trigger",
        baseline_value: ms(one),
    }
    .record();
}

/// Medians of `time(true)` (the hostile file) and `time(false)` (the valid one), alternating, at
/// least three of each.
fn hostile_and_valid_medians(
    runs: usize,
    mut time: impl FnMut(bool) -> Duration,
) -> (Duration, Duration) {
    let (mut hostile, mut valid): (Vec<_>, Vec<_>) =
        (0..runs.max(3)).map(|_| (time(true), time(false))).unzip();
    (median(&mut hostile), median(&mut valid))
}

/// `experts bind` on a package whose `bindings.yaml` is 100 KB of `[[[…]]]` (refused before it is
/// parsed) against a bind on the fixture's valid file.
pub fn nested_bindings(runs: usize) {
    let time_bind = |nested: bool| {
        let experts = temp_dir("bench-bind");
        copy_dir(&workspace().join("tests/fixtures/experts"), experts.path());
        let bindings = experts.path().join("ops-expert/bindings.yaml");
        if nested {
            let depth = 50_000;
            std::fs::write(
                &bindings,
                format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
            )
            .unwrap();
        }
        let (state, agents) = (temp_dir("bench-bind-state"), temp_dir("bench-agents"));
        let mut options =
            expert_shim_options(experts.path(), state.path(), agents.path(), &settings());
        options.experts_writable = true;
        let mut shim = Shim::new(options).expect("shim starts");
        let bind = Command::Experts(ExpertsCommand::Bind(ToolBinding {
            expert: "ops-expert".into(),
            tool: "tickets".into(),
            server: "helpdesk-mcp".into(),
        }));
        let started = Instant::now();
        let out = shim.run_command(&bind);
        let took = started.elapsed();
        if nested {
            assert!(
                out.exit_code != 0 && out.stderr.contains("nest"),
                "{}",
                out.stderr
            );
        } else {
            assert_eq!(out.exit_code, 0, "{}", out.stderr);
        }
        took
    };
    let (nested, valid) = hostile_and_valid_medians(runs, time_bind);
    println!(
        "  experts bind: 100 KB of nested brackets refused in {:.1} ms, a valid file bound in {:.1} ms",
        ms(nested),
        ms(valid)
    );
    Row {
        what: "experts bind refusing a 100 KB nested bindings.yaml, median",
        value: ms(nested),
        unit: "ms",
        goal: 100.0,
        baseline: "binding with a valid file",
        baseline_value: ms(valid),
    }
    .record();
}

/// An alias bomb in an expert's manifest: ten levels of ten aliases (10^10 nodes if expanded) in
/// `spec`, which is kept as a YAML value.
fn alias_bomb() -> String {
    let mut levels = vec!["&l0 [x, x, x, x, x, x, x, x, x, x]".to_string()];
    for level in 1..10 {
        let aliases = vec![format!("*l{}", level - 1); 10].join(", ");
        levels.push(format!("&l{level} [{aliases}]"));
    }
    format!("spec: [{}]\n", levels.join(", "))
}

/// `experts validate` refusing a manifest with an alias bomb, against validating the valid one.
pub fn alias_bomb_manifest(runs: usize) {
    let time_validate = |bomb: bool| {
        let experts = temp_dir("bench-alias-bomb");
        copy_dir(&workspace().join("tests/fixtures/experts"), experts.path());
        let manifest = experts.path().join("ops-expert/expert.yaml");
        if bomb {
            let text = std::fs::read_to_string(&manifest).unwrap();
            let text = text.replacen("spec: \"1.0\"\n", &alias_bomb(), 1);
            assert!(text.contains("&l9"), "the fixture's spec line was replaced");
            std::fs::write(&manifest, text).unwrap();
        }
        let (state, agents) = (temp_dir("bench-bomb-state"), temp_dir("bench-bomb-agents"));
        let mut shim = shim(experts.path(), state.path(), agents.path());
        let validate = Command::Experts(ExpertsCommand::Validate("ops-expert".into()));
        let started = Instant::now();
        let out = shim.run_command(&validate);
        let took = started.elapsed();
        if bomb {
            let said = format!("{}{}", out.stdout, out.stderr);
            assert!(said.contains("aliases (`*name`) repeat more than"), "{said}");
        } else {
            assert_eq!(out.exit_code, 0, "{}", out.stderr);
        }
        took
    };
    let (bomb, valid) = hostile_and_valid_medians(runs, time_validate);
    println!(
        "  experts validate: an alias bomb in expert.yaml refused in {:.1} ms, the valid package validated in {:.1} ms",
        ms(bomb),
        ms(valid)
    );
    Row {
        what: "experts validate refusing an alias bomb in expert.yaml, median",
        value: ms(bomb),
        unit: "ms",
        goal: 1_000.0,
        baseline: "validating the valid package",
        baseline_value: ms(valid),
    }
    .record();
}
