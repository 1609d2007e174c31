//! Cron triggers: which slot of a schedule is due between the last check and now, in the trigger's
//! time zone. The component carries no time-zone database: the host says a zone's offset from UTC at
//! a moment (`host.utc-offset`), and a window's offsets are asked at its ends (and bisected when they
//! differ, so a daylight-saving change costs a dozen questions, not one per minute).
//!
//! Slots missed while no runtime ticked (OpenClaw down) run once, as the latest missed slot, and the
//! run says how many were missed; slots more than [`CATCH_UP_MS`] old are not run. The spec has no
//! field for this; docs/experts.md documents it.

use crate::experts::cron::CronExpr;
use crate::platform::time::{civil, local_minute};

/// How far back missed slots are looked for.
pub const CATCH_UP_MS: u64 = 7 * 86_400_000;
/// How far ahead `experts due` looks for the next slot (a weekly schedule always has one).
pub const LOOK_AHEAD_MS: u64 = 8 * 86_400_000;
const MINUTE_MS: u64 = 60_000;
/// How far before a window offsets are known too: a repeated local hour begins at a change up to
/// this long before a slot (daylight-saving shifts are at most two hours).
const SHIFT_LOOK_BACK_MS: u64 = 3 * 3_600_000;

/// A zone's offset from UTC in minutes east, at an epoch ms.
pub trait TimeZones {
    fn utc_offset_minutes(&mut self, zone: &str, at_ms: u64) -> Result<i32, String>;
}

/// UTC only: for hosts and tests without a time-zone database.
pub struct UtcOnly;

impl TimeZones for UtcOnly {
    fn utc_offset_minutes(&mut self, zone: &str, _: u64) -> Result<i32, String> {
        match zone {
            "UTC" | "Etc/UTC" | "GMT" | "Etc/GMT" => Ok(0),
            _ => Err(format!("no time-zone database to resolve {zone}")),
        }
    }
}

/// The due slot of one schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueSlot {
    /// The slot's moment, epoch ms (the latest one due).
    pub slot_ms: u64,
    /// The slot in the zone's wall-clock time, for messages.
    pub local: String,
    /// Earlier slots in the window that are not run (missed while nothing ticked).
    pub missed: u32,
}

/// Offsets across a window, asked of the host sparingly.
struct Offsets<'z> {
    zones: &'z mut dyn TimeZones,
    zone: &'z str,
    /// (from ms, offset) steps, sorted.
    steps: Vec<(u64, i32)>,
}

impl<'z> Offsets<'z> {
    fn new(
        zones: &'z mut dyn TimeZones,
        zone: &'z str,
        from_ms: u64,
        to_ms: u64,
    ) -> Result<Self, String> {
        let mut offsets = Offsets {
            zones,
            zone,
            steps: Vec::new(),
        };
        let start = offsets.ask(from_ms)?;
        offsets.steps.push((from_ms, start));
        offsets.split(from_ms, start, to_ms)?;
        Ok(offsets)
    }

    fn ask(&mut self, at_ms: u64) -> Result<i32, String> {
        self.zones.utc_offset_minutes(self.zone, at_ms)
    }

    /// Finds the moments in (from, to] where the offset changes, assuming at most a few.
    fn split(&mut self, from_ms: u64, from_offset: i32, to_ms: u64) -> Result<(), String> {
        let end = self.ask(to_ms)?;
        if end == from_offset || to_ms <= from_ms + MINUTE_MS {
            if end != from_offset {
                self.steps.push((to_ms, end));
            }
            return Ok(());
        }
        // Bisect to the minute where the offset first differs from `from_offset`.
        let (mut lo, mut hi) = (from_ms, to_ms);
        let mut hi_offset = end;
        while hi - lo > MINUTE_MS {
            let mid = lo + (hi - lo) / 2;
            let at_mid = self.ask(mid)?;
            if at_mid == from_offset {
                lo = mid;
            } else {
                hi = mid;
                hi_offset = at_mid;
            }
        }
        // Offsets change on whole minutes: the change is at the minute within (lo, hi], if any.
        let minute = hi - hi % MINUTE_MS;
        if minute > lo && minute < hi && self.ask(minute)? == hi_offset {
            hi = minute;
        }
        self.steps.push((hi, hi_offset));
        self.split(hi, hi_offset, to_ms)
    }

    /// Whether local time at `ms` repeats one already seen: within a backward change's first
    /// `before - after` minutes.
    fn repeats(&self, ms: u64) -> bool {
        let Some(n) = self.steps.iter().rposition(|(from, _)| *from <= ms) else {
            return false;
        };
        if n == 0 {
            return false;
        }
        let (change, after) = self.steps[n];
        let before = self.steps[n - 1].1;
        before > after && ms < change + u64::from((before - after).unsigned_abs()) * MINUTE_MS
    }

    fn at(&self, ms: u64) -> i32 {
        self.steps
            .iter()
            .rev()
            .find(|(from, _)| *from <= ms)
            .map_or(self.steps[0].1, |s| s.1)
    }
}

/// The seconds of local minute `local_secs` (seconds since the epoch, in local time) at which the
/// schedule fires.
fn seconds_in_local_minute(expr: &CronExpr, local_secs: i64) -> impl Iterator<Item = u32> + '_ {
    let local = civil(local_secs);
    (0..60u32).filter(move |&sec| {
        expr.matches(
            sec,
            local.minute,
            local.hour,
            local.day,
            local.month,
            local.weekday,
        )
    })
}

/// The slots in the minute starting at `minute_ms`, in order: every second the schedule fires on
/// in the zone's local time (a 6-field schedule may fire more than once a minute). A schedule
/// whose seconds, minute or hour field starts with `*` (every 15 minutes, hourly) follows elapsed
/// time across a daylight-saving change, as cron's wildcard jobs do: a repeated local time fires in
/// both passes and a skipped one not at all, so the runs stay evenly spaced. A fixed-time schedule
/// follows the wall clock: a local time that repeats after a backward change fires only at its
/// first occurrence (as OpenClaw's cron); local times a forward change skips fire once, at the
/// change, so a daily job is not lost for a day.
fn slots_in_minute(expr: &CronExpr, offsets: &Offsets, minute_ms: u64) -> Vec<u64> {
    let offset = offsets.at(minute_ms);
    let local = |ms: u64, offset: i32| (ms / 1000) as i64 + i64::from(offset) * 60;
    let on_the_clock: Vec<u64> = seconds_in_local_minute(expr, local(minute_ms, offset))
        .map(|sec| minute_ms + u64::from(sec) * 1000)
        .collect();
    if expr.follows_elapsed_time() {
        return on_the_clock;
    }
    if offsets.repeats(minute_ms) {
        return Vec::new();
    }
    let before = offsets.at(minute_ms.saturating_sub(MINUTE_MS));
    let skipped = || {
        (before..offset).any(|shift| {
            seconds_in_local_minute(expr, local(minute_ms, shift))
                .next()
                .is_some()
        })
    };
    if on_the_clock.is_empty() && offset > before && skipped() {
        return vec![minute_ms];
    }
    on_the_clock
}

/// The slot due in (`after_ms`, `up_to_ms`]: the latest one, with how many earlier ones are skipped.
pub fn due(
    expr: &CronExpr,
    zone: &str,
    zones: &mut dyn TimeZones,
    after_ms: u64,
    up_to_ms: u64,
) -> Result<Option<DueSlot>, String> {
    let from = after_ms.max(up_to_ms.saturating_sub(CATCH_UP_MS));
    if up_to_ms <= from {
        return Ok(None);
    }
    let offsets = Offsets::new(
        zones,
        zone,
        from.saturating_sub(SHIFT_LOOK_BACK_MS),
        up_to_ms,
    )?;
    let mut found: Option<(u64, i32)> = None;
    let mut count = 0u32;
    let mut minute = from - from % MINUTE_MS;
    while minute <= up_to_ms {
        let offset = offsets.at(minute);
        for slot in slots_in_minute(expr, &offsets, minute) {
            if slot > after_ms && slot <= up_to_ms {
                count += 1;
                found = Some((slot, offset));
            }
        }
        minute += MINUTE_MS;
    }
    Ok(found.map(|(slot_ms, offset)| DueSlot {
        slot_ms,
        local: local_minute(slot_ms, offset),
        missed: count - 1,
    }))
}

/// The next slot after `after_ms`, within [`LOOK_AHEAD_MS`].
pub fn next_slot(
    expr: &CronExpr,
    zone: &str,
    zones: &mut dyn TimeZones,
    after_ms: u64,
) -> Result<Option<u64>, String> {
    let until = after_ms + LOOK_AHEAD_MS;
    let offsets = Offsets::new(
        zones,
        zone,
        after_ms.saturating_sub(SHIFT_LOOK_BACK_MS),
        until,
    )?;
    let mut minute = after_ms - after_ms % MINUTE_MS;
    while minute <= until {
        if let Some(slot) = slots_in_minute(expr, &offsets, minute)
            .into_iter()
            .find(|s| *s > after_ms)
        {
            return Ok(Some(slot));
        }
        minute += MINUTE_MS;
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
