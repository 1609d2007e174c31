//! Wall-clock time as the component needs it: Unix milliseconds, and their ISO 8601 text (no date
//! library in the component).

use std::cell::Cell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

thread_local! {
    /// The one reading [`with_one_reading`] holds, while it runs.
    static HELD: Cell<Option<Duration>> = const { Cell::new(None) };
}

/// Now, since the Unix epoch (zero if the clock is before 1970): the reading held by
/// [`with_one_reading`] while it runs, else the host's clock.
pub fn since_epoch() -> Duration {
    HELD.get().unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
    })
}

/// Now, in Unix milliseconds (0 if the clock is before 1970).
pub fn now_ms() -> u64 {
    since_epoch().as_millis() as u64
}

/// Runs `f` with one reading of the wall clock for every time it stamps (records, file names):
/// each reading is a call to the host, which in OpenClaw costs tens of microseconds. Only for work
/// that waits on nothing: its stamps are those of its start. Durations and deadlines use the
/// monotonic clock, which is never held.
pub fn with_one_reading<T>(f: impl FnOnce() -> T) -> T {
    /// Puts back the outer reading (none outside), also when `f` panics (natively, in tests).
    struct Restore(Option<Duration>);
    impl Drop for Restore {
        fn drop(&mut self) {
            HELD.set(self.0);
        }
    }
    let _restore = Restore(HELD.replace(Some(since_epoch())));
    f()
}

/// A moment's calendar fields (proleptic Gregorian), for seconds since the epoch in some offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    /// 1..=12
    pub month: u32,
    /// 1..=31
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 = Sunday .. 6 = Saturday
    pub weekday: u32,
}

/// The calendar fields of `secs` seconds after 1970-01-01T00:00:00 (Howard Hinnant's
/// civil-from-days; no date library in the component).
pub fn civil(secs: i64) -> Civil {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    Civil {
        year: yoe + era * 400 + i64::from(month <= 2),
        month: month as u32,
        day: day as u32,
        hour: (rem / 3600) as u32,
        minute: (rem % 3600 / 60) as u32,
        second: (rem % 60) as u32,
        // 1970-01-01 was a Thursday.
        weekday: (days + 4).rem_euclid(7) as u32,
    }
}

/// Noon UTC of a `YYYY-MM-DD` date, in Unix milliseconds (None when it is no such date): a day's
/// moment that stays on that day in every time zone within twelve hours of UTC.
pub fn noon_of_date(date: &str) -> Option<u64> {
    let mut parts = date.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: i64 = parts.next()?.parse().ok()?;
    let day: i64 = parts.next()?.parse().ok()?;
    if !(1970..=9999).contains(&year) || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    // Days from civil (the inverse of `civil`).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + 12 * 3600;
    let back = civil(secs);
    (back.month as i64 == month && back.day as i64 == day).then(|| secs as u64 * 1000)
}

/// Unix milliseconds as `2026-01-31T12:34:56.789Z`.
pub fn iso8601(ms: u64) -> String {
    let c = civil((ms / 1000) as i64);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        c.year,
        c.month,
        c.day,
        c.hour,
        c.minute,
        c.second,
        ms % 1000
    )
}

/// Local wall-clock time `offset_minutes` east of UTC, as `2026-01-31 08:00 +01:00`.
pub fn local_minute(ms: u64, offset_minutes: i32) -> String {
    let c = civil((ms / 1000) as i64 + i64::from(offset_minutes) * 60);
    let sign = if offset_minutes < 0 { '-' } else { '+' };
    let abs = offset_minutes.unsigned_abs();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} {sign}{:02}:{:02}",
        c.year,
        c.month,
        c.day,
        c.hour,
        c.minute,
        abs / 60,
        abs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::{since_epoch, with_one_reading};

    #[test]
    fn noon_of_a_date_round_trips_and_refuses_what_is_no_date() {
        assert_eq!(
            super::noon_of_date("2026-05-10")
                .map(super::iso8601)
                .as_deref(),
            Some("2026-05-10T12:00:00.000Z")
        );
        assert_eq!(
            super::noon_of_date("2024-02-29")
                .map(super::iso8601)
                .as_deref(),
            Some("2024-02-29T12:00:00.000Z")
        );
        for not in ["2026-02-30", "2026-13-01", "26-05-10", "2026-05", "x"] {
            assert_eq!(super::noon_of_date(not), None, "{not}");
        }
    }

    #[test]
    fn one_reading_is_held_while_the_work_runs_and_let_go_after() {
        let (first, second, nested) = with_one_reading(|| {
            let first = since_epoch();
            std::thread::sleep(std::time::Duration::from_millis(5));
            let nested = with_one_reading(since_epoch);
            (first, since_epoch(), nested)
        });
        assert_eq!(first, second, "the same reading inside");
        assert_eq!(first, nested, "a nested hold keeps the outer reading");
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(since_epoch() > first, "the host's clock again outside");
        let panicked = std::panic::catch_unwind(|| with_one_reading(|| panic!("in the work")));
        assert!(panicked.is_err());
        let after = since_epoch();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(
            since_epoch() > after,
            "no reading is left held after a panic"
        );
    }

    #[test]
    fn iso8601_dates() {
        assert_eq!(super::iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            super::iso8601(1_709_210_096_789),
            "2024-02-29T12:34:56.789Z"
        );
    }

    #[test]
    fn weekdays_and_local_minutes() {
        // 2026-11-23 is a Monday.
        assert_eq!(super::civil(1_795_392_000).weekday, 1);
        assert_eq!(super::civil(-1).weekday, 3, "1969-12-31 was a Wednesday");
        assert_eq!(
            super::local_minute(1_795_392_000_000, 60),
            "2026-11-23 01:00 +01:00"
        );
        assert_eq!(
            super::local_minute(1_795_392_000_000, -330),
            "2026-11-22 18:30 -05:30"
        );
    }
}
