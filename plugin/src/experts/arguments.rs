//! A tool call's arguments as an approval binds them: parsed strictly (a key given twice is an error,
//! since a parser keeping the last value would let the approved text and the executed call differ),
//! written back canonically (keys sorted, no spaces) and compared in full. Only the display is cut.
//!
//! Numbers keep the value the parser gives them (an `f64` when not an integer): the same value that
//! JavaScript, and so OpenClaw, executes.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Canonical arguments longer than this are refused for a `confirm` call: an approval must be able
/// to show the whole call to the user and keep it.
pub const MAX_BOUND_ARGUMENTS_CHARS: usize = 64 * 1024;

/// A JSON value whose objects had no key twice.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(value) = map.next_value()?;
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "the key {:?} is given twice",
                    key
                )));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Parses a call's arguments, refusing a key given twice in any object. Empty text is `{}` (a call
/// without arguments).
pub fn parse_strict(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_slice::<Strict>(text.as_bytes())
        .map(|Strict(value)| value)
        .map_err(|e| format!("the arguments are not acceptable JSON: {e}"))
}

/// The canonical text of a value: object keys sorted, no insignificant whitespace. Independent of
/// whether serde_json keeps insertion order.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            crate::platform::sorting::sort(&mut keys);
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&object[key], out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// `text` cut to `max_chars` for display, saying how much was left out.
pub fn for_display(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_string();
    }
    let shown: String = text.chars().take(max_chars).collect();
    format!(
        "{shown}… ({} more characters not shown; the approval binds all {})",
        thousands(total - max_chars),
        thousands(total)
    )
}

/// `12345` as `12,345`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let value = parse_strict(r#"{ "b": 1, "a": [ {"y": 2, "x": "é\n"} ], "c": 1.5 }"#).unwrap();
        assert_eq!(
            canonical(&value),
            r#"{"a":[{"x":"é\n","y":2}],"b":1,"c":1.5}"#
        );
    }

    #[test]
    fn a_key_given_twice_is_refused_at_any_depth() {
        let err = parse_strict(r#"{"to":"a","to":"b"}"#).unwrap_err();
        assert!(err.contains(r#"the key "to" is given twice"#), "{err}");
        let err = parse_strict(r#"{"x":[{"k":1,"k":1}]}"#).unwrap_err();
        assert!(err.contains(r#""k""#), "{err}");
        assert!(parse_strict(r#"{"to":"a","To":"b"}"#).is_ok());
    }

    #[test]
    fn empty_is_no_arguments_and_bad_json_is_refused() {
        assert_eq!(canonical(&parse_strict("  ").unwrap()), "{}");
        assert!(parse_strict("{not json").is_err());
        assert!(parse_strict(r#"{"a":1} trailing"#).is_err());
    }

    #[test]
    fn display_is_cut_and_says_so() {
        assert_eq!(for_display("short", 10), "short");
        let long = "x".repeat(2_600);
        let shown = for_display(&long, 100);
        assert!(shown.starts_with(&"x".repeat(100)));
        assert!(
            shown.ends_with("… (2,500 more characters not shown; the approval binds all 2,600)"),
            "{shown}"
        );
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }
}
