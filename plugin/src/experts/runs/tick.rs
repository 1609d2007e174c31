//! One tick of the runtime: the runner's lock, interrupted and timed-out attempts, approval deadlines,
//! SLA breaches, due cron slots, retries whose delay passed, and the queued invocations their lanes
//! let start.

use super::attempts::{REPORT_GRACE_MS, store_back};
use super::store::{CronNext, Invocation, Lane, NotBefore, Runs, Status};
use super::{RUNNER_LEASE, RUNNER_LOCK, Runtime, hand_out, post_about, schedule, texts};
use crate::experts::package::{Delivery, SlaBreach};
use crate::experts::policy::OnTimeout;
use crate::platform::api::{DeliveryKind, RuntimeWork};
use crate::platform::locks::LockError;
use std::time::Duration;

/// The host ticks at least this often while anything is scheduled.
const MAX_TICK_MS: u64 = 60_000;

/// This instance as the runtime's runner: its boot number while it holds the runner lock.
#[derive(Clone, Debug, Default)]
pub struct RunnerState {
    pub boot: Option<u64>,
    pub since_ms: u64,
}

impl Runtime<'_> {
    /// Takes (or keeps, renewing it at half its lease) the runner lock. None: another process runs
    /// expert processes for this state directory.
    fn runner(&mut self, runner: &mut RunnerState, now_ms: u64) -> Result<bool, String> {
        let lease_ms = RUNNER_LEASE.as_millis() as u64;
        if runner.boot.is_some() && now_ms.saturating_sub(runner.since_ms) > lease_ms / 2 {
            self.locks.release(RUNNER_LOCK);
            runner.since_ms = 0;
        }
        match self
            .locks
            .acquire(RUNNER_LOCK, RUNNER_LEASE, Duration::ZERO)
        {
            Ok(()) => {
                if runner.since_ms == 0 {
                    runner.since_ms = now_ms;
                }
                Ok(true)
            }
            Err(LockError::Busy(_)) => {
                runner.boot = None;
                Ok(false)
            }
            Err(LockError::Lost(why)) => {
                runner.boot = None;
                Err(format!(
                    "experts: this runtime lost the runner lock ({why})"
                ))
            }
            Err(LockError::Failed(why)) => Err(format!("experts: the runner lock failed: {why}")),
        }
    }

    pub fn tick(&mut self, runner: &mut RunnerState, now_ms: u64) -> RuntimeWork {
        let mut work = RuntimeWork::default();
        match self.runner(runner, now_ms) {
            Ok(true) => {}
            Ok(false) => {
                work.tick_in_ms = Some(MAX_TICK_MS);
                return work;
            }
            Err(why) => {
                work.notes.push(why);
                work.tick_in_ms = Some(MAX_TICK_MS);
                return work;
            }
        }
        let result = self.with_record(now_ms, |rt, runs, notes| {
            let boot = *runner.boot.get_or_insert_with(|| {
                runs.last_runner += 1;
                runs.last_runner
            });
            rt.settle_lost_attempts(runs, boot, now_ms, notes);
            rt.approval_deadlines(runs, now_ms, notes);
            rt.sla_breaches(runs, now_ms);
            rt.cron(runs, now_ms, notes);
            let mut work = RuntimeWork::default();
            rt.start_due(runs, boot, now_ms, &mut work);
            hand_out(runs, rt.main_session(), boot, now_ms, &mut work);
            end_sessions(runs, &mut work);
            work.tick_in_ms = rt.next_tick(runs, now_ms);
            Ok((work, true))
        });
        match result {
            Ok((done, notes)) => {
                work = done;
                work.notes.splice(0..0, notes);
            }
            Err(why) => {
                work.notes.push(format!("experts: {why}"));
                work.tick_in_ms = Some(MAX_TICK_MS);
            }
        }
        work
    }

    /// Attempts handed to an earlier runner (OpenClaw stopped while they ran) and attempts past their
    /// deadline without a report count as failed attempts.
    fn settle_lost_attempts(
        &self,
        runs: &mut Runs,
        boot: u64,
        now_ms: u64,
        notes: &mut Vec<String>,
    ) {
        let running: Vec<Invocation> = runs
            .invocations
            .iter()
            .filter(|i| i.status == Status::Running)
            .cloned()
            .collect();
        for mut inv in running {
            let why = if inv.runner != Some(boot) {
                "interrupted: the runtime running it stopped (OpenClaw restarted)".to_string()
            } else if inv
                .deadline_ms
                .is_some_and(|d| now_ms > d + REPORT_GRACE_MS)
            {
                self.timed_out_text(&inv)
            } else {
                continue;
            };
            self.fail_attempt(runs, &mut inv, &why, now_ms, notes);
            store_back(runs, inv);
        }
    }

    /// CONFIRM requests past `policy.approval.timeout`: `on_timeout: reject` fails the step (then
    /// `on_failure`); `escalate` tells the user once and keeps waiting.
    fn approval_deadlines(&self, runs: &mut Runs, now_ms: u64, notes: &mut Vec<String>) {
        let waiting: Vec<Invocation> = runs
            .invocations
            .iter()
            .filter(|i| i.status == Status::WaitingApproval)
            .filter(|i| {
                i.waiting
                    .as_ref()
                    .is_some_and(|w| !w.escalated && w.deadline_ms.is_some_and(|d| now_ms >= d))
            })
            .cloned()
            .collect();
        for mut inv in waiting {
            let on_timeout = self
                .package(&inv.expert)
                .map_or(OnTimeout::Reject, |p| p.policy.on_timeout);
            let (operation, request) = inv
                .waiting
                .as_ref()
                .map(|w| (w.operation.clone(), w.request.clone()))
                .unwrap_or_default();
            match on_timeout {
                OnTimeout::Reject => {
                    inv.waiting = None;
                    let why = format!(
                        "the approval of {operation} was not given in time (on_timeout: reject)"
                    );
                    let on_failure = self
                        .execution(&inv)
                        .map(|e| e.on_failure)
                        .unwrap_or(crate::experts::package::OnFailure::Escalate);
                    inv.note(now_ms, why.clone());
                    self.give_up(runs, &mut inv, &why, on_failure, now_ms, notes);
                }
                OnTimeout::Escalate => {
                    if let Some(w) = inv.waiting.as_mut() {
                        w.escalated = true;
                    }
                    let text = texts::approval_overdue(&inv, &operation, &request);
                    post_about(runs, &inv, DeliveryKind::Escalation, text);
                }
            }
            store_back(runs, inv);
        }
    }

    fn sla_breaches(&self, runs: &mut Runs, now_ms: u64) {
        let open: Vec<Invocation> = runs
            .invocations
            .iter()
            .filter(|i| !i.status.is_finished() && !i.sla_warned)
            .cloned()
            .collect();
        for mut inv in open {
            if let Some(delivery) = self.delivery_of(&inv) {
                self.check_sla(runs, &mut inv, &delivery, now_ms);
                store_back(runs, inv);
            }
        }
    }

    pub fn delivery_of(&self, inv: &Invocation) -> Option<Delivery> {
        let package = self.package(&inv.expert).ok()?;
        let process = package
            .processes
            .iter()
            .find(|p| Some(&p.name) == inv.process.as_ref())?;
        Some(process.delivery.clone())
    }

    /// Posts the SLA breach once, when the time since the trigger exceeds the process's `sla`.
    pub fn check_sla(
        &self,
        runs: &mut Runs,
        inv: &mut Invocation,
        delivery: &Delivery,
        now_ms: u64,
    ) {
        let Some(sla) = delivery.sla_secs else { return };
        if inv.sla_warned || now_ms.saturating_sub(inv.accepted_ms) <= sla * 1000 {
            return;
        }
        inv.sla_warned = true;
        let escalate = delivery.sla_breach == SlaBreach::Escalate;
        let kind = if escalate {
            DeliveryKind::Escalation
        } else {
            DeliveryKind::SlaWarning
        };
        let text = texts::sla_breach(inv, sla, escalate, now_ms);
        inv.note(now_ms, format!("SLA of {sla}s exceeded"));
        post_about(runs, inv, kind, text);
    }

    /// Due cron slots become invocations. A trigger seen for the first time starts its schedule now
    /// (no slot of the past is run for a newly installed package).
    fn cron(&mut self, runs: &mut Runs, now_ms: u64, notes: &mut Vec<String>) {
        let mut due = Vec::new();
        for loaded in self.packages {
            let Some(package) = loaded.ready() else {
                continue;
            };
            let active = package.triggers.iter().filter(|t| t.inactive().is_none());
            for trigger in active.filter(|t| t.kind == "cron") {
                let key = format!("{}/{}", package.name, trigger.name);
                let Some(&checked) = runs.cron_checked_ms.get(&key) else {
                    runs.cron_checked_ms.insert(key, now_ms);
                    continue;
                };
                let schedule = cron_schedule(trigger);
                // A clock stepped back (before the last check) computes again.
                let known_quiet = checked <= now_ms
                    && runs
                        .cron_next
                        .get(&key)
                        .is_some_and(|n| n.schedule == schedule && now_ms < n.not_before_ms);
                if known_quiet {
                    runs.cron_checked_ms.insert(key, now_ms);
                    continue;
                }
                due.push((
                    package.name.clone(),
                    trigger.clone(),
                    checked,
                    key,
                    schedule,
                ));
            }
        }
        for (expert, trigger, checked, key, schedule) in due {
            let zone = trigger.tz.as_deref().unwrap_or("UTC");
            let expr = match trigger.expr.as_deref().map(crate::experts::cron::parse) {
                Some(Ok(expr)) => expr,
                Some(Err(why)) => {
                    notes.push(format!("experts: {expert} cron {}: {why}", trigger.name));
                    continue;
                }
                None => continue,
            };
            match schedule::due(&expr, zone, self.zones, checked, now_ms) {
                Ok(Some(slot)) => {
                    self.accept_slot(runs, &expert, &trigger.name, &slot, now_ms, notes)
                }
                Ok(None) => {}
                Err(why) => notes.push(format!("experts: {expert} cron {}: {why}", trigger.name)),
            }
            runs.cron_checked_ms.insert(key.clone(), now_ms);
            // An error (an unknown zone) is computed again, and said again, an hour later.
            let (not_before_ms, kind) = match schedule::next_slot(&expr, zone, self.zones, now_ms) {
                Ok(Some(slot)) => (slot, NotBefore::Slot),
                Ok(None) => (now_ms + schedule::LOOK_AHEAD_MS, NotBefore::LookAheadEnd),
                Err(_) => (now_ms + 3_600_000, NotBefore::Retry),
            };
            let next = CronNext {
                schedule,
                not_before_ms,
                kind,
            };
            runs.cron_next.insert(key, next);
        }
        let triggers = &runs.cron_checked_ms;
        runs.cron_next.retain(|key, _| triggers.contains_key(key));
    }

    fn accept_slot(
        &self,
        runs: &mut Runs,
        expert: &str,
        trigger: &str,
        slot: &schedule::DueSlot,
        now_ms: u64,
        notes: &mut Vec<String>,
    ) {
        let payload = serde_json::json!({
            "slot": crate::platform::time::iso8601(slot.slot_ms),
            "local_time": slot.local,
            "missed_slots": slot.missed,
        });
        let mut source = format!("cron {}", slot.local);
        if slot.missed > 0 {
            source.push_str(&format!(
                " ({} earlier slot(s) missed while no runtime ran; run once)",
                slot.missed
            ));
        }
        if let Err(refused) = self.accept(runs, expert, trigger, &payload, source, now_ms) {
            notes.push(format!(
                "experts: {expert} cron {trigger}: {}",
                refused.message
            ));
        }
    }

    /// Retries whose delay passed rejoin the queue; then every queued invocation whose lane is free
    /// starts, oldest first, up to `max_running` at once.
    fn start_due(&self, runs: &mut Runs, boot: u64, now_ms: u64, work: &mut RuntimeWork) {
        for inv in &mut runs.invocations {
            if inv.status == Status::RetryWait && inv.next_at_ms.is_some_and(|t| t <= now_ms) {
                inv.status = Status::Queued;
            }
        }
        crate::platform::sorting::sort_by_key(&mut runs.invocations, |i| i.seq);
        let mut running = runs
            .invocations
            .iter()
            .filter(|i| i.status == Status::Running)
            .count();
        for n in 0..runs.invocations.len() {
            if running >= self.settings.max_running {
                break;
            }
            if runs.invocations[n].status != Status::Queued || blocked(&runs.invocations, n) {
                continue;
            }
            let start = self.start(&mut runs.invocations[n], boot, now_ms);
            work.start.push(start);
            running += 1;
        }
    }

    fn next_tick(&self, runs: &Runs, now_ms: u64) -> Option<u64> {
        let mut next: Vec<u64> = Vec::new();
        for inv in &runs.invocations {
            next.extend(inv.next_at_ms.filter(|_| inv.status == Status::RetryWait));
            next.extend(
                inv.deadline_ms
                    .filter(|_| inv.status == Status::Running)
                    .map(|d| d + REPORT_GRACE_MS + 1),
            );
            next.extend(inv.waiting.as_ref().and_then(|w| w.deadline_ms));
        }
        let has_cron = self.packages.iter().filter_map(|l| l.ready()).any(|p| {
            p.triggers
                .iter()
                .any(|t| t.kind == "cron" && t.inactive().is_none())
        });
        next.extend(runs.cron_next.values().map(|n| n.not_before_ms));
        let open = runs.invocations.iter().any(|i| !i.status.is_finished());
        if has_cron || open || !runs.outbox.is_empty() {
            next.push(now_ms + MAX_TICK_MS);
        }
        next.into_iter()
            .min()
            .map(|t| t.saturating_sub(now_ms).clamp(1, MAX_TICK_MS))
    }
}

/// What a cron trigger's slots depend on.
pub(super) fn cron_schedule(trigger: &crate::experts::package::Trigger) -> String {
    format!(
        "{} {}",
        trigger.expr.as_deref().unwrap_or_default(),
        trigger.tz.as_deref().unwrap_or("UTC")
    )
}

/// The isolated sessions of invocations finished for good, each handed to the host once to delete.
/// A replayed invocation starts in a fresh session of the same name.
fn end_sessions(runs: &mut Runs, work: &mut RuntimeWork) {
    for inv in &mut runs.invocations {
        if inv.status.is_finished() && !inv.session_ended {
            inv.session_ended = true;
            if !inv.main_session && inv.attempts > 0 {
                work.end_sessions.push(inv.isolated_session_key());
            }
        }
    }
}

/// Whether an earlier unfinished invocation holds this one's lane: same expert and trigger, and a
/// serial lane, or the same key, or an earlier invocation that fell back to serial.
fn blocked(invocations: &[Invocation], n: usize) -> bool {
    let me = &invocations[n];
    invocations[..n]
        .iter()
        .any(|other| holds_lane(other, &me.expert, me.trigger.as_deref(), &me.lane))
}

/// Whether `other` keeps an invocation of `expert`'s `trigger` in `lane` waiting (used by the
/// scheduler and by `experts fire`'s dry run, which must agree).
pub(super) fn holds_lane(
    other: &Invocation,
    expert: &str,
    trigger: Option<&str>,
    lane: &Lane,
) -> bool {
    *lane != Lane::Parallel
        && !other.status.is_finished()
        && other.expert == expert
        && other.trigger.as_deref() == trigger
        && (*lane == Lane::Serial || other.lane == Lane::Serial || other.lane == *lane)
}

#[cfg(test)]
mod tests {
    use super::RunnerState;
    use crate::experts::loader::{LoadOptions, load_expert};
    use crate::experts::runs::{Runtime, TimeZones};
    use crate::experts::settings::ExpertsSettings;
    use crate::platform::locks::Unshared;
    use std::path::Path;

    /// Berlin in winter, counting what it is asked: each question is part of a slot computation.
    struct CountingZones(u32);

    impl TimeZones for CountingZones {
        fn utc_offset_minutes(&mut self, _: &str, _: u64) -> Result<i32, String> {
            self.0 += 1;
            Ok(60)
        }
    }

    #[test]
    fn a_tick_computes_no_slot_for_a_trigger_until_its_next_one_can_be_due() {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/experts/ops-expert");
        let packages = vec![load_expert(&fixture, &LoadOptions::default())];
        assert!(packages[0].ready().is_some(), "{:?}", packages[0].findings);
        let temp = tempfile::Builder::new()
            .prefix("cron-next-")
            .tempdir()
            .unwrap();
        let state = temp.path().to_path_buf();
        let settings = ExpertsSettings::default();
        let (mut locks, mut zones, mut runner) =
            (Unshared, CountingZones(0), RunnerState::default());
        // Monday 2026-11-23 03:00 Berlin: the nightly report (02:00) is a day away.
        let mut now = 1_795_370_400_000;
        let mut asked_per_tick = Vec::new();
        for _ in 0..30 {
            let asked = zones.0;
            let mut rt = Runtime {
                state_dir: &state,
                workspace: None,
                packages: &packages,
                settings: &settings,
                locks: &mut locks,
                zones: &mut zones,
                set_aside: Vec::new(),
            };
            rt.tick(&mut runner, now);
            asked_per_tick.push(zones.0 - asked);
            now += 60_000;
        }
        assert!(
            asked_per_tick[1] > 0,
            "the next slot is computed once: {asked_per_tick:?}"
        );
        assert!(
            asked_per_tick[2..].iter().all(|&n| n == 0),
            "then nothing until it can be due: {asked_per_tick:?}"
        );
    }
}
