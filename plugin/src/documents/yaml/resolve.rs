//! What a scalar is: null, a boolean, an integer, a float or a string, by its tag, its style and
//! its spelling, as serde_norway resolves it (YAML 1.2's core schema, with `0x`, `0o` and `0b`
//! integers, and no leading zeros: `012` is a string).

use super::error::Error;
use super::events::Style;
use serde::de::{Error as _, Unexpected};
use std::num::ParseIntError;

pub const NULL: &[u8] = b"tag:yaml.org,2002:null";
pub const BOOL: &[u8] = b"tag:yaml.org,2002:bool";
pub const INT: &[u8] = b"tag:yaml.org,2002:int";
pub const FLOAT: &[u8] = b"tag:yaml.org,2002:float";

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Resolved<'s> {
    Unit,
    Bool(bool),
    U64(u64),
    I64(i64),
    U128(u128),
    I128(i128),
    F64(f64),
    Str(&'s str),
}

impl Resolved<'_> {
    /// The error a visitor gives for this value where it expects something else.
    pub fn invalid_type(self, expected: &dyn serde::de::Expected) -> Error {
        let wide;
        let unexpected = match self {
            Resolved::Unit => Unexpected::Unit,
            Resolved::Bool(b) => Unexpected::Bool(b),
            Resolved::U64(u) => Unexpected::Unsigned(u),
            Resolved::I64(i) => Unexpected::Signed(i),
            Resolved::F64(f) => Unexpected::Float(f),
            Resolved::Str(s) => Unexpected::Str(s),
            Resolved::U128(u) => {
                wide = format!("integer `{u}` as u128");
                Unexpected::Other(&wide)
            }
            Resolved::I128(i) => {
                wide = format!("integer `{i}` as i128");
                Unexpected::Other(&wide)
            }
        };
        Error::invalid_type(unexpected, expected)
    }
}

/// A scalar where any type may come. `in_variant`: the scalar is an enum variant's content, whose
/// tag named the variant and says nothing about the scalar.
pub fn resolve<'s>(
    value: &'s str,
    style: Style,
    tag: Option<&[u8]>,
    in_variant: bool,
) -> Result<Resolved<'s>, Error> {
    let invalid = |expected: &str| Error::invalid_value(Unexpected::Str(value), &expected);
    match tag {
        Some(tag) if !in_variant => {
            if tag == BOOL {
                return boolean(value)
                    .map(Resolved::Bool)
                    .ok_or_else(|| invalid("a boolean"));
            } else if tag == INT {
                return integer(value).ok_or_else(|| invalid("an integer"));
            } else if tag == FLOAT {
                return float(value)
                    .map(Resolved::F64)
                    .ok_or_else(|| invalid("a float"));
            } else if tag == NULL {
                return is_null(value)
                    .then_some(Resolved::Unit)
                    .ok_or_else(|| invalid("null"));
            } else if tag.starts_with(b"!") && style == Style::Plain {
                return Ok(untagged(value));
            }
        }
        _ if style == Style::Plain => return Ok(untagged(value)),
        _ => {}
    }
    Ok(Resolved::Str(value))
}

/// A plain scalar without a tag.
pub fn untagged(value: &str) -> Resolved<'_> {
    if value.is_empty() || is_null(value) {
        return Resolved::Unit;
    }
    if let Some(b) = boolean(value) {
        return Resolved::Bool(b);
    }
    if let Some(int) = integer(value) {
        return int;
    }
    if !leading_zero(value)
        && let Some(f) = float(value)
    {
        return Resolved::F64(f);
    }
    Resolved::Str(value)
}

pub fn is_null(value: &str) -> bool {
    matches!(value, "null" | "Null" | "NULL" | "~")
}

pub fn boolean(value: &str) -> Option<bool> {
    match value {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// The narrowest of u64, i64 (negative), u128 and i128 (negative) that holds it.
fn integer(value: &str) -> Option<Resolved<'_>> {
    unsigned(value, u64::from_str_radix)
        .map(Resolved::U64)
        .or_else(|| negative(value, i64::from_str_radix).map(Resolved::I64))
        .or_else(|| unsigned(value, u128::from_str_radix).map(Resolved::U128))
        .or_else(|| negative(value, i128::from_str_radix).map(Resolved::I128))
}

type Radix<T> = fn(&str, u32) -> Result<T, ParseIntError>;

const PREFIXES: [(&str, u32); 3] = [("0x", 16), ("0o", 8), ("0b", 2)];

/// `0`, then digits: a string, not an octal number (also after a sign).
fn leading_zero(value: &str) -> bool {
    let digits = value.strip_prefix(['-', '+']).unwrap_or(value);
    digits.len() > 1 && digits.starts_with('0') && digits[1..].bytes().all(|b| b.is_ascii_digit())
}

/// After `0x`, `0o` or `0b`: the number; `Err` where a sign follows the prefix (no number at all).
fn prefixed<T>(
    unpositive: &str,
    prefix: &str,
    radix: u32,
    parse: Radix<T>,
) -> Result<Option<T>, ()> {
    match unpositive.strip_prefix(prefix) {
        Some(rest) if rest.starts_with(['+', '-']) => Err(()),
        Some(rest) => Ok(parse(rest, radix).ok()),
        None => Ok(None),
    }
}

pub fn unsigned<T>(value: &str, parse: Radix<T>) -> Option<T> {
    let unpositive = value.strip_prefix('+').unwrap_or(value);
    for (prefix, radix) in PREFIXES {
        if let Some(int) = prefixed(unpositive, prefix, radix, parse).ok()? {
            return Some(int);
        }
    }
    if unpositive.starts_with(['+', '-']) || leading_zero(value) {
        return None;
    }
    parse(unpositive, 10).ok()
}

pub fn signed<T>(value: &str, parse: Radix<T>) -> Option<T> {
    let unpositive = match value.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => value,
    };
    for (prefix, radix) in PREFIXES {
        if let Some(int) = prefixed(unpositive, prefix, radix, parse).ok()? {
            return Some(int);
        }
        if let Some(int) = negative_prefixed(value, prefix, radix, parse) {
            return Some(int);
        }
    }
    if leading_zero(value) {
        return None;
    }
    parse(unpositive, 10).ok()
}

fn negative<T>(value: &str, parse: Radix<T>) -> Option<T> {
    for (prefix, radix) in PREFIXES {
        if let Some(int) = negative_prefixed(value, prefix, radix, parse) {
            return Some(int);
        }
    }
    if leading_zero(value) {
        return None;
    }
    parse(value, 10).ok()
}

/// `-0x…`, `-0o…` or `-0b…`.
fn negative_prefixed<T>(value: &str, prefix: &str, radix: u32, parse: Radix<T>) -> Option<T> {
    let rest = value.strip_prefix('-')?.strip_prefix(prefix)?;
    parse(&format!("-{rest}"), radix).ok()
}

pub fn float(value: &str) -> Option<f64> {
    let unpositive = match value.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => value,
    };
    if matches!(unpositive, ".inf" | ".Inf" | ".INF") {
        return Some(f64::INFINITY);
    }
    if matches!(value, "-.inf" | "-.Inf" | "-.INF") {
        return Some(f64::NEG_INFINITY);
    }
    if matches!(value, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN.copysign(1.0));
    }
    unpositive.parse::<f64>().ok().filter(|f| f.is_finite())
}
