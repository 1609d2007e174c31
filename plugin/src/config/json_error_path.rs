//! Errors in the host's settings as they were named when the merged settings were read from a
//! JSON value with serde_path_to_error: the field's path and the value deserializer's words. They
//! are now read from compact JSON text by the reader the `.json` settings files use, and the
//! error's column gives the path (config/settings.rs checks both name every error alike).

use crate::documents::errors::strip_location;

/// The field and message of an error reading compact JSON `text`, as the value's own deserializer
/// with serde_path_to_error gave them: the field from the error's column, and where the text
/// reader words an enum's error its own way, the value deserializer's words.
pub(super) fn name_json_error(text: &str, e: &serde_json::Error) -> (Option<String>, String) {
    let message = strip_location(&e.to_string());
    // These stop on the byte they did not expect; other errors after what they read.
    let stop = match message.as_str() {
        "expected value" | "trailing characters" => e.column().saturating_sub(1),
        _ => e.column(),
    };
    let mut at = JsonPosition::scan(text, stop);
    // A variant named by a map's key (`{"bogus": …}`) is the enum's error, not a field's.
    let variant_key = message.starts_with("unknown variant") && at.key_last;
    // Where a variant was expected: a value that cannot name one, or a map of other than one key.
    let message = if message == "expected value"
        && let Some(unexpected) = enum_error(&text[stop..])
    {
        unexpected
    } else if (message == "expected value" || variant_key || message.ends_with("expected unit"))
        && let Some(start) = at.object_start()
        && keys_in_object(&text[start..]) != Some(1)
    {
        at = JsonPosition::scan(text, start);
        "invalid value: map, expected map with a single key".to_string()
    } else if message == "trailing characters"
        && let Some(Open::Array(start, _)) = at.open.last()
        && let Some(len) = elements_in_array(&text[*start..])
    {
        // A struct read from an array that has more elements than the struct has fields.
        at = JsonPosition::scan(text, *start);
        format!("invalid length {len}, expected fewer elements in array")
    } else {
        if variant_key {
            at.forget_key();
        }
        message
    };
    // serde_path_to_error printed the top as `.`, and these errors read `.` as no field.
    (at.path().filter(|path| path != "."), message)
}

/// "invalid type: …, expected string or map" for the JSON value `rest` starts with, unless it is a
/// string or a map (which can name a variant).
fn enum_error(rest: &str) -> Option<String> {
    use serde::de::{Error, Unexpected};
    let unexpected = match &first_value(rest)? {
        serde_json::Value::Null => Unexpected::Unit,
        serde_json::Value::Bool(b) => Unexpected::Bool(*b),
        serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (None, Some(i), _) => Unexpected::Signed(i),
            (None, None, Some(f)) => Unexpected::Float(f),
            (None, None, None) => return None,
        },
        serde_json::Value::Array(_) => Unexpected::Seq,
        serde_json::Value::String(_) | serde_json::Value::Object(_) => return None,
    };
    Some(serde_json::Error::invalid_type(unexpected, &"string or map").to_string())
}

/// How many keys the JSON object `rest` starts with has.
fn keys_in_object(rest: &str) -> Option<usize> {
    first_value(rest)?.as_object().map(serde_json::Map::len)
}

/// How many elements the JSON array `rest` starts with has.
fn elements_in_array(rest: &str) -> Option<usize> {
    first_value(rest)?.as_array().map(Vec::len)
}

fn first_value(rest: &str) -> Option<serde_json::Value> {
    serde_json::Deserializer::from_slice(rest.as_bytes())
        .into_iter::<serde_json::Value>()
        .next()?
        .ok()
}

/// Where in a compact JSON document its reader stopped: the objects and arrays open there.
struct JsonPosition {
    open: Vec<Open>,
    /// Whether the last token read was a key.
    key_last: bool,
}

/// An open object or array: where it starts, and the key last read or the element being read.
enum Open {
    Object(usize, Option<String>),
    Array(usize, usize),
}

impl JsonPosition {
    /// The position after the first `end` bytes of `text`.
    fn scan(text: &str, end: usize) -> JsonPosition {
        let bytes = &text.as_bytes()[..end.min(text.len())];
        let mut open: Vec<Open> = Vec::new();
        let mut key_last = false;
        let mut at = 0;
        while at < bytes.len() {
            key_last = false;
            match bytes[at] {
                b'{' => open.push(Open::Object(at, None)),
                b'[' => open.push(Open::Array(at, 0)),
                b'}' | b']' => {
                    open.pop();
                }
                b',' => {
                    if let Some(Open::Array(_, index)) = open.last_mut() {
                        *index += 1;
                    }
                }
                b'"' => {
                    let start = at;
                    at += 1;
                    while at < bytes.len() && bytes[at] != b'"' {
                        at += if bytes[at] == b'\\' { 2 } else { 1 };
                    }
                    // A key is followed by `:`; a string value by `,`, `}` or `]`.
                    let is_key = text.as_bytes().get(at + 1) == Some(&b':');
                    if is_key && let Some(Open::Object(_, key)) = open.last_mut() {
                        *key = serde_json::from_slice(&text.as_bytes()[start..=at]).ok();
                        key_last = true;
                    }
                }
                _ => {}
            }
            at += 1;
        }
        JsonPosition { open, key_last }
    }

    /// Where the innermost open collection starts, if it is an object.
    fn object_start(&self) -> Option<usize> {
        match self.open.last()? {
            Open::Object(start, _) => Some(*start),
            Open::Array(..) => None,
        }
    }

    fn forget_key(&mut self) {
        if let Some(Open::Object(_, key)) = self.open.last_mut() {
            *key = None;
        }
    }

    /// `recall.fallback_tools[2]`, `experts.sessions.<key>`; `None` at the top.
    fn path(&self) -> Option<String> {
        let mut path: Option<String> = None;
        for level in &self.open {
            match level {
                Open::Object(_, Some(key)) => {
                    let path = path.get_or_insert_default();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                }
                Open::Object(_, None) => {}
                Open::Array(_, index) => {
                    path.get_or_insert_default().push_str(&format!("[{index}]"));
                }
            }
        }
        path
    }
}
