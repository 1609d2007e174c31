//! Cron expressions as `type: cron` triggers write them (spec §3 `triggers[].expr`): 5 fields (minute
//! hour day-of-month month day-of-week) or 6 with seconds first. Each field is `*`, a value, a range
//! `a-b`, a step `*/n`, `a-b/n` or `a/n`, or a comma list of these; months and weekdays may be names
//! (`jan`–`dec`, `sun`–`sat`), weekday 7 is Sunday like 0, and a weekday range ending in `sun`
//! (`fri-sun`) runs to the week's end. The day fields also take `?` for `*`, as Quartz-style
//! expressions write them.
//!
//! The loader parses `expr` to refuse a bad one at load time; the runtime uses [`CronExpr::matches`] to
//! find due slots (the time zone is the host's business).

/// One field's allowed values as a bit set, and whether it was written as a restriction (a field
/// starting with `*` or `?` is not one: that matters for the day-of-month/day-of-week rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Field {
    bits: u64,
    restricted: bool,
}

impl Field {
    fn has(self, value: u32) -> bool {
        value < 64 && self.bits & (1 << value) != 0
    }
}

/// A parsed cron expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronExpr {
    seconds: Field,
    minutes: Field,
    hours: Field,
    days_of_month: Field,
    months: Field,
    days_of_week: Field,
}

/// How one field is read: its name in messages, its range, the names it accepts, whether it takes
/// `?` (the day fields), and whether `sun` ending a range means 7 (the weekday field).
struct Spec {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
    takes_question_mark: bool,
    sunday_ends_ranges: bool,
}

const MONTH_NAMES: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAY_NAMES: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const SECOND: Spec = Spec {
    name: "second",
    min: 0,
    max: 59,
    names: &[],
    takes_question_mark: false,
    sunday_ends_ranges: false,
};
const MINUTE: Spec = Spec {
    name: "minute",
    min: 0,
    max: 59,
    names: &[],
    takes_question_mark: false,
    sunday_ends_ranges: false,
};
const HOUR: Spec = Spec {
    name: "hour",
    min: 0,
    max: 23,
    names: &[],
    takes_question_mark: false,
    sunday_ends_ranges: false,
};
const DAY_OF_MONTH: Spec = Spec {
    name: "day of month",
    min: 1,
    max: 31,
    names: &[],
    takes_question_mark: true,
    sunday_ends_ranges: false,
};
const MONTH: Spec = Spec {
    name: "month",
    min: 1,
    max: 12,
    names: &MONTH_NAMES,
    takes_question_mark: false,
    sunday_ends_ranges: false,
};
// 7 is Sunday too: folded onto 0 after parsing.
const DAY_OF_WEEK: Spec = Spec {
    name: "day of week",
    min: 0,
    max: 7,
    names: &DAY_NAMES,
    takes_question_mark: true,
    sunday_ends_ranges: true,
};

/// Parses a 5- or 6-field cron expression; `Err` says which field is wrong and why.
pub fn parse(expr: &str) -> Result<CronExpr, String> {
    if expr.trim_start().starts_with('@') {
        return Err("macros such as @daily are not supported; write the 5 or 6 fields".into());
    }
    let fields: Vec<&str> = expr.split_whitespace().collect();
    let (seconds, rest) = match fields.len() {
        5 => ("0", &fields[..]),
        6 => (fields[0], &fields[1..]),
        n => {
            return Err(format!(
                "expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), found {n}"
            ));
        }
    };
    let mut days_of_week = parse_field(rest[4], &DAY_OF_WEEK)?;
    if days_of_week.has(7) {
        days_of_week.bits = (days_of_week.bits & !(1 << 7)) | 1;
    }
    let expr = CronExpr {
        seconds: parse_field(seconds, &SECOND)?,
        minutes: parse_field(rest[0], &MINUTE)?,
        hours: parse_field(rest[1], &HOUR)?,
        days_of_month: parse_field(rest[2], &DAY_OF_MONTH)?,
        months: parse_field(rest[3], &MONTH)?,
        days_of_week,
    };
    if !expr.has_a_date() {
        return Err(format!(
            "it never fires: no month of {:?} has a day {:?}",
            rest[3], rest[2]
        ));
    }
    Ok(expr)
}

/// For a 6-field expression, a note that its first field is read as seconds (a stray field, such
/// as a year at the end, would otherwise shift every field silently).
pub fn seconds_field(expr: &str) -> Option<String> {
    let fields: Vec<&str> = expr.split_whitespace().collect();
    (fields.len() == 6).then(|| {
        format!(
            "6 fields: {:?} is read as the second (seconds first), then minute {:?}, hour {:?}, day of \
             month {:?}, month {:?}, day of week {:?}",
            fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]
        )
    })
}

/// The most days each month can have (February's 29th comes every few years).
const MONTH_DAYS: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

impl CronExpr {
    /// Whether some date matches: a restricted weekday alone always does (every month has every
    /// weekday); else some allowed day of month must exist in an allowed month. Any such date falls
    /// on every weekday over the years, so weekdays never rule one out.
    fn has_a_date(&self) -> bool {
        if self.days_of_month.restricted && self.days_of_week.restricted {
            return true;
        }
        (1..=12u32).any(|month| {
            self.months.has(month)
                && (1..=MONTH_DAYS[month as usize - 1]).any(|day| self.days_of_month.has(day))
        })
    }

    /// Whether the seconds, minute or hour field starts with `*` (`*/15 * * * *`, `0 * * * *`): such
    /// a schedule follows elapsed time across a daylight-saving change, as cron's wildcard jobs do,
    /// where a fixed-time one (`30 2 * * *`) follows the wall clock.
    pub fn follows_elapsed_time(&self) -> bool {
        !(self.seconds.restricted && self.minutes.restricted && self.hours.restricted)
    }

    /// Whether the expression fires at this time: `dow` 0 = Sunday (7 accepted too), `month` 1–12,
    /// `dom` 1–31. When both day fields are restricted, either may match (standard cron); otherwise
    /// both must.
    pub fn matches(&self, sec: u32, min: u32, hour: u32, dom: u32, month: u32, dow: u32) -> bool {
        let dow = if dow == 7 { 0 } else { dow };
        let dom_ok = self.days_of_month.has(dom);
        let dow_ok = self.days_of_week.has(dow);
        let day_ok = if self.days_of_month.restricted && self.days_of_week.restricted {
            dom_ok || dow_ok
        } else {
            dom_ok && dow_ok
        };
        self.seconds.has(sec)
            && self.minutes.has(min)
            && self.hours.has(hour)
            && self.months.has(month)
            && day_ok
    }
}

fn parse_field(text: &str, spec: &Spec) -> Result<Field, String> {
    let mut bits = 0u64;
    for item in text.split(',') {
        bits |=
            parse_item(item, spec).map_err(|why| format!("{} field {text:?}: {why}", spec.name))?;
    }
    Ok(Field {
        bits,
        restricted: !(text.starts_with('*') || text.starts_with('?')),
    })
}

/// One list item: `*`, `?`, `v`, `a-b`, each optionally `/step`.
fn parse_item(item: &str, spec: &Spec) -> Result<u64, String> {
    let (range, step) = match item.split_once('/') {
        Some((range, step)) => {
            let step = digits(step).ok_or_else(|| format!("step {step:?} is not a number"))?;
            if step == 0 {
                return Err("a step must be at least 1".into());
            }
            // A longer step would never reach a second value (and overflowed into a wrong one).
            if step > spec.max - spec.min + 1 {
                return Err(format!(
                    "step {step} is longer than the range {}-{}",
                    spec.min, spec.max
                ));
            }
            (range, Some(step))
        }
        None => (item, None),
    };
    let (low, high) = match range {
        "*" => (spec.min, spec.max),
        "?" if spec.takes_question_mark => (spec.min, spec.max),
        "?" => return Err("`?` is for the day fields only; write `*`".into()),
        _ => match range.split_once('-') {
            // `fri-sun`: Sunday ending a range is the week's end (7), as a reader means it.
            Some((a, b)) if spec.sunday_ends_ranges && b.eq_ignore_ascii_case("sun") => {
                (value(a, spec)?, 7)
            }
            Some((a, b)) => (value(a, spec)?, value(b, spec)?),
            // `a/n` runs from a to the end of the range.
            None if step.is_some() => (value(range, spec)?, spec.max),
            None => (value(range, spec)?, value(range, spec)?),
        },
    };
    if low > high {
        return Err(format!("range {range:?} runs backwards"));
    }
    let mut bits = 0u64;
    let mut v = low;
    while v <= high {
        bits |= 1 << v;
        v = v.saturating_add(step.unwrap_or(1));
    }
    Ok(bits)
}

/// A number in the field's range, or one of its names.
fn value(text: &str, spec: &Spec) -> Result<u32, String> {
    let lower = text.to_ascii_lowercase();
    if let Some(i) = spec.names.iter().position(|n| *n == lower) {
        return Ok(spec.min + i as u32);
    }
    let n = digits(text).ok_or_else(|| format!("{text:?} is not a number or a name"))?;
    if n < spec.min || n > spec.max {
        return Err(format!("{n} is outside {}-{}", spec.min, spec.max));
    }
    Ok(n)
}

/// A number written in digits only: `str::parse` would take a sign too, and `+5` in the weekday
/// field means "day of month and day of week" to croner, not weekday 5.
fn digits(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// croner, the maintained cron crate, as the oracle of the differential tests here and in
/// `expert_runs::schedule`: instants it can search (in UTC, or in a zone with one offset change),
/// its parser set as close to this one as it goes, and expressions to compare on.
#[cfg(test)]
pub(crate) mod croner_oracle {
    use super::{DAY_OF_MONTH, DAY_OF_WEEK, HOUR, MINUTE, MONTH, SECOND, Spec};
    use croner::errors::CronError;
    use croner::parser::{CronParser, Seconds, Year};
    use croner::{CivilDateTime, Cron, CronDateTime, Resolution, Weekday};
    use proptest::prelude::*;
    use std::cmp::Ordering;

    /// croner with optional seconds, no year field, and `a/n` read as `a-max/n` (its
    /// `sloppy_ranges`, which is how this parser reads `a/n`).
    pub(crate) fn parse(text: &str) -> Result<Cron, CronError> {
        CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .sloppy_ranges(true)
            .build()
            .parse(text)
    }

    /// A zone `before` minutes east of UTC until `change` (seconds since the epoch), `after` from
    /// then.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Zone {
        pub change: i64,
        pub before: i32,
        pub after: i32,
    }

    pub(crate) const UTC: Zone = Zone {
        change: 0,
        before: 0,
        after: 0,
    };

    /// An instant, seconds since the epoch, read in `zone`.
    #[derive(Clone, Debug)]
    pub(crate) struct Instant {
        pub secs: i64,
        pub zone: Zone,
    }

    impl Instant {
        fn local(&self) -> crate::platform::time::Civil {
            let offset = if self.secs < self.zone.change {
                self.zone.before
            } else {
                self.zone.after
            };
            crate::platform::time::civil(self.secs + i64::from(offset) * 60)
        }
    }

    impl CronDateTime for Instant {
        fn to_civil(&self) -> CivilDateTime {
            let c = self.local();
            CivilDateTime::from_ymd_hms_opt(
                c.year as i32,
                c.month,
                c.day,
                c.hour,
                c.minute,
                c.second,
            )
            .expect("a calendar date")
        }

        fn civil_weekday(&self) -> Weekday {
            Weekday::from_days_from_sunday(self.local().weekday)
        }

        fn resolve_civil(&self, civil: CivilDateTime) -> Result<Resolution<Self>, CronError> {
            let (wall, zone) = (wall_secs(civil), self.zone);
            let at = |offset: i32| wall - i64::from(offset) * 60;
            let before = Some(at(zone.before)).filter(|&secs| secs < zone.change);
            let after = Some(at(zone.after)).filter(|&secs| secs >= zone.change);
            let instant = |secs| Instant { secs, zone };
            Ok(match (before, after) {
                (Some(earlier), Some(later)) => {
                    Resolution::Ambiguous(instant(earlier), instant(later))
                }
                (Some(secs), None) | (None, Some(secs)) => Resolution::Single(instant(secs)),
                (None, None) => Resolution::Gap,
            })
        }

        fn checked_add_seconds(&self, seconds: i64) -> Option<Self> {
            Some(Instant {
                secs: self.secs.checked_add(seconds)?,
                zone: self.zone,
            })
        }

        fn cmp_instant(&self, other: &Self) -> Ordering {
            self.secs.cmp(&other.secs)
        }
    }

    /// Seconds since the epoch of a wall-clock time read as UTC (Howard Hinnant's
    /// days-from-civil, the inverse of `time::civil`).
    fn wall_secs(civil: CivilDateTime) -> i64 {
        let (month, day) = (i64::from(civil.month()), i64::from(civil.day()));
        let year = i64::from(civil.year()) - i64::from(month <= 2);
        let era = year.div_euclid(400);
        let year_of_era = year - era * 400;
        let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        let days = era * 146_097 + day_of_era - 719_468;
        days * 86_400
            + i64::from(civil.hour()) * 3600
            + i64::from(civil.minute()) * 60
            + i64::from(civil.second())
    }

    /// A value of the field: mostly inside its range, now and then one past an end; where the
    /// field has names, often a name in lower, upper or title case.
    fn value(spec: &'static Spec) -> impl Strategy<Value = (u32, String)> + Clone {
        let number = prop_oneof![
            20 => spec.min..=spec.max,
            1 => Just(spec.max + 1),
            1 => Just(spec.min.saturating_sub(1)),
        ];
        (number, 0..5u8).prop_map(move |(n, style)| {
            let name = n
                .checked_sub(spec.min)
                .and_then(|i| spec.names.get(i as usize));
            let text = match (style, name) {
                (1, Some(name)) => name.to_string(),
                (2, Some(name)) => name.to_uppercase(),
                (3, Some(name)) => name[..1].to_uppercase() + &name[1..],
                (4, _) => format!("0{n}"),
                _ => n.to_string(),
            };
            (n, text)
        })
    }

    /// A step: mostly within the field's span, now and then longer (which this parser refuses).
    fn step(spec: &'static Spec) -> impl Strategy<Value = u32> + Clone {
        let span = spec.max - spec.min + 1;
        prop_oneof![12 => 1..=span, 1 => span + 1..=span + 2]
    }

    /// `a-b`, in order seven times out of eight.
    fn range(spec: &'static Spec) -> impl Strategy<Value = String> + Clone {
        (value(spec), value(spec), 0..8u8).prop_map(|((a, a_text), (b, b_text), order)| {
            if (a <= b) == (order != 0) {
                format!("{a_text}-{b_text}")
            } else {
                format!("{b_text}-{a_text}")
            }
        })
    }

    /// One list item: a value, a range, or a stepped `*`, range or value.
    fn item(spec: &'static Spec) -> impl Strategy<Value = String> + Clone {
        prop_oneof![
            4 => value(spec).prop_map(|(_, text)| text),
            3 => range(spec),
            2 => step(spec).prop_map(|n| format!("*/{n}")),
            2 => (range(spec), step(spec)).prop_map(|(range, n)| format!("{range}/{n}")),
            1 => (value(spec), step(spec)).prop_map(|((_, text), n)| format!("{text}/{n}")),
        ]
    }

    /// A field: `*` (or `?` where it is taken), a stepped one, or a list of one to three items.
    fn field(spec: &'static Spec) -> BoxedStrategy<String> {
        let star = if spec.takes_question_mark { "?" } else { "*" };
        prop_oneof![
            3 => Just("*".to_string()),
            1 => Just(star.to_string()),
            1 => step(spec).prop_map(move |n| format!("{star}/{n}")),
            6 => proptest::collection::vec(item(spec), 1..=3).prop_map(|items| items.join(",")),
        ]
        .boxed()
    }

    /// A 5-field expression, or a 6-field one with seconds first.
    pub(crate) fn expression() -> impl Strategy<Value = String> {
        (
            proptest::option::of(field(&SECOND)),
            field(&MINUTE),
            field(&HOUR),
            field(&DAY_OF_MONTH),
            field(&MONTH),
            field(&DAY_OF_WEEK),
        )
            .prop_map(|(second, minute, hour, dom, month, dow)| {
                let rest = format!("{minute} {hour} {dom} {month} {dow}");
                match second {
                    Some(second) => format!("{second} {rest}"),
                    None => rest,
                }
            })
    }

    /// Whether croner reads the day fields as restrictions exactly where this parser does (not
    /// for a day field starting with `*` without being `*`, which cron.rs's own test compares).
    pub(crate) fn same_day_rule(expr: &super::CronExpr, cron: &Cron) -> bool {
        expr.days_of_month.restricted != cron.pattern.is_dom_wildcard()
            && expr.days_of_week.restricted != cron.pattern.is_dow_wildcard()
    }

    /// Whether some item of the expression steps by more than its field's span.
    pub(crate) fn has_long_step(text: &str) -> bool {
        let mut fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() == 5 {
            fields.insert(0, "0");
        }
        let specs = [&SECOND, &MINUTE, &HOUR, &DAY_OF_MONTH, &MONTH, &DAY_OF_WEEK];
        fields.iter().zip(specs).any(|(field, spec)| {
            field.split(',').any(|item| {
                item.split_once('/')
                    .and_then(|(_, n)| n.parse::<u32>().ok())
                    .is_some_and(|n| n > spec.max - spec.min + 1)
            })
        })
    }
}

#[cfg(test)]
mod tests;
