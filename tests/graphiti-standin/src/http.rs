//! Minimal HTTP/1.1: `Content-Length` bodies; connections are kept alive between requests, as
//! uvicorn keeps them (idle for at most 5 s), unless the client sends `Connection: close`. An outage
//! (`Fault::Down`) or the stand-in's end closes them, as a server that went away would.

use crate::{Fault, RequestRecord, Shared, control, mcp, rest};
use serde_json::{Value, json};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 32 * 1024 * 1024;
/// uvicorn's default `timeout_keep_alive`.
const KEEP_ALIVE: Duration = Duration::from_secs(5);

pub(crate) struct Request {
    pub method: String,
    pub target: String,
    pub path: String,
    pub query: String,
    headers: Vec<(String, String)>,
    pub body: String,
    /// Served under `Fault::NotInitialized`: MCP tool calls answer as during start-up.
    pub starting: bool,
}

impl Request {
    /// Header value by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn query_param(&self, name: &str) -> Option<String> {
        self.query
            .split('&')
            .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
            .find(|(k, _)| percent_decode(k) == name)
            .map(|(_, v)| percent_decode(&v.replace('+', " ")))
    }
}

pub(crate) struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// For the request log only.
    pub rpc_method: Option<String>,
    pub tool: Option<String>,
}

impl Response {
    pub fn new(status: u16, content_type: &str, body: String) -> Response {
        let headers = vec![("content-type".into(), content_type.into())];
        Response { status, headers, body, rpc_method: None, tool: None }
    }

    pub fn json(status: u16, value: &Value) -> Response {
        Response::new(status, "application/json", value.to_string())
    }

    pub fn text(status: u16, body: &str) -> Response {
        Response::new(status, "text/plain; charset=utf-8", body.into())
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.into(), value.into()));
        self
    }
}

pub(crate) fn serve(shared: &Arc<Shared>, mut stream: TcpStream, control_only: bool) {
    let outages = shared.lock().outages;
    let mut pending = Vec::new();
    loop {
        if !next_request_arrives(shared, &mut stream, &pending, outages) {
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
        let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
        let req = match read_request(&mut stream, &mut pending) {
            Ok(req) => req,
            Err(e) => {
                let resp = Response::text(400, &format!("Bad Request: {e}"));
                write_response(&mut stream, &resp, false);
                return;
            }
        };
        let keep_alive = !req.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        if !serve_one(shared, &mut stream, req, control_only, keep_alive) || !keep_alive {
            return;
        }
    }
}

/// Waits (polling, so an outage or the stand-in's end is noticed) until the client sends a request
/// or has one buffered; false when it closed, stayed idle past [`KEEP_ALIVE`], or the server went
/// down since the connection was accepted.
fn next_request_arrives(shared: &Shared, stream: &mut TcpStream, pending: &[u8], outages: u64) -> bool {
    if !pending.is_empty() {
        return true;
    }
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let idle_until = Instant::now() + KEEP_ALIVE;
    let mut probe = [0u8; 1];
    while Instant::now() < idle_until {
        {
            let st = shared.lock();
            if st.closed || st.outages != outages {
                return false;
            }
        }
        match stream.peek(&mut probe) {
            Ok(0) => return false,
            Ok(_) => return true,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(_) => return false,
        }
    }
    false
}

/// Answers one request; false when the connection must end (a fault ended or hung it).
fn serve_one(shared: &Arc<Shared>, stream: &mut TcpStream, mut req: Request, control_only: bool, keep: bool) -> bool {
    if let Some(resp) = control::handle(shared, &req, control_only) {
        return write_response(stream, &resp, keep);
    }
    if control_only {
        let resp = Response::json(404, &json!({"error": "this port serves only /__standin/ (the control endpoint)"}));
        return write_response(stream, &resp, keep);
    }
    let fault = shared.request_fault();
    let queued = shared.lock().queue.queued(Instant::now());
    req.starting = fault == Fault::NotInitialized;
    let (resp, routed) = match fault {
        Fault::Hang => {
            record(shared, &req, &Response::text(0, ""));
            hang(shared, stream);
            return false;
        }
        Fault::ServerError => (Response::text(500, "Internal Server Error"), false),
        Fault::Garbage => (Response::new(200, "text/html", "<html>oops".into()), false),
        Fault::WrongHost if req.target.starts_with("/mcp") => (Response::text(421, "Invalid Host header"), false),
        Fault::Slow(d) => {
            thread::sleep(d);
            (route(shared, &req), true)
        }
        _ => (route(shared, &req), true),
    };
    if fault == Fault::AcceptThenReset {
        record(shared, &req, &Response { status: 0, ..resp });
        let _ = stream.shutdown(Shutdown::Both);
        return false;
    }
    record(shared, &req, &resp);
    let mut delay = if routed { answer_delay(shared, &req, &resp, queued) } else { shared.lock().behaviour.latency };
    if let Fault::AcceptThenHang(d) = fault {
        delay += d;
    }
    thread::sleep(delay);
    // A garbage answer is not HTTP a client could frame the next one after.
    write_response(stream, &resp, keep && fault != Fault::Garbage)
}

fn record(shared: &Shared, req: &Request, resp: &Response) {
    shared.lock().record(RequestRecord {
        method: req.method.clone(),
        path: req.target.clone(),
        status: resp.status,
        rpc_method: resp.rpc_method.clone(),
        tool: resp.tool.clone(),
        body: req.body.clone(),
    });
}

/// The latency, plus a busy search's or a slow acceptance's delay, from the backlog the request
/// met when it arrived (its own episodes not counted).
fn answer_delay(shared: &Shared, req: &Request, resp: &Response, queued: usize) -> Duration {
    let mut st = shared.lock();
    let b = st.behaviour.clone();
    let tool = resp.tool.as_deref().unwrap_or_default();
    let search = matches!((req.method.as_str(), req.path.as_str()), ("POST", "/search" | "/get-memory"))
        || ["search_nodes", "search_memory_nodes", "search_memory_facts"].contains(&tool);
    let accept = (req.method == "POST" && req.path == "/messages") || (b.slow_add_memory && tool == "add_memory");
    let mut delay = b.latency;
    if let Some(busy) = b.busy_search.as_ref().filter(|_| search && queued > 0) {
        delay += busy.delay(queued, st.queue.next_busy_search());
    }
    if accept {
        delay += b.accept_delay(queued);
    }
    delay
}

/// Keeps the connection open without answering until the client closes it or the stand-in is
/// dropped.
fn hang(shared: &Shared, stream: &mut TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let mut sink = [0u8; 4096];
    while !shared.lock().closed {
        match stream.read(&mut sink) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

fn route(shared: &Shared, req: &Request) -> Response {
    match req.path.as_str() {
        "/mcp" => mcp::handle(shared, req),
        // Starlette's slash redirect: absolute URL built from the Host header, query kept.
        "/mcp/" => {
            let host = req.header("host").map_or(format!("127.0.0.1:{}", shared.port), String::from);
            let query = if req.query.is_empty() { String::new() } else { format!("?{}", req.query) };
            let mut r = Response::new(307, "text/plain", String::new());
            r.headers = vec![("location".into(), format!("http://{host}/mcp{query}"))];
            r
        }
        "/health" if req.method == "GET" => {
            Response::json(200, &json!({"status": "healthy", "service": "graphiti-mcp"}))
        }
        "/health" => Response::text(405, "Method Not Allowed"),
        _ => rest::handle(shared, req),
    }
}

/// Reads one request; bytes past its body (a pipelined next request) stay in `pending`.
fn read_request(stream: &mut TcpStream, pending: &mut Vec<u8>) -> io::Result<Request> {
    let bad = |msg: &str| io::Error::new(io::ErrorKind::InvalidData, msg.to_string());
    let mut buf = std::mem::take(pending);
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(bad("header too large"));
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(bad("connection closed mid-request"));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or("").split_whitespace();
    let (method, target) = match (start.next(), start.next()) {
        (Some(m), Some(t)) => (m.to_string(), t.to_string()),
        _ => return Err(bad("malformed request line")),
    };
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let find = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    if find("transfer-encoding").is_some() {
        return Err(bad("chunked request bodies are not supported; send Content-Length"));
    }
    let len: usize = find("content-length").map_or(Ok(0), |v| v.parse()).map_err(|_| bad("bad Content-Length"))?;
    if len > MAX_BODY {
        return Err(bad("body too large"));
    }
    let mut body = buf[head_end + 4..].to_vec();
    if body.len() < len && find("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    while body.len() < len {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(bad("connection closed mid-body"));
        }
        body.extend_from_slice(&chunk[..n]);
    }
    *pending = body.split_off(len);
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    Ok(Request {
        path: path.to_string(),
        query: query.to_string(),
        method,
        target: target.clone(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        starting: false,
    })
}

/// Writes the answer; true when the connection stays open for the next request.
fn write_response(stream: &mut TcpStream, resp: &Response, keep_alive: bool) -> bool {
    let mut out = format!("HTTP/1.1 {} {}\r\n", resp.status, reason(resp.status));
    for (k, v) in &resp.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    let connection = if keep_alive { "keep-alive" } else { "close" };
    out.push_str(&format!("content-length: {}\r\nconnection: {connection}\r\n\r\n", resp.body.len()));
    out.push_str(&resp.body);
    let written = stream.write_all(out.as_bytes()).and_then(|_| stream.flush()).is_ok();
    if !keep_alive || !written {
        let _ = stream.shutdown(Shutdown::Write);
    }
    keep_alive && written
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        421 => "Misdirected Request",
        422 => "Unprocessable Entity",
        500 => "Internal Server Error",
        _ => "",
    }
}

/// `%XX` decoding (path segments and query parameters).
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        if b[i] == b'%'
            && let Some(v) = hex
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
