//! The runtime's `experts …` commands: `queue`, `dead-letters`, `replay`, `run`, the dry runs `fire`
//! and `due`, and the `expert_step` tool.

use super::accept::{plan, trigger};
use super::store::{Invocation, Lane, NotBefore, Runs, Status};
use super::tick::holds_lane;
use super::{Runtime, invocation_of_session, schedule, texts};
use crate::platform::api::ManualRun;
use crate::platform::text::one_line;
use crate::platform::time::iso8601;
use std::fmt::Write;

/// Longest step text kept (the execution log is shown and sent back to the agent).
const MAX_STEP_CHARS: usize = 300;
/// Steps kept per invocation at most.
const MAX_STEPS: usize = 100;

/// The lane; a key comes from a payload (a sender id, a ticket id), so it is shown escaped.
fn lane_text(lane: &Lane) -> String {
    match lane {
        Lane::Parallel => "parallel".into(),
        Lane::Serial => "serial".into(),
        Lane::Key(key) => format!("serial_per_key {}", one_line(key)),
    }
}

/// `text` for the operator's terminal: each line as [`one_line`] escapes recalled text (its
/// indentation kept), so a payload's value can neither drive the terminal nor reorder the output.
fn for_terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        out.push_str(&line[..indent]);
        out.push_str(&one_line(line));
        out.push('\n');
    }
    out
}

fn line(inv: &Invocation) -> String {
    let mut out = format!(
        "{} {} · {} · {} · attempt {} · accepted {}",
        inv.id,
        inv.status.as_str(),
        inv.expert,
        inv.process.as_deref().unwrap_or("manual run"),
        inv.attempts,
        iso8601(inv.accepted_ms)
    );
    let _ = write!(
        out,
        " · {} · {}",
        one_line(&inv.source),
        lane_text(&inv.lane)
    );
    if let Some(at) = inv.next_at_ms.filter(|_| inv.status == Status::RetryWait) {
        let failed = inv.log.iter().rev().find(|e| e.text.contains(" failed: "));
        let _ = write!(out, " · next attempt {}", iso8601(at));
        if let Some(failed) = failed {
            let _ = write!(out, " · {}", one_line(&failed.text));
        }
    }
    if let Some(w) = &inv.waiting {
        let _ = write!(out, " · waits for {} ({})", w.operation, w.request);
    }
    if let Some(why) = &inv.outcome {
        let _ = write!(out, " · {}", one_line(why));
    }
    out
}

impl Runtime<'_> {
    pub fn queue_text(&mut self, now_ms: u64) -> Result<String, String> {
        let (text, _) = self.with_record(now_ms, |_, runs, _| {
            let open: Vec<String> = runs
                .invocations
                .iter()
                .filter(|i| !i.status.is_finished())
                .map(line)
                .collect();
            let pending = runs.learnings.len();
            let mut text = if open.is_empty() {
                "no expert runs waiting or running\n".to_string()
            } else {
                format!("{}\n", open.join("\n"))
            };
            if pending > 0 {
                let _ = writeln!(
                    text,
                    "{pending} proposed learning(s) wait for approval (experts pending)"
                );
            }
            Ok((text, false))
        })?;
        Ok(text)
    }

    /// One line for `status`: how many invocations are in each open state; None when the record
    /// holds none and no expert is installed.
    pub fn status_line(&mut self, now_ms: u64) -> Option<String> {
        if self.packages.is_empty() {
            return None;
        }
        let (counts, _) = self
            .with_record(now_ms, |_, runs, _| {
                let count = |s: Status| runs.invocations.iter().filter(|i| i.status == s).count();
                let learnings = runs.learnings.len();
                Ok((
                    [
                        (count(Status::Queued), "queued"),
                        (count(Status::Running), "running"),
                        (count(Status::RetryWait), "waiting to retry"),
                        (count(Status::WaitingApproval), "waiting for approval"),
                        (count(Status::DeadLetter), "dead letters"),
                        (learnings, "learnings to approve"),
                    ],
                    false,
                ))
            })
            .ok()?;
        let parts: Vec<String> = counts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        Some(format!(
            "expert runs: {} (experts queue)\n",
            if parts.is_empty() {
                "none open".to_string()
            } else {
                parts.join(", ")
            }
        ))
    }

    pub fn dead_letters_text(&mut self, now_ms: u64) -> Result<String, String> {
        let (text, _) = self.with_record(now_ms, |_, runs, _| {
            let dead: Vec<String> = runs
                .invocations
                .iter()
                .filter(|i| i.status == Status::DeadLetter)
                .map(|i| {
                    let steps = if i.steps.is_empty() {
                        String::new()
                    } else {
                        format!("\n    steps completed: {}", i.steps.join("; "))
                    };
                    format!("{}{steps}\n    replay: experts replay {}", line(i), i.id)
                })
                .collect();
            Ok((
                if dead.is_empty() {
                    "no dead letters\n".into()
                } else {
                    format!("{}\n", dead.join("\n"))
                },
                false,
            ))
        })?;
        Ok(text)
    }

    /// Queues a dead-lettered or failed invocation again, its attempts reset.
    pub fn replay(&mut self, id: &str, now_ms: u64) -> Result<String, String> {
        let (said, _) = self.with_record(now_ms, |_, runs: &mut Runs, _| {
            let inv = runs.get_mut(id).ok_or_else(|| {
                format!("no invocation {id} (see experts queue, experts dead-letters)")
            })?;
            if !matches!(inv.status, Status::DeadLetter | Status::Failed) {
                return Err(format!(
                    "{id} is {}, not failed or a dead letter: only those are replayed",
                    inv.status.as_str()
                ));
            }
            inv.status = Status::Queued;
            inv.failures = 0;
            inv.finished_ms = None;
            inv.outcome = None;
            inv.sla_warned = false;
            inv.session_ended = false;
            inv.note(now_ms, "replayed by the user");
            Ok((
                format!("{id} queued again; the runtime starts it on its next tick\n"),
                true,
            ))
        })?;
        Ok(said)
    }

    pub fn run_manual(&mut self, run: &ManualRun, now_ms: u64) -> Result<String, String> {
        let (id, _) = self.with_record(now_ms, |rt, runs, _| {
            Ok((rt.accept_manual(runs, run, now_ms)?, true))
        })?;
        let what = match &run.process {
            Some(process) => format!("a manual run of {}'s process {process}", run.expert),
            None => format!("a manual run of {}", run.expert),
        };
        let dry_run = if run.dry_run {
            ", a dry run: only AUTO operations execute, every other call is recorded, and the result is its planned-execution report"
        } else {
            ""
        };
        Ok(format!(
            "{id} queued: {what}{dry_run}; the runtime (the OpenClaw Gateway) starts it on its next tick\n"
        ))
    }

    /// `experts fire`: what a trigger would do with a payload. Records nothing.
    pub fn fire_text(
        &mut self,
        expert: &str,
        trigger_name: &str,
        payload_json: &str,
        now_ms: u64,
    ) -> Result<String, String> {
        let payload: serde_json::Value = serde_json::from_slice(payload_json.as_bytes())
            .map_err(|e| format!("the payload is not JSON: {e}"))?;
        let package = self.package(expert)?;
        let found = trigger(package, trigger_name).map_err(|r| r.message)?;
        let planned =
            plan(found, &payload).map_err(|r| format!("refused ({}): {}", r.status, r.message))?;
        let kind = found.kind.clone();
        let dedupe_path = found.dedupe_key.clone().unwrap_or_default();
        let window_hours = self.settings.dedupe_window_hours;
        let window_ms = window_hours * 3_600_000;
        let (mut text, _) = self.with_record(now_ms, |_, runs, _| {
            let seen = planned.dedupe.as_ref().and_then(|k| runs.seen_within(&format!("{expert}/{trigger_name}"), k, now_ms, window_ms).map(|at| (k.clone(), at)));
            let ahead = runs.invocations.iter().filter(|i| holds_lane(i, expert, Some(trigger_name), &planned.lane)).count();
            let mut text = format!("trigger {trigger_name} ({}) of {expert} → process {}\n", kind, planned.process);
            let _ = writeln!(text, "inputs: {}", serde_json::to_string(&planned.inputs).unwrap_or_default());
            let _ = writeln!(text, "queue: {}{}", lane_text(&planned.lane), if ahead > 0 { format!(", behind {ahead} unfinished invocation(s)") } else { String::new() });
            if let Some(w) = &planned.lane_warning { let _ = writeln!(text, "warning: {w}"); }
            let _ = writeln!(text, "session: {}", if planned.main_session { "main".to_string() } else { format!("isolated (expert:{expert}:inv-N, one per invocation)") });
            match seen {
                Some((key, at)) => { let _ = writeln!(text, "dedupe: {dedupe_path} {key} was accepted at {}: this event would be skipped", iso8601(at)); }
                None => { let _ = writeln!(text, "dedupe: {}", planned.dedupe.as_deref().map_or("no dedupe_key".into(), |k| format!("{dedupe_path} {k} not seen in the last {window_hours} h (experts.dedupe_window_hours): this event would be queued"))); }
            }
            Ok((text, false))
        })?;
        let mut probe = Invocation::new(
            0,
            expert,
            "experts fire (dry run)".into(),
            planned.lane.clone(),
            now_ms,
        );
        probe.id = "inv-N".into();
        probe.trigger = Some(trigger_name.into());
        probe.process = Some(planned.process.clone());
        probe.inputs = planned.inputs.clone();
        probe.main_session = planned.main_session;
        probe.attempts = 1;
        let execution = self.execution(&probe);
        let _ = write!(
            text,
            "\nthe run's message:\n\n{}",
            self.run_message(&probe, execution.as_ref(), true)
        );
        Ok(for_terminal(&text))
    }

    /// `experts due`: the cron slots due from each trigger's last check up to `at_ms`. Records nothing.
    pub fn due_text(&mut self, at_ms: u64) -> Result<String, String> {
        let ((checked, known_next), _) = self.with_record(at_ms, |_, runs, _| {
            Ok((
                (runs.cron_checked_ms.clone(), runs.cron_next.clone()),
                false,
            ))
        })?;
        let mut text = String::new();
        for package in self.packages.iter().filter_map(|l| l.ready()) {
            let active = package.triggers.iter().filter(|t| t.inactive().is_none());
            for t in active.filter(|t| t.kind == "cron") {
                let zone = t.tz.as_deref().unwrap_or("UTC");
                let Some(Ok(expr)) = t.expr.as_deref().map(crate::experts::cron::parse) else {
                    continue;
                };
                let key = format!("{}/{}", package.name, t.name);
                let from = checked.get(&key).copied();
                let due = match from {
                    Some(from) => schedule::due(&expr, zone, self.zones, from, at_ms).map(|d| {
                        d.map(|d| format!("due: {} ({} earlier missed)", d.local, d.missed))
                    }),
                    None => Ok(Some(
                        "not checked yet: its schedule starts at the runtime's next tick".into(),
                    )),
                };
                // The runtime's own next slot, while it is still ahead: computing one looks days
                // ahead, a minute at a time.
                let cached = known_next.get(&key).filter(|n| {
                    n.schedule == super::tick::cron_schedule(t)
                        && at_ms < n.not_before_ms
                        && from.is_some_and(|f| f <= at_ms)
                });
                let next = match cached.map(|n| (n.kind, n.not_before_ms)) {
                    Some((NotBefore::Slot, at)) => iso8601(at),
                    Some((NotBefore::LookAheadEnd, at)) => format!("none before {}", iso8601(at)),
                    _ => match schedule::next_slot(&expr, zone, self.zones, at_ms) {
                        Ok(Some(slot)) => iso8601(slot),
                        Ok(None) => "none within 8 days".into(),
                        // An unknown zone has no slot at all: say why, not "none within 8 days".
                        Err(why) => format!("none: {why}"),
                    },
                };
                let due = due
                    .unwrap_or_else(|e| Some(format!("error: {e}")))
                    .unwrap_or_else(|| "nothing due".into());
                let _ = writeln!(
                    text,
                    "{key} ({} {zone}): {due}; next slot {next}",
                    t.expr.as_deref().unwrap_or_default()
                );
            }
        }
        Ok(if text.is_empty() {
            "no cron triggers\n".into()
        } else {
            text
        })
    }

    /// The `expert_step` tool: a completed step of the session's invocation, in its execution log.
    pub fn step(&mut self, session_key: &str, step: &str, now_ms: u64) -> Result<String, String> {
        let id = invocation_of_session(session_key)
            .ok_or("expert_step works in an expert run's session (expert:<name>:inv-N) only")?
            .to_string();
        let step: String = one_line(step.trim()).chars().take(MAX_STEP_CHARS).collect();
        if step.is_empty() {
            return Err("the step is empty: name the checklist step you completed".into());
        }
        let (said, _) = self.with_record(now_ms, |_, runs, _| {
            let inv = runs
                .get_mut(&id)
                .ok_or_else(|| format!("{id} is not in the record"))?;
            if inv.steps.len() >= MAX_STEPS {
                return Err(format!("{id} has {MAX_STEPS} steps recorded already"));
            }
            inv.steps.push(step.clone());
            inv.note(now_ms, format!("step done: {step}"));
            Ok((format!("recorded for {}: {step}", texts::title(inv)), true))
        })?;
        Ok(said)
    }
}
