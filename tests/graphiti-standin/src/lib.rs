//! A Graphiti stand-in for tests and demos: one loopback HTTP server that speaks both Graphiti
//! APIs (the MCP server's streamable HTTP at `/mcp`, and the FastAPI `graph_service` REST API),
//! with the traps of the real servers (see `/work/shared/reference/graphiti-api.md`) and fault
//! modes. Search is deterministic keyword matching over seeded data; there is no LLM, so
//! ingested episodes are stored and listed but never become facts.
//!
//! ```no_run
//! use graphiti_standin::{Fault, Options, StandIn};
//! let standin = StandIn::start(Options::default()).unwrap();
//! standin.seed_json(include_str!("../seed/demo.json")).unwrap();
//! println!("{}/mcp", standin.url());
//! standin.set_fault(Fault::Down); // connections refused until Fault::None
//! ```

mod http;
mod mcp;
mod rest;

use http::serve;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How to start a [`StandIn`].
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Ingested episodes become visible (to `get_episodes`, `/episodes`, [`StandIn::episodes`])
    /// only after this delay, like the real servers' background queues.
    pub ingest_delay: Duration,
    /// Behave like an MCP server before v1.0.0: `search_nodes` is an unknown tool
    /// (`isError: true`) and node search is called `search_memory_nodes`.
    pub legacy_node_search: bool,
}

/// A fault the server shows until the next [`StandIn::set_fault`].
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Fault {
    #[default]
    None,
    /// The listening socket is closed (connections refused); `Fault::None` re-binds the same port.
    Down,
    /// Sleep this long before answering each request.
    Slow(Duration),
    /// `500 Internal Server Error` on every request.
    ServerError,
    /// `200` with a body that is neither JSON nor SSE.
    Garbage,
    /// One-shot, like a server restart: every existing MCP session id becomes unknown (`404`);
    /// new sessions work. The fault state is `None` afterwards.
    ExpireSessions,
}

/// An entity node, in the shape `search_nodes` returns. Empty `uuid`, `group_id`, `created_at`
/// and `labels` are filled in when seeding.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Node {
    pub uuid: String,
    pub name: String,
    pub labels: Vec<String>,
    pub summary: String,
    pub created_at: String,
    pub group_id: String,
    pub attributes: Map<String, Value>,
}

/// A fact (entity edge), in the shape `search_memory_facts` returns. Dates are ISO-8601
/// strings; `invalid_at`/`expired_at` mark a superseded fact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fact {
    pub uuid: String,
    pub group_id: String,
    pub source_node_uuid: String,
    pub target_node_uuid: String,
    pub created_at: String,
    pub name: String,
    pub fact: String,
    pub episodes: Vec<String>,
    pub expired_at: Option<String>,
    pub valid_at: Option<String>,
    pub invalid_at: Option<String>,
    pub reference_time: Option<String>,
    pub attributes: Map<String, Value>,
}

/// An ingested episode (MCP `add_memory` or REST `POST /messages`).
#[derive(Clone, Debug, PartialEq)]
pub struct Episode {
    pub uuid: String,
    pub name: String,
    pub group_id: String,
    /// The episode body; for REST messages `"{role}({role_type}): {content}"`.
    pub content: String,
    /// `text`, `json` or `message`.
    pub source: String,
    pub source_description: String,
    pub created_at: String,
    /// `reference_time` (MCP) or `timestamp` (REST), else the ingest time.
    pub valid_at: String,
    /// `"mcp"` or `"rest"`.
    pub via: &'static str,
}

/// One answered request.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestRecord {
    pub method: String,
    /// The request target, query included.
    pub path: String,
    pub status: u16,
    /// JSON-RPC method of an MCP request (`initialize`, `tools/call`, …).
    pub rpc_method: Option<String>,
    /// Tool name of an MCP `tools/call`.
    pub tool: Option<String>,
    pub body: String,
}

/// A running stand-in. Thread-safe; dropping it closes the listening socket.
pub struct StandIn {
    shared: Arc<Shared>,
    acceptor: Mutex<Option<Acceptor>>,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    pub(crate) options: Options,
    pub(crate) port: u16,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) fault: Fault,
    pub(crate) sessions: HashSet<String>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) facts: Vec<Fact>,
    episodes: Vec<(Episode, Instant)>,
    pub(crate) worker_dead: bool,
    pub(crate) failed: Vec<String>,
    requests: Vec<RequestRecord>,
}

struct Acceptor {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl StandIn {
    /// Binds 127.0.0.1 (never another address) and serves in background threads.
    pub fn start(options: Options) -> std::io::Result<StandIn> {
        let listener = TcpListener::bind(("127.0.0.1", options.port))?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared { state: Mutex::default(), options, port });
        let acceptor = spawn_acceptor(&shared, listener);
        Ok(StandIn { shared, acceptor: Mutex::new(Some(acceptor)) })
    }

    /// `http://127.0.0.1:PORT` (the MCP endpoint is this plus `/mcp`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.shared.port)
    }

    pub fn port(&self) -> u16 {
        self.shared.port
    }

    /// Switches fault mode. Panics if the port cannot be re-bound after `Fault::Down`.
    pub fn set_fault(&self, fault: Fault) {
        let fault = if fault == Fault::ExpireSessions {
            self.shared.lock().sessions.clear();
            Fault::None
        } else {
            fault
        };
        if fault == Fault::Down {
            self.shared.lock().fault = fault;
            self.stop_acceptor();
        } else {
            self.ensure_listening();
            self.shared.lock().fault = fault;
        }
    }

    /// Adds nodes and facts; `group_id` is the default for items without one.
    pub fn seed(&self, group_id: &str, nodes: Vec<Node>, facts: Vec<Fact>) {
        let now = now_iso();
        let fill = |s: &mut String, v: &str| {
            if s.is_empty() {
                *s = v.to_string();
            }
        };
        let mut st = self.shared.lock();
        for mut n in nodes {
            fill(&mut n.uuid, &new_uuid());
            fill(&mut n.group_id, group_id);
            fill(&mut n.created_at, &now);
            if n.labels.is_empty() {
                n.labels = vec!["Entity".into()];
            }
            st.nodes.push(n);
        }
        for mut f in facts {
            fill(&mut f.uuid, &new_uuid());
            fill(&mut f.group_id, group_id);
            fill(&mut f.created_at, &now);
            st.facts.push(f);
        }
    }

    /// Seeds from `{"group_id": "...", "nodes": [...], "facts": [...]}` or a list of those.
    pub fn seed_json(&self, json: &str) -> Result<(), String> {
        #[derive(Deserialize)]
        struct Seed {
            group_id: String,
            #[serde(default)]
            nodes: Vec<Node>,
            #[serde(default)]
            facts: Vec<Fact>,
        }
        let value: Value = serde_json::from_str(json).map_err(|e| format!("seed: {e}"))?;
        let items = match value {
            Value::Array(items) => items,
            one => vec![one],
        };
        // Parse everything before seeding anything, so a bad file seeds nothing.
        let seeds = items
            .into_iter()
            .map(|v| serde_json::from_value::<Seed>(v).map_err(|e| format!("seed: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        for s in seeds {
            self.seed(&s.group_id, s.nodes, s.facts);
        }
        Ok(())
    }

    /// Episodes ingested and visible (past the ingest delay), in ingest order.
    pub fn episodes(&self) -> Vec<Episode> {
        self.shared.lock().visible_episodes().cloned().collect()
    }

    /// Every request answered so far, in order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.lock().requests.clone()
    }

    /// True once a REST ingest failed (a `Message.uuid`, a bad `group_id`): like the real
    /// server's single worker, nothing more is ingested through `POST /messages`.
    pub fn worker_dead(&self) -> bool {
        self.shared.lock().worker_dead
    }

    /// Why queued episodes were dropped (the real servers only log these).
    pub fn failed_ingests(&self) -> Vec<String> {
        self.shared.lock().failed.clone()
    }

    fn stop_acceptor(&self) {
        let taken = lock(&self.acceptor).take();
        if let Some(a) = taken {
            a.stop.store(true, Ordering::SeqCst);
            // Wake the blocking accept() so the thread sees the flag and drops the socket.
            let _ = TcpStream::connect(("127.0.0.1", self.shared.port));
            let _ = a.thread.join();
        }
    }

    fn ensure_listening(&self) {
        let mut acceptor = lock(&self.acceptor);
        if acceptor.is_some() {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match TcpListener::bind(("127.0.0.1", self.shared.port)) {
                Ok(l) => return *acceptor = Some(spawn_acceptor(&self.shared, l)),
                Err(_) if Instant::now() < deadline => thread::sleep(Duration::from_millis(50)),
                Err(e) => panic!("graphiti-standin: cannot re-bind port {}: {e}", self.shared.port),
            }
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop_acceptor();
    }
}

fn spawn_acceptor(shared: &Arc<Shared>, listener: TcpListener) -> Acceptor {
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, shared) = (stop.clone(), shared.clone());
    let thread = thread::spawn(move || {
        for conn in listener.incoming() {
            if flag.load(Ordering::SeqCst) {
                break;
            }
            match conn {
                Ok(stream) => {
                    let shared = shared.clone();
                    thread::spawn(move || serve(&shared, stream));
                }
                Err(_) => thread::sleep(Duration::from_millis(10)), // e.g. out of fds
            }
        }
    });
    Acceptor { stop, thread }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner()) // a panicked handler must not wedge the server
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

impl State {
    pub(crate) fn record(&mut self, r: RequestRecord) {
        self.requests.push(r);
    }

    pub(crate) fn ingest(&mut self, episode: Episode, delay: Duration) {
        self.episodes.push((episode, Instant::now() + delay));
    }

    pub(crate) fn visible_episodes(&self) -> impl Iterator<Item = &Episode> {
        let now = Instant::now();
        self.episodes.iter().filter(move |(_, at)| *at <= now).map(|(e, _)| e)
    }

    pub(crate) fn delete_group(&mut self, group: &str) {
        self.nodes.retain(|n| n.group_id != group);
        self.facts.retain(|f| f.group_id != group);
        self.episodes.retain(|(e, _)| e.group_id != group);
    }

    pub(crate) fn clear(&mut self) {
        (self.nodes, self.facts, self.episodes) = Default::default();
    }

    /// Facts whose `fact` or `name` contains a query word; `groups: None` means all groups.
    pub(crate) fn search_facts(&self, groups: Option<&[String]>, query: &str, max: i64) -> Vec<Fact> {
        let words = query_words(query);
        rank(&self.facts, groups, max, |f| (&f.group_id, hits(&words, &[&f.fact, &f.name])))
    }

    /// Nodes whose name, summary or labels contain a query word, optionally only with a label.
    pub(crate) fn search_nodes(
        &self,
        groups: Option<&[String]>,
        query: &str,
        max: i64,
        labels: &[String],
    ) -> Vec<Node> {
        let words = query_words(query);
        rank(&self.nodes, groups, max, |n| {
            let mut fields = vec![n.name.as_str(), n.summary.as_str()];
            fields.extend(n.labels.iter().map(String::as_str));
            let wanted = labels.is_empty() || n.labels.iter().any(|l| labels.contains(l));
            (&n.group_id, if wanted { hits(&words, &fields) } else { 0 })
        })
    }
}

/// Lowercased words of at least 3 characters, deduplicated.
fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for w in query.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
        if w.chars().count() >= 3 && !words.iter().any(|x| x == w) {
            words.push(w.to_string());
        }
    }
    words
}

fn hits(words: &[String], fields: &[&str]) -> usize {
    let fields: Vec<String> = fields.iter().map(|f| f.to_lowercase()).collect();
    words.iter().filter(|w| fields.iter().any(|f| f.contains(w.as_str()))).count()
}

/// Matching items by hit count (descending), ties in seed order, at most `max`.
fn rank<T: Clone>(items: &[T], groups: Option<&[String]>, max: i64, score: impl Fn(&T) -> (&String, usize)) -> Vec<T> {
    let mut scored: Vec<(usize, &T)> = items
        .iter()
        .filter_map(|item| {
            let (group, hits) = score(item);
            let in_group = groups.is_none_or(|g| g.contains(group));
            (in_group && hits > 0).then_some((hits, item))
        })
        .collect();
    scored.sort_by_key(|&(hits, _)| std::cmp::Reverse(hits)); // stable: ties keep seed order
    scored.into_iter().take(max.max(0) as usize).map(|(_, t)| t.clone()).collect()
}

/// graphiti-core's rule for group ids: ASCII letters, digits, `-` and `_` (empty allowed).
pub(crate) fn check_group_id(group: &str) -> Result<(), String> {
    if group.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        Ok(())
    } else {
        Err(format!("group_id \"{group}\" must contain only alphanumeric characters, dashes, or underscores"))
    }
}

/// Python's `isoformat()` renders UTC as `+00:00`, pydantic's JSON mode as `Z`; the real APIs
/// mix both, so each output site picks one.
pub(crate) fn iso_offset(s: &str) -> String {
    s.strip_suffix('Z').map_or_else(|| s.to_string(), |p| format!("{p}+00:00"))
}

pub(crate) fn iso_z(s: &str) -> String {
    s.strip_suffix("+00:00").map_or_else(|| s.to_string(), |p| format!("{p}Z"))
}

/// Now as `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`.
pub(crate) fn now_iso() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (sod / 3600, sod % 3600 / 60, sod % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{:06}+00:00", d.subsec_micros())
}

/// A random-looking version-4 UUID (std only: randomly keyed hashers plus a counter).
pub(crate) fn new_uuid() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos());
        u128::from(h.finish())
    };
    let mut b = (word() << 64) | word();
    b = (b & !(0xf << 76)) | (0x4 << 76); // version 4
    b = (b & !(0x3 << 62)) | (0x2 << 62); // RFC 4122 variant
    let s = format!("{b:032x}");
    format!("{}-{}-{}-{}-{}", &s[..8], &s[8..12], &s[12..16], &s[16..20], &s[20..])
}
