//! Trigger payloads: dot paths (`messages[0].id`) into the JSON, `payload_mapping` to process inputs,
//! and the dedupe and concurrency keys they resolve to.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Longest key value kept (dedupe and lane keys are stored and shown).
const MAX_KEY_CHARS: usize = 200;
/// A longer key keeps this many characters, then `~sha256:` and the whole key's digest, so that keys
/// differing only past the bound stay apart.
const SHORTENED_KEY_CHARS: usize = MAX_KEY_CHARS - 8 - 64;

/// The value at `path` (`a.b[0].c`), if every step exists.
pub fn resolve<'v>(payload: &'v Value, path: &str) -> Option<&'v Value> {
    let mut current = payload;
    for segment in path.split('.') {
        let (name, indexes) = match segment.find('[') {
            Some(at) => (&segment[..at], &segment[at..]),
            None => (segment, ""),
        };
        if !name.is_empty() {
            current = current.as_object()?.get(name)?;
        }
        let mut rest = indexes;
        while let Some(open) = rest.strip_prefix('[') {
            let close = open.find(']')?;
            let index: usize = open[..close].trim().parse().ok()?;
            current = current.as_array()?.get(index)?;
            rest = &open[close + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(current)
}

/// A key value as text: strings as they are, numbers and booleans printed; objects, arrays, null and
/// empty strings do not make a key. A key longer than [`MAX_KEY_CHARS`] is its start and the digest of
/// all of it: bounded, yet equal only for equal keys.
pub fn key_text(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    if text.is_empty() {
        return None;
    }
    if text.chars().count() <= MAX_KEY_CHARS {
        return Some(text);
    }
    use sha2::{Digest, Sha256};
    let digest: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let kept: String = text.chars().take(SHORTENED_KEY_CHARS).collect();
    Some(format!("{kept}~sha256:{digest}"))
}

/// The process inputs: each mapped input from its path (a path that does not resolve is missing,
/// and named), or the payload's own top-level fields when there is no mapping.
pub fn map_inputs(
    payload: &Value,
    mapping: &[(String, String)],
) -> Result<BTreeMap<String, Value>, String> {
    if mapping.is_empty() {
        let mut inputs = BTreeMap::new();
        if let Some(fields) = payload.as_object() {
            inputs.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        return Ok(inputs);
    }
    let mut inputs = BTreeMap::new();
    let mut missing = Vec::new();
    for (input, path) in mapping {
        match resolve(payload, path) {
            Some(value) if !value.is_null() => {
                inputs.insert(input.clone(), value.clone());
            }
            _ => missing.push(format!("{input} (from {path})")),
        }
    }
    if missing.is_empty() {
        Ok(inputs)
    } else {
        Err(format!(
            "the payload lacks the mapped field{} {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        ))
    }
}

/// The payload of a channel message (spec §3: at least `sender_id`, `message_text`, `channel_name`).
pub fn channel_payload(message: &crate::platform::api::ChannelMessage) -> Value {
    let mut payload = Map::new();
    payload.insert("sender_id".into(), message.sender_id.clone().into());
    payload.insert("message_text".into(), message.message_text.clone().into());
    payload.insert("channel_name".into(), message.channel_name.clone().into());
    if let Some(chat) = &message.chat_id {
        payload.insert("chat_id".into(), chat.clone().into());
    }
    Value::Object(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dot_paths_reach_into_objects_and_arrays() {
        let p = json!({"messages": [{"id": "m1", "from": {"email": "a@b"}}], "n": 3});
        assert_eq!(resolve(&p, "messages[0].id"), Some(&json!("m1")));
        assert_eq!(resolve(&p, "messages[0].from.email"), Some(&json!("a@b")));
        assert_eq!(resolve(&p, "n"), Some(&json!(3)));
        assert_eq!(resolve(&p, "messages[1].id"), None);
        assert_eq!(resolve(&p, "messages.id"), None);
        assert_eq!(resolve(&p, "messages[x]"), None);
        assert_eq!(resolve(&p, "messages[0]x"), None);
    }

    #[test]
    fn keys_are_scalars_only() {
        assert_eq!(key_text(&json!(" t-1 ")), Some("t-1".into()));
        assert_eq!(key_text(&json!(42)), Some("42".into()));
        assert_eq!(key_text(&json!("")), None);
        assert_eq!(key_text(&json!({"a": 1})), None);
        assert_eq!(key_text(&json!(null)), None);
    }

    #[test]
    fn long_keys_differing_past_the_bound_stay_apart() {
        let shared = "k".repeat(MAX_KEY_CHARS);
        let a = key_text(&json!(format!("{shared}-first"))).unwrap();
        let b = key_text(&json!(format!("{shared}-second"))).unwrap();
        assert_ne!(a, b, "keys sharing a {MAX_KEY_CHARS}-character prefix");
        assert_eq!(key_text(&json!(format!("{shared}-first"))).unwrap(), a);
        for key in [&a, &b] {
            assert!(key.chars().count() <= MAX_KEY_CHARS, "{key}");
            assert!(key.starts_with("kkkk"), "{key}");
        }
        let short = "s".repeat(MAX_KEY_CHARS);
        assert_eq!(
            key_text(&json!(short.clone())),
            Some(short),
            "kept as it is"
        );
    }

    #[test]
    fn mapping_names_every_missing_field() {
        let p = json!({"a": 1});
        let mapping = vec![
            ("x".to_string(), "a".to_string()),
            ("y".to_string(), "b.c".to_string()),
            ("z".to_string(), "d".to_string()),
        ];
        let err = map_inputs(&p, &mapping).unwrap_err();
        assert_eq!(
            err,
            "the payload lacks the mapped fields y (from b.c), z (from d)"
        );
        let ok = map_inputs(&p, &mapping[..1]).unwrap();
        assert_eq!(ok["x"], json!(1));
        assert_eq!(map_inputs(&p, &[]).unwrap()["a"], json!(1));
    }
}
