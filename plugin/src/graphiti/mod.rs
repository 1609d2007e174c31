//! The Graphiti client: the MCP server (streamable HTTP, the default) or the REST `graph_service`,
//! chosen by configuration. Every answer is parsed defensively: a malformed one is an error with
//! context, never a panic.

pub mod http;
mod mcp;
mod rest;

use http::{Deadline, Http};
use serde::Deserialize;
use serde_json::Value;

pub use mcp::McpClient;
pub use rest::RestClient;

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Mcp,
    Rest,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Mcp => "mcp",
            Transport::Rest => "rest",
        }
    }
}

/// What went wrong talking to Graphiti, in words an operator can act on.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphitiError {
    pub message: String,
    /// Graphiti refused this request itself (bad input): sending it again cannot succeed.
    pub permanent: bool,
}

impl std::fmt::Display for GraphitiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Result<T> = std::result::Result<T, GraphitiError>;

/// A failure that may pass (network, server trouble, timeouts). Messages quote the server's own text,
/// so they are folded into one printable line before they reach a log, a note or a terminal.
pub fn error(message: impl Into<String>) -> GraphitiError {
    GraphitiError {
        message: crate::text::one_line(&message.into()),
        permanent: false,
    }
}

/// Graphiti rejected the request as such.
pub fn rejected(message: impl Into<String>) -> GraphitiError {
    GraphitiError {
        message: crate::text::one_line(&message.into()),
        permanent: true,
    }
}

/// A turn to store, as both APIs need it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, Deserialize)]
pub struct Episode {
    /// Stable for one turn, so a replay can be recognised.
    pub name: String,
    pub group_id: String,
    pub user: String,
    pub assistant: String,
    /// Who spoke (the sender's id or name), when known.
    pub user_name: Option<String>,
    /// ISO-8601, when the turn ended.
    pub reference_time: String,
    pub source_description: String,
    #[serde(default)]
    pub kind: EpisodeKind,
}

/// A conversation turn (user and assistant), or a note: text given to remember (`user` holds it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EpisodeKind {
    #[default]
    Turn,
    Note,
}

impl Episode {
    /// The episode body for MCP's `add_memory` (REST stores each message itself).
    pub fn body(&self) -> String {
        match self.kind {
            EpisodeKind::Turn => format!("user: {}\nassistant: {}", self.user, self.assistant),
            EpisodeKind::Note => self.user.clone(),
        }
    }
}

/// Search results as Graphiti returns them (raw JSON objects), for recall to interpret.
#[derive(Clone, Debug, Default)]
pub struct Found {
    pub nodes: Vec<Value>,
    pub facts: Vec<Value>,
}

pub enum Client {
    Mcp(McpClient),
    Rest(RestClient),
}

impl Client {
    pub fn new(transport: Transport, url: &str) -> Client {
        match transport {
            Transport::Mcp => Client::Mcp(McpClient::new(url)),
            Transport::Rest => Client::Rest(RestClient::new(url)),
        }
    }

    pub fn search_facts(
        &mut self,
        http: &mut dyn Http,
        query: &str,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        match self {
            Client::Mcp(c) => c.search_facts(http, query, group, max, deadline),
            Client::Rest(c) => c.search_facts(http, query, group, max, deadline),
        }
    }

    /// Entity nodes; the REST server has no node search, so it finds none.
    pub fn search_nodes(
        &mut self,
        http: &mut dyn Http,
        query: &str,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        match self {
            Client::Mcp(c) => c.search_nodes(http, query, group, max, deadline),
            Client::Rest(_) => Ok(vec![]),
        }
    }

    pub fn add_episode(
        &mut self,
        http: &mut dyn Http,
        episode: &Episode,
        deadline: Deadline,
    ) -> Result<()> {
        match self {
            Client::Mcp(c) => c.add_episode(http, episode, deadline),
            Client::Rest(c) => c.add_episode(http, episode, deadline),
        }
    }

    pub fn health(&mut self, http: &mut dyn Http, deadline: Deadline) -> Result<String> {
        match self {
            Client::Mcp(c) => c.health(http, deadline),
            Client::Rest(c) => c.health(http, deadline),
        }
    }
}

/// Parses a JSON body, naming the operation when it is not JSON.
fn json_body(what: &str, body: &[u8]) -> Result<Value> {
    serde_json::from_slice(body).map_err(|e| {
        let start: String = String::from_utf8_lossy(body).chars().take(80).collect();
        error(format!("{what}: the answer is not JSON ({e}): {start:?}"))
    })
}

/// The list under `key` of a JSON object, or an error naming what was there instead.
fn list_of(what: &str, value: &Value, key: &str) -> Result<Vec<Value>> {
    match value.get(key) {
        Some(Value::Array(items)) => Ok(items.iter().filter(|i| i.is_object()).cloned().collect()),
        Some(Value::Null) | None => Err(error(format!("{what}: the answer has no \"{key}\" list"))),
        Some(other) => Err(error(format!(
            "{what}: \"{key}\" is not a list but {other}"
        ))),
    }
}

fn timeout_of(what: &str, deadline: Deadline) -> Result<std::time::Duration> {
    deadline
        .remaining()
        .ok_or_else(|| error(format!("{what}: no time left in the budget")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_servers_text_in_an_error_is_one_printable_line() {
        let e = super::error("POST /messages: HTTP 500: boom\r\n\u{1b}[2Jlast error: none");
        assert_eq!(
            e.message,
            "POST /messages: HTTP 500: boom \\u{1b}[2Jlast error: none"
        );
        assert!(super::rejected("a\nb").message == "a b");
    }
}
