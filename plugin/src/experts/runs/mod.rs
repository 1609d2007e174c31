//! Expert runs (issue 12; loader design §5–§6): triggers accepted into a durable queue, concurrency
//! lanes, attempts under the execution policy, delivery of results and escalations, CONFIRM calls that
//! pause a run and MANUAL drafts, proposed learnings. Every decision is here and every change goes
//! through the record in [`store`] under the `experts-runs` lock; the host only passes the time,
//! starts the runs it is told to, reports their end and posts the deliveries.

mod accept;
mod attempts;
pub mod commands;
pub mod in_flight;
pub mod learnings;
mod message;
pub mod payload;
pub mod schedule;
pub mod store;
mod texts;
pub mod tick;
mod webhook;

use crate::experts::settings::ExpertsSettings;
use crate::experts::{LoadedExpert, Package};
use crate::platform::api::{Delivery, DeliveryKind, RuntimeWork};
use crate::platform::locks::{LockError, Locks};
pub use schedule::{TimeZones, UtcOnly};
use std::path::Path;
use std::time::Duration;
use store::{Invocation, Outgoing, Runs};

/// The lock every change of the record is made under.
pub const RUNS_LOCK: &str = "experts-runs";
/// The lock of the one runtime per state directory that starts runs (a Gateway); held across ticks.
pub const RUNNER_LOCK: &str = "experts-runner";
const RUNS_LOCK_LEASE: Duration = Duration::from_secs(30);
const RUNS_LOCK_WAIT: Duration = Duration::from_secs(5);
/// The runner renews its lock (release, take again) when it is older than half of this.
pub const RUNNER_LEASE: Duration = Duration::from_secs(600);

/// What the runtime works on: the installed packages, where its record is, its settings and the
/// host's locks and time zones.
pub struct Runtime<'a> {
    pub state_dir: &'a Path,
    pub workspace: Option<&'a Path>,
    pub packages: &'a [LoadedExpert],
    pub settings: &'a ExpertsSettings,
    pub locks: &'a mut dyn Locks,
    pub zones: &'a mut dyn TimeZones,
    /// What loading the record set aside or repaired, and where the old one is kept: a command
    /// that reads the record passes it on to the person who ran it (the tick and the webhook path
    /// get it in their notes).
    pub set_aside: Vec<String>,
}

impl Runtime<'_> {
    /// The ready package of `expert`, or why it cannot run.
    pub fn package(&self, expert: &str) -> Result<&Package, String> {
        let loaded = self
            .packages
            .iter()
            .find(|e| e.name == expert)
            .ok_or_else(|| format!("no expert {expert} is installed"))?;
        loaded.ready().ok_or_else(|| {
            format!(
                "expert {expert} has {} error(s); see `experts validate {expert}`",
                loaded.errors()
            )
        })
    }

    /// Loads the record under the lock, lets `change` work on it, and saves it when `change` says
    /// so (an error leaves the file as it was).
    pub fn with_record<T>(
        &mut self,
        now_ms: u64,
        change: impl FnOnce(&mut Self, &mut Runs, &mut Vec<String>) -> Result<(T, bool), String>,
    ) -> Result<(T, Vec<String>), String> {
        self.locks
            .acquire(RUNS_LOCK, RUNS_LOCK_LEASE, RUNS_LOCK_WAIT)
            .map_err(|e| match e {
                LockError::Busy(who) => {
                    format!("the expert runs record is busy ({who}); try again")
                }
                other => format!("the expert runs record cannot be locked: {other}"),
            })?;
        let result = self.change_locked(now_ms, change);
        self.locks.release(RUNS_LOCK);
        result
    }

    fn change_locked<T>(
        &mut self,
        now_ms: u64,
        change: impl FnOnce(&mut Self, &mut Runs, &mut Vec<String>) -> Result<(T, bool), String>,
    ) -> Result<(T, Vec<String>), String> {
        let loaded = store::load(self.state_dir, now_ms)?;
        self.set_aside.extend(loaded.set_aside.iter().cloned());
        let mut notes: Vec<String> = loaded.set_aside.into_iter().collect();
        let mut runs = loaded.runs;
        let (value, changed) = change(self, &mut runs, &mut notes)?;
        if changed {
            runs.prune(now_ms, self.settings.dedupe_window_hours * 3_600_000);
            // Losing the lock while working means another process may have written meanwhile:
            // saving now would overwrite its change.
            if let Err(e) = self
                .locks
                .acquire(RUNS_LOCK, RUNS_LOCK_LEASE, Duration::ZERO)
            {
                return Err(format!("the expert runs record's lock was lost: {e}"));
            }
            store::save(self.state_dir, &runs)?;
        }
        Ok((value, notes))
    }

    /// The main session's key, where `delivery.channel: main` goes.
    pub fn main_session(&self) -> &str {
        &self.settings.main_session_key
    }
}

/// Queues a delivery in the record (handed to the host by the same call, or the next tick).
pub fn post(
    runs: &mut Runs,
    expert: &str,
    invocation: Option<&str>,
    kind: DeliveryKind,
    text: String,
) {
    runs.outbox.push(Outgoing {
        expert: expert.to_string(),
        invocation: invocation.map(str::to_string),
        kind: kind_name(kind).to_string(),
        text: store::cut(text, store::MAX_DELIVERY_CHARS),
        handed_ms: None,
        handed_to: None,
    });
}

/// Queues a delivery about `inv` (see [`post`]).
pub fn post_about(runs: &mut Runs, inv: &Invocation, kind: DeliveryKind, text: String) {
    post(runs, &inv.expert, Some(&inv.id), kind, text);
}

fn kind_name(kind: DeliveryKind) -> &'static str {
    match kind {
        DeliveryKind::Result => "result",
        DeliveryKind::Escalation => "escalation",
        DeliveryKind::Approval => "approval",
        DeliveryKind::Draft => "draft",
        DeliveryKind::SlaWarning => "sla-warning",
        DeliveryKind::Notice => "notice",
    }
}

fn kind_of(name: &str) -> DeliveryKind {
    match name {
        "result" => DeliveryKind::Result,
        "escalation" => DeliveryKind::Escalation,
        "approval" => DeliveryKind::Approval,
        "draft" => DeliveryKind::Draft,
        "sla-warning" => DeliveryKind::SlaWarning,
        _ => DeliveryKind::Notice,
    }
}

/// A delivery handed to a host that neither reported it posted nor stopped is handed out again
/// after this long (under the same run id, which OpenClaw takes as the same turn).
pub const REHAND_AFTER_MS: u64 = 10 * 60_000;
/// One handed to an earlier runner (a restarted Gateway, a replaced instance) waits this long first,
/// so that a host whose reports fail does not post it on every tick.
pub const REHAND_TO_ANOTHER_RUNNER_AFTER_MS: u64 = 30_000;

/// The outbox's deliveries for the host to post now: each not handed yet, handed to an earlier
/// runner (that Gateway stopped before reporting it posted) or handed too long ago. They stay in the
/// record until [`Runtime::delivered`]. Returns whether any was handed.
pub fn hand_out(
    runs: &mut Runs,
    main_session: &str,
    runner: u64,
    now_ms: u64,
    work: &mut RuntimeWork,
) -> bool {
    let mut handed = false;
    for o in &mut runs.outbox {
        let waited = o.handed_ms.map(|at| now_ms.saturating_sub(at));
        let wait = if o.handed_to == Some(runner) {
            REHAND_AFTER_MS
        } else {
            REHAND_TO_ANOTHER_RUNNER_AFTER_MS
        };
        let waiting = waited.is_some_and(|waited| waited < wait);
        if waiting {
            continue;
        }
        o.handed_ms = Some(now_ms);
        o.handed_to = Some(runner);
        work.deliver.push(delivery_of(o, main_session));
        handed = true;
    }
    handed
}

fn delivery_of(o: &Outgoing, main_session: &str) -> Delivery {
    Delivery {
        expert: o.expert.clone(),
        invocation: o.invocation.clone(),
        kind: kind_of(&o.kind),
        session_key: main_session.to_string(),
        text: o.text.clone(),
    }
}

impl Runtime<'_> {
    /// The host posted the deliveries with these run ids: they leave the record. Says how many did.
    pub fn delivered(&mut self, run_ids: &[String], now_ms: u64) -> Result<usize, String> {
        let main_session = self.main_session().to_string();
        let (removed, _) = self.with_record(now_ms, |_, runs, _| {
            let before = runs.outbox.len();
            runs.outbox
                .retain(|o| !run_ids.contains(&delivery_of(o, &main_session).run_id()));
            let removed = before - runs.outbox.len();
            Ok((removed, removed > 0))
        })?;
        Ok(removed)
    }
}

/// The invocation an `expert:<name>:<invocation>` session key belongs to.
pub fn invocation_of_session(session_key: &str) -> Option<&str> {
    let rest = &session_key[session_key.find("expert:")? + "expert:".len()..];
    let id = rest.rsplit(':').next()?;
    (rest.contains(':') && id.starts_with("inv-") && id[4..].bytes().all(|b| b.is_ascii_digit()))
        .then_some(id)
}

/// Whether `session_key` is a dry run's session (`expert:<name>:dry-run:inv-<n>`): its tool calls
/// run only when they are `auto`.
pub fn is_dry_run_session(session_key: &str) -> bool {
    let Some(at) = session_key.find("expert:") else {
        return false;
    };
    let segments: Vec<&str> = session_key[at + "expert:".len()..].split(':').collect();
    invocation_of_session(session_key).is_some()
        && segments.len() >= 3
        && segments[segments.len() - 2] == store::DRY_RUN_SEGMENT.trim_end_matches(':')
}

#[cfg(test)]
mod tests {
    #[test]
    fn dry_run_sessions_are_recognised() {
        use super::is_dry_run_session as dry;
        assert!(dry("expert:trip:dry-run:inv-12"));
        assert!(dry("agent:main:expert:trip:dry-run:inv-3"));
        assert!(!dry("expert:trip:inv-12"));
        assert!(!dry("expert:dry-run:inv-12"), "an expert named dry-run");
        assert!(dry("expert:dry-run:dry-run:inv-1"));
        assert!(!dry("expert:trip:xdry-run:inv-1"));
    }

    #[test]
    fn invocation_sessions_are_recognised() {
        use super::invocation_of_session as of;
        assert_eq!(of("expert:dry-run:inv-12"), Some("inv-12"));
        assert_eq!(of("expert:trip:inv-12"), Some("inv-12"));
        assert_eq!(of("agent:main:expert:trip:inv-3"), Some("inv-3"));
        assert_eq!(of("expert:trip"), None);
        assert_eq!(of("expert:inv-3"), None);
        assert_eq!(of("expert:trip:inv-3x"), None);
    }
}
