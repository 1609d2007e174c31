//! The limits of issue 14 measured in the shim, each against its baseline in the same run: what
//! `before-agent-start` adds to a turn, one `intent-test` process, a configuration load at 10,000
//! rules and the size of `plugin.wasm` (`scripts/bench.sh` adds the routing benchmark's and the
//! OpenClaw hook runner's rows and prints one table). Every answer is checked.
//!
//! Run: `cargo bench -p graphiti-openclaw-tests --bench limits` (after scripts/build.sh);
//! `LIMITS_BENCH_QUICK=1` for a short run; `BENCH_ROWS=FILE` appends the rows to FILE as JSON lines;
//! `LIMITS_BENCH_ONLY=hooks` (or `surfaces`) runs those rows alone.

mod hooks;
mod spool;
mod startup;
mod surfaces;

use std::time::Duration;

pub fn median(samples: &mut [Duration]) -> Duration {
    percentile(samples, 50)
}

pub fn percentile(samples: &mut [Duration], p: usize) -> Duration {
    samples.sort();
    samples[(samples.len() * p / 100).min(samples.len() - 1)]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let quick = std::env::var_os("LIMITS_BENCH_QUICK").is_some();
    let only = std::env::var("LIMITS_BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "hooks" {
        hooks::shim_hooks(if quick { 100 } else { 1000 });
    }
    if only.is_empty() {
        println!("start-up, configuration load and size:");
        startup::intent_test_process(if quick { 5 } else { 30 });
        startup::config_loads(if quick { 1 } else { 5 });
        startup::hostile_loads(if quick { 1 } else { 5 });
        startup::size();
    }
    if !only.is_empty() && only != "surfaces" {
        return;
    }
    println!("large files and the expert runtime under load:");
    startup::large_file_loads(if quick { 1 } else { 3 });
    surfaces::nested_bindings(if quick { 1 } else { 3 });
    surfaces::alias_bomb_manifest(if quick { 1 } else { 3 });
    surfaces::full_record(if quick { 1 } else { 3 });
    surfaces::quiet_cron(if quick { 1 } else { 3 });
    println!("the capture spool while Graphiti is down:");
    spool::backed_off_ticks(if quick { 5 } else { 30 });
}
