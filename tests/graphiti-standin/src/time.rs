//! Dates: rendered as the real APIs render them, and parsed as Python parses what clients send.

use std::time::{SystemTime, UNIX_EPOCH};

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Python's `isoformat()` renders UTC as `+00:00`, pydantic's JSON mode as `Z`; the real APIs
/// mix both, so each output site picks one.
pub(crate) fn iso_offset(s: &str) -> String {
    s.strip_suffix('Z').map_or_else(|| s.to_string(), |p| format!("{p}+00:00"))
}

pub(crate) fn iso_z(s: &str) -> String {
    s.strip_suffix("+00:00").map_or_else(|| s.to_string(), |p| format!("{p}Z"))
}

/// Now as `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`.
pub(crate) fn now_iso() -> String {
    iso_at(SystemTime::now())
}

pub(crate) fn iso_at(t: SystemTime) -> String {
    iso_from_micros(micros_at(t))
}

pub(crate) fn micros_at(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_micros() as i64,
        Err(e) => -(e.duration().as_micros() as i64),
    }
}

/// Microseconds since 1970-01-01 as `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`.
pub(crate) fn iso_from_micros(micros: i64) -> String {
    let (days, of_day) = (micros.div_euclid(MICROS_PER_DAY), micros.rem_euclid(MICROS_PER_DAY));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let secs = of_day / 1_000_000;
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{:06}+00:00", of_day % 1_000_000)
}

/// Days from 1970-01-01 to a civil date (the inverse of the above).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Microseconds since 1970-01-01 of an ISO-8601 date or date-time, as Python's `fromisoformat`
/// and pydantic read them: `YYYY-MM-DD`, then `T` (or a space) `HH:MM[:SS[.fraction]]`, then
/// `Z` or `±HH:MM` (or `±HHMM`); no offset means UTC here. `None` if it is not one.
pub(crate) fn parse_iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let digits = |at: usize, n: usize| -> Option<i64> {
        let part = b.get(at..at + n)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0, |acc, d| acc * 10 + i64::from(d - b'0')))
    };
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let dashes = b.get(4) == Some(&b'-') && b.get(7) == Some(&b'-');
    if !dashes || !(1..=12).contains(&month) || !(1..=days_in_month(year, month)).contains(&day) {
        return None;
    }
    let date = days_from_civil(year, month, day) * MICROS_PER_DAY;
    if b.len() == 10 {
        return Some(date);
    }
    if !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (hour, minute) = (digits(11, 2)?, digits(14, 2)?);
    if b.get(13) != Some(&b':') || hour > 23 || minute > 59 {
        return None;
    }
    let mut at = 16;
    let mut second = 0;
    if b.get(at) == Some(&b':') {
        second = digits(at + 1, 2).filter(|s| *s <= 59)?;
        at += 3;
    }
    let mut fraction = 0;
    if b.get(at) == Some(&b'.') {
        let n = b[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let micros: String = b[at + 1..at + 1 + n.min(6)].iter().map(|&c| c as char).collect();
        fraction = format!("{micros:0<6}").parse().ok()?;
        at += 1 + n;
    }
    let offset = parse_offset(&b[at..])?;
    Some(date + ((hour * 60 + minute - offset) * 60 + second) * 1_000_000 + fraction)
}

/// Minutes east of UTC: empty (UTC), `Z`, `±HH:MM` or `±HHMM`.
fn parse_offset(b: &[u8]) -> Option<i64> {
    let sign = match b.first() {
        None => return Some(0),
        Some(b'Z' | b'z') if b.len() == 1 => return Some(0),
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return None,
    };
    let rest: Vec<u8> = b[1..].iter().copied().filter(|&c| c != b':').collect();
    let colons = b.len() - 1 - rest.len();
    if rest.len() != 4 || !rest.iter().all(u8::is_ascii_digit) || colons > 1 {
        return None;
    }
    let n = |i: usize| i64::from(rest[i] - b'0') * 10 + i64::from(rest[i + 1] - b'0');
    (n(0) < 24 && n(2) < 60).then(|| sign * (n(0) * 60 + n(2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_python_accepts_and_refuses_the_rest() {
        let day = MICROS_PER_DAY;
        let cases: &[(&str, Option<i64>)] = &[
            ("1970-01-01", Some(0)),
            ("1970-01-02T00:00:00Z", Some(day)),
            ("1970-01-01T01:00:00+01:00", Some(0)),
            ("1970-01-01T00:00:00.5z", Some(500_000)),
            ("1970-01-01 00:01", Some(60_000_000)),
            ("1970-01-01T00:00:00.1234567-0000", Some(123_456)),
            ("1969-12-31T23:59:59Z", Some(-1_000_000)),
            ("2024-02-29T00:00:00Z", Some(19_782 * day)),
            ("2025-02-29T00:00:00Z", None),
            ("2025-13-01", None),
            ("yesterday", None),
            ("2025-01-01T25:00", None),
            ("2025-01-01T10:00:00.", None),
            ("2025-01-01T10:00:00+1", None),
            ("2025-01-01X10:00", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_iso(text), *expected, "{text}");
        }
    }

    #[test]
    fn renders_and_parses_back() {
        for micros in [0, 1, -1, 1_750_000_000_123_456, -86_400_000_000 * 400] {
            assert_eq!(parse_iso(&iso_from_micros(micros)), Some(micros), "{micros}");
        }
        assert_eq!(iso_from_micros(0), "1970-01-01T00:00:00.000000+00:00");
    }
}
