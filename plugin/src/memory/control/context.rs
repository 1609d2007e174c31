//! What memory control works with, lent by the engine for one operation: the settings in force, the
//! state directory, the memory state (the Graphiti client, the recall cache, when forgets were last
//! followed up), the host's HTTP and locks, and the turns the engine records (read and pruned
//! through [`TurnRecords`], which the engine implements).

use super::error::ControlError;
use crate::config::PluginSettings;
use crate::memory::falkordb::{Database, Falkor, group_graph};
use crate::memory::graphiti::Client;
use crate::memory::graphiti::http::Deadline;
use crate::memory::graphiti::http::Http;
use crate::memory::group_id;
use crate::memory::state::MemoryState;
use crate::platform::api::HookContext;
use crate::platform::locks::Locks;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub struct Context<'a> {
    pub settings: &'a PluginSettings,
    pub state_dir: Option<&'a Path>,
    pub memory: &'a mut MemoryState,
    pub http: &'a mut dyn Http,
    pub database: &'a mut dyn Database,
    pub locks: &'a mut dyn Locks,
    pub turns: &'a mut dyn TurnRecords,
}

/// The turns the engine records, as memory control reads and prunes them.
pub trait TurnRecords {
    /// Every session's last turn, in no order.
    fn sessions(&self) -> Result<Vec<RecordedSession>, ControlError>;
    /// The session's kept turns, oldest first.
    fn recent(&self, session_key: &str) -> Result<Vec<RecentTurn>, ControlError>;
    /// Marks the session's last turn as not the user's to remember (`why`): nothing of it is
    /// captured.
    fn keep_out_of_capture(&mut self, session_key: &str, why: &str) -> Result<(), ControlError>;
    /// Removes the turns whose memories went to one of `groups` and whose prompt or injected
    /// blocks `mentions` what is forgotten: how many, and what could not be removed.
    fn forget_groups(
        &mut self,
        groups: &[String],
        mentions: &dyn Fn(&str) -> bool,
    ) -> (usize, Vec<ControlError>);
    /// How many turns of how many sessions are kept, in words.
    fn retention(&self) -> String;
}

/// A session's last turn, as the chats listing and a whole chat's forget read it.
pub struct RecordedSession {
    pub session_key: String,
    pub at_ms: u64,
    /// The group its memories went to.
    pub group_id: Option<String>,
    /// Its conversation as its host named it (or as an older record's session key says).
    pub ctx: HookContext,
    /// The turn was the user's own (not a heartbeat, a cron run, ...).
    pub users: bool,
}

/// A past turn of a session, as `memories` and `export` show it.
pub struct RecentTurn {
    pub at_ms: u64,
    pub prompt: String,
    pub recall: String,
    pub packs: Vec<String>,
    pub trace: Vec<String>,
    pub injected: Option<String>,
    pub captured: Captured,
    /// The rules' scores, as the export writes them.
    pub scores: serde_json::Value,
}

/// What `agent-end` did with a turn.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Captured {
    /// Spooled as this episode: then delivered, waiting or set aside.
    Spooled(String),
    /// Not captured, and why.
    Skipped(String),
    /// Lost before the spool, and why.
    Dropped(String),
}

impl Context<'_> {
    /// The client for the configured Graphiti, and the host's HTTP to drive it.
    pub fn graphiti(&mut self) -> (&mut Client, &mut dyn Http) {
        let client = self.memory.client(&self.settings.graphiti, self.state_dir);
        (client, &mut *self.http)
    }

    /// The client, once an MCP server has been asked which database it runs on (the listing and
    /// the deletes miss a group's own graph on FalkorDB); a failed ask leaves it unknown.
    pub fn graphiti_knowing_database(
        &mut self,
        deadline: Deadline,
    ) -> (&mut Client, &mut dyn Http) {
        let mcp = self.settings.graphiti.transport == crate::config::Transport::Mcp;
        let (client, http) = self.graphiti();
        if mcp && client.database().is_none() {
            let _ = client.health(http, deadline);
        }
        (client, http)
    }

    /// The FalkorDB behind Graphiti, for one operation, when the settings name it.
    pub fn falkor(&mut self, deadline: Deadline) -> Option<Falkor<'_>> {
        let origin = self.settings.graphiti.falkordb.configured()?;
        Some(Falkor {
            db: &mut *self.database,
            origin,
            deadline,
        })
    }

    /// The group's `max` most recent episodes: read in FalkorDB itself when the settings name it
    /// (there Graphiti's MCP server lists only its default graph), else Graphiti's listing.
    pub fn recent_episodes(
        &mut self,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> crate::memory::graphiti::Result<Option<Vec<serde_json::Value>>> {
        if let Some(mut falkor) = self.falkor(deadline) {
            return group_graph::episodes(&mut falkor, group, max)
                .map(Some)
                .map_err(|e| e.as_graphiti());
        }
        let (client, http) = self.graphiti();
        client.recent_episodes(http, group, max, deadline)
    }

    /// Saves the client's MCP session for the next process when it is new (trouble saving is
    /// left unsaid: the next call saves it again).
    pub fn save_graphiti_session(&mut self) {
        self.memory.save_session(self.state_dir, &mut Vec::new());
    }

    /// The Graphiti group of the conversation in `ctx`.
    pub fn group(&self, ctx: &HookContext) -> Result<String, ControlError> {
        group(self.settings, ctx)
    }

    /// The server has no entity search (REST).
    pub fn no_entity_search(&self) -> bool {
        self.settings.graphiti.transport == crate::config::Transport::Rest
    }

    /// The state directory, or the failure that says what its absence leaves undone.
    pub fn state_dir_for(&self, undone: &'static str) -> Result<&Path, ControlError> {
        self.state_dir.ok_or(ControlError::NoStateDir(undone))
    }
}

/// The Graphiti group of the conversation in `ctx`, unless the settings keep it out of memory
/// or its ids give none.
pub fn group(settings: &PluginSettings, ctx: &HookContext) -> Result<String, ControlError> {
    if let Some(why) = settings.skip.kept_out(ctx) {
        return Err(ControlError::KeptOut(why));
    }
    group_id::group_id(&settings.graphiti.group_id, ctx).map_err(ControlError::NoGroup)
}
