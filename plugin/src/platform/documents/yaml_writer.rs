//! A YAML document written as block mappings and sequences, for the one file the component writes
//! back (`experts bind`'s `bindings.yaml`).
//!
//! serde_norway's serializer and libyaml's emitter were a large part of `plugin.wasm` for this alone. A
//! string is written plain only where it cannot be read as anything else (letters, digits, `_`,
//! `-`, `.` and `/`, beginning with a letter or `_`, and not a word YAML gives a meaning to);
//! every other one double-quoted, with YAML's escapes for what is not printable or breaks a line.
//! The tests check that serde_norway reads back exactly the value written.

use serde_norway::value::TaggedValue;
use serde_norway::{Mapping, Value};
use std::fmt::Write;

/// `value` as a YAML document (ending with a line feed). Fails only on a tag it cannot write: a
/// name that would need escaping, or a tag on a tag.
pub fn to_block_yaml(value: &Value) -> Result<String, String> {
    let mut out = String::new();
    match value {
        Value::Mapping(map) if !map.is_empty() => mapping(&mut out, map, 0, true)?,
        Value::Sequence(items) if !items.is_empty() => sequence(&mut out, items, 0, true)?,
        Value::Tagged(tagged) => {
            let inner = tag(&mut out, tagged)?;
            after_indicator(&mut out, inner, 0)?;
        }
        other => {
            inline(&mut out, other)?;
            out.push('\n');
        }
    }
    Ok(out)
}

/// Spaces for `indent`, unless the line already holds a sequence entry's `- `.
fn indentation(out: &mut String, indent: usize, indented: bool) {
    if indented {
        out.extend(std::iter::repeat_n(' ', indent));
    }
}

/// Longest key written before its `:`. A reader takes at most 1,024 characters for such a key
/// (libyaml: "could not find expected ':'"); longer ones are written in YAML's explicit form.
const MAX_IMPLICIT_KEY_BYTES: usize = 1_000;

/// A non-empty mapping, one entry per line at `indent` (the first line's indentation already
/// written when `indented` is false: it follows a `- `).
fn mapping(out: &mut String, map: &Mapping, indent: usize, indented: bool) -> Result<(), String> {
    for (i, (key, value)) in map.iter().enumerate() {
        indentation(out, indent, indented || i > 0);
        if mapping_key(out, key)? {
            // The explicit form's `:` begins a line of its own.
            out.push('\n');
            indentation(out, indent, true);
        }
        out.push(':');
        after_indicator(out, value, indent)?;
    }
    Ok(())
}

/// A non-empty sequence, one `- ` entry per line at `indent`.
fn sequence(
    out: &mut String,
    items: &[Value],
    indent: usize,
    indented: bool,
) -> Result<(), String> {
    for (i, item) in items.iter().enumerate() {
        indentation(out, indent, indented || i > 0);
        out.push('-');
        match item {
            Value::Mapping(map) if !map.is_empty() => {
                out.push(' ');
                mapping(out, map, indent + 2, false)?;
            }
            Value::Sequence(inner) if !inner.is_empty() => {
                out.push(' ');
                sequence(out, inner, indent + 2, false)?;
            }
            other => after_indicator(out, other, indent)?,
        }
    }
    Ok(())
}

/// A value after `key:`, `- ` or a tag: on the same line when it is a scalar or empty, else on
/// the lines below, indented.
fn after_indicator(out: &mut String, value: &Value, indent: usize) -> Result<(), String> {
    match value {
        Value::Mapping(map) if !map.is_empty() => {
            out.push('\n');
            mapping(out, map, indent + 2, true)
        }
        Value::Sequence(items) if !items.is_empty() => {
            out.push('\n');
            sequence(out, items, indent + 2, true)
        }
        Value::Tagged(tagged) => {
            out.push(' ');
            let inner = tag(out, tagged)?;
            after_indicator(out, inner, indent)
        }
        other => {
            out.push(' ');
            inline(out, other)?;
            out.push('\n');
            Ok(())
        }
    }
}

/// Writes a mapping's key in flow style, behind YAML's explicit `? ` where it cannot stand before
/// its `:` directly (a collection, a tagged key, or one longer than [`MAX_IMPLICIT_KEY_BYTES`]);
/// returns whether it did.
fn mapping_key(out: &mut String, key: &Value) -> Result<bool, String> {
    let start = out.len();
    flow(out, key)?;
    let scalar = matches!(
        key,
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)
    );
    let explicit = !scalar || out.len() - start > MAX_IMPLICIT_KEY_BYTES;
    if explicit {
        out.insert_str(start, "? ");
    }
    Ok(explicit)
}

/// A scalar, an empty collection, or (in flow style) anything.
fn inline(out: &mut String, value: &Value) -> Result<(), String> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // serde_norway's own spelling: `.nan`, `-.inf`, and a float always with a `.` or an `e`.
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => string(out, s),
        other => flow(out, other)?,
    }
    Ok(())
}

/// Flow style: `[a, b]`, `{k: v}`, `!tag v`.
fn flow(out: &mut String, value: &Value) -> Result<(), String> {
    match value {
        Value::Sequence(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                flow(out, item)?;
            }
            out.push(']');
        }
        Value::Mapping(map) => {
            out.push('{');
            for (i, (key, value)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                mapping_key(out, key)?;
                out.push_str(": ");
                flow(out, value)?;
            }
            out.push('}');
        }
        Value::Tagged(tagged) => {
            let inner = tag(out, tagged)?;
            out.push(' ');
            flow(out, inner)?;
        }
        scalar => inline(out, scalar)?,
    }
    Ok(())
}

/// `!name` (a name of URI characters that need no escaping); returns the value it tags, which YAML
/// does not allow to be tagged again.
fn tag<'v>(out: &mut String, tagged: &'v TaggedValue) -> Result<&'v Value, String> {
    let tag = tagged.tag.to_string();
    let name = tag.strip_prefix('!').unwrap_or(&tag);
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.~:/".contains(&b));
    if !plain {
        return Err(format!("cannot write the YAML tag {tag:?}"));
    }
    if matches!(tagged.value, Value::Tagged(_)) {
        return Err(format!("cannot write a tag on a tag ({tag})"));
    }
    out.push('!');
    out.push_str(name);
    Ok(&tagged.value)
}

/// Words that a plain scalar would turn into something other than a string (YAML 1.1 booleans
/// included, for readers older than serde_norway's).
const SPECIAL_WORDS: [&str; 12] = [
    "true", "false", "null", "yes", "no", "on", "off", "y", "n", "inf", "infinity", "nan",
];

fn is_plain_safe(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes
        .first()
        .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_')
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"_-./".contains(&b))
        && !SPECIAL_WORDS.iter().any(|w| w.eq_ignore_ascii_case(s))
}

/// A string, plain where that is safe, else double-quoted.
fn string(out: &mut String, s: &str) {
    if is_plain_safe(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            // Line breaks to YAML 1.1: escaped, so that no reader folds one into a space.
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if is_printable(c) => out.push(c),
            c if (c as u32) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08X}", c as u32);
            }
        }
    }
    out.push('"');
}

/// YAML's `c-printable`, less the byte-order mark (which a reader may drop).
fn is_printable(c: char) -> bool {
    matches!(c as u32,
        0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD | 0x1_0000..=0x10_FFFF)
        && c != '\u{FEFF}'
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_norway::value::Tag;

    fn read_back(value: &Value) -> Value {
        let text = to_block_yaml(value).unwrap();
        serde_norway::from_str(&text).unwrap_or_else(|e| panic!("not read back ({e}):\n{text}"))
    }

    #[test]
    fn bindings_are_written_as_block_yaml_with_plain_names() {
        let doc: Value = serde_norway::from_str(
            "tools:\n  mail:\n    type: mcp\n    server: mail-mcp\n    operations: { send: mail.send_message }\n  notes: { type: mcp, server: \"notes mcp\" }\n",
        )
        .unwrap();
        assert_eq!(
            to_block_yaml(&doc).unwrap(),
            "tools:\n  mail:\n    type: mcp\n    server: mail-mcp\n    operations:\n      send: mail.send_message\n  notes:\n    type: mcp\n    server: \"notes mcp\"\n"
        );
    }

    #[test]
    fn strings_that_read_as_something_else_are_quoted() {
        for s in [
            "true",
            "No",
            "null",
            "~",
            "",
            "12",
            "0x1f",
            "1e3",
            ".inf",
            "-",
            "- a",
            "a: b",
            "a #b",
            "#c",
            "&a",
            "*a",
            "!a",
            "@a",
            "`a",
            "'a'",
            "\"a\"",
            "[a]",
            "{a}",
            "a,b",
            "| a",
            "> a",
            " a",
            "a ",
            "a\nb",
            "a\u{85}b",
            "a\u{2028}b",
            "\u{7f}",
            "\u{feff}a",
            "\u{1}",
            "é",
            "𝄞",
            "%a",
            "?a",
            "NaN",
            "INF",
        ] {
            let value = Value::String(s.into());
            assert_eq!(read_back(&value), value, "{s:?}");
        }
    }

    #[test]
    fn a_key_too_long_for_an_implicit_key_reads_back() {
        for key in ["k".repeat(1_000), "k".repeat(1_001), "é \u{1}".repeat(600)] {
            let mut map = Mapping::new();
            map.insert(key.clone().into(), "v".into());
            map.insert("next".into(), Value::Sequence(vec![key.clone().into()]));
            // In a key of its own (flow style), too.
            let mut inner = Mapping::new();
            inner.insert(key.into(), Value::Null);
            map.insert(Value::Mapping(inner), "complex".into());
            let value = Value::Mapping(map);
            assert_eq!(read_back(&value), value);
        }
    }

    #[test]
    fn tags_numbers_and_odd_keys_read_back() {
        let mut map = Mapping::new();
        map.insert(Value::Number(1.into()), "one".into());
        map.insert(Value::Bool(true), Value::Null);
        map.insert(Value::Null, Value::Sequence(vec![]));
        map.insert(
            Value::Sequence(vec!["a".into(), 2.5.into()]),
            Value::Mapping(Mapping::new()),
        );
        map.insert(
            "tagged".into(),
            Value::Tagged(Box::new(TaggedValue {
                tag: Tag::new("Variant"),
                value: Value::Sequence(vec![f64::NAN.into(), f64::NEG_INFINITY.into()]),
            })),
        );
        map.insert("float".into(), 1.0.into());
        let value = Value::Mapping(map);
        assert_eq!(read_back(&value), value);
        let bad = Value::Tagged(Box::new(TaggedValue {
            tag: Tag::new("a b"),
            value: Value::Null,
        }));
        assert!(to_block_yaml(&bad).unwrap_err().contains("\"!a b\""));
        let twice = Value::Tagged(Box::new(TaggedValue {
            tag: Tag::new("a"),
            value: bad,
        }));
        assert!(
            to_block_yaml(&twice)
                .unwrap_err()
                .contains("a tag on a tag")
        );
    }

    fn values() -> impl Strategy<Value = Value> {
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| Value::Number(n.into())),
            any::<u64>().prop_map(|n| Value::Number(n.into())),
            any::<f64>().prop_map(|n| Value::Number(n.into())),
            any::<String>().prop_map(Value::String),
            "[a-z_./-]{0,6}".prop_map(Value::String),
        ];
        scalar.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Sequence),
                prop::collection::vec((inner.clone(), inner.clone()), 0..5)
                    .prop_map(|pairs| Value::Mapping(pairs.into_iter().collect())),
                // A tag on a tag is not YAML: generated only to be refused (below).
                ("[A-Za-z][A-Za-z0-9]{0,5}", inner)
                    .prop_filter("tagged once", |(_, value)| !matches!(
                        value,
                        Value::Tagged(_)
                    ))
                    .prop_map(|(tag, value)| {
                        Value::Tagged(Box::new(TaggedValue {
                            tag: Tag::new(tag),
                            value,
                        }))
                    }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn whatever_is_written_reads_back_the_same(value in values()) {
            prop_assert_eq!(read_back(&value), value);
        }
    }
}
