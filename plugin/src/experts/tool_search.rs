//! OpenClaw's Tool Search (on by default since 2026.9): the model sees `tool_search`, `tool_describe`
//! and `tool_call`, and calls MCP and plugin tools through `tool_call { id, args }`. The policy applies
//! to the tool `tool_call` names, so the call is unwrapped here the way OpenClaw reads it
//! (`readToolSearchCallArgs` and `prepareToolSearchDispatcherArguments` in its `dist/`):
//!
//! - the target is the first of `id`, `toolId`, `name` that is set, a tool name or a catalog id
//!   (`mcp:<server>:<tool>`, `openclaw:<plugin>:<tool>`, `client:client:<tool>`);
//! - its arguments are `args` (or `input`) when that is a non-empty object, plus any `args.<key>`
//!   entries; otherwise the remaining top-level keys ("flattened" arguments);
//! - `{ args: { id, … } }` without a top-level selector is the same call as `{ id, … }`.
//!
//! Where OpenClaw needs its catalog to tell a selector from an argument (a flattened call with more
//! than one of `id`, `toolId`, `name`), the call is refused as ambiguous rather than guessed.
//!
//! OpenClaw then runs the target through its own `before_tool_call` hook too, with a call id
//! `tool_search_code:<tool_call's id>:<tool>:<n>`: see [`target_call_prefix`].

use serde_json::{Map, Value};

pub const TOOL_CALL: &str = "tool_call";
/// The meta-tools that only search and describe the catalog: they execute nothing.
pub const LOOKUP_TOOLS: [&str; 2] = ["tool_search", "tool_describe"];
/// Names `tool_call` must not target: Tool Search's own tools (OpenClaw does not catalog them).
const META_TOOLS: [&str; 4] = [
    "tool_call",
    "tool_search",
    "tool_describe",
    "tool_search_code",
];
const SELECTOR_KEYS: [&str; 3] = ["id", "toolId", "name"];
const CATALOG_SOURCES: [&str; 3] = ["mcp", "openclaw", "client"];

/// The tool a `tool_call` runs, and its arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The tool's name (a catalog id reduced to its name).
    pub tool: String,
    pub arguments: Value,
}

const HOW: &str =
    "call it as tool_call { \"id\": \"<tool id or name>\", \"args\": { …the tool's arguments… } }";

/// The tool and arguments of a `tool_call`, or why the call is refused.
pub fn unwrap_tool_call(params: &Value) -> Result<Target, String> {
    let Value::Object(params) = params else {
        return Err(format!(
            "tool_call refused: its parameters are not a JSON object; {HOW}"
        ));
    };
    let params = hoist_nested_selector(params);
    let nested = ["args", "input"]
        .into_iter()
        .find_map(|key| params.get(key).filter(|v| !v.is_null()));
    let mut dotted = Map::new();
    dotted.extend(params.iter().filter_map(|(k, v)| {
        let rest = k.strip_prefix("args.").filter(|r| !r.is_empty())?;
        Some((rest.to_string(), v.clone()))
    }));
    let nested_is_empty = matches!(nested, Some(Value::Object(o)) if o.is_empty());
    let (selector, arguments) = match nested {
        Some(value) if !nested_is_empty => {
            let Value::Object(nested) = value else {
                return Err(format!(
                    "tool_call refused: its args are not a JSON object ({}); {HOW}",
                    kind(value)
                ));
            };
            let mut arguments = dotted;
            arguments.extend(nested.clone());
            (first_selector(&params)?, arguments)
        }
        _ => {
            let present: Vec<&str> = SELECTOR_KEYS
                .into_iter()
                .filter(|k| params.get(*k).is_some_and(|v| !v.is_null()))
                .collect();
            if present.len() > 1 {
                return Err(format!(
                    "tool_call refused: ambiguous, both {} are given and the tool's arguments are not under args; {HOW}",
                    present.join(" and ")
                ));
            }
            let selector = first_selector(&params)?;
            let mut arguments = Map::new();
            arguments.extend(
                params
                    .iter()
                    .filter(|(k, _)| {
                        !["args", "input"].contains(&k.as_str())
                            && !present.contains(&k.as_str())
                            && !k.starts_with("args.")
                    })
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
            arguments.extend(dotted);
            (selector, arguments)
        }
    };
    let tool = tool_name_of(&selector);
    if META_TOOLS.contains(&tool.as_str()) {
        return Err(format!(
            "tool_call refused: it names {tool}, a Tool Search tool; {HOW}"
        ));
    }
    Ok(Target {
        tool,
        arguments: Value::Object(arguments),
    })
}

/// OpenClaw's `prepareToolSearchDispatcherArguments`: no selector at the top but one inside `args`
/// (or `input`) means the model nested the whole call there.
fn hoist_nested_selector(params: &Map<String, Value>) -> Map<String, Value> {
    if SELECTOR_KEYS.iter().any(|k| params.contains_key(*k)) {
        return params.clone();
    }
    let nested = params
        .get("args")
        .filter(|v| !v.is_null())
        .or_else(|| params.get("input"));
    let Some(Value::Object(nested)) = nested else {
        return params.clone();
    };
    let Some(selector) = selector_value(nested) else {
        return params.clone();
    };
    let mut hoisted = Map::new();
    hoisted.extend(
        params
            .iter()
            .filter(|(k, _)| !["args", "input"].contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    hoisted.extend(nested.clone());
    hoisted.insert("id".into(), Value::String(selector));
    hoisted
}

/// JavaScript's `params.id ?? params.toolId ?? params.name`, kept only when a non-blank string.
fn selector_value(params: &Map<String, Value>) -> Option<String> {
    let value = SELECTOR_KEYS
        .into_iter()
        .find_map(|k| params.get(k).filter(|v| !v.is_null()))?;
    value
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().to_string())
}

fn first_selector(params: &Map<String, Value>) -> Result<String, String> {
    selector_value(params).ok_or_else(|| {
        format!("tool_call refused: it names no tool (id is missing or empty); {HOW}")
    })
}

/// A catalog id (`mcp:travel-booking-mcp:travel-booking-mcp__hold_booking`) reduced to the tool's
/// name, which is what OpenClaw's hook then sees; a plain name as it is.
fn tool_name_of(selector: &str) -> String {
    selector
        .split_once(':')
        .filter(|(source, _)| CATALOG_SOURCES.contains(source))
        .and_then(|(_, rest)| rest.split_once(':'))
        .map(|(_, name)| name)
        .filter(|name| !name.is_empty())
        .unwrap_or(selector)
        .to_string()
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The call id OpenClaw gives the target call of the `tool_call` with id `tool_call_id`, up to the
/// sequence number (OpenClaw's `ToolSearchRuntime.executeEntry`: `tool_search_code:` + the parent id
/// sanitised + `:` + the tool + `:` + n).
pub fn target_call_prefix(tool_call_id: &str, tool: &str) -> String {
    format!(
        "tool_search_code:{}:{tool}:",
        sanitize_call_id(tool_call_id)
    )
}

/// Whether `call_id` is the target call announced by `prefix`.
pub fn is_target_call(call_id: &str, prefix: &str) -> bool {
    call_id
        .strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// OpenClaw's `sanitizeToolCallIdPart`: runs of characters outside `[A-Za-z0-9_.:-]` become `_`,
/// at most 120 characters (UTF-16 units; these are ASCII by then), `call` when empty.
fn sanitize_call_id(id: &str) -> String {
    let mut out = String::new();
    let mut in_run = false;
    for c in id.trim().chars() {
        if c.is_ascii_alphanumeric() || "_.:-".contains(c) {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    out.truncate(120);
    if out.is_empty() { "call".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn target(params: Value) -> (String, Value) {
        let t = unwrap_tool_call(&params).unwrap();
        (t.tool, t.arguments)
    }

    #[test]
    fn the_shapes_openclaw_accepts() {
        let expected = ("hold_booking".to_string(), json!({"offer_id": "X1"}));
        assert_eq!(
            target(json!({"id": "hold_booking", "args": {"offer_id": "X1"}})),
            expected
        );
        assert_eq!(
            target(json!({"id": "hold_booking", "input": {"offer_id": "X1"}})),
            expected
        );
        assert_eq!(
            target(json!({"toolId": "hold_booking", "offer_id": "X1"})),
            expected
        );
        assert_eq!(
            target(json!({"name": "hold_booking", "args": {}, "offer_id": "X1"})),
            expected
        );
        assert_eq!(
            target(json!({"id": "hold_booking", "args.offer_id": "X1"})),
            expected
        );
        assert_eq!(
            target(json!({"args": {"id": "hold_booking", "offer_id": "X1"}})),
            expected
        );
        assert_eq!(
            target(
                json!({"id": " mcp:travel-booking-mcp:travel-booking-mcp__hold_booking ", "args": {"a": 1}})
            ),
            (
                "travel-booking-mcp__hold_booking".to_string(),
                json!({"a": 1})
            )
        );
        assert_eq!(
            target(json!({"id": "x", "args": {"a": 1}, "args.b": 2})),
            ("x".to_string(), json!({"a": 1, "b": 2})),
            "dotted entries join nested ones"
        );
        assert_eq!(target(json!({"id": "x"})), ("x".to_string(), json!({})));
    }

    #[test]
    fn malformed_calls_are_refused_with_the_reason() {
        let err = |p: Value| unwrap_tool_call(&p).unwrap_err();
        assert!(err(json!({"args": {"a": 1}})).contains("names no tool"));
        assert!(err(json!({"id": "  ", "args": {"a": 1}})).contains("names no tool"));
        assert!(err(json!({"id": 7, "args": {"a": 1}})).contains("names no tool"));
        assert!(
            err(json!({"id": "x", "args": "offer X1"}))
                .contains("args are not a JSON object (a string)")
        );
        assert!(err(json!({"id": "x", "args": [1]})).contains("(an array)"));
        assert!(err(json!(["x"])).contains("not a JSON object"));
        assert!(
            err(json!({"id": "tool_call", "args": {"id": "x"}})).contains("a Tool Search tool")
        );
        assert!(
            err(json!({"id": "mcp:core:tool_search", "args": {"q": 1}}))
                .contains("a Tool Search tool")
        );
        assert!(err(json!({"id": "x", "name": "Lisbon"})).contains("ambiguous"));
    }

    #[test]
    fn target_call_ids_follow_openclaw() {
        let prefix = target_call_prefix("call 1/ä", "hold_booking");
        assert_eq!(prefix, "tool_search_code:call_1_:hold_booking:");
        assert!(is_target_call(
            "tool_search_code:call_1_:hold_booking:3",
            &prefix
        ));
        assert!(!is_target_call(
            "tool_search_code:call_1_:hold_booking:",
            &prefix
        ));
        assert!(!is_target_call(
            "tool_search_code:call_1_:hold_booking:3x",
            &prefix
        ));
        assert!(!is_target_call("call_1", &prefix));
        assert_eq!(sanitize_call_id("  "), "call");
        assert_eq!(sanitize_call_id(&"a".repeat(200)).len(), 120);
    }
}
