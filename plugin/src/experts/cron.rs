//! Cron expressions as `type: cron` triggers write them (spec §3 `triggers[].expr`): 5 fields (minute
//! hour day-of-month month day-of-week) or 6 with seconds first. Each field is `*`, a value, a range
//! `a-b`, a step `*/n`, `a-b/n` or `a/n`, or a comma list of these; months and weekdays may be names
//! (`jan`–`dec`, `sun`–`sat`), and weekday 7 is Sunday like 0.
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

/// How one field is read: its name in messages, its range, and the names it accepts.
struct Spec {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
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
};
const MINUTE: Spec = Spec {
    name: "minute",
    min: 0,
    max: 59,
    names: &[],
};
const HOUR: Spec = Spec {
    name: "hour",
    min: 0,
    max: 23,
    names: &[],
};
const DAY_OF_MONTH: Spec = Spec {
    name: "day of month",
    min: 1,
    max: 31,
    names: &[],
};
const MONTH: Spec = Spec {
    name: "month",
    min: 1,
    max: 12,
    names: &MONTH_NAMES,
};
// 7 is Sunday too: folded onto 0 after parsing.
const DAY_OF_WEEK: Spec = Spec {
    name: "day of week",
    min: 0,
    max: 7,
    names: &DAY_NAMES,
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
            let step: u32 = step
                .parse()
                .map_err(|_| format!("step {step:?} is not a number"))?;
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
        "*" | "?" => (spec.min, spec.max),
        _ => match range.split_once('-') {
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
    let n: u32 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number or a name"))?;
    if n < spec.min || n > spec.max {
        return Err(format!("{n} is outside {}-{}", spec.min, spec.max));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-01-05 was a Monday.
    fn at(expr: &CronExpr, hour: u32, min: u32, dom: u32, month: u32, dow: u32) -> bool {
        expr.matches(0, min, hour, dom, month, dow)
    }

    #[test]
    fn five_fields_fire_on_the_minute() {
        let e = parse("0 8 * * 1-5").unwrap();
        assert!(at(&e, 8, 0, 5, 1, 1));
        assert!(!at(&e, 8, 1, 5, 1, 1));
        assert!(!at(&e, 8, 0, 4, 1, 0), "Sunday");
        assert!(!e.matches(30, 0, 8, 5, 1, 1), "seconds other than 0");
    }

    #[test]
    fn six_fields_put_seconds_first() {
        let e = parse("*/15 * * * * *").unwrap();
        for sec in [0, 15, 30, 45] {
            assert!(e.matches(sec, 7, 3, 9, 4, 2), "{sec}");
        }
        assert!(!e.matches(10, 7, 3, 9, 4, 2));
    }

    #[test]
    fn lists_ranges_steps_and_names() {
        let e = parse("5,10-12,50/5 0-23/6 1 JAN,jul-aug mon").unwrap();
        for min in [5, 10, 11, 12, 50, 55] {
            assert!(at(&e, 6, min, 1, 7, 3), "{min}");
        }
        for min in [6, 13, 49, 51] {
            assert!(!at(&e, 6, min, 1, 7, 3), "{min}");
        }
        for hour in [0, 6, 12, 18] {
            assert!(at(&e, hour, 5, 1, 1, 0), "{hour}");
        }
        assert!(!at(&e, 7, 5, 1, 1, 0));
        assert!(!at(&e, 6, 5, 1, 3, 0), "March");
    }

    #[test]
    fn seven_is_sunday() {
        let e = parse("0 9 * * 7").unwrap();
        assert!(at(&e, 9, 0, 4, 1, 0));
        assert!(at(&e, 9, 0, 4, 1, 7));
        assert!(!at(&e, 9, 0, 5, 1, 1));
        assert_eq!(parse("0 9 * * sun").unwrap(), e);
    }

    #[test]
    fn restricted_day_fields_match_either() {
        // The 13th, or any Friday.
        let e = parse("0 0 13 * 5").unwrap();
        assert!(at(&e, 0, 0, 13, 2, 2), "the 13th, a Tuesday");
        assert!(at(&e, 0, 0, 16, 1, 5), "a Friday");
        assert!(!at(&e, 0, 0, 14, 1, 3));
        // A star (even stepped) is no restriction: both must hold.
        let e = parse("0 0 */2 * 5").unwrap();
        assert!(at(&e, 0, 0, 9, 1, 5));
        assert!(!at(&e, 0, 0, 10, 1, 5), "an even day");
        assert!(!at(&e, 0, 0, 9, 1, 4), "not a Friday");
    }

    #[test]
    fn an_overflowing_step_is_refused_naming_its_field() {
        for (expr, field) in [
            ("1/4294967295 * * * *", "minute field"),
            ("0 0/4294967295 * * *", "hour field"),
            ("4294967295/4294967295 * * * * *", "second field"),
        ] {
            let err = parse(expr).unwrap_err();
            assert!(err.contains(field), "{expr:?}: {err}");
            assert!(err.contains("step 4294967295"), "{expr:?}: {err}");
        }
        assert!(parse("*/60 * * * *").is_ok(), "a step as long as the range");
    }

    #[test]
    fn an_expression_that_can_never_fire_is_refused() {
        for expr in [
            "0 0 31 2 *",
            "0 0 30 feb *",
            "0 0 31 4,6,9,11 *",
            "0 0 31 2 * ",
            "0 0 0 31 2 *",
        ] {
            let err = parse(expr).unwrap_err();
            assert!(err.contains("never fires"), "{expr:?}: {err}");
        }
        // February 29th comes, and a restricted weekday fires whatever the day of month.
        for expr in [
            "0 0 29 2 *",
            "0 0 31 1-2 *",
            "0 0 31 2 mon",
            "0 0 30,31 2,3 *",
        ] {
            assert!(parse(expr).is_ok(), "{expr:?}");
        }
    }

    #[test]
    fn six_fields_are_named_as_seconds_first() {
        assert_eq!(seconds_field("0 9 * * 1"), None);
        let note = seconds_field("30 0 9 * * 1").unwrap();
        assert!(note.contains("\"30\" is read as the second"), "{note}");
    }

    #[test]
    fn bad_expressions_say_which_field() {
        for (expr, says) in [
            ("", "found 0"),
            ("* * * *", "found 4"),
            ("* * * * * * *", "found 7"),
            ("60 * * * *", "minute field \"60\": 60 is outside 0-59"),
            ("* 24 * * *", "hour field"),
            ("* * 0 * *", "day of month field"),
            ("* * * 13 *", "month field"),
            ("* * * * 8", "day of week field"),
            ("* * * foo *", "\"foo\" is not a number or a name"),
            ("*/0 * * * *", "a step must be at least 1"),
            ("5-1 * * * *", "runs backwards"),
            ("1,,2 * * * *", "minute field"),
            ("-1 * * * *", "minute field"),
            ("@daily", "macros such as @daily are not supported"),
            ("daily", "found 1"),
        ] {
            let err = parse(expr).unwrap_err();
            assert!(err.contains(says), "{expr:?}: {err}");
        }
    }
}
