//! The expert runs record under the faults that break "nothing accepted is lost or run twice": the
//! real CLI (`graphiti-openclaw experts run`, the real component in the shim), many processes at
//! once on one state directory, and processes killed with SIGKILL at arbitrary moments. Every
//! invocation a process reported as queued must be in the record exactly once, and the record must
//! stay readable. Run after `scripts/build.sh`.


use crate::expert_runs_common::fixture;
use graphiti_openclaw_tests::{copy_dir, example_config, temp_dir, workspace};
use std::collections::BTreeSet;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

struct Rig {
    experts: TempDir,
    state: TempDir,
}

impl Rig {
    fn new() -> Rig {
        let experts = temp_dir("runs-faults-experts");
        copy_dir(&fixture(), experts.path());
        let rig = Rig {
            experts,
            state: temp_dir("runs-faults-state"),
        };
        // Compiles the component into the cache once, before processes race.
        assert!(rig.queued().is_empty());
        rig
    }

    fn command(&self, args: &[&str]) -> Command {
        let cli = workspace().join("target/release/graphiti-openclaw");
        assert!(
            cli.exists(),
            "{} is missing: run scripts/build.sh",
            cli.display()
        );
        let mut command = Command::new(cli);
        command
            .arg("--config-dir")
            .arg(example_config())
            .arg("--experts-dir")
            .arg(self.experts.path())
            .arg("--state-dir")
            .arg(self.state.path())
            .arg("--cache-dir")
            .arg(workspace().join("target/test-component-cache"))
            .args(["--quiet", "--call-timeout-ms", "20000", "experts"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn spawn_run(&self, n: usize) -> Child {
        self.command(&["run", "ops-expert", &format!("job {n}")])
            .spawn()
            .expect("the CLI runs")
    }

    /// The id of every open invocation in the record, via `experts queue`.
    fn queued(&self) -> Vec<String> {
        let out = self.command(&["queue"]).output().unwrap();
        assert!(out.status.success(), "the record stays readable: {out:?}");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                l.split_whitespace()
                    .next()
                    .filter(|id| id.starts_with("inv-"))
                    .map(str::to_string)
            })
            .collect()
    }
}

/// The invocation a finished `experts run` reported, if it said it queued one.
fn reported(out: &Output) -> Option<String> {
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .next()
        .filter(|w| w.starts_with("inv-") && text.contains(" queued"))
        .map(str::to_string)
}

fn assert_exactly_once(reported: &BTreeSet<String>, queued: &[String]) {
    let distinct: BTreeSet<String> = queued.iter().cloned().collect();
    assert_eq!(
        distinct.len(),
        queued.len(),
        "an invocation appears twice: {queued:?}"
    );
    let lost: Vec<&String> = reported.difference(&distinct).collect();
    assert!(
        lost.is_empty(),
        "reported queued but missing from the record: {lost:?}"
    );
}

#[test]
fn processes_at_once_on_one_state_directory_lose_no_invocation() {
    let rig = Rig::new();
    let started = Instant::now();
    let mut children: Vec<Child> = (0..24).map(|n| rig.spawn_run(n)).collect();
    // Every one of them takes the record's lock, reads, adds and saves while the others wait.
    let outputs: Vec<Output> = children
        .drain(..)
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let failed: Vec<&Output> = outputs.iter().filter(|o| !o.status.success()).collect();
    assert!(
        failed.is_empty(),
        "every process queued its run (the lock waits): {failed:?}"
    );
    let reported: BTreeSet<String> = outputs.iter().filter_map(reported).collect();
    assert_eq!(reported.len(), 24, "24 distinct invocations");
    let queued = rig.queued();
    assert_exactly_once(&reported, &queued);
    println!(
        "24 concurrent `experts run` processes: 24 queued, 0 lost, 0 twice ({} ms)",
        started.elapsed().as_millis()
    );
}

#[test]
fn processes_killed_mid_write_lose_no_acknowledged_invocation() {
    let rig = Rig::new();
    let mut acknowledged = BTreeSet::new();
    let mut kills = 0;
    // Kills land from start-up to the save and the answer: spread over 0–140% of how long one run
    // takes here and now (a busy machine takes several times as long as a quiet one).
    // The quickest of three whole runs: a busy moment only slows one up.
    let mut run_time = Duration::MAX;
    for n in [1000, 1001, 1002] {
        let started = std::time::Instant::now();
        let whole = rig.spawn_run(n).wait_with_output().unwrap();
        run_time = run_time.min(started.elapsed());
        acknowledged.extend(reported(&whole));
    }
    let mut acknowledged_killable = 0;
    // At least 60 runs; more while none outran its kill (the machine slowed down after the timing
    // runs), each further 20 with the kills spread half as late again.
    let mut spread = run_time;
    let mut n: usize = 0;
    while n < 60 || (acknowledged_killable == 0 && n < 240) {
        if n >= 60 && n.is_multiple_of(20) {
            spread = spread * 3 / 2;
        }
        let mut child = rig.spawn_run(n);
        n += 1;
        std::thread::sleep(spread * ((n as u32 * 7) % 70) / 50);
        if child.try_wait().ok().flatten().is_none() {
            kills += 1;
            let _ = child.kill(); // SIGKILL
        }
        if let Some(id) = reported(&child.wait_with_output().unwrap()) {
            acknowledged.insert(id);
            acknowledged_killable += 1;
        }
    }
    let queued = rig.queued();
    assert_exactly_once(&acknowledged, &queued);
    println!(
        "kill -9 during `experts run` (one run: {} ms at best; kills spread over 0-140% of {} ms): {n} runs, {kills} killed, {acknowledged_killable} acknowledged, {} in the record with the 3 timing runs, 0 lost, 0 twice",
        run_time.as_millis(),
        spread.as_millis(),
        queued.len()
    );
    assert!(kills >= 10, "the loop killed processes mid-run ({kills})");
    assert!(
        acknowledged_killable > 0,
        "some of the runs raced by a kill were acknowledged"
    );
}
