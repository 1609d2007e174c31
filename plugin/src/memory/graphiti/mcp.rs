//! Graphiti's MCP server over streamable HTTP: initialize → session id → `notifications/initialized`
//! → `tools/call`, answers in SSE. A lost session (404) is re-initialized once; pre-1.0 servers call
//! node search `search_memory_nodes`.

use super::answer::{json_body, list_of, timeout_of};
use super::episode::{Episode, EpisodeKind};
use super::error::{Cause, Result, error, http_failure};
use super::http::{Deadline, Http, Request, Response};
use super::server::Server;
use crate::memory::redaction::Query;
use serde_json::{Value, json};

mod message;

use message::*;

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
            Err(e) if !self.legacy_node_search && e.cause == Cause::ToolError => {
                self.legacy_node_search = true;
                let payload = self.call_tool(http, "search_memory_nodes", args, deadline)?;
                list_of("search_memory_nodes", payload, "nodes")
            }
            answer => list_of(tool, answer?, "nodes"),
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

impl Server for McpClient {
    /// The database behind the server, as its last `get_status` named it.
    fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    /// The session in use (none before the first handshake; empty for a stateless server).
    fn session(&self) -> Option<&str> {
        self.session.as_deref().filter(|s| !s.is_empty())
    }

    /// Continues a session set up earlier (by another process on the same state directory); a
    /// server that no longer knows it answers 404 and a new one is set up.
    fn resume_session(&mut self, session: String) {
        self.session = Some(session);
    }

    fn search_facts(
        &mut self,
        http: &mut dyn Http,
        query: &Query,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        let args = json!({"query": query.as_str(), "group_ids": [group], "max_facts": max});
        let payload = self.call_tool(http, "search_memory_facts", args, deadline)?;
        list_of("search_memory_facts", payload, "facts")
    }

    fn search_nodes(
        &mut self,
        http: &mut dyn Http,
        query: &Query,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        let args = json!({"query": query.as_str(), "group_ids": [group], "max_nodes": max});
        let first = self.call_tool(http, self.node_search_tool(), args.clone(), deadline);
        self.nodes_from(http, first, args, deadline)
    }

    /// Facts and entities searched at the same time, each answered on its own.
    fn search_facts_and_nodes(
        &mut self,
        http: &mut dyn Http,
        query: &Query,
        group: &str,
        (max_facts, max_nodes): (usize, usize),
        deadline: Deadline,
    ) -> (Result<Vec<Value>>, Result<Vec<Value>>) {
        if max_nodes == 0 {
            return (
                self.search_facts(http, query, group, max_facts, deadline),
                Ok(vec![]),
            );
        }
        let fact_args =
            json!({"query": query.as_str(), "group_ids": [group], "max_facts": max_facts});
        let node_args =
            json!({"query": query.as_str(), "group_ids": [group], "max_nodes": max_nodes});
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

    fn add_episode(
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

    /// The group's most recent stored episodes (`get_episodes`), as the server gives them. None
    /// when this server cannot list them.
    fn recent_episodes(
        &mut self,
        http: &mut dyn Http,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Option<Vec<Value>>> {
        let args = json!({"group_ids": [group], "max_episodes": max});
        match self.call_tool(http, "get_episodes", args, deadline) {
            Ok(payload) => Ok(Some(list_of("get_episodes", payload, "episodes")?)),
            // An older server with another signature, or without the tool.
            Err(e) if e.permanent() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deletes one item by uuid: `delete_entity_edge` (`fact`) or `delete_episode` (with the
    /// facts that episode alone created).
    fn delete_item(
        &mut self,
        http: &mut dyn Http,
        item: super::item::Item,
        uuid: &str,
        deadline: Deadline,
    ) -> Result<()> {
        let tool = match item {
            super::item::Item::Fact => "delete_entity_edge",
            super::item::Item::Episode => "delete_episode",
        };
        self.call_tool(http, tool, json!({"uuid": uuid}), deadline)
            .map(|_| ())
    }

    /// `clear_graph` of one group (on FalkorDB the server answers success without deleting).
    fn delete_group(&mut self, http: &mut dyn Http, group: &str, deadline: Deadline) -> Result<()> {
        self.call_tool(http, "clear_graph", json!({"group_ids": [group]}), deadline)
            .map(|_| ())
    }

    fn health(&mut self, http: &mut dyn Http, deadline: Deadline) -> Result<String> {
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
            return Err(
                error(format!("GET {origin}/health: HTTP {}", response.status))
                    .because(Cause::Status(response.status)),
            );
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
                let hint = if e.cause == Cause::Status(421) {
                    " (the MCP server accepts only Host: localhost, 127.0.0.1 or [::1]: behind a \
                     proxy, make it send one of those)"
                } else {
                    ""
                };
                error(format!(
                    "GET {origin}/health says {status:?}, but the MCP endpoint refuses calls: {}{hint}",
                    e.message
                ))
                .because(e.cause)
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

#[cfg(test)]
mod tests;
