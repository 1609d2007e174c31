//! What the plugin asks of a Graphiti server, once for every API: each one (MCP, REST) implements
//! [`Server`], and the rest of the plugin holds a [`Client`], whichever it is.

use super::episode::{self, Episode};
use super::error::{Result, error};
use super::http::{Deadline, Http};
use super::item::{Item, MAX_ID_CHARS, is_uuid_like};
use crate::memory::redaction::Query;
use serde_json::Value;

/// A Graphiti server, through one of its APIs. Every search query is a [`Query`], made with its
/// secrets replaced: Graphiti embeds each query with its LLM provider.
pub trait Server {
    fn search_facts(
        &mut self,
        http: &mut dyn Http,
        query: &Query,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>>;

    /// Entity nodes; a server without a node search (REST) finds none.
    fn search_nodes(
        &mut self,
        _http: &mut dyn Http,
        _query: &Query,
        _group: &str,
        _max: usize,
        _deadline: Deadline,
    ) -> Result<Vec<Value>> {
        Ok(vec![])
    }

    /// Facts and entity nodes, searched at the same time where the server can (one after the other
    /// here).
    fn search_facts_and_nodes(
        &mut self,
        http: &mut dyn Http,
        query: &Query,
        group: &str,
        (max_facts, max_nodes): (usize, usize),
        deadline: Deadline,
    ) -> (Result<Vec<Value>>, Result<Vec<Value>>) {
        (
            self.search_facts(http, query, group, max_facts, deadline),
            self.search_nodes(http, query, group, max_nodes, deadline),
        )
    }

    fn add_episode(
        &mut self,
        http: &mut dyn Http,
        episode: &Episode,
        deadline: Deadline,
    ) -> Result<()>;

    /// The group's `max` most recent stored episodes as the server gives them (uuid, name, content,
    /// created_at, …), or None when this server cannot list them.
    fn recent_episodes(
        &mut self,
        http: &mut dyn Http,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Option<Vec<Value>>>;

    /// Deletes one fact or episode by a uuid [`Server::delete`] has checked.
    fn delete_item(
        &mut self,
        http: &mut dyn Http,
        item: Item,
        uuid: &str,
        deadline: Deadline,
    ) -> Result<()>;

    /// Deletes every episode, fact and entity of `group` (a checked group id).
    fn delete_group(&mut self, http: &mut dyn Http, group: &str, deadline: Deadline) -> Result<()>;

    fn health(&mut self, http: &mut dyn Http, deadline: Deadline) -> Result<String>;

    /// The session in use, for a server that keeps one (MCP).
    fn session(&self) -> Option<&str> {
        None
    }

    /// Continues a session set up earlier (by another process on the same state directory).
    fn resume_session(&mut self, _session: String) {}

    /// The database behind the server, as its last health check named it (MCP's `get_status`).
    fn database(&self) -> Option<&str> {
        None
    }

    /// Deletes one fact or episode by uuid. Graphiti's deletes are not scoped to a group: the
    /// caller gives only uuids a search or listing of its own group returned.
    fn delete(
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
        self.delete_item(http, item, uuid, deadline)
    }

    /// The names of the group's most recent stored episodes, or None when this server cannot list
    /// them. A just-accepted episode is listed only once ingested.
    fn recent_episode_names(
        &mut self,
        http: &mut dyn Http,
        group: &str,
        deadline: Deadline,
    ) -> Result<Option<Vec<String>>> {
        self.recent_episodes(http, group, RECENT_EPISODES, deadline)
            .map(|listed| listed.map(|episodes| episode::names_of(&episodes)))
    }

    /// Why this server cannot show that a send in doubt arrived, when its last health check
    /// said so: the MCP server on FalkorDB keeps each group in a graph of its own and its
    /// `get_episodes` reads only the default one (graphiti-core 0.30 and later).
    fn cannot_confirm(&self) -> Option<String> {
        (self.database() == Some("falkordb")).then(|| {
            "the MCP server runs on FalkorDB, where get_episodes reads only the server's default \
             graph, never this plugin's groups"
                .into()
        })
    }
}

/// Recent episodes asked for when checking whether a send arrived.
const RECENT_EPISODES: usize = 100;

/// The Graphiti server the configuration names, through its API.
pub type Client = Box<dyn Server>;
