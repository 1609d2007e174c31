//! The Graphiti client: the MCP server (streamable HTTP, the default) or the REST `graph_service`,
//! chosen by configuration. Every answer is parsed defensively: a malformed one is an error with
//! context, never a panic.

mod answer;
mod episode;
mod error;
pub mod http;
mod mcp;
mod rest;

use http::{Deadline, Http};
use serde::Deserialize;
use serde_json::Value;

pub use answer::{MAX_ANSWER_VALUES, parse_bounded};
pub use episode::{Episode, EpisodeKind, lists, speaker_name};
pub use error::{ErrorKind, GraphitiError, Result, error, http_failure, rejected, unknown};
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

    /// The MCP session in use, when there is one.
    pub fn session(&self) -> Option<&str> {
        match self {
            Client::Mcp(c) => c.session(),
            Client::Rest(_) => None,
        }
    }

    pub fn resume_session(&mut self, session: String) {
        if let Client::Mcp(c) = self {
            c.resume_session(session);
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

    /// Facts and entity nodes, searched at the same time where the server has both searches (the REST
    /// server has no node search, so it finds no nodes).
    pub fn search_facts_and_nodes(
        &mut self,
        http: &mut dyn Http,
        query: &str,
        group: &str,
        (max_facts, max_nodes): (usize, usize),
        deadline: Deadline,
    ) -> (Result<Vec<Value>>, Result<Vec<Value>>) {
        match self {
            Client::Mcp(c) if max_nodes > 0 => {
                c.search_facts_and_nodes(http, query, group, (max_facts, max_nodes), deadline)
            }
            _ => (
                self.search_facts(http, query, group, max_facts, deadline),
                Ok(vec![]),
            ),
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

    /// The names of the group's most recent stored episodes, or None when this server cannot list
    /// them. A just-accepted episode is listed only once ingested.
    pub fn recent_episode_names(
        &mut self,
        http: &mut dyn Http,
        group: &str,
        deadline: Deadline,
    ) -> Result<Option<Vec<String>>> {
        match self {
            Client::Mcp(c) => c.recent_episode_names(http, group, RECENT_EPISODES, deadline),
            Client::Rest(c) => c.recent_episode_names(http, group, RECENT_EPISODES, deadline),
        }
    }

    pub fn health(&mut self, http: &mut dyn Http, deadline: Deadline) -> Result<String> {
        match self {
            Client::Mcp(c) => c.health(http, deadline),
            Client::Rest(c) => c.health(http, deadline),
        }
    }
}

/// Recent episodes asked for when checking whether a send arrived.
const RECENT_EPISODES: usize = 100;
