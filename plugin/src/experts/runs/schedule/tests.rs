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
                crate::platform::time::iso8601(slot.slot_ms),
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
        assert_eq!(crate::platform::time::iso8601(next), slot);
    }
    // After the first 02:30 of the repeated hour, the next is the following day's.
    let mut zone = BERLIN_AUTUMN;
    let next = next_slot(&expr, "Zone/Test", &mut zone, 1_792_888_200_000)
        .unwrap()
        .unwrap();
    assert_eq!(
        crate::platform::time::iso8601(next),
        "2026-10-26T01:30:00.000Z"
    );
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
    let caught_up =
        zone.after > zone.before && ours == Some(zone.change_ms) && later(theirs, zone.change_ms);
    let second_pass = theirs.is_some_and(|t| {
        (zone.change_ms..zone.change_ms + repeated).contains(&t) && later(ours, t)
    });
    assert!(
        !expr.follows_elapsed_time()
            && cron.determine_job_type() == JobType::IntervalWildcard
            && (caught_up || second_pass),
        "{text:?}: ours {:?}, croner's {:?}",
        ours.map(crate::platform::time::iso8601),
        theirs.map(crate::platform::time::iso8601),
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
                crate::platform::time::iso8601(start)
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
