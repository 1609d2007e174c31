//! The messages of Graphiti's MCP server as the client reads them: JSON-RPC in an SSE stream, a
//! tool call's payload or its error, the fields of a search's items that recall reads.

use super::super::answer::{
    Bounded, FACT_FIELDS, NODE_FIELDS, json_body, json_body_keeping, keeping_item_fields, opening,
};
use super::super::error::{Cause, Result, error, rejected, unknown};
use super::super::http::Response;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

/// A tool call's answer: its payload, or why there is none. Answered with success but unreadable
/// means the call may have acted.
pub(super) fn tool_answer(tool: &str, response: &Response, id: u64) -> Result<Value> {
    expect_status(tool, response, &[200])?;
    let mut joined = Vec::new();
    let joined = &mut joined;
    let rpc: RpcMessage<ToolResult> = keeping_item_fields(item_fields(tool), move || {
        rpc_message(tool, response, id, joined)
    })
    .map_err(|e| unknown(e.message).because(e.cause))?;
    tool_payload(tool, rpc)
}

/// The fields of a search's items that recall reads: the rest of each item is skipped unbuilt.
/// Other tools' answers are kept whole.
pub(super) fn item_fields(tool: &str) -> Option<&'static [&'static str]> {
    match tool {
        "search_memory_facts" => Some(FACT_FIELDS),
        "search_nodes" | "search_memory_nodes" => Some(NODE_FIELDS),
        _ => None,
    }
}

/// Gives every call still without an answer the one `make` makes for its index.
pub(super) fn fill_unanswered(
    answers: &mut [Option<Result<Value>>],
    make: impl Fn(usize) -> Result<Value>,
) {
    for (i, answer) in answers.iter_mut().enumerate() {
        if answer.is_none() {
            *answer = Some(make(i));
        }
    }
}

pub(super) fn expect_status(what: &str, response: &Response, ok: &[u16]) -> Result<()> {
    if ok.contains(&response.status) {
        return Ok(());
    }
    let start: String = response.text().chars().take(120).collect();
    Err(error(format!("{what}: HTTP {}: {start}", response.status))
        .because(Cause::Status(response.status)))
}

/// One JSON-RPC message read in one pass: its result as `R`, its error left as JSON text.
#[derive(serde::Deserialize)]
#[serde(bound(deserialize = "R: serde::Deserialize<'de>, 'de: 'a"))]
pub(super) struct RpcMessage<'a, R = &'a RawValue> {
    #[serde(default)]
    pub(super) id: Option<Value>,
    #[serde(default = "Option::default")]
    pub(super) result: Option<R>,
    #[serde(default)]
    pub(super) error: Option<&'a RawValue>,
}

/// A `tools/call` result. A search's carries its facts twice, as `structuredContent` and as JSON in
/// the text of `content`: the first is parsed (keeping the fields recall reads), the second left as
/// JSON text, read only without the first (or for an error's message).
#[derive(serde::Deserialize)]
pub(super) struct ToolResult<'a> {
    #[serde(borrow, default)]
    pub(super) content: Option<&'a RawValue>,
    #[serde(default, rename = "structuredContent")]
    pub(super) structured_content: Option<Bounded>,
    #[serde(default, rename = "isError")]
    pub(super) is_error: Option<Value>,
}

/// A part of a message parsed (within the value budget).
pub(super) fn parsed(what: &str, raw: Option<&RawValue>) -> Result<Option<Value>> {
    raw.map(|raw| json_body(what, raw.get().as_bytes()))
        .transpose()
}

/// The JSON-RPC message with our id. An event of several `data:` lines is joined into `joined`;
/// a one-line event (what servers send) is read where it is, not copied.
pub(super) fn rpc_message<'a, R: serde::Deserialize<'a>>(
    what: &str,
    response: &'a Response,
    id: u64,
    joined: &'a mut Vec<u8>,
) -> Result<RpcMessage<'a, R>> {
    let body = response.body.as_slice();
    let is_sse = response
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let not_json = |e: serde_json::Error, what_was: &str| {
        let start = opening(body);
        let problem = if e.is_data() {
            "is not the JSON-RPC answer expected"
        } else {
            "is not JSON"
        };
        error(format!("{what}: {what_was} {problem} ({e}): {start:?}"))
    };
    if !is_sse {
        return serde_json::from_slice(body).map_err(|e| not_json(e, "the answer"));
    }
    let ours = |message_id: &Option<Value>| message_id.as_ref().and_then(Value::as_u64) == Some(id);
    // An event's data: one line borrowed, or several joined with newlines.
    let mut event: Option<&[u8]> = None;
    let mut several: Option<Vec<u8>> = None;
    for line in sse_lines(body).chain([&b""[..]]) {
        if let Some(rest) = line.strip_prefix(b"data:") {
            let rest = rest.strip_prefix(b" ").unwrap_or(rest);
            match (&mut several, event) {
                (Some(data), _) => {
                    data.push(b'\n');
                    data.extend_from_slice(rest);
                }
                (None, Some(first)) => {
                    let mut data = first.to_vec();
                    data.push(b'\n');
                    data.extend_from_slice(rest);
                    several = Some(data);
                }
                (None, None) => event = Some(rest),
            }
        } else if line.is_empty() {
            if let Some(data) = several.take() {
                event = None;
                // Rare: read once for its id, and again (into `joined`) when it is ours.
                let message: RpcMessage<IgnoredAny> =
                    serde_json::from_slice(&data).map_err(|e| not_json(e, "an SSE event"))?;
                if ours(&message.id) {
                    *joined = data;
                    return serde_json::from_slice(joined).map_err(|e| not_json(e, "an SSE event"));
                }
            } else if let Some(data) = event.take() {
                let message: RpcMessage<R> =
                    serde_json::from_slice(data).map_err(|e| not_json(e, "an SSE event"))?;
                if ours(&message.id) {
                    return Ok(message);
                }
            }
        }
    }
    let start = opening(body);
    Err(error(format!(
        "{what}: no JSON-RPC answer in the SSE stream: {start:?}"
    )))
}

/// The lines of an event stream, each without its end (CRLF, LF or a lone CR).
pub(super) fn sse_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = memchr::memchr2(b'\r', b'\n', rest).unwrap_or(rest.len());
        let line = &rest[..end];
        let ending = match rest.get(end) {
            Some(b'\r') if rest.get(end + 1) == Some(&b'\n') => 2,
            Some(_) => 1,
            None => 0,
        };
        rest = &rest[end + ending..];
        Some(line)
    })
}

/// A tool's payload: `structuredContent.result`, else the JSON in `content[0].text`. Tool failures
/// (`isError`, or a payload `{"error": …}`) are errors.
pub(super) fn tool_payload(tool: &str, rpc: RpcMessage<ToolResult>) -> Result<Value> {
    if let Some(e) = parsed(tool, rpc.error)? {
        let message = e
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| e.to_string(), str::to_string);
        let message = format!("{tool}: JSON-RPC error: {message}");
        // Invalid request, unknown method, invalid params: this request can never pass.
        return Err(match e.get("code").and_then(Value::as_i64) {
            Some(-32602..=-32600) => rejected(message),
            _ => error(message),
        });
    }
    let result = rpc
        .result
        .ok_or_else(|| unknown(format!("{tool}: the answer has no result")))?;
    let text = || -> Result<Option<String>> {
        let content = parsed(tool, result.content)?;
        Ok(content
            .as_ref()
            .and_then(|c| c.pointer("/0/text"))
            .and_then(Value::as_str)
            .map(str::to_string))
    };
    if result.is_error.as_ref().and_then(Value::as_bool) == Some(true) {
        return Err(rejected(format!(
            "{tool}: isError: {}",
            text()?.as_deref().unwrap_or("no message")
        ))
        .because(Cause::ToolError));
    }
    let structured = result
        .structured_content
        .and_then(|Bounded(mut s)| s.get_mut("result").map(Value::take));
    let payload = match structured {
        Some(payload) => payload,
        None => match text()? {
            Some(text) => json_body_keeping(tool, text.as_bytes(), item_fields(tool))?,
            None => {
                return Err(unknown(format!(
                    "{tool}: the result has neither structuredContent nor text content"
                )));
            }
        },
    };
    // A tool-level failure (`{"error": "Graphiti service not initialized"}` during start-up, an
    // internal error) says nothing against the request itself: it may pass.
    if let Some(message) = payload.get("error") {
        return Err(error(format!(
            "{tool}: {}",
            message
                .as_str()
                .map_or_else(|| message.to_string(), str::to_string)
        )));
    }
    Ok(payload)
}
