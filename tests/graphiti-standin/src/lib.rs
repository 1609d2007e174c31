//! A Graphiti stand-in for tests and demos: one loopback HTTP server that speaks both Graphiti
//! APIs (the MCP server's streamable HTTP at `/mcp`, and the FastAPI `graph_service` REST API),
//! with the traps of the real servers (as read off getzep/graphiti's `server/graph_service` and
//! `mcp_server`, and measured against them unmodified) and fault modes. Search is deterministic keyword matching over seeded data; there is no LLM, so
//! ingested episodes are stored and listed but never become facts.
//!
//! ```no_run
//! use graphiti_standin::{Fault, Lasting, Options, StandIn};
//! use std::time::Duration;
//! let standin = StandIn::start(Options::default()).unwrap();
//! standin.seed_json(include_str!("../seed/demo.json")).unwrap();
//! println!("{}/mcp", standin.url());
//! standin.set_fault(Fault::Down); // connections refused until Fault::None
//! // Down for 2 s, then slow for the next 3 requests, then fine:
//! standin
//!     .set_faults(vec![
//!         (Fault::Down, Lasting::For(Duration::from_secs(2))),
//!         (Fault::Slow(Duration::from_millis(500)), Lasting::Requests(3)),
//!     ])
//!     .unwrap();
//! ```
//!
//! # As slow and as forgetful as the real servers
//!
//! By default it answers at once. [`Behaviour`] (or the binary's flags) makes it behave like the
//! unmodified servers were measured to: a latency per answer; an ingest queue (one
//! episode at a time per MCP group, one at a time overall for REST) whose episodes are visible
//! only once ingested; `POST /messages` answering later the longer the backlog (the episode is
//! stored when the request arrives, so a client that gives up has still delivered it); searches
//! taking seconds while episodes are queued ([`BusySearch`]); FalkorDB's episode look-ups
//! ([`EpisodeLookups`]). Every accepted send is a new episode even when its name repeats;
//! [`StandIn::accepted_sends`] and [`StandIn::delivery`] count lost and duplicated episodes.
//!
//! # Control endpoint
//!
//! `/__standin/...` on the same port (and on [`StandIn::listen_control`]'s port, which stays up
//! while the main port is down) lets another process script faults and count episodes; the
//! stand-in only ever listens on 127.0.0.1. Faults and latency never apply to it.
//! - `POST /__standin/fault` `{"fault": NAME, "ms": N, "for_ms": N | "requests": N}` or
//!   `{"steps": [step, ...]}`: replaces the fault script (after the last step: `none`). Names:
//!   none, down, slow (ms), server-error, garbage, expire-sessions, not-initialized,
//!   accept-then-hang (ms), accept-then-reset, hang. `400 {"error": …}` names what was wrong.
//! - `GET /__standin/fault`: the fault in force and the steps left.
//! - `GET /__standin/episodes`: ingested episodes; `GET /__standin/sends`: accepted sends.
//! - `POST /__standin/delivery` `{"expected": [episode names]}`: lost, duplicated, unexpected.
//! - `GET /__standin/status`: fault, queued, episodes, sends, requests (counts).

mod control;
mod deletes;
mod faults;
mod http;
mod ingest;
mod listener;
mod mcp;
mod rest;
mod store;
mod time;

pub use faults::{Fault, Lasting, parse_fault_flag};
pub use ingest::{
    AcceptedSend, Behaviour, BusySearch, Delivery, EpisodeLookups, FALKORDB_DEFAULT_DATABASE, FULL_BACKLOG,
    GraphitiCore,
};
pub use store::{Episode, Fact, Node};

use faults::FaultScript;
use ingest::Queue;
use listener::Listeners;
use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How to start a [`StandIn`].
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Accepted episodes become visible (to `get_episodes`, `/episodes`, [`StandIn::episodes`])
    /// no sooner than this after they were accepted. With [`Behaviour::ingest`] they also wait
    /// for their turn in the ingest queue.
    pub ingest_delay: Duration,
    /// Behave like an MCP server before v1.0.0: `search_nodes` is an unknown tool
    /// (`isError: true`) and node search is called `search_memory_nodes`.
    pub legacy_node_search: bool,
}

/// One request to the Graphiti APIs (control requests are not recorded).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestRecord {
    pub method: String,
    /// The request target, query included.
    pub path: String,
    /// 0 when no answer was sent (`Fault::Hang`, `Fault::AcceptThenReset`).
    pub status: u16,
    /// JSON-RPC method of an MCP request (`initialize`, `tools/call`, …).
    pub rpc_method: Option<String>,
    /// Tool name of an MCP `tools/call`.
    pub tool: Option<String>,
    pub body: String,
}

/// A running stand-in. Thread-safe; dropping it closes its sockets.
pub struct StandIn {
    shared: Arc<Shared>,
    director: Option<JoinHandle<()>>,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    /// Wakes the thread that ends timed fault steps.
    wake: Condvar,
    listeners: Mutex<Listeners>,
    pub(crate) options: Options,
    pub(crate) port: u16,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) faults: FaultScript,
    pub(crate) behaviour: Behaviour,
    /// The stand-in was dropped: stop listening, end hung connections.
    pub(crate) closed: bool,
    /// Times the main listener went down: connections accepted before an outage are closed.
    pub(crate) outages: u64,
    pub(crate) sessions: HashSet<String>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) facts: Vec<Fact>,
    pub(crate) queue: Queue,
    pub(crate) worker_dead: bool,
    pub(crate) failed: Vec<String>,
    pub(crate) requests: Vec<RequestRecord>,
    /// Searches return the group's other items after the matching ones.
    pub(crate) search_fill: bool,
}

impl StandIn {
    /// Binds 127.0.0.1 (never another address) and serves in background threads.
    pub fn start(options: Options) -> std::io::Result<StandIn> {
        let listener = TcpListener::bind(("127.0.0.1", options.port))?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            wake: Condvar::new(),
            listeners: Mutex::default(),
            options,
            port,
        });
        lock(&shared.listeners).main = Some(listener::spawn_acceptor(&shared, listener, false));
        let director = listener::spawn_director(&shared);
        Ok(StandIn { shared, director: Some(director) })
    }

    /// `http://127.0.0.1:PORT` (the MCP endpoint is this plus `/mcp`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.shared.port)
    }

    pub fn port(&self) -> u16 {
        self.shared.port
    }

    /// Serves only the control endpoint (`/__standin/...`) on another loopback port (0 picks a
    /// free one), which stays up while the main port is down. Returns the port.
    pub fn listen_control(&self, port: u16) -> std::io::Result<u16> {
        self.shared.listen_control(port)
    }

    /// Switches fault mode until the next call. Panics if the port cannot be re-bound after
    /// `Fault::Down`.
    pub fn set_fault(&self, fault: Fault) {
        self.set_faults(vec![(fault, Lasting::Forever)]).unwrap_or_else(|e| panic!("graphiti-standin: {e}"));
    }

    /// Replaces the fault script: each step in turn for as long as it lasts, then `Fault::None`.
    /// Only the last step may last forever; `Fault::Down` cannot last a number of requests (none
    /// arrive while down). Errors name the step that is wrong; nothing changes then.
    pub fn set_faults(&self, steps: Vec<(Fault, Lasting)>) -> Result<(), String> {
        self.shared.set_faults(steps)
    }

    /// The fault in force now.
    pub fn fault(&self) -> Fault {
        let _ = self.shared.sync_listening();
        self.shared.lock().faults.current()
    }

    /// Switches how slow and forgetful the stand-in is, from the next request on.
    pub fn set_behaviour(&self, behaviour: Behaviour) {
        self.shared.lock().behaviour = behaviour;
    }

    pub fn behaviour(&self) -> Behaviour {
        self.shared.lock().behaviour.clone()
    }

    /// Makes searches answer like Graphiti's hybrid search, whose embedding half always finds
    /// nearest neighbours: keyword matches first, then the group's other items in seed order (so
    /// seed order is the rank a real search would give), up to the maximum asked. An unrelated
    /// query then gets the group's top items, as against the real servers. Off by default.
    pub fn set_search_fill(&self, fill: bool) {
        self.shared.lock().search_fill = fill;
    }

    /// Adds nodes and facts; `group_id` is the default for items without one.
    pub fn seed(&self, group_id: &str, nodes: Vec<Node>, facts: Vec<Fact>) {
        self.shared.lock().seed(group_id, nodes, facts);
    }

    /// Seeds from `{"group_id": "...", "nodes": [...], "facts": [...]}` or a list of those.
    pub fn seed_json(&self, json: &str) -> Result<(), String> {
        let seeds = store::parse_seed(json)?;
        let mut st = self.shared.lock();
        seeds.into_iter().for_each(|s| st.seed_parsed(s));
        Ok(())
    }

    /// Episodes ingested and visible, in the order they were accepted.
    pub fn episodes(&self) -> Vec<Episode> {
        self.shared.lock().queue.visible(Instant::now()).cloned().collect()
    }

    /// Episodes accepted and not yet ingested.
    pub fn queued(&self) -> usize {
        self.shared.lock().queue.queued(Instant::now())
    }

    /// Every episode accepted (stored and queued), in order: one per MCP `add_memory` and one
    /// per REST message, a repeated name included.
    pub fn accepted_sends(&self) -> Vec<AcceptedSend> {
        self.shared.lock().queue.sends().to_vec()
    }

    /// The accepted sends counted against the episodes meant to arrive once each (over REST a
    /// turn's `<episode>:user` and `<episode>:assistant` messages are one send of `<episode>`).
    pub fn delivery(&self, expected: &[impl AsRef<str>]) -> Delivery {
        let expected: Vec<&str> = expected.iter().map(AsRef::as_ref).collect();
        ingest::count_delivery(self.shared.lock().queue.sends(), &expected)
    }

    /// Every request to the Graphiti APIs so far, in order of arrival.
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
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.wake.notify_all();
        let _ = self.shared.sync_listening();
        if let Some(director) = self.director.take() {
            let _ = director.join();
        }
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner()) // a panicked handler must not wedge the server
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    pub(crate) fn set_faults(self: &Arc<Self>, steps: Vec<(Fault, Lasting)>) -> Result<(), String> {
        let script = FaultScript::new(steps, Instant::now())?;
        self.lock().faults = script;
        self.wake.notify_all();
        self.sync_listening()
    }
}

impl State {
    pub(crate) fn record(&mut self, r: RequestRecord) {
        self.requests.push(r);
    }

    pub(crate) fn delete_group(&mut self, group: &str) {
        self.nodes.retain(|n| n.group_id != group);
        self.facts.retain(|f| f.group_id != group);
        self.queue.retain(|e| e.group_id != group);
    }

    pub(crate) fn clear(&mut self) {
        (self.nodes, self.facts) = Default::default();
        self.queue.retain(|_| false);
    }
}
