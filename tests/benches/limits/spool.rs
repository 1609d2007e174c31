//! The capture spool while Graphiti is down, in the component through the shim: a tick that backs
//! off with 20,000 turns waiting against one with 20 (it must not pay for the whole spool each
//! time), and, printed beside it, the tick right after a turn, which lists the spool once.

use crate::{median, ms};
use graphiti_openclaw_tests::bench_rows::Row;
use graphiti_openclaw_tests::{
    copy_dir, example_config, exchange, graphiti_shim, hook_context, temp_dir,
};
use host_shim::{CaptureOutcome, ChatType, Shim};
use std::path::Path;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const UNREACHABLE: &str = "http://127.0.0.1:9";
/// How many times a backed-off tick may take with 20,000 waiting what it takes with 20.
const FACTOR: f64 = 3.0;

/// A shim with Graphiti unreachable and a back-off longer than the run, `waiting` turns in its
/// spool (one captured, the rest copies under older names), after the first tick backed off.
fn backed_off(waiting: usize) -> (Shim, TempDir, TempDir) {
    let config = temp_dir("bench-spool-config");
    copy_dir(&example_config(), config.path());
    std::fs::write(
        config.path().join("settings.yaml"),
        format!(
            "schema_version: 1\ngraphiti:\n  url: {UNREACHABLE}/mcp\n\
             capture:\n  spool_max_episodes: 50000\n  backoff_initial_ms: 3600000\n  backoff_max_ms: 3600000\n"
        ),
    )
    .unwrap();
    let state = temp_dir("bench-spool-state");
    let mut shim = graphiti_shim(config.path(), state.path(), UNREACHABLE);
    turn(&mut shim, 0);
    fill(&state.path().join("spool"), waiting);
    let first = shim.tick();
    assert_eq!(first.pending as usize, waiting, "{first:?}");
    (shim, config, state)
}

fn turn(shim: &mut Shim, n: usize) {
    let said = exchange(
        &format!("Remember that box {n} holds the winter tyres"),
        "Noted.",
    );
    let outcome = shim.agent_end(&said, &hook_context("bench-spool", ChatType::Direct));
    assert!(matches!(outcome, CaptureOutcome::Spooled(_)), "{outcome:?}");
}

/// The spool's one entry copied under older names until `count` wait.
fn fill(spool: &Path, count: usize) {
    let entry = std::fs::read_dir(spool)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|name| name.ends_with(".episode"))
        .unwrap();
    let bytes = std::fs::read(spool.join(&entry)).unwrap();
    let micros: u128 = entry[..20].parse().unwrap();
    for k in 1..count as u128 {
        std::fs::write(
            spool.join(format!("{:020}{}", micros - k, &entry[20..])),
            &bytes,
        )
        .unwrap();
    }
}

/// Medians of a backed-off tick, and of a turn's tick (the turn itself not timed), `runs` each.
fn tick_medians(waiting: usize, runs: usize) -> (Duration, Duration) {
    let (mut shim, _config, _state) = backed_off(waiting);
    let mut idle = Vec::new();
    let mut after_turn = Vec::new();
    for n in 1..=runs {
        let started = Instant::now();
        let report = shim.tick();
        idle.push(started.elapsed());
        assert!(
            report.error.is_some() && report.retry_in_ms.is_some(),
            "{report:?}"
        );
        assert_eq!(report.pending as usize, waiting + n - 1, "{report:?}");
        turn(&mut shim, n);
        let started = Instant::now();
        let report = shim.tick();
        after_turn.push(started.elapsed());
        assert_eq!(report.pending as usize, waiting + n, "{report:?}");
    }
    (median(&mut idle), median(&mut after_turn))
}

pub fn backed_off_ticks(runs: usize) {
    let (few, few_after_turn) = tick_medians(20, runs);
    let (many, many_after_turn) = tick_medians(20_000, runs);
    println!(
        "  Graphiti down, backing off: a tick with 20 turns waiting {:.2} ms, with 20,000 {:.2} ms; \
         the tick right after a turn (it lists the spool once) {:.2} ms and {:.2} ms",
        ms(few),
        ms(many),
        ms(few_after_turn),
        ms(many_after_turn)
    );
    Row {
        what: "tick backing off while Graphiti is down, 20,000 turns waiting, median",
        value: ms(many),
        unit: "ms",
        goal: (FACTOR * ms(few) * 100.0).round() / 100.0,
        baseline: "the same tick with 20 waiting (goal: 3 times it)",
        baseline_value: ms(few),
    }
    .record();
}
