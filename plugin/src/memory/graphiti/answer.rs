//! Reading Graphiti's answers: JSON parsed within a value budget, lists taken bounded, and errors that
//! name the operation and what was there instead.

use super::error::{Cause, Result, error};
use super::http::Deadline;
use serde_json::Value;

/// Items taken from one answer's list: more than recall ever shows or listing needs.
const MAX_LISTED: usize = 1000;

/// Values (numbers, strings, list items, object fields) kept from one answer at most. Past it, the
/// rest of every list and object is skipped without being built: a huge but legal answer (700,000
/// small facts) costs its bytes, not hundreds of megabytes of parsed values, and never takes the
/// turn's routing down with it. Recall shows a handful of facts; this is far more than it reads.
pub const MAX_ANSWER_VALUES: usize = 50_000;

/// The fields of a fact search's items that recall reads (`recall::read_facts`): the others (a
/// fact's `episodes`, `attributes`, node uuids and times) are skipped without being built.
pub const FACT_FIELDS: &[&str] = &[
    "uuid",
    "name",
    "fact",
    "valid_at",
    "invalid_at",
    "expired_at",
    // The episodes a fact came from: a forget deletes them with it.
    "episodes",
];
/// The fields of a node search's items that recall reads (`recall::read_nodes`), and the uuid
/// that `memories` shows and a forget of an entity names.
pub const NODE_FIELDS: &[&str] = &["uuid", "name", "summary", "labels"];

/// Parses JSON within [`MAX_ANSWER_VALUES`].
pub fn parse_bounded(json: &[u8]) -> serde_json::Result<Value> {
    parse_keeping(json, None)
}

/// Parses JSON within [`MAX_ANSWER_VALUES`]; with `item_fields`, an object that is an item of a
/// list keeps only those fields, the others skipped without being built. A search's items carry
/// more than recall reads (a fact's episodes, attributes, node uuids and times): reading a 20-fact
/// answer as the MCP server sends it takes markedly fewer instructions without building them.
pub(super) fn parse_keeping(
    json: &[u8],
    item_fields: Option<&'static [&'static str]>,
) -> serde_json::Result<Value> {
    use serde::de::DeserializeSeed;
    let left = std::cell::Cell::new(MAX_ANSWER_VALUES);
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let value = bounded::Budget::new(&left, item_fields).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Any JSON value, parsed within [`MAX_ANSWER_VALUES`] values of its own, its lists' objects keeping
/// only the fields [`keeping_item_fields`] names: a part of an answer read by a typed parse.
pub struct Bounded(pub Value);

impl<'de> serde::Deserialize<'de> for Bounded {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Bounded, D::Error> {
        use serde::de::DeserializeSeed;
        let left = std::cell::Cell::new(MAX_ANSWER_VALUES);
        let item_fields = ITEM_FIELDS.with(std::cell::Cell::get);
        bounded::Budget::new(&left, item_fields)
            .deserialize(d)
            .map(Bounded)
    }
}

thread_local! {
    /// The item fields of the [`Bounded`] parts being parsed: a typed parse cannot hand its parts a
    /// parameter, and parsing such a part apart (as raw JSON first) cost more than it saved.
    static ITEM_FIELDS: std::cell::Cell<Option<&'static [&'static str]>> =
        const { std::cell::Cell::new(None) };
}

/// Runs `parse` with the [`Bounded`] parts it reads keeping only `item_fields` of their lists'
/// objects (see [`parse_keeping`]).
pub(super) fn keeping_item_fields<T>(
    item_fields: Option<&'static [&'static str]>,
    parse: impl FnOnce() -> T,
) -> T {
    struct Restore(Option<&'static [&'static str]>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ITEM_FIELDS.with(|fields| fields.set(self.0));
        }
    }
    let _restore = Restore(ITEM_FIELDS.with(|fields| fields.replace(item_fields)));
    parse()
}

mod bounded {
    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Number, Value};
    use std::borrow::Cow;
    use std::cell::Cell;
    use std::fmt;

    /// Builds a `Value` while values are left in the budget; skips the rest. With `item_fields`,
    /// the objects that are items of a list keep only those fields.
    #[derive(Clone, Copy)]
    pub struct Budget<'a> {
        left: &'a Cell<usize>,
        item_fields: Option<&'static [&'static str]>,
        /// This value is an item of a list.
        list_item: bool,
    }

    impl<'a> Budget<'a> {
        pub fn new(left: &'a Cell<usize>, item_fields: Option<&'static [&'static str]>) -> Self {
            Budget {
                left,
                item_fields,
                list_item: false,
            }
        }

        fn take(self) {
            self.left.set(self.left.get().saturating_sub(1));
        }

        fn within(self, list_item: bool) -> Self {
            Budget { list_item, ..self }
        }

        fn keeps(self, key: &str) -> bool {
            match self.item_fields {
                Some(fields) if self.list_item => fields.contains(&key),
                _ => true,
            }
        }
    }

    impl<'de> DeserializeSeed<'de> for Budget<'_> {
        type Value = Value;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Budget<'_> {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            self.take();
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            self.take();
            Ok(Value::from(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            self.take();
            Ok(Value::from(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            self.take();
            Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            self.take();
            Ok(Value::String(v.to_string()))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            self.take();
            Ok(Value::String(v))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            self.take();
            Ok(Value::Null)
        }
        fn visit_none<E>(self) -> Result<Value, E> {
            self.take();
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            self.take();
            let mut items = Vec::new();
            while self.left.get() > 0 {
                match seq.next_element_seed(self.within(true))? {
                    Some(item) => items.push(item),
                    None => return Ok(Value::Array(items)),
                }
            }
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Value::Array(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            self.take();
            let mut fields = Map::new();
            while self.left.get() > 0 {
                let Some(Key(key)) = map.next_key()? else {
                    return Ok(Value::Object(fields));
                };
                if self.keeps(&key) {
                    let value = map.next_value_seed(self.within(false))?;
                    fields.insert(key.into_owned(), value);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Value::Object(fields))
        }
    }

    /// An object's key, borrowed from the answer when it has no escapes: a skipped field's key is
    /// never copied.
    struct Key<'de>(Cow<'de, str>);

    impl<'de> de::Deserialize<'de> for Key<'de> {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct KeyVisitor;
            impl<'de> Visitor<'de> for KeyVisitor {
                type Value = Key<'de>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a key")
                }
                fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Borrowed(v)))
                }
                fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Owned(v.to_string())))
                }
                fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Owned(v)))
                }
            }
            d.deserialize_str(KeyVisitor)
        }
    }
}

/// Parses a JSON body (within [`MAX_ANSWER_VALUES`]), naming the operation when it is not JSON.
pub(super) fn json_body(what: &str, body: &[u8]) -> Result<Value> {
    json_body_keeping(what, body, None)
}

/// [`json_body`], its lists' objects keeping only `item_fields` (see [`parse_keeping`]).
pub(super) fn json_body_keeping(
    what: &str,
    body: &[u8],
    item_fields: Option<&'static [&'static str]>,
) -> Result<Value> {
    parse_keeping(body, item_fields).map_err(|e| {
        let start = opening(body);
        error(format!("{what}: the answer is not JSON ({e}): {start:?}"))
    })
}

/// The first 80 characters of an answer, to show in an error about it.
pub(super) fn opening(body: &[u8]) -> String {
    String::from_utf8_lossy(body).chars().take(80).collect()
}

/// The list under `key` of a JSON object (taken out of it, not copied), or an error naming what
/// was there instead.
pub(super) fn list_of(what: &str, mut value: Value, key: &str) -> Result<Vec<Value>> {
    match value.get_mut(key).map(Value::take) {
        Some(Value::Array(items)) => Ok(items
            .into_iter()
            .filter(Value::is_object)
            .take(MAX_LISTED)
            .collect()),
        Some(Value::Null) | None => Err(error(format!("{what}: the answer has no \"{key}\" list"))),
        Some(other) => Err(error(format!(
            "{what}: \"{key}\" is not a list but {other}"
        ))),
    }
}

pub(super) fn timeout_of(what: &str, deadline: Deadline) -> Result<std::time::Duration> {
    deadline.remaining().ok_or_else(|| {
        error(format!("{what}: no time left in the budget")).because(Cause::TimedOut)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn items_keep_only_the_fields_asked_for_escaped_keys_included() {
        let json =
            br#"{"facts": [{"na\u006de": "N", "fact": "F", "episodes": ["e"], "x\u0079": {}}, 7],
            "message": {"name": "top-level objects are whole", "other": 1}}"#;
        let value = super::parse_keeping(json, Some(&["name", "fact"])).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"facts": [{"name": "N", "fact": "F"}, 7],
                "message": {"name": "top-level objects are whole", "other": 1}})
        );
        // Malformed JSON is still an error, in a skipped field too.
        let broken = br#"{"facts": [{"name": "N", "episodes": [1,,2]}]}"#;
        assert!(super::parse_keeping(broken, Some(&["name"])).is_err());
    }

    #[test]
    fn a_huge_answer_is_parsed_within_its_budget() {
        let mut body = String::from("{\"message\":\"ok\",\"facts\":[");
        body.push_str(&vec!["{\"fact\":\"f\",\"n\":1}"; 100_000].join(","));
        body.push_str("],\"after\":true}");
        let value = super::parse_bounded(body.as_bytes()).unwrap();
        let facts = value["facts"].as_array().unwrap();
        assert!(
            facts.len() < super::MAX_ANSWER_VALUES && facts.len() > 1000,
            "{}",
            facts.len()
        );
        assert_eq!(value["message"], "ok");
        // Malformed JSON is still an error, even past the budget.
        assert!(super::parse_bounded(&body.as_bytes()[..body.len() - 3]).is_err());
        assert_eq!(
            super::parse_bounded(br#"{"a":[1,2,{"b":null}]}"#).unwrap(),
            serde_json::json!({"a":[1,2,{"b":null}]})
        );
    }
}
