//! Fake Graphiti servers behind the host's `Http`: one that only answers searches, and a scripted one
//! that stores episodes and speaks both APIs (REST `graph_service` and MCP over streamable HTTP with
//! SSE answers), with an outcome chosen per send.

use graphiti_openclaw::memory::graphiti::http::{Http, HttpError, Request, Response};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

fn json_response(status: u16, body: &Value) -> Result<Response, HttpError> {
    Ok(Response {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.to_string().into_bytes(),
    })
}

fn sse_response(body: &Value, session: Option<&str>) -> Result<Response, HttpError> {
    let mut headers = vec![("content-type".to_string(), "text/event-stream".to_string())];
    if let Some(session) = session {
        headers.push(("mcp-session-id".into(), session.into()));
    }
    Ok(Response {
        status: 200,
        headers,
        body: format!("event: message\r\ndata: {body}\r\n\r\n").into_bytes(),
    })
}

/// A REST Graphiti that answers `/search` with the given facts (and lists nothing).
pub struct SearchOnly {
    pub facts: Vec<Value>,
}

impl Http for SearchOnly {
    fn send(&mut self, request: Request) -> Result<Response, HttpError> {
        if request.url.ends_with("/search") {
            return json_response(200, &json!({"message": "ok", "facts": self.facts}));
        }
        Err(HttpError::Connect(format!("not scripted: {}", request.url)))
    }
}

/// What the scripted server does with one send (`POST /messages` or MCP `add_memory`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Accept,
    /// Stores the episode, but the answer never arrives (the client times out).
    AcceptAnswerLost,
    /// Never answers and stores nothing.
    Hang,
    /// No connection can be made.
    Refused,
    ServerError,
    /// MCP: a tool payload `{"error": "Graphiti service not initialized"}`; REST: a 503.
    TransientToolError,
    /// Graphiti refuses this episode itself (REST 422, MCP `isError`).
    Reject,
}

#[derive(Default)]
pub struct ServerState {
    /// Names of stored episodes, in the order stored; a re-send is stored again.
    pub stored: Vec<String>,
    pub script: VecDeque<Outcome>,
    /// Whether episode listings show what is stored (false: like FalkorDB for other groups).
    pub lists_episodes: bool,
    pub sends: usize,
}

/// The scripted server; clones share one state (an engine restart keeps talking to the same one).
#[derive(Clone, Default)]
pub struct Scripted(pub Arc<Mutex<ServerState>>);

impl Scripted {
    pub fn new(lists_episodes: bool) -> Scripted {
        let server = Scripted::default();
        server.0.lock().unwrap().lists_episodes = lists_episodes;
        server
    }

    pub fn script(&self, outcomes: &[Outcome]) {
        self.0.lock().unwrap().script.extend(outcomes);
    }

    pub fn clear_script(&self) {
        self.0.lock().unwrap().script.clear();
    }

    pub fn stored(&self) -> Vec<String> {
        self.0.lock().unwrap().stored.clone()
    }

    fn listing(&self) -> Vec<Value> {
        let server = self.0.lock().unwrap();
        if !server.lists_episodes {
            return vec![];
        }
        server.stored.iter().map(|n| json!({"name": n})).collect()
    }

    /// The next outcome for a send of `name` (REST stores each message as `<episode>:<role>`).
    fn send_outcome(&self, name: &str) -> Outcome {
        let mut server = self.0.lock().unwrap();
        server.sends += 1;
        let outcome = server.script.pop_front().unwrap_or(Outcome::Accept);
        if matches!(outcome, Outcome::Accept | Outcome::AcceptAnswerLost) {
            server.stored.push(name.to_string());
        }
        outcome
    }

    fn rest(&self, request: &Request) -> Result<Response, HttpError> {
        if request.url.contains("/episodes/") {
            return json_response(200, &Value::Array(self.listing()));
        }
        assert!(request.url.ends_with("/messages"), "{}", request.url);
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let message_name = body["messages"][0]["name"].as_str().unwrap();
        let name = message_name.strip_suffix(":user").unwrap_or(message_name);
        match self.send_outcome(name) {
            Outcome::Accept => json_response(202, &json!({"success": true})),
            Outcome::AcceptAnswerLost | Outcome::Hang => Err(HttpError::Timeout),
            Outcome::Refused => Err(HttpError::Connect("connection refused".into())),
            Outcome::ServerError => json_response(500, &json!({"detail": "internal"})),
            Outcome::TransientToolError => json_response(503, &json!({"detail": "starting"})),
            Outcome::Reject => json_response(422, &json!({"detail": [{"msg": "field required"}]})),
        }
    }

    fn mcp(&self, request: &Request) -> Result<Response, HttpError> {
        let message: Value = serde_json::from_slice(&request.body).unwrap();
        let id = message["id"].clone();
        let answer = |result: Value| {
            sse_response(&json!({"jsonrpc": "2.0", "id": id, "result": result}), None)
        };
        let tool_result = |payload: Value, is_error: bool| {
            answer(json!({
                "content": [{"type": "text", "text": payload.to_string()}],
                "structuredContent": {"result": payload},
                "isError": is_error,
            }))
        };
        match message["method"].as_str() {
            Some("initialize") => sse_response(
                &json!({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-06-18"}}),
                Some("session-1"),
            ),
            Some("notifications/initialized") => Ok(Response {
                status: 202,
                headers: vec![],
                body: vec![],
            }),
            Some("tools/call") => match message["params"]["name"].as_str() {
                Some("get_episodes") => {
                    tool_result(json!({"message": "ok", "episodes": self.listing()}), false)
                }
                Some("add_memory") => {
                    let name = message["params"]["arguments"]["name"].as_str().unwrap();
                    match self.send_outcome(name) {
                        Outcome::Accept => tool_result(json!({"message": "Episode queued"}), false),
                        Outcome::AcceptAnswerLost | Outcome::Hang => Err(HttpError::Timeout),
                        Outcome::Refused => Err(HttpError::Connect("connection refused".into())),
                        Outcome::ServerError => json_response(500, &json!({"detail": "internal"})),
                        Outcome::TransientToolError => {
                            tool_result(json!({"error": "Graphiti service not initialized"}), false)
                        }
                        Outcome::Reject => answer(json!({
                            "content": [{"type": "text", "text": "Error: invalid episode"}],
                            "isError": true,
                        })),
                    }
                }
                other => panic!("tool not scripted: {other:?}"),
            },
            other => panic!("method not scripted: {other:?}"),
        }
    }
}

impl Http for Scripted {
    fn send(&mut self, request: Request) -> Result<Response, HttpError> {
        if request.url.ends_with("/mcp") {
            self.mcp(&request)
        } else {
            self.rest(&request)
        }
    }
}
