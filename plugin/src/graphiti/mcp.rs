//! Graphiti's MCP server over streamable HTTP: initialize → session id → `notifications/initialized`
//! → `tools/call`, answers in SSE. A lost session (404) is re-initialized once; pre-1.0 servers call
//! node search `search_memory_nodes`.

use super::answer::{
    Bounded, FACT_FIELDS, NODE_FIELDS, json_body, json_body_keeping, keeping_item_fields, list_of,
    opening, timeout_of,
};
use super::episode::{Episode, EpisodeKind, names_of};
use super::error::{Result, error, http_failure, rejected, unknown};
use super::http::{Deadline, Http, Request, Response};
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Value, json};

const PROTOCOL_VERSION: &str = "2025-06-18";

pub struct McpClient {
    endpoint: String,
    session: Option<String>,
    next_id: u64,
    /// The server only knows the pre-1.0 name of node search.
    legacy_node_search: bool,
    /// The database `get_status` last named (`neo4j`, `falkordb`).
    database: Option<String>,
}

impl McpClient {
    pub fn new(url: &str) -> McpClient {
        // The server answers `/mcp/` with a redirect to `/mcp`: ask for the canonical form directly.
        let endpoint = url.trim_end_matches('/').to_string();
        McpClient {
            endpoint,
            session: None,
            next_id: 1,
            legacy_node_search: false,
            database: None,
        }
    }

    /// The database behind the server, as its last `get_status` named it.
    pub fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    /// The session in use (none before the first handshake; empty for a stateless server).
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref().filter(|s| !s.is_empty())
    }

    /// Continues a session set up earlier (by another process on the same state directory); a
    /// server that no longer knows it answers 404 and a new one is set up.
    pub fn resume_session(&mut self, session: String) {
        self.session = Some(session);
    }

    pub fn search_facts(
        &mut self,
        http: &mut dyn Http,
        query: &str,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        let args = json!({"query": query, "group_ids": [group], "max_facts": max});
        let payload = self.call_tool(http, "search_memory_facts", args, deadline)?;
        list_of("search_memory_facts", payload, "facts")
    }

    pub fn search_nodes(
        &mut self,
        http: &mut dyn Http,
        query: &str,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        let args = json!({"query": query, "group_ids": [group], "max_nodes": max});
        let first = self.call_tool(http, self.node_search_tool(), args.clone(), deadline);
        self.nodes_from(http, first, args, deadline)
    }

    /// Facts and entities searched at the same time, each answered on its own.
    pub fn search_facts_and_nodes(
        &mut self,
        http: &mut dyn Http,
        query: &str,
        group: &str,
        (max_facts, max_nodes): (usize, usize),
        deadline: Deadline,
    ) -> (Result<Vec<Value>>, Result<Vec<Value>>) {
        let fact_args = json!({"query": query, "group_ids": [group], "max_facts": max_facts});
        let node_args = json!({"query": query, "group_ids": [group], "max_nodes": max_nodes});
        let calls = vec![
            ("search_memory_facts", fact_args),
            (self.node_search_tool(), node_args.clone()),
        ];
        let mut answers = self.call_tools(http, calls, deadline).into_iter();
        let (Some(facts), Some(nodes)) = (answers.next(), answers.next()) else {
            unreachable!("call_tools answers every call");
        };
        let facts = facts.and_then(|p| list_of("search_memory_facts", p, "facts"));
        (facts, self.nodes_from(http, nodes, node_args, deadline))
    }

    fn node_search_tool(&self) -> &'static str {
        if self.legacy_node_search {
            "search_memory_nodes"
        } else {
            "search_nodes"
        }
    }

    /// The nodes of a node search's answer; a server that only knows the pre-1.0 name is asked
    /// again by that name (and remembered as such).
    fn nodes_from(
        &mut self,
        http: &mut dyn Http,
        answer: Result<Value>,
        args: Value,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        let tool = self.node_search_tool();
        match answer {
            Err(e) if !self.legacy_node_search && e.message.contains("isError") => {
                self.legacy_node_search = true;
                let payload = self.call_tool(http, "search_memory_nodes", args, deadline)?;
                list_of("search_memory_nodes", payload, "nodes")
            }
            answer => list_of(tool, answer?, "nodes"),
        }
    }

    pub fn add_episode(
        &mut self,
        http: &mut dyn Http,
        episode: &Episode,
        deadline: Deadline,
    ) -> Result<()> {
        let args = json!({
            "name": episode.name,
            "episode_body": episode.body(),
            "group_id": episode.group_id,
            "source": if episode.kind == EpisodeKind::Note { "text" } else { "message" },
            "source_description": episode.source_description,
            "reference_time": episode.reference_time,
        });
        self.call_tool(http, "add_memory", args, deadline)
            .map(|_| ())
    }

    /// The names of the group's most recent stored episodes (`get_episodes`), to tell whether a send
    /// whose answer was lost arrived. None when this server cannot list them.
    pub fn recent_episode_names(
        &mut self,
        http: &mut dyn Http,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Option<Vec<String>>> {
        let args = json!({"group_ids": [group], "max_episodes": max});
        match self.call_tool(http, "get_episodes", args, deadline) {
            Ok(payload) => Ok(Some(names_of(&list_of(
                "get_episodes",
                payload,
                "episodes",
            )?))),
            // An older server with another signature, or without the tool.
            Err(e) if e.permanent() => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn health(&mut self, http: &mut dyn Http, deadline: Deadline) -> Result<String> {
        let origin = origin_of(&self.endpoint).to_string();
        let timeout = timeout_of("health", deadline)?;
        let request = Request {
            method: "GET",
            url: format!("{origin}/health"),
            headers: vec![],
            body: vec![],
            timeout,
        };
        let response = http
            .send(request)
            .map_err(|e| http_failure(format!("GET {origin}/health"), &e))?;
        if response.status != 200 {
            return Err(error(format!(
                "GET {origin}/health: HTTP {}",
                response.status
            )));
        }
        let status = json_body("health", &response.body)?;
        let status = status
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string();
        // /health passes none of the MCP endpoint's checks (the Host header, a session, Graphiti
        // being initialized): healthy means a tool call through the endpoint works.
        let answer = self
            .call_tool(http, "get_status", json!({}), deadline)
            .map_err(|e| {
                let hint = if e.message.contains("HTTP 421") {
                    " (the MCP server accepts only Host: localhost, 127.0.0.1 or [::1]: behind a \
                     proxy, make it send one of those)"
                } else {
                    ""
                };
                error(format!(
                    "GET {origin}/health says {status:?}, but the MCP endpoint refuses calls: {}{hint}",
                    e.message
                ))
            })?;
        self.database = answer
            .get("message")
            .and_then(Value::as_str)
            .and_then(database_named);
        match answer.get("status").and_then(Value::as_str) {
            Some("ok") => Ok(status),
            other => Err(error(format!(
                "GET {origin}/health says {status:?}, but get_status says {}: {}",
                other.unwrap_or("nothing"),
                answer
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message")
            ))),
        }
    }

    /// One tool call; the session is set up on first use and once more if the server lost it.
    fn call_tool(
        &mut self,
        http: &mut dyn Http,
        tool: &str,
        arguments: Value,
        deadline: Deadline,
    ) -> Result<Value> {
        let mut answers = self.call_tools(http, vec![(tool, arguments)], deadline);
        answers
            .pop()
            .unwrap_or_else(|| Err(error(format!("{tool}: not sent"))))
    }

    /// Tool calls sent at the same time in one session, each answered on its own, in order. The
    /// session is set up first; calls the server answers `404` (it lost the session) are sent once
    /// more after a new handshake.
    pub fn call_tools(
        &mut self,
        http: &mut dyn Http,
        calls: Vec<(&str, Value)>,
        deadline: Deadline,
    ) -> Vec<Result<Value>> {
        let mut answers: Vec<Option<Result<Value>>> = calls.iter().map(|_| None).collect();
        for attempt in 0..2 {
            if self.session.is_none() {
                // A failed handshake means the tool calls themselves were never sent.
                if let Err(e) = self.initialize(http, deadline) {
                    let e = e.before_sending();
                    fill_unanswered(&mut answers, |_| Err(e.clone()));
                    break;
                }
            }
            let lost = self.send_calls(http, &calls, &mut answers, deadline);
            if !lost || attempt == 1 {
                break;
            }
            self.session = None; // expired or server restarted: initialize again and retry once
        }
        fill_unanswered(&mut answers, |i| {
            Err(error(format!(
                "{}: the server lost the session again after re-initializing",
                calls[i].0
            )))
        });
        answers.into_iter().flatten().collect()
    }

    /// Sends the calls not yet answered, as one batch; true when the server lost the session (those
    /// calls stay unanswered).
    fn send_calls(
        &mut self,
        http: &mut dyn Http,
        calls: &[(&str, Value)],
        answers: &mut [Option<Result<Value>>],
        deadline: Deadline,
    ) -> bool {
        let mut sent = Vec::new();
        let mut requests = Vec::new();
        for (i, (tool, arguments)) in calls.iter().enumerate() {
            if answers[i].is_some() {
                continue;
            }
            let id = self.take_id();
            let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
            match self.request(&message, deadline, tool) {
                Ok(request) => {
                    sent.push((i, id));
                    requests.push(request);
                }
                Err(e) => answers[i] = Some(Err(e)),
            }
        }
        let mut lost = false;
        for ((i, id), response) in sent.into_iter().zip(http.send_all(requests)) {
            let tool = calls[i].0;
            answers[i] = match response {
                Ok(response) if response.status == 404 => {
                    lost = true;
                    None
                }
                Ok(response) => Some(tool_answer(tool, &response, id)),
                Err(e) => Some(Err(http_failure(
                    format!("{tool}: POST {}", self.endpoint),
                    &e,
                ))),
            };
        }
        lost
    }

    fn initialize(&mut self, http: &mut dyn Http, deadline: Deadline) -> Result<()> {
        let id = self.take_id();
        let message = json!({
            "jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "graphiti-openclaw", "version": env!("CARGO_PKG_VERSION")},
            },
        });
        let response = self.post(http, &message, deadline, "initialize")?;
        expect_status("initialize", &response, &[200])?;
        let mut joined = Vec::new();
        let rpc: RpcMessage = rpc_message("initialize", &response, id, &mut joined)?;
        if let Some(e) = parsed("initialize", rpc.error)? {
            return Err(error(format!("initialize: the server refused: {e}")));
        }
        // A stateless server sends no session id; then every call stands alone.
        self.session = Some(response.header("mcp-session-id").unwrap_or("").to_string());
        let notice = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self.post(http, &notice, deadline, "notifications/initialized")?;
        expect_status("notifications/initialized", &response, &[200, 202])
    }

    fn post(
        &self,
        http: &mut dyn Http,
        message: &Value,
        deadline: Deadline,
        what: &str,
    ) -> Result<Response> {
        let request = self.request(message, deadline, what)?;
        http.send(request)
            .map_err(|e| http_failure(format!("{what}: POST {}", self.endpoint), &e))
    }

    /// A JSON-RPC message as a POST in this session; fails only when no time is left.
    fn request(&self, message: &Value, deadline: Deadline, what: &str) -> Result<Request> {
        let mut headers = vec![
            ("content-type".to_string(), "application/json".to_string()),
            (
                "accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
            (
                "mcp-protocol-version".to_string(),
                PROTOCOL_VERSION.to_string(),
            ),
        ];
        if let Some(session) = self.session.as_ref().filter(|s| !s.is_empty()) {
            headers.push(("mcp-session-id".to_string(), session.clone()));
        }
        Ok(Request {
            method: "POST",
            url: self.endpoint.clone(),
            headers,
            body: serde_json::to_vec(message).unwrap_or_default(),
            timeout: timeout_of(what, deadline)?,
        })
    }

    fn take_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

/// The database in `get_status`'s "… connected to falkordb database" (MCP server 1.0).
fn database_named(message: &str) -> Option<String> {
    let (_, rest) = message.split_once("connected to ")?;
    let (name, _) = rest.split_once(" database")?;
    (!name.is_empty() && !name.contains(char::is_whitespace)).then(|| name.to_ascii_lowercase())
}

fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

/// A tool call's answer: its payload, or why there is none. Answered with success but unreadable
/// means the call may have acted.
fn tool_answer(tool: &str, response: &Response, id: u64) -> Result<Value> {
    expect_status(tool, response, &[200])?;
    let mut joined = Vec::new();
    let joined = &mut joined;
    let rpc: RpcMessage<ToolResult> = keeping_item_fields(item_fields(tool), move || {
        rpc_message(tool, response, id, joined)
    })
    .map_err(|e| unknown(e.message))?;
    tool_payload(tool, rpc)
}

/// The fields of a search's items that recall reads: the rest of each item is skipped unbuilt.
/// Other tools' answers are kept whole.
fn item_fields(tool: &str) -> Option<&'static [&'static str]> {
    match tool {
        "search_memory_facts" => Some(FACT_FIELDS),
        "search_nodes" | "search_memory_nodes" => Some(NODE_FIELDS),
        _ => None,
    }
}

/// Gives every call still without an answer the one `make` makes for its index.
fn fill_unanswered(answers: &mut [Option<Result<Value>>], make: impl Fn(usize) -> Result<Value>) {
    for (i, answer) in answers.iter_mut().enumerate() {
        if answer.is_none() {
            *answer = Some(make(i));
        }
    }
}

fn expect_status(what: &str, response: &Response, ok: &[u16]) -> Result<()> {
    if ok.contains(&response.status) {
        return Ok(());
    }
    let start: String = response.text().chars().take(120).collect();
    Err(error(format!("{what}: HTTP {}: {start}", response.status)))
}

/// One JSON-RPC message read in one pass: its result as `R`, its error left as JSON text.
#[derive(serde::Deserialize)]
#[serde(bound(deserialize = "R: serde::Deserialize<'de>, 'de: 'a"))]
struct RpcMessage<'a, R = &'a RawValue> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default = "Option::default")]
    result: Option<R>,
    #[serde(default)]
    error: Option<&'a RawValue>,
}

/// A `tools/call` result. A search's carries its facts twice, as `structuredContent` and as JSON in
/// the text of `content`: the first is parsed (keeping the fields recall reads), the second left as
/// JSON text, read only without the first (or for an error's message).
#[derive(serde::Deserialize)]
struct ToolResult<'a> {
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(default, rename = "structuredContent")]
    structured_content: Option<Bounded>,
    #[serde(default, rename = "isError")]
    is_error: Option<Value>,
}

/// A part of a message parsed (within the value budget).
fn parsed(what: &str, raw: Option<&RawValue>) -> Result<Option<Value>> {
    raw.map(|raw| json_body(what, raw.get().as_bytes()))
        .transpose()
}

/// The JSON-RPC message with our id. An event of several `data:` lines is joined into `joined`;
/// a one-line event (what servers send) is read where it is, not copied.
fn rpc_message<'a, R: serde::Deserialize<'a>>(
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
fn sse_lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
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
fn tool_payload(tool: &str, rpc: RpcMessage<ToolResult>) -> Result<Value> {
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
        )));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graphiti::http::HttpError;
    use std::time::Duration;

    /// Answers from a script, recording what was sent.
    struct Scripted {
        answers: Vec<std::result::Result<Response, HttpError>>,
        sent: Vec<Request>,
    }

    impl Http for Scripted {
        fn send(&mut self, request: Request) -> std::result::Result<Response, HttpError> {
            self.sent.push(request);
            self.answers.remove(0)
        }
    }

    fn sse(
        status: u16,
        session: Option<&str>,
        body: &str,
    ) -> std::result::Result<Response, HttpError> {
        let mut headers = vec![("content-type".to_string(), "text/event-stream".to_string())];
        if let Some(s) = session {
            headers.push(("mcp-session-id".to_string(), s.to_string()));
        }
        Ok(Response {
            status,
            headers,
            body: format!("event: message\ndata: {body}\n\n").into_bytes(),
        })
    }

    /// [`rpc_message`] as a `Value` (`id`, `result` and `error` as they came), for comparing.
    fn rpc_answer(what: &str, response: &Response, id: u64) -> Result<Value> {
        let mut joined = Vec::new();
        let rpc = rpc_message(what, response, id, &mut joined)?;
        let mut answer = serde_json::Map::new();
        let parts = [
            ("id", rpc.id.clone()),
            ("result", parsed(what, rpc.result)?),
            ("error", parsed(what, rpc.error)?),
        ];
        for (key, value) in parts {
            if let Some(value) = value {
                answer.insert(key.to_string(), value);
            }
        }
        Ok(Value::Object(answer))
    }

    /// A 200 answer whose event stream is `body` exactly.
    fn event_stream(body: &str) -> Response {
        Response {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    fn plain(status: u16) -> std::result::Result<Response, HttpError> {
        Ok(Response {
            status,
            headers: vec![],
            body: vec![],
        })
    }

    fn deadline() -> Deadline {
        Deadline::after(Duration::from_secs(5))
    }

    const FACTS: &str = r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"result":{"message":"ok","facts":[{"fact":"Alice works at Acme"}]}},"isError":false}}"#;

    #[test]
    fn handshake_then_call_with_the_session_header() {
        let mut http = Scripted {
            answers: vec![
                sse(
                    200,
                    Some("abc"),
                    r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18"}}"#,
                ),
                plain(202),
                sse(200, None, &FACTS.replace("ID", "3")),
            ],
            sent: vec![],
        };
        let mut client = McpClient::new("http://localhost:8000/mcp/");
        let facts = client
            .search_facts(&mut http, "alice", "g1", 5, deadline())
            .unwrap();
        assert_eq!(facts[0]["fact"], "Alice works at Acme");
        assert_eq!(http.sent[0].url, "http://localhost:8000/mcp");
        let session = |r: &Request| {
            r.headers
                .iter()
                .find(|(n, _)| n == "mcp-session-id")
                .map(|(_, v)| v.clone())
        };
        assert_eq!(session(&http.sent[0]), None);
        assert_eq!(session(&http.sent[1]), Some("abc".into()));
        assert_eq!(session(&http.sent[2]), Some("abc".into()));
    }

    #[test]
    fn a_lost_session_is_reinitialized_once() {
        let init = |id: u64, s: &str| {
            sse(
                200,
                Some(s),
                &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
            )
        };
        let mut http = Scripted {
            answers: vec![
                init(2, "a"),
                plain(202),
                plain(404),
                init(4, "b"),
                plain(202),
                sse(200, None, &FACTS.replace("ID", "5")),
            ],
            sent: vec![],
        };
        let mut client = McpClient::new("http://localhost:8000/mcp");
        assert_eq!(
            client
                .search_facts(&mut http, "q", "g", 5, deadline())
                .unwrap()
                .len(),
            1
        );
        assert_eq!(http.sent.len(), 6);
    }

    /// [`tool_answer`] of a message given as JSON (a plain JSON answer).
    fn payload_of(rpc: &Value) -> Result<Value> {
        answer_of("t", rpc)
    }

    /// [`tool_answer`] for `tool` of a message given as JSON (a plain JSON answer).
    fn answer_of(tool: &str, rpc: &Value) -> Result<Value> {
        let response = Response {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: rpc.to_string().into_bytes(),
        };
        tool_answer(tool, &response, 1)
    }

    #[test]
    fn get_status_names_the_database() {
        let named = super::database_named;
        assert_eq!(
            named("Graphiti MCP server is running and connected to falkordb database").as_deref(),
            Some("falkordb")
        );
        assert_eq!(
            named("Graphiti MCP server is running and connected to Neo4j database").as_deref(),
            Some("neo4j")
        );
        assert_eq!(named("Graphiti MCP server is running"), None);
        assert_eq!(
            named("running but database connection failed: connected to nothing"),
            None
        );
    }

    #[test]
    fn tool_errors_are_errors() {
        let rpc = json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"error\": \"bad group\"}"}],"isError":false}});
        assert_eq!(payload_of(&rpc).unwrap_err(), error("t: bad group"));
        let rpc = json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Unknown tool: search_nodes"}],"isError":true}});
        assert!(
            payload_of(&rpc)
                .unwrap_err()
                .message
                .contains("isError: Unknown tool")
        );
        let rpc = json!({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad params"}});
        assert_eq!(
            payload_of(&rpc).unwrap_err(),
            rejected("t: JSON-RPC error: bad params")
        );
    }

    #[test]
    fn a_huge_tool_answer_is_read_within_its_budget() {
        // 300,000 small facts, twice (structured and as text), in one SSE event: 7.8 MB.
        let facts: Vec<Value> = (0..300_000).map(|_| json!({"fact": "f"})).collect();
        let payload = json!({"facts": facts});
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": payload.to_string()}],
            "structuredContent": {"result": payload},
        }});
        let response = event_stream(&format!("event: message\ndata: {rpc}\n\n"));
        let read = tool_answer("search_memory_facts", &response, 1).unwrap();
        let kept = read["facts"].as_array().unwrap().len();
        assert!(
            kept > 1000 && kept <= crate::graphiti::answer::MAX_ANSWER_VALUES / 2,
            "{kept} facts kept"
        );
    }

    #[test]
    fn a_search_keeps_of_its_items_the_fields_recall_reads() {
        use crate::recall::Recall;
        // A fact and an entity with every field Graphiti's MCP server sends.
        let fact = json!({"uuid": "f1", "group_id": "g", "source_node_uuid": "n1",
            "target_node_uuid": "n2", "created_at": "2026-01-01T00:00:00Z", "name": "WORKS_AT",
            "fact": "Dana Lee is CTO of Acme", "episodes": ["e1", "e2"], "expired_at": null,
            "valid_at": "2025-01-01T00:00:00Z", "invalid_at": "2026-02-01T00:00:00Z",
            "reference_time": "2025-01-01T00:00:00Z", "attributes": {"since": [2025, {"q": 1}]}});
        let node = json!({"uuid": "n1", "name": "Dana Lee", "labels": ["Entity", "Person"],
            "created_at": "2026-01-01T00:00:00+00:00", "summary": "CTO of Acme Robotics",
            "group_id": "g", "attributes": {"role": "CTO"}});
        let cases = [
            ("search_memory_facts", "facts", &fact, FACT_FIELDS),
            ("search_nodes", "nodes", &node, NODE_FIELDS),
        ];
        for (tool, list, item, fields) in cases {
            let payload = json!({"message": "ok", list: [item, item], "extra": {"kept": true}});
            let structured = json!({"id": 1, "result": {"structuredContent": {"result": payload}}});
            let text = json!({"id": 1, "result": {"content": [{"type": "text", "text": payload.to_string()}]}});
            for rpc in [structured, text] {
                let read = answer_of(tool, &rpc).unwrap();
                // Only the listed fields of each item; the payload's own fields stay whole.
                assert_eq!(read["extra"], json!({"kept": true}), "{tool}");
                for kept in read[list].as_array().unwrap() {
                    let names: Vec<&String> = kept.as_object().unwrap().keys().collect();
                    assert!(
                        names.iter().all(|n| fields.contains(&n.as_str())),
                        "{tool}: {names:?}"
                    );
                }
                // What recall reads of the kept items is what it reads of the whole ones.
                let items = |v: &Value| v[list].as_array().unwrap().clone();
                let (kept, whole) = (items(&read), items(&payload));
                let recall = |items: Vec<Value>| match list {
                    "facts" => Recall::from_lists(vec![], items),
                    _ => Recall::from_lists(items, vec![]),
                };
                let (kept, whole) = (recall(kept), recall(whole));
                assert_eq!(kept, whole, "{tool}");
                assert!(!kept.facts.is_empty() || !kept.nodes.is_empty(), "{tool}");
            }
        }
        // Other tools' answers are kept whole.
        let episodes = json!({"episodes": [{"uuid": "e1", "content": "c", "created_at": "t"}]});
        let rpc = json!({"id": 1, "result": {"structuredContent": {"result": episodes}}});
        assert_eq!(answer_of("get_episodes", &rpc).unwrap(), episodes);
    }

    #[test]
    fn the_payload_is_the_structured_content_else_the_text() {
        let both = json!({"id":1,"result":{"content":[{"type":"text","text":"{\"facts\":[\"from text\"]}"}],"structuredContent":{"result":{"facts":["structured"]}}}});
        assert_eq!(payload_of(&both).unwrap(), json!({"facts": ["structured"]}));
        let text_only = json!({"id":1,"result":{"content":[{"type":"text","text":"{\"facts\":[\"from text\"]}"}]}});
        assert_eq!(
            payload_of(&text_only).unwrap(),
            json!({"facts": ["from text"]})
        );
        let neither = json!({"id":1,"result":{"content":[]}});
        assert!(
            payload_of(&neither)
                .unwrap_err()
                .message
                .contains("neither structuredContent nor text")
        );
        let not_an_object = json!({"id":1,"result":"done"});
        let e = payload_of(&not_an_object).unwrap_err();
        assert!(
            e.message
                .contains("t: the answer is not the JSON-RPC answer expected (invalid type"),
            "{e:?}"
        );
        assert_eq!(
            e.kind,
            unknown("").kind,
            "answered with success: it may have acted"
        );
        let no_result = json!({"id":1});
        assert_eq!(
            payload_of(&no_result).unwrap_err(),
            unknown("t: the answer has no result")
        );
    }

    #[test]
    fn sse_events_split_on_any_line_end() {
        let body = "event: message\r\ndata: {\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n\
                    data: {\"id\":2}\r\rdata: {\"id\":3,\"result\":1}\n";
        let response = event_stream(body);
        assert_eq!(
            rpc_answer("search", &response, 1).unwrap(),
            json!({"id": 1, "result": {}})
        );
        assert_eq!(
            rpc_answer("search", &response, 2).unwrap(),
            json!({"id": 2})
        );
        assert_eq!(
            rpc_answer("search", &response, 3).unwrap(),
            json!({"id": 3, "result": 1})
        );
    }

    #[test]
    fn the_answer_is_read_once_found_and_other_events_may_be_anything() {
        let body = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"x\":[1]}}\n\n\
                    data: {\"id\":\"a string id\",\"result\":{}}\n\n\
                    data: {\"id\":7,\n\
                    data: \"result\":{\"ok\":true}}\n\n\
                    data: <html>after the answer\n\n";
        let response = event_stream(body);
        assert_eq!(
            rpc_answer("search", &response, 7).unwrap(),
            json!({"id": 7, "result": {"ok": true}})
        );
        let e = rpc_answer("search", &response, 8).unwrap_err();
        assert!(
            e.message.contains("search: an SSE event is not JSON"),
            "{e:?}"
        );
    }

    #[test]
    fn garbage_is_an_error_with_context() {
        let response = event_stream("<html>oops");
        assert!(
            rpc_answer("search", &response, 1)
                .unwrap_err()
                .message
                .contains("no JSON-RPC answer")
        );
        let response = Response {
            status: 200,
            headers: vec![],
            body: b"<html>oops".to_vec(),
        };
        assert!(
            rpc_answer("search", &response, 1)
                .unwrap_err()
                .message
                .contains("not JSON")
        );
    }
}
