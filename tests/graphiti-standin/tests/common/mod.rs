//! A tiny std-only HTTP/1.1 client and MCP session helper for the stand-in's tests.
#![allow(dead_code)] // each test binary uses a different part

use graphiti_standin::{Options, StandIn};
use serde_json::{Value, json};
use std::io::{self, Read, Write};
use std::net::TcpStream;

pub const ACCEPT_BOTH: (&str, &str) = ("Accept", "application/json, text/event-stream");
pub const JSON: (&str, &str) = ("Content-Type", "application/json");

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    /// The JSON of the single SSE `message` event (CRLF or LF framing).
    pub fn sse(&self) -> Value {
        let body = self.body.replace("\r\n", "\n");
        let event = body.strip_suffix("\n\n").unwrap_or_else(|| panic!("unterminated event: {body:?}"));
        let mut lines = event.lines();
        assert_eq!(lines.next(), Some("event: message"), "{body:?}");
        let data: Vec<&str> = lines.map(|l| l.strip_prefix("data: ").expect("data line")).collect();
        serde_json::from_str(&data.join("\n")).expect("data is JSON")
    }
}

/// One request on a fresh connection, closed after the answer (`Connection: close`: the stand-in
/// keeps connections alive otherwise); adds `Host: 127.0.0.1:PORT` unless `headers` has a Host.
pub fn request(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> io::Result<Reply> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    let mut raw = String::new();
    stream.read_to_string(&mut raw)?;
    if raw.is_empty() {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed without an answer"));
    }
    let (head, body) = raw.split_once("\r\n\r\n").expect("response head");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().into(), v.trim().into())).collect();
    let reply = Reply { status, headers, body: body.to_string() };
    let len: usize = reply.header("content-length").expect("content-length").parse().unwrap();
    assert_eq!(len, reply.body.len(), "content-length matches the body");
    Ok(reply)
}

pub fn get(port: u16, path: &str) -> Reply {
    request(port, "GET", path, &[], "").unwrap()
}

pub fn post_json(port: u16, path: &str, body: &Value) -> Reply {
    request(port, "POST", path, &[JSON], &body.to_string()).unwrap()
}

/// POST to /mcp with the right headers, plus a session id if given.
pub fn mcp_post(port: u16, session: Option<&str>, body: &Value) -> Reply {
    let mut headers = vec![JSON, ACCEPT_BOTH];
    if let Some(s) = session {
        headers.push(("Mcp-Session-Id", s));
    }
    request(port, "POST", "/mcp", &headers, &body.to_string()).unwrap()
}

pub fn initialize(port: u16) -> (Reply, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}});
    let reply = mcp_post(port, None, &body);
    let session = reply.header("mcp-session-id").expect("session header").to_string();
    (reply, session)
}

/// An initialized MCP session.
pub struct Mcp {
    pub port: u16,
    pub session: String,
    next_id: u64,
}

impl Mcp {
    pub fn connect(port: u16) -> Mcp {
        let (reply, session) = initialize(port);
        assert_eq!(reply.status, 200);
        let note = mcp_post(port, Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(note.status, 202);
        Mcp { port, session, next_id: 2 }
    }

    pub fn call_raw(&mut self, tool: &str, args: Value) -> Reply {
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        mcp_post(self.port, Some(&self.session), &body)
    }

    /// The `result` of a tools/call (a CallToolResult).
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let reply = self.call_raw(tool, args);
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.sse()["result"].clone()
    }

    /// The tool payload (`structuredContent.result`), after checking it matches the text content.
    pub fn payload(&mut self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args);
        assert_eq!(result["isError"], json!(false), "{result}");
        let payload = result["structuredContent"]["result"].clone();
        let text = result["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, serde_json::to_string_pretty(&payload).unwrap(), "text is the pretty payload");
        payload
    }
}

pub fn start(options: Options) -> StandIn {
    StandIn::start(options).expect("start stand-in")
}

pub fn demo(options: Options) -> StandIn {
    let s = start(options);
    s.seed_json(include_str!("../../seed/demo.json")).unwrap();
    s
}

/// `POST /messages` body of one turn as the plugin sends it: `<episode>:user` and
/// `<episode>:assistant` messages.
pub fn turn(group: &str, episode: &str) -> Value {
    let message = |role_type: &str, content: &str| {
        json!({"content": content, "role_type": role_type, "role": role_type, "name": format!("{episode}:{role_type}"),
            "source_description": "test"})
    };
    json!({"group_id": group, "messages": [message("user", "hello"), message("assistant", "hi")]})
}

/// Sends a whole request, then closes the connection after `wait` without reading the answer
/// (a client that gives up).
pub fn send_then_close(port: u16, method: &str, path: &str, body: &str, wait: std::time::Duration) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    std::thread::sleep(wait);
}

/// How long `f` took, and its result.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, std::time::Duration) {
    let start = std::time::Instant::now();
    let out = f();
    (out, start.elapsed())
}

/// Waits until `ready` holds, checking every 10 ms, at most `limit`.
pub fn wait_for(limit: std::time::Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if ready() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    ready()
}
