//! What start-up costs: one `intent-test` process against `--version` (a process that loads no
//! component), a configuration load at 1,000 and 10,000 rules in the component, hostile rules files
//! refused, and the size of `plugin.wasm`. Each answer is checked.

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

/// A shim over the configuration in `dir`, with room for large files.
fn load_shim(dir: &std::path::Path) -> (Shim, [tempfile::TempDir; 2]) {
    let limits = Limits {
        call_timeout: Duration::from_secs(60),
        send_timeout: Duration::from_secs(60),
        memory_bytes: 1 << 30,
    };
    let mut options = ShimOptions::new(plugin_wasm(), dir, limits);
    let (cache, state) = (temp_dir("limits-load-cache"), temp_dir("limits-load-state"));
    options.cache_dir = Some(cache.path().to_path_buf());
    options.state_dir = Some(state.path().to_path_buf());
    options.echo_logs = false;
    (Shim::new(options).expect("shim"), [cache, state])
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
    let (mut shim, _dirs) = load_shim(dir.path());
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

/// The median time of `reload-config` refusing `rules_yaml` as the rules file, with an error that
/// says `refusal`.
fn hostile_load(rules_yaml: &str, refusal: &str, runs: usize) -> Duration {
    let dir = temp_dir("limits-hostile-rules");
    write_rules_config(dir.path(), 10, 10, |r, k| format!("kw{r}x{k}"));
    std::fs::write(dir.path().join("intent_rules.yaml"), rules_yaml).unwrap();
    let (mut shim, _dirs) = load_shim(dir.path());
    let mut samples: Vec<Duration> = (0..runs.max(3))
        .map(|_| {
            let started = Instant::now();
            let refused = shim
                .reload_config()
                .expect_err("a hostile rules file is refused");
            let took = started.elapsed();
            let said = format!("{refused:?}");
            assert!(said.contains(refusal), "{said}");
            took
        })
        .collect();
    median(&mut samples)
}

/// A 100 KB `[[[…` rules file refused by the component, against a valid 1,000-rule load.
pub fn hostile_loads(runs: usize) {
    let valid = config_load(1_000, runs);
    let nested = hostile_load(&"[".repeat(100_000), "nested deeper than 64 levels", runs);
    println!(
        "  a 100 KB `[[[…` rules file refused in {:.1} ms, a valid 1,000-rule load {:.1} ms",
        ms(nested),
        ms(valid)
    );
    Row {
        what: "a 100 KB `[[[…` rules file refused, median",
        value: ms(nested),
        unit: "ms",
        goal: 1_000.0,
        baseline: "a valid 1,000-rule load",
        baseline_value: ms(valid),
    }
    .record();
}

pub fn config_loads(runs: usize) {
    let ten = config_load(10, runs);
    let thousand = config_load(1_000, runs);
    let ten_thousand = config_load(10_000, runs);
    println!(
        "  configuration load in the component: 10 rules {:.1} ms, 1,000 rules {:.1} ms, 10,000 rules {:.1} ms ({:.1}×)",
        ms(ten),
        ms(thousand),
        ms(ten_thousand),
        ten_thousand.as_secs_f64() / thousand.as_secs_f64()
    );
    Row {
        what: "configuration load at 1,000 rules, median",
        value: ms(thousand),
        unit: "ms",
        goal: 50.0,
        baseline: "the load at 10 rules",
        baseline_value: ms(ten),
    }
    .record();
    Row {
        what: "configuration load at 10,000 rules ÷ at 1,000 rules",
        value: ten_thousand.as_secs_f64() / thousand.as_secs_f64(),
        unit: "×",
        goal: 12.0,
        baseline: "linear",
        baseline_value: 10.0,
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
    use graphiti_openclaw_tests::size_budget::{
        RELEASE_GROWTH, core_module_bytes, packaged_core_module_bytes, previous_release,
    };
    let previous = packaged_core_module_bytes(&previous_release()) as f64 / 1e6;
    Row {
        what: "plugin.wasm's core module",
        value: core_module_bytes(&plugin_wasm()) as f64 / 1e6,
        unit: "MB",
        goal: previous * (1.0 + RELEASE_GROWTH),
        baseline: "the previous release's (docs/decisions/size-budget.md)",
        baseline_value: previous,
    }
    .record();
}
