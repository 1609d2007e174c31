//! Accepting a trigger's event (loader design §6 "Trigger → Process Invocation"): dedupe, payload
//! mapping, the concurrency lane, and a durable invocation in the record. A refused event leaves no
//! trace in the queue; an accepted one is in the saved record before anyone is told so.

use super::Runtime;
use super::payload::{key_text, map_inputs, resolve};
use super::store::{Invocation, Lane, MAX_RECORD_BYTES, Runs};
use crate::experts::package::{Package, SessionMode, Trigger};
use crate::platform::api::ManualRun;
use serde_json::Value;
use std::collections::BTreeMap;

/// Unfinished invocations of one trigger (or one expert's manual runs) at most: beyond, its events
/// are refused (429), and a flood on one trigger leaves every other trigger its own room.
pub const MAX_OPEN_PER_TRIGGER: usize = 200;

/// What became of an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Accepted {
    Queued {
        invocation: String,
        /// A warning to log (a `serial_per_key` key that did not resolve).
        warning: Option<String>,
    },
    /// Its dedupe key was accepted before, at this epoch ms.
    Duplicate { key: String, first_ms: u64 },
}

/// Why an event was refused: a client's mistake (4xx) or the runtime's (5xx).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub status: u16,
    pub message: String,
}

impl Refused {
    pub fn new(status: u16, message: impl Into<String>) -> Refused {
        Refused {
            status,
            message: message.into(),
        }
    }
}

/// What an event becomes, decided without touching the record (the dry run `experts fire` shows it).
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub process: String,
    pub inputs: BTreeMap<String, Value>,
    pub lane: Lane,
    pub lane_warning: Option<String>,
    pub dedupe: Option<String>,
    pub main_session: bool,
}

/// The trigger `name` of `package`, when it is active.
pub fn trigger<'p>(
    package: &'p crate::experts::Package,
    name: &str,
) -> Result<&'p Trigger, Refused> {
    let found = package.triggers.iter().find(|t| t.name == name);
    if let Some(why) = found.and_then(Trigger::inactive) {
        return Err(Refused::new(
            404,
            format!(
                "trigger {name} of {} is inactive: {why} (experts validate {})",
                package.name, package.name
            ),
        ));
    }
    found.ok_or_else(|| {
        let known: Vec<&str> = package.triggers.iter().map(|t| t.name.as_str()).collect();
        Refused::new(
            404,
            format!(
                "expert {} has no trigger {name} (its triggers: {})",
                package.name,
                if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                }
            ),
        )
    })
}

/// Maps the payload and resolves keys: every problem with the payload is a 422 naming the field.
pub fn plan(trigger: &Trigger, payload: &Value) -> Result<Planned, Refused> {
    if !payload.is_object() {
        return Err(Refused::new(422, "the payload is not a JSON object"));
    }
    let inputs = map_inputs(payload, &trigger.payload_mapping).map_err(|e| Refused::new(422, e))?;
    let dedupe = match &trigger.dedupe_key {
        Some(path) => Some(resolve(payload, path).and_then(key_text).ok_or_else(|| {
            Refused::new(
                422,
                format!("the payload lacks the dedupe key {path} (a non-empty string or number)"),
            )
        })?),
        None => None,
    };
    let (lane, lane_warning) = match trigger.concurrency.as_str() {
        "serial" => (Lane::Serial, None),
        "serial_per_key" => {
            let path = trigger.concurrency_key.as_deref().unwrap_or_default();
            match resolve(payload, path).and_then(key_text) {
                Some(key) => (Lane::Key(key), None),
                None => (
                    Lane::Serial,
                    Some(format!(
                        "trigger {}: the concurrency key {path} is not in the payload; this \
                         invocation queues behind every other of the trigger (serial)",
                        trigger.name
                    )),
                ),
            }
        }
        _ => (Lane::Parallel, None),
    };
    Ok(Planned {
        process: trigger.process.clone(),
        inputs,
        lane,
        lane_warning,
        dedupe,
        main_session: trigger.session == SessionMode::Main,
    })
}

impl Runtime<'_> {
    /// Accepts an event for `expert`'s `trigger_name` into the record (the caller holds the lock and
    /// saves).
    pub fn accept(
        &self,
        runs: &mut Runs,
        expert: &str,
        trigger_name: &str,
        payload: &Value,
        source: String,
        now_ms: u64,
    ) -> Result<Accepted, Refused> {
        let package = self.package(expert).map_err(|e| Refused::new(404, e))?;
        let trigger = trigger(package, trigger_name)?;
        let planned = plan(trigger, payload)?;
        room_for(runs, expert, Some(trigger_name))?;
        let seen_key = format!("{expert}/{trigger_name}");
        let window_ms = self.settings.dedupe_window_hours * 3_600_000;
        if let Some(key) = &planned.dedupe {
            if let Some(first_ms) = runs.seen_within(&seen_key, key, now_ms, window_ms) {
                return Ok(Accepted::Duplicate {
                    key: key.clone(),
                    first_ms,
                });
            }
            runs.seen
                .entry(seen_key)
                .or_default()
                .insert(key.clone(), now_ms);
        }
        let mut invocation = Invocation::new(runs.next_seq(), expert, source, planned.lane, now_ms);
        invocation.trigger = Some(trigger_name.to_string());
        invocation.process = Some(planned.process);
        invocation.inputs = planned.inputs;
        invocation.main_session = planned.main_session;
        let id = invocation.id.clone();
        if let Some(warning) = &planned.lane_warning {
            invocation.note(now_ms, warning.clone());
        }
        let size = serde_json::to_vec(&invocation).map_or(0, |b| b.len());
        let from_outside = trigger.kind != "cron";
        if from_outside && runs.bytes + size > MAX_RECORD_BYTES {
            if let Some(key) = &planned.dedupe
                && let Some(keys) = runs.seen.get_mut(&format!("{expert}/{trigger_name}"))
            {
                keys.remove(key);
            }
            return Err(Refused::new(429, full_record(runs.bytes, size)));
        }
        runs.bytes += size;
        runs.invocations.push(invocation);
        Ok(Accepted::Queued {
            invocation: id,
            warning: planned.lane_warning,
        })
    }

    /// Queues a manual run (`experts run`): in the expert's own session, behind its other manual
    /// runs (loader design §10.3).
    pub fn accept_manual(
        &self,
        runs: &mut Runs,
        run: &ManualRun,
        now_ms: u64,
    ) -> Result<String, String> {
        let package = self.package(&run.expert)?;
        let expert = run.expert.as_str();
        let inputs = manual_inputs(package, run)?;
        if run.process.is_none() && run.message.trim().is_empty() {
            return Err(
                "the message is empty: say what the expert should do, or name one of its processes"
                    .into(),
            );
        }
        let size = run.message.len() + run.inputs_json.len();
        if size > self.settings.webhook_max_bytes {
            return Err(format!(
                "the message and inputs have {size} bytes; at most {} are accepted (experts.webhook_max_bytes)",
                self.settings.webhook_max_bytes
            ));
        }
        room_for(runs, expert, None).map_err(|r| r.message)?;
        let source = if run.dry_run {
            "manual dry run"
        } else {
            "manual"
        };
        let mut invocation =
            Invocation::new(runs.next_seq(), expert, source.into(), Lane::Serial, now_ms);
        invocation.message = Some(run.message.trim().to_string()).filter(|m| !m.is_empty());
        invocation.process = run.process.clone();
        invocation.inputs = inputs;
        invocation.dry_run = run.dry_run;
        // Counted against the record's cap as an event's run is, so manual runs cannot fill it.
        let size = serde_json::to_vec(&invocation).map_or(0, |b| b.len());
        if runs.bytes + size > MAX_RECORD_BYTES {
            return Err(full_record(runs.bytes, size));
        }
        runs.bytes += size;
        let id = invocation.id.clone();
        runs.invocations.push(invocation);
        Ok(id)
    }
}

/// A manual run's process inputs: a JSON object whose keys the process declares (none without a
/// process).
fn manual_inputs(package: &Package, run: &ManualRun) -> Result<BTreeMap<String, Value>, String> {
    let given = run.inputs_json.trim();
    let Some(name) = &run.process else {
        return if given.is_empty() || given == "{}" {
            Ok(BTreeMap::new())
        } else {
            Err("inputs are a process's: name the process to run with them".into())
        };
    };
    let names = |list: &[String]| {
        if list.is_empty() {
            "none".to_string()
        } else {
            list.join(", ")
        }
    };
    let process = package
        .processes
        .iter()
        .find(|p| &p.name == name)
        .ok_or_else(|| {
            let known: Vec<String> = package.processes.iter().map(|p| p.name.clone()).collect();
            format!(
                "expert {} has no process {name} (its processes: {})",
                package.name,
                names(&known)
            )
        })?;
    if given.is_empty() {
        return Ok(BTreeMap::new());
    }
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(given.as_bytes()) else {
        return Err(format!(
            "the inputs are not a JSON object (such as {{\"{}\": \"…\"}})",
            process.inputs.first().map_or("name", String::as_str)
        ));
    };
    let unknown: Vec<&str> = fields
        .keys()
        .filter(|k| !process.inputs.contains(k))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "process {name} takes no input {}; its inputs: {}",
            unknown.join(", "),
            names(&process.inputs)
        ));
    }
    Ok(fields.into_iter().collect())
}

/// Why a run is refused when the record is full.
fn full_record(bytes: usize, size: usize) -> String {
    format!(
        "the expert runs record holds {bytes} bytes, and this run would take {size} more \
         (at most {MAX_RECORD_BYTES}); try again once runs have finished (experts queue)"
    )
}

/// Refuses a new invocation of `expert`'s `trigger` (None: its manual runs) when that trigger has
/// [`MAX_OPEN_PER_TRIGGER`] unfinished already.
fn room_for(runs: &Runs, expert: &str, trigger: Option<&str>) -> Result<(), Refused> {
    let open = runs
        .invocations
        .iter()
        .filter(|i| {
            !i.status.is_finished() && i.expert == expert && i.trigger.as_deref() == trigger
        })
        .count();
    if open < MAX_OPEN_PER_TRIGGER {
        return Ok(());
    }
    let what = match trigger {
        Some(trigger) => format!("{expert}'s trigger {trigger}"),
        None => format!("{expert}'s manual runs"),
    };
    Err(Refused::new(
        429,
        format!(
            "{what} has {open} unfinished runs already (at most {MAX_OPEN_PER_TRIGGER}); try again later"
        ),
    ))
}
