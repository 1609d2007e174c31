//! Deletes as the real servers do them (read off graphiti-core 0.31.x and its two servers):
//!
//! - MCP `delete_episode` is graphiti-core's `remove_episode`, which changed in 0.31.2 (see
//!   [`GraphitiCore`]); REST `DELETE /episode/{uuid}` removes the episode alone.
//! - `delete_entity_edge` and `DELETE /entity-edge/{uuid}` remove one fact.
//! - Only 0.31.2's `remove_episode` rewrites a summary: after any other delete an entity's summary
//!   may still repeat a forgotten fact.
//! - Deletes by uuid are not scoped to a group.
//! - On FalkorDB each group is a graph of its own, and a delete by uuid looks in one graph only:
//!   the default graph (`default_db`), or, over MCP before graphiti-core 0.30, the graph its shared
//!   driver was last bound to. Anywhere else the item is not found. `clear_graph` and
//!   `DELETE /group/{id}` answer success without deleting anything, except of a group that lives
//!   in the default graph (its id is the graph's name), which they do delete.

use crate::ingest::{EpisodeLookups, FALKORDB_DEFAULT_DATABASE, GraphitiCore};
use crate::{Episode, State};
use std::time::Instant;

/// Which API a delete came through: their lookups and what they remove differ.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Api {
    Mcp,
    Rest,
}

impl State {
    /// Whether a lookup by uuid through `api` finds an item of `group`.
    fn reaches(&self, api: Api, group: &str) -> bool {
        match (self.behaviour.episode_lookups, api) {
            (EpisodeLookups::Neo4j, _) => true,
            (EpisodeLookups::FalkorDb029 | EpisodeLookups::FalkorDbLegacy, Api::Mcp) => {
                group == self.queue.falkordb_bound_graph(Instant::now())
            }
            _ => group == FALKORDB_DEFAULT_DATABASE,
        }
    }

    fn on_falkordb(&self) -> bool {
        self.behaviour.episode_lookups != EpisodeLookups::Neo4j
    }

    /// Removes episode `uuid` (through MCP also the facts it alone created). Err: graphiti-core's
    /// `NodeNotFoundError` text.
    pub(crate) fn delete_episode(&mut self, api: Api, uuid: &str) -> Result<(), String> {
        let now = Instant::now();
        let episode = self.queue.visible(now).find(|e| e.uuid == uuid).cloned();
        let not_found = || format!("node {uuid} not found");
        let episode = episode.ok_or_else(not_found)?;
        if !self.reaches(api, &episode.group_id) {
            return Err(not_found());
        }
        self.queue.retain(|e| e.uuid != uuid);
        if api == Api::Mcp {
            self.remove_episode(&episode);
        }
        Ok(())
    }

    /// graphiti-core's `remove_episode`, after the episode itself is gone.
    fn remove_episode(&mut self, episode: &Episode) {
        let uuid = episode.uuid.as_str();
        if self.behaviour.graphiti_core == GraphitiCore::V0_31_1 {
            self.facts.retain(|f| f.episodes.first().map(String::as_str) != Some(uuid));
            return;
        }
        self.facts.retain_mut(|f| {
            let had = f.episodes.iter().any(|e| e == uuid);
            f.episodes.retain(|e| e != uuid);
            !(had && f.episodes.is_empty())
        });
        // The entities it mentioned (here: whose name its text holds): rebuilt from the group's
        // remaining episodes that mention them, or deleted when none does.
        let mentions = |text: &str, name: &str| text.to_lowercase().contains(&name.to_lowercase());
        let remaining: Vec<String> = self
            .queue
            .visible(Instant::now())
            .filter(|e| e.group_id == episode.group_id)
            .map(|e| e.content.clone())
            .collect();
        self.nodes.retain_mut(|node| {
            if node.group_id != episode.group_id || !mentions(&episode.content, &node.name) {
                return true;
            }
            let said: Vec<&str> = remaining.iter().map(String::as_str).filter(|t| mentions(t, &node.name)).collect();
            node.summary = said.join(" ").chars().take(250).collect();
            !said.is_empty()
        });
    }

    /// Removes fact `uuid`. Err: graphiti-core's `EdgeNotFoundError` text.
    pub(crate) fn delete_fact(&mut self, api: Api, uuid: &str) -> Result<(), String> {
        let not_found = || format!("edge {uuid} not found");
        let group = self.facts.iter().find(|f| f.uuid == uuid).map(|f| f.group_id.clone());
        let group = group.ok_or_else(not_found)?;
        if !self.reaches(api, &group) {
            return Err(not_found());
        }
        self.facts.retain(|f| f.uuid != uuid);
        Ok(())
    }

    /// `clear_graph` and `DELETE /group/{id}`: the groups' nodes, facts and episodes, except on
    /// FalkorDB, where the answer is the same and only a group living in the default graph is
    /// deleted.
    pub(crate) fn delete_groups(&mut self, groups: &[String]) {
        let on_falkordb = self.on_falkordb();
        for group in groups {
            if !on_falkordb || group == FALKORDB_DEFAULT_DATABASE {
                self.delete_group(group);
            }
        }
    }
}
