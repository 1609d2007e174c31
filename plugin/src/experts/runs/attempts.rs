//! Attempts under the execution policy (spec §3 `execution`, loader design §5): starting one, its end,
//! retries with backoff, and `on_failure` once the attempts are spent.

use super::store::{Invocation, Runs, Status};
use super::{Runtime, post_about, texts};
use crate::experts::package::{Backoff, Execution, OnFailure};
use crate::platform::api::{DeliveryKind, RunOutcome, RunReport, RunStart};

/// A running attempt the host never reported counts as timed out this long after its deadline.
pub const REPORT_GRACE_MS: u64 = 30_000;

impl Runtime<'_> {
    /// The execution policy of an invocation: its process's (package defaults with the process's
    /// overrides), or the package's for a manual run. None when the package is gone.
    pub fn execution(&self, inv: &Invocation) -> Option<Execution> {
        let package = self.package(&inv.expert).ok()?;
        Some(
            inv.process
                .as_ref()
                .and_then(|name| package.processes.iter().find(|p| &p.name == name))
                .map_or_else(|| package.execution.clone(), |p| p.execution.clone()),
        )
    }

    /// Marks `inv` running as attempt `attempts + 1` and says what the host must start.
    pub fn start(&self, inv: &mut Invocation, runner: u64, now_ms: u64) -> RunStart {
        let execution = self.execution(inv);
        inv.attempts += 1;
        inv.low_confidence = None;
        inv.status = Status::Running;
        inv.started_ms = Some(now_ms);
        inv.next_at_ms = None;
        inv.runner = Some(runner);
        let timeout_ms = execution
            .as_ref()
            .and_then(|e| e.timeout_secs)
            .map(|s| s * 1000);
        inv.deadline_ms = timeout_ms.map(|t| now_ms + t);
        inv.note(now_ms, format!("attempt {} started", inv.attempts));
        let session_key = if inv.main_session {
            self.main_session().to_string()
        } else {
            inv.isolated_session_key()
        };
        RunStart {
            invocation: inv.id.clone(),
            attempt: inv.attempts,
            expert: inv.expert.clone(),
            session_key,
            message: self.run_message(inv, execution.as_ref(), false),
            timeout_ms,
        }
    }

    /// The host's report of a run's end.
    pub fn run_ended(
        &self,
        runs: &mut Runs,
        report: &RunReport,
        now_ms: u64,
        notes: &mut Vec<String>,
    ) -> bool {
        let Some(inv) = runs.get_mut(&report.invocation) else {
            notes.push(format!(
                "experts: a run ended for {}, which is not in the record",
                report.invocation
            ));
            return false;
        };
        if report.attempt != inv.attempts
            || !matches!(inv.status, Status::Running | Status::WaitingApproval)
        {
            notes.push(format!(
                "experts: {} attempt {} ended, but that attempt was already settled ({}, attempt {}); ignored",
                inv.id, report.attempt, inv.status.as_str(), inv.attempts
            ));
            return false;
        }
        if inv.status == Status::WaitingApproval {
            inv.note(
                now_ms,
                format!("attempt {} ended, waiting for the approval", inv.attempts),
            );
            return true;
        }
        match &report.outcome {
            RunOutcome::Completed(reply) => {
                let mut inv = inv.clone();
                self.complete(runs, &mut inv, reply, now_ms);
                store_back(runs, inv);
            }
            RunOutcome::Failed(why) => {
                let mut inv = inv.clone();
                self.fail_attempt(runs, &mut inv, why, now_ms, notes);
                store_back(runs, inv);
            }
            RunOutcome::TimedOut => {
                let mut inv = inv.clone();
                let why = self.timed_out_text(&inv);
                self.fail_attempt(runs, &mut inv, &why, now_ms, notes);
                store_back(runs, inv);
            }
        }
        true
    }

    pub fn timed_out_text(&self, inv: &Invocation) -> String {
        match self.execution(inv).and_then(|e| e.timeout_secs) {
            Some(secs) => format!(
                "timed out after {} (execution.timeout)",
                crate::experts::policy::format_duration(secs)
            ),
            None => "timed out".into(),
        }
    }

    fn complete(&self, runs: &mut Runs, inv: &mut Invocation, reply: &str, now_ms: u64) {
        inv.status = Status::Done;
        inv.finished_ms = Some(now_ms);
        inv.deadline_ms = None;
        inv.outcome = Some("completed".into());
        inv.note(now_ms, format!("attempt {} completed", inv.attempts));
        let delivery = self.package(&inv.expert).ok().map(|package| {
            inv.process
                .as_ref()
                .and_then(|name| package.processes.iter().find(|p| &p.name == name))
                .map_or_else(|| package.delivery.clone(), |p| p.delivery.clone())
        });
        let escalates = self
            .package(&inv.expert)
            .is_ok_and(|package| package.policy.escalate_on_low_confidence);
        if inv.dry_run {
            // Its report is what the user asked for: no escalation, no SLA, the scratchpad kept.
            let text = texts::dry_run_result(inv, reply, now_ms);
            post_about(runs, inv, DeliveryKind::Result, text);
            return;
        }
        if escalates && (texts::low_confidence(reply) || inv.low_confidence.is_some()) {
            inv.outcome = Some("completed with low confidence: escalated".into());
            inv.note(
                now_ms,
                "its confidence is low: escalated, not delivered as a result",
            );
            let text = texts::low_confidence_escalation(inv, reply);
            post_about(runs, inv, DeliveryKind::Escalation, text);
        } else {
            let text = texts::result(inv, reply, delivery.as_ref(), now_ms);
            post_about(runs, inv, DeliveryKind::Result, text);
        }
        if let Some(delivery) = delivery {
            self.check_sla(runs, inv, &delivery, now_ms);
        }
        if let Some(said) = self.remove_scratchpad(inv) {
            inv.note(now_ms, said);
        }
    }

    /// After a successful run its scratchpad goes (loader design §4 "Scratchpad"); a failed run's
    /// stays for the retry, and for review until the scratch retention prunes it. Says what became
    /// of it, when the process has one.
    fn remove_scratchpad(&self, inv: &Invocation) -> Option<String> {
        let package = self.package(&inv.expert).ok()?;
        let pattern = inv
            .process
            .as_ref()
            .and_then(|name| package.processes.iter().find(|p| &p.name == name))?
            .scratchpad
            .as_deref()?;
        let workspace = self.workspace?;
        let Some(relative) = scratchpad_path(pattern, &inv.inputs) else {
            return Some(format!(
                "scratchpad {pattern} kept: its placeholders do not name one file"
            ));
        };
        let file = workspace
            .join("expert-state")
            .join(&package.name)
            .join(&relative);
        match std::fs::symlink_metadata(&file) {
            Err(_) => None,
            Ok(meta) if meta.is_dir() => {
                Some(format!("scratchpad {relative} kept: it is a directory"))
            }
            Ok(_) => Some(match std::fs::remove_file(&file) {
                Ok(()) => format!("scratchpad {relative} removed"),
                Err(e) => format!("scratchpad {relative} could not be removed: {e}"),
            }),
        }
    }

    /// One failed attempt: a retry when attempts remain, else `on_failure`.
    pub fn fail_attempt(
        &self,
        runs: &mut Runs,
        inv: &mut Invocation,
        why: &str,
        now_ms: u64,
        notes: &mut Vec<String>,
    ) {
        inv.failures += 1;
        inv.deadline_ms = None;
        inv.note(now_ms, format!("attempt {} failed: {why}", inv.attempts));
        let Some(execution) = self.execution(inv) else {
            let why = format!("{why}; the package is no longer installed");
            self.give_up(runs, inv, &why, OnFailure::Escalate, now_ms, notes);
            return;
        };
        if inv.failures < execution.retry.max_attempts {
            let delay = retry_delay_ms(&execution, inv.failures);
            inv.status = Status::RetryWait;
            inv.next_at_ms = Some(now_ms + delay);
            inv.note(
                now_ms,
                format!(
                    "retry in {}",
                    crate::experts::policy::format_duration(delay / 1000)
                ),
            );
            notes.push(format!(
                "experts: {} {}: attempt {} failed ({why}); retrying",
                inv.expert, inv.id, inv.attempts
            ));
            return;
        }
        self.give_up(runs, inv, why, execution.on_failure, now_ms, notes);
    }

    /// `on_failure` for an invocation that failed for good.
    pub fn give_up(
        &self,
        runs: &mut Runs,
        inv: &mut Invocation,
        why: &str,
        on_failure: OnFailure,
        now_ms: u64,
        notes: &mut Vec<String>,
    ) {
        inv.finished_ms = Some(now_ms);
        inv.outcome = Some(why.to_string());
        match on_failure {
            OnFailure::Escalate => {
                inv.status = Status::Failed;
                post_about(
                    runs,
                    inv,
                    DeliveryKind::Escalation,
                    texts::failed(inv, "escalated"),
                );
            }
            OnFailure::Abandon => {
                inv.status = Status::Failed;
                inv.note(now_ms, "abandoned (on_failure: abandon)");
            }
            OnFailure::DeadLetter => {
                inv.status = Status::DeadLetter;
                inv.note(now_ms, "kept as a dead letter (on_failure: dead_letter)");
            }
        }
        notes.push(format!(
            "experts: {} {} failed for good: {why} ({})",
            inv.expert,
            inv.id,
            inv.status.as_str()
        ));
    }
}

/// The wait before the retry after `failures` failures: `delay`, doubled per earlier failure when
/// the backoff is exponential (capped at a day).
pub fn retry_delay_ms(execution: &Execution, failures: u32) -> u64 {
    let base = execution.retry.delay_secs.saturating_mul(1000);
    let delay = match execution.retry.backoff {
        Backoff::Fixed => base,
        Backoff::Exponential => base.saturating_mul(1u64 << failures.saturating_sub(1).min(20)),
    };
    delay.min(86_400_000)
}

/// A scratchpad pattern (`./scratch/triage-{ticket_id}.md`) filled from the run's inputs: a path
/// below `scratch/`, or None when a placeholder is missing or its value is no plain file name part.
pub fn scratchpad_path(
    pattern: &str,
    inputs: &std::collections::BTreeMap<String, serde_json::Value>,
) -> Option<String> {
    let mut filled = String::new();
    let mut rest = pattern.trim().trim_start_matches("./");
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}')?;
        filled.push_str(&rest[..open]);
        let value = super::payload::key_text(inputs.get(&rest[open + 1..close])?)?;
        let plain = !value.contains(['/', '\\', '\0']) && value != "." && value != "..";
        if !plain {
            return None;
        }
        filled.push_str(&value);
        rest = &rest[close + 1..];
    }
    filled.push_str(rest);
    let below_scratch = filled.strip_prefix("scratch/").is_some_and(|name| {
        !name.is_empty()
            && name
                .split('/')
                .all(|part| !part.is_empty() && part != "." && part != "..")
    });
    below_scratch.then_some(filled)
}

/// Puts a changed copy back in its place.
pub fn store_back(runs: &mut Runs, inv: Invocation) {
    if let Some(slot) = runs.get_mut(&inv.id) {
        *slot = inv;
    }
}

#[cfg(test)]
mod tests {
    use super::scratchpad_path;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[test]
    fn a_scratchpad_is_filled_from_the_inputs_and_stays_below_scratch() {
        let inputs: BTreeMap<String, serde_json::Value> = [
            ("ticket_id".to_string(), json!("T-1")),
            ("n".to_string(), json!(7)),
            ("up".to_string(), json!("..")),
            ("sub".to_string(), json!("a/../../b")),
        ]
        .into();
        let fill = |p: &str| scratchpad_path(p, &inputs);
        assert_eq!(
            fill("./scratch/triage-{ticket_id}.md").as_deref(),
            Some("scratch/triage-T-1.md")
        );
        assert_eq!(
            fill("scratch/{n}-{ticket_id}.md").as_deref(),
            Some("scratch/7-T-1.md")
        );
        assert_eq!(
            fill("./scratch/fare-watch.md").as_deref(),
            Some("scratch/fare-watch.md")
        );
        assert_eq!(
            fill("./scratch/{missing}.md"),
            None,
            "a missing input names no file"
        );
        assert_eq!(fill("./scratch/{up}"), None);
        assert_eq!(fill("./scratch/{sub}.md"), None, "a value is never a path");
        assert_eq!(
            fill("./state/trips.md"),
            None,
            "only scratch files are removed"
        );
        assert_eq!(fill("./scratch/../state/trips.md"), None);
    }
}
