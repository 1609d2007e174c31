//! What start-up costs: one `intent-test` process against `--version` (a process that loads no
//! component), a configuration load at 1,000 and 10,000 rules in the component, and the size of
//! `plugin.wasm`. Each answer is checked.

use crate::{median, ms};
use graphiti_openclaw_tests::bench_rows::{Row, write_rules_config};
use graphiti_openclaw_tests::{example_config, plugin_wasm, temp_dir, workspace};
use host_shim::{Limits, Shim, ShimOptions};
use std::process::Command;
use std::time::{Duration, Instant};

const PROMPT: &str = "Draft a tweet about our launch";

fn cli() -> Command {
    Command::new(workspace().join("target/release/graphiti-openclaw"))
}

/// Wall time of one process, and what it printed (it must succeed).
fn timed(command: &mut Command) -> (Duration, String) {
    let started = Instant::now();
    let out = command.output().expect("run the CLI");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (took, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Medians of `runs` `intent-test` processes with a cached component and of as many `--version`
/// processes, alternating; records the row.
pub fn intent_test_process(runs: usize) {
    let cache = temp_dir("limits-cache");
    let state = temp_dir("limits-state");
    let intent_test = || {
        let mut command = cli();
        command
            .arg("--config-dir")
            .arg(example_config())
            .arg("--wasm")
            .arg(plugin_wasm())
            .arg("--cache-dir")
            .arg(cache.path())
            .arg("--state-dir")
            .arg(state.path())
            .args(["--quiet", "intent-test", PROMPT]);
        command
    };
    let (_, first) = timed(&mut intent_test()); // compiles the component into the cache
    assert!(first.contains("Decision: inject content_tweet"), "{first}");
    let (mut ours, mut baseline) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (took, out) = timed(&mut intent_test());
        assert!(out.contains("Decision: inject content_tweet"), "{out}");
        ours.push(took);
        let (took, out) = timed(cli().arg("--version"));
        assert!(out.starts_with("graphiti-openclaw"), "{out}");
        baseline.push(took);
    }
    Row {
        what: "one intent-test process, cached component, example config, median",
        value: ms(median(&mut ours)),
        unit: "ms",
        goal: 15.0,
        baseline: "a `--version` process (no component), median",
        baseline_value: ms(median(&mut baseline)),
    }
    .record();
}

/// The median time of `reload-config` in the component at `rules` rules.
fn config_load(rules: usize, runs: usize) -> Duration {
    config_load_padded(rules, 0, runs)
}

/// [`config_load`] with the rules file padded by comment lines to at least `padded_bytes`.
fn config_load_padded(rules: usize, padded_bytes: usize, runs: usize) -> Duration {
    let dir = temp_dir(&format!("limits-rules-{rules}-{padded_bytes}"));
    write_rules_config(dir.path(), rules, 10, |r, k| format!("kw{r}x{k}"));
    if padded_bytes > 0 {
        let file = dir.path().join("intent_rules.yaml");
        let mut text = std::fs::read_to_string(&file).unwrap();
        let line = format!("# {}\n", "-".repeat(97));
        text.push_str(&line.repeat(padded_bytes / line.len() + 1));
        std::fs::write(&file, text).unwrap();
    }
    let limits = Limits {
        call_timeout: Duration::from_secs(60),
        send_timeout: Duration::from_secs(60),
        memory_bytes: 1 << 30,
    };
    let mut options = ShimOptions::new(plugin_wasm(), dir.path(), limits);
    let (cache, state) = (temp_dir("limits-load-cache"), temp_dir("limits-load-state"));
    options.cache_dir = Some(cache.path().to_path_buf());
    options.state_dir = Some(state.path().to_path_buf());
    options.echo_logs = false;
    let mut shim = Shim::new(options).expect("shim");
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let summary = shim.reload_config().unwrap_or_else(|e| panic!("{e:?}"));
            let took = started.elapsed();
            assert_eq!(summary.rules as usize, rules, "every rule loaded");
            took
        })
        .collect();
    median(&mut samples)
}

/// Configuration load at 10,000 rules against 10× the load at 1,000 (linear would match it).
pub fn config_loads(runs: usize) {
    let thousand = config_load(1_000, runs);
    let ten_thousand = config_load(10_000, runs);
    println!(
        "  configuration load in the component: 1,000 rules {:.1} ms, 10,000 rules {:.1} ms ({:.1}×)",
        ms(thousand),
        ms(ten_thousand),
        ten_thousand.as_secs_f64() / thousand.as_secs_f64()
    );
    Row {
        what: "configuration load at 10,000 rules, median",
        value: ms(ten_thousand),
        unit: "ms",
        goal: 200.0,
        baseline: "10 × the load at 1,000 rules (linear)",
        baseline_value: 10.0 * ms(thousand),
    }
    .record();
}

/// A 50 MB rules file against 10× a 5 MB one: reading a file is linear in its size.
pub fn large_file_loads(runs: usize) {
    let five = config_load_padded(10, 5_000_000, runs);
    let fifty = config_load_padded(10, 50_000_000, runs);
    println!(
        "  configuration load with a 5 MB rules file {:.0} ms, 50 MB {:.0} ms ({:.1}×)",
        ms(five),
        ms(fifty),
        fifty.as_secs_f64() / five.as_secs_f64()
    );
    Row {
        what: "configuration load with a 50 MB rules file, median",
        value: ms(fifty),
        unit: "ms",
        goal: 2_000.0,
        baseline: "10 × the load with a 5 MB file (linear)",
        baseline_value: 10.0 * ms(five),
    }
    .record();
}

pub fn size() {
    let bytes = std::fs::metadata(plugin_wasm()).expect("plugin.wasm").len();
    Row {
        what: "plugin.wasm",
        value: bytes as f64 / 1e6,
        unit: "MB",
        goal: 2.25,
        baseline: "the budget (docs/decisions/size-budget.md)",
        baseline_value: 2.25,
    }
    .record();
}
