//! The runtime's durable record: every accepted invocation, the counters, the cron checkpoints, the
//! recently seen dedupe keys, pending learnings and the deliveries not yet handed to the host. One
//! JSON file in the state directory, replaced atomically, changed only under the `experts-runs`
//! lock: a crash (kill -9) leaves the old file or the new one, and two processes never interleave.

use crate::platform::files::write_atomically;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

pub const RUNS_FILE: &str = "experts-runs.json";
/// Bumped when a change would make an older build misread the file.
pub const FORMAT: u32 = 1;
/// Finished invocations are kept this long for `experts queue --all`-style history, then dropped.
pub const KEEP_FINISHED_MS: u64 = 7 * 86_400_000;
/// Finished invocations kept at most (the oldest go first). Unfinished ones are never dropped.
pub const MAX_FINISHED: usize = 500;
/// The record is rewritten whole on every change: beyond this size, events from outside (webhooks,
/// channel messages) are refused until runs finish; cron slots and manual runs still queue.
pub const MAX_RECORD_BYTES: usize = 8 << 20;
/// A larger file is not a record this build writes: it is set aside unread.
const MAX_READ_BYTES: u64 = 64 << 20;
/// A finished run (not a dead letter, which can be replayed) keeps inputs up to this size.
pub const MAX_FINISHED_INPUT_BYTES: usize = 4 << 10;
/// A log line or a delivery kept in the record is cut at this many characters.
pub const MAX_NOTE_CHARS: usize = 2_000;
pub const MAX_DELIVERY_CHARS: usize = 64_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Accepted, waiting for its lane (or a resume after an approval).
    Queued,
    /// Handed to the host to run.
    Running,
    /// Failed; the next attempt is due at `next_at_ms`.
    RetryWait,
    /// A CONFIRM call waits for the user.
    WaitingApproval,
    Done,
    /// Failed for good; escalated or abandoned (by `on_failure`).
    Failed,
    /// Failed for good and kept for review (`on_failure: dead_letter`); `experts replay` requeues it.
    DeadLetter,
}

impl Status {
    pub fn is_finished(self) -> bool {
        matches!(self, Status::Done | Status::Failed | Status::DeadLetter)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Running => "running",
            Status::RetryWait => "retry-wait",
            Status::WaitingApproval => "waiting-approval",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::DeadLetter => "dead-letter",
        }
    }
}

/// Which invocations must not overlap (spec §3 `concurrency`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "mode", content = "key")]
pub enum Lane {
    /// Runs at once, beside anything.
    Parallel,
    /// One at a time, in order, for the whole trigger (also a `serial_per_key` invocation whose key
    /// did not resolve, and manual runs of one expert).
    Serial,
    /// One at a time, in order, per key value of the trigger.
    Key(String),
}

/// A CONFIRM call the invocation waits on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    /// The approval request's id (as `experts approve` takes it).
    pub request: String,
    pub operation: String,
    pub since_ms: u64,
    /// When `policy.approval.timeout` runs out; none when the policy has no timeout.
    pub deadline_ms: Option<u64>,
    /// `on_timeout: escalate` already told the user; the request stays open.
    #[serde(default)]
    pub escalated: bool,
}

/// One line of the framework-owned execution log (spec §3 `resume_from_execution_log`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    pub at_ms: u64,
    pub attempt: u32,
    pub text: String,
}

/// What a dry run's session key has before its invocation (`expert:<name>:dry-run:inv-<n>`).
pub const DRY_RUN_SEGMENT: &str = "dry-run:";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    /// `inv-<seq>`, unique in this state directory.
    pub id: String,
    pub seq: u64,
    pub expert: String,
    /// None for a manual `experts run`.
    pub trigger: Option<String>,
    /// The process to run; none for a manual run (the message says what to do).
    pub process: Option<String>,
    /// How it came: `webhook`, `cron <slot>`, `channel <name>`, `manual`.
    pub source: String,
    /// Process inputs from `payload_mapping` (or the whole payload's fields when there is none).
    pub inputs: BTreeMap<String, Value>,
    /// A manual run's message.
    #[serde(default)]
    pub message: Option<String>,
    pub lane: Lane,
    /// Run in the main session rather than one of its own.
    pub main_session: bool,
    pub accepted_ms: u64,
    pub status: Status,
    /// Attempts started.
    pub attempts: u32,
    /// Attempts that failed (a resume after an approval is a new attempt, not a failure).
    pub failures: u32,
    #[serde(default)]
    pub next_at_ms: Option<u64>,
    #[serde(default)]
    pub started_ms: Option<u64>,
    /// When the running attempt counts as timed out even if the host never reports.
    #[serde(default)]
    pub deadline_ms: Option<u64>,
    /// The runner (boot number) the running attempt was handed to.
    #[serde(default)]
    pub runner: Option<u64>,
    #[serde(default)]
    pub waiting: Option<Waiting>,
    /// Steps the agent reported complete (`expert_step`), in order, across attempts.
    #[serde(default)]
    pub steps: Vec<String>,
    #[serde(default)]
    pub log: Vec<LogEntry>,
    #[serde(default)]
    pub sla_warned: bool,
    #[serde(default)]
    pub finished_ms: Option<u64>,
    /// Why it failed for good, or how it ended.
    #[serde(default)]
    pub outcome: Option<String>,
    /// Its finished session was handed to the host to delete.
    #[serde(default)]
    pub session_ended: bool,
    /// A dry run (openexperts §7): only `auto` operations execute, in a session of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// An isolated function this attempt called judged its confidence low: the run escalates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_confidence: Option<String>,
    /// A dry run's calls that were not executed, in the order they were made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub planned: Vec<PlannedCall>,
}

/// A call a dry run did not execute: what the policy would have done with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedCall {
    /// `tool.operation`, or the tool's name when it is no operation of the package.
    pub operation: String,
    pub tier: String,
    /// As bound by an approval, cut to a line.
    pub arguments: String,
    /// What a real run would have done: run it once approved, deliver a draft, refuse it.
    pub would: String,
}

impl Invocation {
    /// A queued invocation with nothing run yet.
    pub fn new(seq: u64, expert: &str, source: String, lane: Lane, now_ms: u64) -> Invocation {
        let mut invocation = Invocation {
            id: format!("inv-{seq}"),
            seq,
            expert: expert.to_string(),
            trigger: None,
            process: None,
            source,
            inputs: BTreeMap::new(),
            message: None,
            lane,
            main_session: false,
            accepted_ms: now_ms,
            status: Status::Queued,
            attempts: 0,
            failures: 0,
            next_at_ms: None,
            started_ms: None,
            deadline_ms: None,
            runner: None,
            waiting: None,
            steps: Vec::new(),
            log: Vec::new(),
            sla_warned: false,
            finished_ms: None,
            outcome: None,
            session_ended: false,
            dry_run: false,
            low_confidence: None,
            planned: Vec::new(),
        };
        invocation.note(now_ms, format!("accepted from {}", invocation.source));
        invocation
    }

    pub fn note(&mut self, at_ms: u64, text: impl Into<String>) {
        self.log.push(LogEntry {
            at_ms,
            attempt: self.attempts,
            text: cut(text.into(), MAX_NOTE_CHARS),
        });
    }

    /// The isolated session of this invocation (kept across its attempts); a dry run's says so,
    /// which is how the approval gate knows it without reading the record.
    pub fn isolated_session_key(&self) -> String {
        let dry_run = if self.dry_run { DRY_RUN_SEGMENT } else { "" };
        format!("expert:{}:{dry_run}{}", self.expert, self.id)
    }
}

/// A learning proposed with `learning.approval: confirm`, waiting for the user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingLearning {
    pub id: String,
    pub expert: String,
    /// `package` or a function name.
    pub scope: String,
    /// The entry as it will be appended (markdown).
    pub entry: String,
    pub proposed_ms: u64,
}

/// When a cron trigger's next slot can be due at the earliest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CronNext {
    /// The expression and zone it was computed for: an edited trigger computes again.
    pub schedule: String,
    /// Its next slot, or when to look again.
    pub not_before_ms: u64,
    pub kind: NotBefore,
}

/// What a trigger's `not_before_ms` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotBefore {
    /// Its next slot.
    Slot,
    /// The end of the look-ahead: no slot before it.
    LookAheadEnd,
    /// The slot could not be computed (the host does not know the zone): try again then.
    Retry,
}

/// A delivery not yet handed to the host (the host posts what `tick` returns).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outgoing {
    pub expert: String,
    pub invocation: Option<String>,
    /// `result`, `escalation`, `approval`, `draft`, `sla-warning` or `notice`.
    pub kind: String,
    pub text: String,
    /// When it was last handed to a host, and that host's runner (boot number): it stays here until
    /// the host reports it posted.
    #[serde(default)]
    pub handed_ms: Option<u64>,
    #[serde(default)]
    pub handed_to: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Runs {
    /// The record's size as read, and what was added since (see [`MAX_RECORD_BYTES`]).
    #[serde(skip)]
    pub bytes: usize,
    pub format: u32,
    pub next_seq: u64,
    /// Boot numbers handed to runners; a running attempt of an older runner was interrupted.
    pub last_runner: u64,
    pub invocations: Vec<Invocation>,
    /// Per `expert/trigger`: the cron schedule was checked up to this epoch ms.
    #[serde(default)]
    pub cron_checked_ms: BTreeMap<String, u64>,
    /// Per `expert/trigger`: no slot is due before this moment (so a tick computes nothing for it
    /// until then), for the schedule as it was when computed.
    #[serde(default)]
    pub cron_next: BTreeMap<String, CronNext>,
    /// Per `expert/trigger`: dedupe key value → when it was first accepted.
    #[serde(default)]
    pub seen: BTreeMap<String, BTreeMap<String, u64>>,
    #[serde(default)]
    pub learnings: Vec<PendingLearning>,
    #[serde(default)]
    pub outbox: Vec<Outgoing>,
}

impl Runs {
    /// Makes a record that contradicts itself usable again: the counter goes past every id in use
    /// (else the next invocation would reuse one), and of two invocations with one id the later is
    /// dropped. Says what was repaired, if anything.
    fn repair(&mut self) -> Option<String> {
        let mut repaired = Vec::new();
        let mut ids = std::collections::BTreeSet::new();
        let before = self.invocations.len();
        self.invocations.retain(|i| ids.insert(i.id.clone()));
        if self.invocations.len() < before {
            repaired.push(format!(
                "{} invocation(s) repeated an id in use and were dropped",
                before - self.invocations.len()
            ));
        }
        let highest = self
            .invocations
            .iter()
            .map(|i| {
                i.id.strip_prefix("inv-")
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0)
                    .max(i.seq)
            })
            .max()
            .unwrap_or(0);
        if self.next_seq < highest {
            repaired.push(format!(
                "its counter was {} while inv-{highest} is in use, now {highest}",
                self.next_seq
            ));
            self.next_seq = highest;
        }
        (!repaired.is_empty()).then(|| repaired.join("; "))
    }

    pub fn get(&self, id: &str) -> Option<&Invocation> {
        self.invocations.iter().find(|i| i.id == id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Invocation> {
        self.invocations.iter_mut().find(|i| i.id == id)
    }

    pub fn next_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// When the event with dedupe `key` of `expert/trigger` was first accepted, if that is within
    /// the dedupe window: an older key is not a duplicate, whether or not the record was pruned.
    pub fn seen_within(
        &self,
        seen_key: &str,
        key: &str,
        now_ms: u64,
        window_ms: u64,
    ) -> Option<u64> {
        self.seen
            .get(seen_key)
            .and_then(|keys| keys.get(key))
            .copied()
            .filter(|&at| now_ms.saturating_sub(at) <= window_ms)
    }

    /// Drops finished invocations older than [`KEEP_FINISHED_MS`] or beyond [`MAX_FINISHED`]
    /// (dead letters stay until replayed), and dedupe keys older than `dedupe_window_ms`.
    pub fn prune(&mut self, now_ms: u64, dedupe_window_ms: u64) {
        let old = |i: &Invocation| {
            i.status != Status::DeadLetter
                && i.finished_ms
                    .is_some_and(|f| now_ms.saturating_sub(f) > KEEP_FINISHED_MS)
        };
        self.invocations.retain(|i| !old(i));
        for inv in &mut self.invocations {
            let replayable = inv.status == Status::DeadLetter;
            if inv.status.is_finished() && !replayable {
                let size = serde_json::to_vec(&inv.inputs).map_or(0, |b| b.len());
                if size > MAX_FINISHED_INPUT_BYTES {
                    inv.inputs.clear();
                    inv.note(
                        now_ms,
                        format!("its inputs ({size} bytes) were dropped once it finished"),
                    );
                }
            }
        }
        let finished: Vec<usize> = (0..self.invocations.len())
            .filter(|&n| self.invocations[n].status.is_finished())
            .filter(|&n| self.invocations[n].status != Status::DeadLetter)
            .collect();
        if finished.len() > MAX_FINISHED {
            let drop: Vec<String> = finished[..finished.len() - MAX_FINISHED]
                .iter()
                .map(|&n| self.invocations[n].id.clone())
                .collect();
            self.invocations.retain(|i| !drop.contains(&i.id));
        }
        for keys in self.seen.values_mut() {
            keys.retain(|_, at| now_ms.saturating_sub(*at) <= dedupe_window_ms);
        }
        self.seen.retain(|_, keys| !keys.is_empty());
    }
}

/// `text` cut to `max` characters, saying how much was cut.
pub fn cut(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text,
        Some((at, _)) => format!(
            "{} … ({} more bytes not kept)",
            &text[..at],
            text.len() - at
        ),
    }
}

/// Reading the file: its contents, or why it was set aside.
pub struct Loaded {
    pub runs: Runs,
    /// A corrupt or newer-format file was moved aside (named here) and the record starts empty.
    pub set_aside: Option<String>,
}

pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(RUNS_FILE)
}

/// Reads the record. A file that is not a regular file (a FIFO would hold every call), larger than
/// any record this build writes, unparsable or of a newer format is renamed aside (never deleted: an
/// operator can inspect or restore it) and the runtime starts from an empty record. A record that
/// contradicts itself (a counter below an id in use, one id twice) is copied aside and repaired.
pub fn load(state_dir: &Path, now_ms: u64) -> Result<Loaded, String> {
    let file = path(state_dir);
    let empty = || Runs {
        format: FORMAT,
        ..Runs::default()
    };
    let why = match crate::platform::files::read_regular(&file, MAX_READ_BYTES) {
        Ok(None) => {
            return Ok(Loaded {
                runs: empty(),
                set_aside: None,
            });
        }
        Ok(Some(bytes)) => match serde_json::from_slice::<Runs>(&bytes) {
            Ok(mut runs) if runs.format <= FORMAT => {
                runs.bytes = bytes.len();
                let set_aside = match runs.repair() {
                    Some(repaired) => {
                        let said = copy_aside(state_dir, &bytes, now_ms, &repaired)?;
                        save(state_dir, &runs)?;
                        Some(said)
                    }
                    None => None,
                };
                return Ok(Loaded { runs, set_aside });
            }
            Ok(runs) => format!(
                "it is of format {}, newer than this build's {FORMAT}",
                runs.format
            ),
            Err(e) => format!("it is not a valid record: {e}"),
        },
        Err(e) => format!("it cannot be read as a record: {e}"),
    };
    let aside = state_dir.join(format!("{RUNS_FILE}.unreadable-{now_ms}"));
    fs::rename(&file, &aside)
        .map_err(|e| format!("{RUNS_FILE} is unreadable ({why}) and cannot be set aside: {e}"))?;
    Ok(Loaded {
        runs: empty(),
        set_aside: Some(format!(
            "{RUNS_FILE} was set aside as {} because {why}; expert runs start from an empty record",
            aside.file_name().unwrap_or_default().to_string_lossy()
        )),
    })
}

/// Keeps the record as it was read beside the repaired one, and says what was repaired.
fn copy_aside(
    state_dir: &Path,
    bytes: &[u8],
    now_ms: u64,
    repaired: &str,
) -> Result<String, String> {
    let aside = state_dir.join(format!("{RUNS_FILE}.inconsistent-{now_ms}"));
    write_atomically(&aside, bytes).map_err(|e| {
        format!("{RUNS_FILE} is inconsistent ({repaired}) and cannot be copied aside: {e}")
    })?;
    Ok(format!(
        "{RUNS_FILE} was inconsistent: {repaired}; the record as it was is kept as {}",
        aside.file_name().unwrap_or_default().to_string_lossy()
    ))
}

pub fn save(state_dir: &Path, runs: &Runs) -> Result<(), String> {
    let bytes = serde_json::to_vec(runs).map_err(|e| e.to_string())?;
    write_atomically(&path(state_dir), &bytes)
        .map_err(|e| format!("{RUNS_FILE} cannot be written: {e}"))
}
