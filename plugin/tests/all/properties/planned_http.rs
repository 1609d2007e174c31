//! A fake Graphiti that answers each request with the next of a generated list of plans: a failure,
//! raw bytes, or a JSON-RPC answer (with the request's id) framed as plain JSON or as SSE.

use super::support::{answer_bytes, json_value, text};
use graphiti_openclaw::memory::graphiti::http::{Http, HttpError, Request, Response};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::VecDeque;

/// How a JSON-RPC answer is framed.
#[derive(Clone, Debug)]
pub enum Framing {
    Plain,
    Sse {
        /// LF, CRLF or a lone CR: the event-stream format allows all three.
        line_end: &'static str,
        /// Per line of the pretty-printed answer: start a new `data:` line (true) or continue.
        splits: Vec<bool>,
        space_after_colon: bool,
        event_line: bool,
        comment: bool,
        /// Events before ours: notifications and answers to other requests.
        before: Vec<Value>,
    },
}

pub fn sse_framing() -> impl Strategy<Value = Framing> {
    (
        prop::sample::select(vec!["\n", "\r\n", "\r"]),
        prop::collection::vec(any::<bool>(), 0..40),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(
            prop_oneof![
                Just(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}})),
                Just(json!({"jsonrpc": "2.0", "id": 999, "result": {"other": true}})),
            ],
            0..3,
        ),
    )
        .prop_map(
            |(line_end, splits, space_after_colon, event_line, comment, before)| Framing::Sse {
                line_end,
                splits,
                space_after_colon,
                event_line,
                comment,
                before,
            },
        )
}

pub fn framing() -> impl Strategy<Value = Framing> {
    prop_oneof![Just(Framing::Plain), sse_framing()]
}

/// One SSE event carrying `message`, its pretty-printed lines split into `data:` lines as `splits`
/// says (a newline between two JSON tokens is white space, so any such split means the same).
pub fn sse_event(message: &Value, framing: &Framing) -> String {
    let Framing::Sse {
        line_end,
        splits,
        space_after_colon,
        event_line,
        comment,
        ..
    } = framing
    else {
        unreachable!()
    };
    let prefix = if *space_after_colon {
        "data: "
    } else {
        "data:"
    };
    let mut out = String::new();
    if *comment {
        out.push_str(&format!(": keep-alive{line_end}"));
    }
    if *event_line {
        out.push_str(&format!("event: message{line_end}"));
    }
    let pretty = serde_json::to_string_pretty(message).unwrap();
    let mut data_lines: Vec<String> = vec![];
    for (i, line) in pretty.lines().enumerate() {
        let split = i == 0 || splits.get(i).copied().unwrap_or(true);
        match data_lines.last_mut() {
            Some(last) if !split => {
                last.push(' ');
                last.push_str(line.trim_start());
            }
            _ => data_lines.push(line.to_string()),
        }
    }
    for line in data_lines {
        out.push_str(&format!("{prefix}{line}{line_end}"));
    }
    out.push_str(line_end);
    out
}

pub fn framed(status: u16, message: &Value, framing: &Framing, session: Option<&str>) -> Response {
    let mut headers = vec![];
    if let Some(session) = session {
        headers.push(("mcp-session-id".to_string(), session.to_string()));
    }
    let body = match framing {
        Framing::Plain => {
            headers.push(("content-type".into(), "application/json".into()));
            message.to_string()
        }
        Framing::Sse { before, .. } => {
            headers.push(("content-type".into(), "text/event-stream".into()));
            before
                .iter()
                .chain([message])
                .map(|m| sse_event(m, framing))
                .collect()
        }
    };
    Response {
        status,
        headers,
        body: body.into_bytes(),
    }
}

/// The JSON-RPC answer a tool call gets, before its id is known.
#[derive(Clone, Debug)]
pub enum RpcAnswer {
    Structured(Value),
    Text(String),
    TextJson(Value),
    IsError(String),
    Error(i64, String),
    NoResult,
    Anything(Value),
}

pub fn rpc_answer() -> impl Strategy<Value = RpcAnswer> {
    let facts =
        || prop::collection::vec(json_value(), 0..4).prop_map(|facts| json!({"facts": facts}));
    prop_oneof![
        2 => prop_oneof![json_value(), facts()].prop_map(RpcAnswer::Structured),
        1 => text(4).prop_map(RpcAnswer::Text),
        2 => prop_oneof![json_value(), facts()].prop_map(RpcAnswer::TextJson),
        1 => text(3).prop_map(RpcAnswer::IsError),
        1 => (prop::sample::select(vec![-32700i64, -32602, -32601, -32600, -32000, 1]), text(3))
            .prop_map(|(code, message)| RpcAnswer::Error(code, message)),
        1 => Just(RpcAnswer::NoResult),
        1 => json_value().prop_map(RpcAnswer::Anything),
    ]
}

impl RpcAnswer {
    fn message(&self, id: &Value) -> Value {
        let result = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        match self {
            RpcAnswer::Structured(payload) => result(json!({
                "content": [{"type": "text", "text": payload.to_string()}],
                "structuredContent": {"result": payload},
                "isError": false,
            })),
            RpcAnswer::Text(text) => {
                result(json!({"content": [{"type": "text", "text": text}], "isError": false}))
            }
            RpcAnswer::TextJson(payload) => result(json!({
                "content": [{"type": "text", "text": payload.to_string()}],
                "isError": false,
            })),
            RpcAnswer::IsError(text) => {
                result(json!({"content": [{"type": "text", "text": text}], "isError": true}))
            }
            RpcAnswer::Error(code, message) => json!({
                "jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}
            }),
            RpcAnswer::NoResult => json!({"jsonrpc": "2.0", "id": id}),
            RpcAnswer::Anything(value) => value.clone(),
        }
    }
}

/// What the fake answers to one request.
#[derive(Clone, Debug)]
pub enum Plan {
    Fail(HttpError),
    Raw {
        status: u16,
        sse: bool,
        body: Vec<u8>,
    },
    Rpc {
        status: u16,
        framing: Framing,
        answer: RpcAnswer,
    },
}

pub fn status() -> impl Strategy<Value = u16> {
    prop_oneof![
        6 => Just(200u16),
        1 => prop::sample::select(vec![202u16, 204, 400, 404, 413, 422, 429, 500, 503]),
        1 => 100u16..600,
    ]
}

pub fn http_error() -> impl Strategy<Value = HttpError> {
    prop_oneof![
        Just(HttpError::Timeout),
        text(2).prop_map(HttpError::Connect),
        text(2).prop_map(HttpError::Transport),
        text(2).prop_map(HttpError::Refused),
        text(2).prop_map(HttpError::InvalidRequest),
    ]
}

pub fn plan() -> impl Strategy<Value = Plan> {
    prop_oneof![
        1 => http_error().prop_map(Plan::Fail),
        2 => (status(), any::<bool>(), answer_bytes())
            .prop_map(|(status, sse, body)| Plan::Raw { status, sse, body }),
        4 => (status(), framing(), rpc_answer())
            .prop_map(|(status, framing, answer)| Plan::Rpc { status, framing, answer }),
    ]
}

/// Answers each request with the next plan (an exhausted script refuses the connection), and keeps
/// what was sent.
pub struct Planned {
    pub plans: VecDeque<Plan>,
    pub sent: Vec<Request>,
}

impl Http for Planned {
    fn send(&mut self, request: Request) -> Result<Response, HttpError> {
        let id = serde_json::from_slice::<Value>(&request.body)
            .ok()
            .and_then(|m| m.get("id").cloned())
            .unwrap_or(Value::Null);
        self.sent.push(request);
        match self.plans.pop_front() {
            None => Err(HttpError::Connect("script exhausted".into())),
            Some(Plan::Fail(e)) => Err(e),
            Some(Plan::Raw { status, sse, body }) => Ok(Response {
                status,
                headers: vec![(
                    "content-type".into(),
                    if sse {
                        "text/event-stream"
                    } else {
                        "application/json"
                    }
                    .into(),
                )],
                body,
            }),
            Some(Plan::Rpc {
                status,
                framing,
                answer,
            }) => Ok(framed(status, &answer.message(&id), &framing, Some("s-1"))),
        }
    }
}

/// A valid MCP handshake: the initialize answer (a fresh client's first id is 2) and the
/// notification's 202.
pub fn handshake() -> Vec<Plan> {
    let initialized =
        json!({"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": "2025-06-18"}});
    vec![
        Plan::Rpc {
            status: 200,
            framing: Framing::Plain,
            answer: RpcAnswer::Anything(initialized),
        },
        Plan::Raw {
            status: 202,
            sse: false,
            body: vec![],
        },
    ]
}
