//! The Graphiti client: the MCP server (streamable HTTP, the default) or the REST `graph_service`,
//! chosen by configuration. Every answer is parsed defensively: a malformed one is an error with
//! context, never a panic.

mod answer;
mod episode;
mod error;
pub mod http;
mod item;
mod mcp;
mod rest;

pub use crate::config::Transport;
use crate::memory::redaction::Query;
use http::{Deadline, Http};
use serde_json::Value;

pub use answer::{MAX_ANSWER_VALUES, parse_bounded};
pub use episode::{Episode, EpisodeKind, lists, speaker_name};
pub use error::{ErrorKind, GraphitiError, Result, error, http_failure, rejected, unknown};
pub use item::{Item, MAX_ID_CHARS, is_uuid_like};
pub use mcp::McpClient;
pub use rest::RestClient;

/// Search results as Graphiti returns them (raw JSON objects), for recall to interpret.
#[derive(Clone, Debug, Default)]
pub struct Found {
    pub nodes: Vec<Value>,
    pub facts: Vec<Value>,
}

/// A Graphiti server. Every search query it sends is a [`Query`], made with its secrets replaced:
/// Graphiti embeds each query with its LLM provider.
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
        query: &Query,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        match self {
            Client::Mcp(c) => c.search_facts(http, query.as_str(), group, max, deadline),
            Client::Rest(c) => c.search_facts(http, query.as_str(), group, max, deadline),
        }
    }

    /// Facts and entity nodes, searched at the same time where the server has both searches (the REST
    /// server has no node search, so it finds no nodes).
    pub fn search_facts_and_nodes(
        &mut self,
        http: &mut dyn Http,
        query: &Query,
        group: &str,
        (max_facts, max_nodes): (usize, usize),
        deadline: Deadline,
    ) -> (Result<Vec<Value>>, Result<Vec<Value>>) {
        match self {
            Client::Mcp(c) if max_nodes > 0 => c.search_facts_and_nodes(
                http,
                query.as_str(),
                group,
                (max_facts, max_nodes),
                deadline,
            ),
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
        query: &Query,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        match self {
            Client::Mcp(c) => c.search_nodes(http, query.as_str(), group, max, deadline),
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
        self.recent_episodes(http, group, RECENT_EPISODES, deadline)
            .map(|listed| listed.map(|episodes| episode::names_of(&episodes)))
    }

    /// The group's `max` most recent stored episodes as the server gives them (uuid, name, content,
    /// created_at, …), or None when this server cannot list them.
    pub fn recent_episodes(
        &mut self,
        http: &mut dyn Http,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Option<Vec<Value>>> {
        match self {
            Client::Mcp(c) => c.recent_episodes(http, group, max, deadline),
            Client::Rest(c) => c.recent_episodes(http, group, max, deadline),
        }
    }

    /// Deletes one fact or episode by uuid. Graphiti's deletes are not scoped to a group: the
    /// caller gives only uuids a search or listing of its own group returned.
    pub fn delete(
        &mut self,
        http: &mut dyn Http,
        item: Item,
        uuid: &str,
        deadline: Deadline,
    ) -> Result<()> {
        if !is_uuid_like(uuid) {
            return Err(error(format!(
                "{uuid:?} is not a Graphiti id (letters, digits, - and _, at most {MAX_ID_CHARS})"
            )));
        }
        match self {
            Client::Mcp(c) => c.delete(http, item, uuid, deadline),
            Client::Rest(c) => c.delete(http, item, uuid, deadline),
        }
    }

    /// Deletes every episode, fact and entity of `group` (a checked group id).
    pub fn delete_group(
        &mut self,
        http: &mut dyn Http,
        group: &str,
        deadline: Deadline,
    ) -> Result<()> {
        match self {
            Client::Mcp(c) => c.delete_group(http, group, deadline),
            Client::Rest(c) => c.delete_group(http, group, deadline),
        }
    }

    /// The database behind the server, as the MCP server's `get_status` named it at the last
    /// health check (the REST server does not say).
    pub fn database(&self) -> Option<&str> {
        match self {
            Client::Mcp(c) => c.database(),
            Client::Rest(_) => None,
        }
    }

    /// Why this server cannot show that a send in doubt arrived, when its last health check
    /// said so: the MCP server on FalkorDB keeps each group in a graph of its own and its
    /// `get_episodes` reads only the default one (graphiti-core 0.30 and later).
    pub fn cannot_confirm(&self) -> Option<String> {
        match self {
            Client::Mcp(c) if c.database() == Some("falkordb") => Some(
                "the MCP server runs on FalkorDB, where get_episodes reads only the server's \
                 default graph, never this plugin's groups"
                    .into(),
            ),
            _ => None,
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
