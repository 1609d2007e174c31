//! Cron triggers: which slot of a schedule is due between the last check and now, in the trigger's
//! time zone. The component carries no time-zone database: the host says a zone's offset from UTC at
//! a moment (`host.utc-offset`), and a window's offsets are asked at its ends (and bisected when they
//! differ, so a daylight-saving change costs a dozen questions, not one per minute).
//!
//! Slots missed while no runtime ticked (OpenClaw down) run once, as the latest missed slot, and the
//! run says how many were missed; slots more than [`CATCH_UP_MS`] old are not run. The spec has no
//! field for this; the README documents it.

use crate::experts::cron::CronExpr;
use crate::time::{civil, local_minute};

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
mod tests {
    use super::*;
    use crate::experts::cron;

    /// Europe/Berlin around the 2026-10-25 change (CEST +120 until 01:00 UTC, then CET +60).
    struct Berlin {
        asked: u32,
    }

    const CHANGE_MS: u64 = 1_792_890_000_000; // 2026-10-25T01:00:00Z

    impl TimeZones for Berlin {
        fn utc_offset_minutes(&mut self, _: &str, at_ms: u64) -> Result<i32, String> {
            self.asked += 1;
            Ok(if at_ms < CHANGE_MS { 120 } else { 60 })
        }
    }

    #[test]
    fn a_slot_is_due_in_local_time_once() {
        let expr = cron::parse("0 7 * * 1-5").unwrap();
        let mut tz = Berlin { asked: 0 };
        // Monday 2026-11-23 06:00Z = 07:00 CET.
        let slot = 1_795_392_000_000 + 6 * 3_600_000;
        let due = due(
            &expr,
            "Europe/Berlin",
            &mut tz,
            slot - 30_000,
            slot + 30_000,
        )
        .unwrap()
        .unwrap();
        assert_eq!(due.slot_ms, slot);
        assert_eq!(due.local, "2026-11-23 07:00 +01:00");
        assert_eq!(due.missed, 0);
        assert_eq!(
            super::due(&expr, "Europe/Berlin", &mut tz, slot, slot + 60_000).unwrap(),
            None,
            "checked once, not due again"
        );
    }

    #[test]
    fn missed_slots_run_once_as_the_latest() {
        let expr = cron::parse("0 7 * * *").unwrap();
        let mut tz = Berlin { asked: 0 };
        let monday_0600z = 1_795_392_000_000 + 6 * 3_600_000;
        let three_days_before = monday_0600z - 3 * 86_400_000 - 3_600_000;
        let due = due(
            &expr,
            "Europe/Berlin",
            &mut tz,
            three_days_before,
            monday_0600z + 1,
        )
        .unwrap()
        .unwrap();
        assert_eq!(due.slot_ms, monday_0600z);
        assert_eq!(due.missed, 3);
    }

    #[test]
    fn the_daylight_saving_change_is_found_with_few_questions() {
        let expr = cron::parse("30 1 * * *").unwrap();
        let mut tz = Berlin { asked: 0 };
        // Window: Saturday 2026-10-24 00:00Z to Monday 2026-10-26 00:00Z.
        let from = CHANGE_MS - 25 * 3_600_000;
        let to = from + 48 * 3_600_000;
        let due = due(&expr, "Europe/Berlin", &mut tz, from, to)
            .unwrap()
            .unwrap();
        // 01:30 CET on Monday-eve... the latest local 01:30 in the window is 2026-10-25 01:30 CEST
        // (= 2026-10-24T23:30Z), then 2026-10-26 01:30 CET (= 00:30Z) lies outside.
        assert_eq!(due.local, "2026-10-25 01:30 +02:00");
        assert!(tz.asked < 30, "asked {} times", tz.asked);
    }

    /// A zone with one offset change: `before` minutes east until `change_ms`, `after` from then.
    #[derive(Clone, Copy)]
    struct OneChange {
        change_ms: u64,
        before: i32,
        after: i32,
    }

    impl TimeZones for OneChange {
        fn utc_offset_minutes(&mut self, _: &str, at_ms: u64) -> Result<i32, String> {
            Ok(if at_ms < self.change_ms {
                self.before
            } else {
                self.after
            })
        }
    }

    const HOUR_MS: u64 = 3_600_000;
    // 2026 changes: Europe/Berlin 03-29 01:00Z (+1 to +2) and 10-25 01:00Z (+2 to +1);
    // America/New_York 03-08 07:00Z (-5 to -4) and 11-01 06:00Z (-4 to -5).
    const BERLIN_SPRING: OneChange = OneChange {
        change_ms: 1_774_746_000_000,
        before: 60,
        after: 120,
    };
    const BERLIN_AUTUMN: OneChange = OneChange {
        change_ms: 1_792_890_000_000,
        before: 120,
        after: 60,
    };
    const NEW_YORK_SPRING: OneChange = OneChange {
        change_ms: 1_772_953_200_000,
        before: -300,
        after: -240,
    };
    const NEW_YORK_AUTUMN: OneChange = OneChange {
        change_ms: 1_793_512_800_000,
        before: -240,
        after: -300,
    };

    /// The slots run by a runtime ticking every minute from 12 hours before the change to 12 after.
    fn ticked(expr: &str, mut zone: OneChange) -> Vec<String> {
        let expr = cron::parse(expr).unwrap();
        let mut slots = Vec::new();
        let mut checked = zone.change_ms - 12 * HOUR_MS;
        while checked < zone.change_ms + 12 * HOUR_MS {
            let now = checked + MINUTE_MS;
            if let Some(slot) = due(&expr, "Zone/Test", &mut zone, checked, now).unwrap() {
                slots.push(format!(
                    "{} {}",
                    crate::time::iso8601(slot.slot_ms),
                    slot.local
                ));
            }
            checked = now;
        }
        slots
    }

    #[test]
    fn a_repeated_local_time_runs_once_at_its_first_occurrence() {
        assert_eq!(
            ticked("30 2 * * *", BERLIN_AUTUMN),
            ["2026-10-25T00:30:00.000Z 2026-10-25 02:30 +02:00"]
        );
        assert_eq!(
            ticked("30 1 * * *", NEW_YORK_AUTUMN),
            ["2026-11-01T05:30:00.000Z 2026-11-01 01:30 -04:00"]
        );
    }

    #[test]
    fn a_skipped_local_time_runs_once_right_after_the_change() {
        assert_eq!(
            ticked("30 2 * * *", BERLIN_SPRING),
            ["2026-03-29T01:00:00.000Z 2026-03-29 03:00 +02:00"]
        );
        assert_eq!(
            ticked("30 2 * * *", NEW_YORK_SPRING),
            ["2026-03-08T07:00:00.000Z 2026-03-08 03:00 -04:00"]
        );
        // Times outside the change stay as they are.
        assert_eq!(
            ticked("30 3 * * *", BERLIN_SPRING),
            ["2026-03-29T01:30:00.000Z 2026-03-29 03:30 +02:00"]
        );
    }

    #[test]
    fn the_next_slot_agrees_across_the_changes() {
        let expr = cron::parse("30 2 * * *").unwrap();
        for (mut zone, slot) in [
            (BERLIN_SPRING, "2026-03-29T01:00:00.000Z"),
            (BERLIN_AUTUMN, "2026-10-25T00:30:00.000Z"),
            (NEW_YORK_SPRING, "2026-03-08T07:00:00.000Z"),
        ] {
            let from = zone.change_ms - 12 * HOUR_MS;
            let next = next_slot(&expr, "Zone/Test", &mut zone, from)
                .unwrap()
                .unwrap();
            assert_eq!(crate::time::iso8601(next), slot);
        }
        // After the first 02:30 of the repeated hour, the next is the following day's.
        let mut zone = BERLIN_AUTUMN;
        let next = next_slot(&expr, "Zone/Test", &mut zone, 1_792_888_200_000)
            .unwrap()
            .unwrap();
        assert_eq!(crate::time::iso8601(next), "2026-10-26T01:30:00.000Z");
    }

    #[test]
    fn the_next_slot_is_found_ahead() {
        let expr = cron::parse("0 8 * * 1-5").unwrap();
        let saturday = 1_795_392_000_000 - 2 * 86_400_000;
        let next = next_slot(&expr, "UTC", &mut UtcOnly, saturday).unwrap();
        assert_eq!(next, Some(1_795_392_000_000 + 8 * 3_600_000));
    }

    use crate::experts::cron::croner_oracle::{self, Instant, Zone};
    use croner::{Cron, JobType};
    use proptest::prelude::*;

    impl OneChange {
        fn for_croner(&self) -> Zone {
            Zone {
                change: (self.change_ms / 1000) as i64,
                before: self.before,
                after: self.after,
            }
        }
    }

    /// The runtime's next slot after `after_ms` (whole seconds) and croner's, both within the
    /// look-ahead (a slot in its last minute is left out: the runtime scans whole minutes).
    fn next_slots(
        expr: &CronExpr,
        cron: &Cron,
        zone: &mut OneChange,
        after_ms: u64,
    ) -> (Option<u64>, Option<u64>) {
        let horizon = after_ms + LOOK_AHEAD_MS - MINUTE_MS;
        let ours = next_slot(expr, "Zone/Test", zone, after_ms)
            .unwrap()
            .filter(|&ms| ms <= horizon);
        let start = Instant {
            secs: (after_ms / 1000) as i64,
            zone: zone.for_croner(),
        };
        let theirs = cron
            .find_next_occurrence(&start, false)
            .ok()
            .map(|next| next.secs as u64 * 1000)
            .filter(|&ms| ms <= horizon);
        (ours, theirs)
    }

    /// Where the runtime and croner pick different next slots across a change, the difference is
    /// one the runtime means: a fixed-time schedule written as a list or range (`0,30 2 * * *`),
    /// which croner treats as an interval. The runtime runs a fixed time once a day, as whoever
    /// wrote it expects of a wall-clock schedule: once at the change when spring skips it (croner
    /// skips it), and only in the first pass when autumn repeats it (croner runs both).
    fn assert_meant(
        text: &str,
        expr: &CronExpr,
        cron: &Cron,
        zone: &OneChange,
        slots: (Option<u64>, Option<u64>),
    ) {
        let (ours, theirs) = slots;
        let later = |a: Option<u64>, b: u64| a.is_none_or(|a| a > b);
        let repeated = zone.before.saturating_sub(zone.after).max(0) as u64 * MINUTE_MS;
        let caught_up = zone.after > zone.before
            && ours == Some(zone.change_ms)
            && later(theirs, zone.change_ms);
        let second_pass = theirs.is_some_and(|t| {
            (zone.change_ms..zone.change_ms + repeated).contains(&t) && later(ours, t)
        });
        assert!(
            !expr.follows_elapsed_time()
                && cron.determine_job_type() == JobType::IntervalWildcard
                && (caught_up || second_pass),
            "{text:?}: ours {:?}, croner's {:?}",
            ours.map(crate::time::iso8601),
            theirs.map(crate::time::iso8601),
        );
    }

    /// The slots in the 4 hours from each start, each found from the one before by both; returns
    /// how many steps differed (as the runtime means).
    fn compare_across_the_change(text: &str, mut zone: OneChange, starts: &[u64]) -> u32 {
        let expr = cron::parse(text).unwrap();
        let oracle = croner_oracle::parse(text).unwrap();
        let mut differed = 0;
        for &start in starts {
            let (mut after, end) = (start, start + 4 * HOUR_MS);
            for _ in 0..100 {
                let slots = next_slots(&expr, &oracle, &mut zone, after);
                if slots.0 != slots.1 {
                    assert_meant(text, &expr, &oracle, &zone, slots);
                    differed += 1;
                }
                match [slots.0, slots.1].into_iter().flatten().min() {
                    Some(next) if next < end => after = next,
                    _ => break,
                }
            }
        }
        differed
    }

    /// Schedules that fire around 02:00–03:00, where the 2026 changes are: fixed times, lists,
    /// ranges and intervals, with and without seconds.
    fn around_the_change() -> impl Strategy<Value = String> {
        let seconds = prop::sample::select(vec!["", "0 ", "30 ", "*/20 ", "10,40 "]);
        let minutes = prop::sample::select(vec![
            "0", "30", "59", "*/15", "*", "0,30", "15-45/15", "5/20",
        ]);
        let hours = prop::sample::select(vec!["*", "1", "2", "3", "1-3", "2,3", "*/2", "0-23/3"]);
        let days = prop::sample::select(vec![
            "* * *",
            "* * 0",
            "* * 1-5",
            "25-31 * *",
            "* 3,10,11 *",
        ]);
        (seconds, minutes, hours, days).prop_map(|(s, m, h, d)| format!("{s}{m} {h} {d}"))
    }

    #[test]
    fn croner_finds_the_same_slots_across_the_changes_but_where_meant() {
        let schedules = [
            "0,30 2 * * *",
            "0 1-3 * * *",
            "30 2,3 * * *",
            "30 2 * * *",
            "*/15 * * * *",
        ];
        for (zone, differ) in [
            (BERLIN_SPRING, [1, 0, 1, 0, 0]),
            (BERLIN_AUTUMN, [2, 1, 1, 0, 0]),
            (NEW_YORK_SPRING, [1, 0, 1, 0, 0]),
            (NEW_YORK_AUTUMN, [0, 1, 0, 0, 0]),
        ] {
            let start = zone.change_ms - 3 * HOUR_MS;
            for (text, differ) in schedules.iter().zip(differ) {
                let differed = compare_across_the_change(text, zone, &[start]);
                assert_eq!(
                    differed,
                    differ,
                    "{text:?} from {}",
                    crate::time::iso8601(start)
                );
            }
        }
    }

    #[test]
    fn an_interval_schedule_keeps_its_pace_across_the_changes() {
        let between = |slots: Vec<String>, from: &str, to: &str| {
            slots
                .into_iter()
                .filter(|slot| slot.as_str() >= from && slot.as_str() < to)
                .collect::<Vec<_>>()
        };
        // Autumn: the repeated 02:30 runs in both passes, an hour apart.
        assert_eq!(
            between(
                ticked("30 * * * *", BERLIN_AUTUMN),
                "2026-10-24T23",
                "2026-10-25T03"
            ),
            [
                "2026-10-24T23:30:00.000Z 2026-10-25 01:30 +02:00",
                "2026-10-25T00:30:00.000Z 2026-10-25 02:30 +02:00",
                "2026-10-25T01:30:00.000Z 2026-10-25 02:30 +01:00",
                "2026-10-25T02:30:00.000Z 2026-10-25 03:30 +01:00",
            ]
        );
        // Spring: the skipped 02:30 is not made up at 03:00, half an hour before 03:30.
        assert_eq!(
            between(
                ticked("30 * * * *", BERLIN_SPRING),
                "2026-03-28T23",
                "2026-03-29T03"
            ),
            [
                "2026-03-28T23:30:00.000Z 2026-03-29 00:30 +01:00",
                "2026-03-29T00:30:00.000Z 2026-03-29 01:30 +01:00",
                "2026-03-29T01:30:00.000Z 2026-03-29 03:30 +02:00",
                "2026-03-29T02:30:00.000Z 2026-03-29 04:30 +02:00",
            ]
        );
    }

    proptest! {
        #[test]
        fn croner_agrees_across_daylight_saving_changes(text in around_the_change(), zone in 0..4usize) {
            let zone = [BERLIN_SPRING, BERLIN_AUTUMN, NEW_YORK_SPRING, NEW_YORK_AUTUMN][zone];
            let change = zone.change_ms;
            // From well before, from just before, and from inside an autumn's repeated hour.
            let starts = [change - 3 * HOUR_MS, change - 5 * MINUTE_MS, change + 55 * MINUTE_MS];
            compare_across_the_change(&text, zone, &starts);
        }

        #[test]
        fn croner_finds_the_same_next_slot_in_utc(
            text in croner_oracle::expression(),
            after_secs in 1_798_761_600u64..1_861_920_000,
        ) {
            let (Ok(expr), Ok(oracle)) = (cron::parse(&text), croner_oracle::parse(&text)) else {
                return Ok(());
            };
            // Where the day rules differ (`*/2` in a day field) cron.rs's own test compares.
            if !croner_oracle::same_day_rule(&expr, &oracle) {
                return Ok(());
            }
            let mut utc = OneChange { change_ms: 0, before: 0, after: 0 };
            let (ours, theirs) = next_slots(&expr, &oracle, &mut utc, after_secs * 1000);
            prop_assert_eq!(ours, theirs, "{}", text);
        }
    }
}
