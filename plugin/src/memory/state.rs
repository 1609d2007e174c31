//! What an instance of the component keeps for memory between calls: the Graphiti client and its MCP
//! session, counts not yet saved and where they go, what it last read of the recall cache and the
//! spool, and what memory control keeps (`ControlState`).

use super::graphiti::{self, Client, Transport};
use super::mcp_session;
use super::recall_cache::CacheFile;
use super::spool::Depth;
use super::stats::{CountLog, CountsSeen, Stats};
use crate::config::GraphitiSettings;
use crate::platform::files::Kept;
use crate::platform::time;
use std::path::Path;

pub struct MemoryState {
    /// The Graphiti client, for the transport and URL it was made for (MCP keeps a session).
    pub client: Option<(Transport, String, Client)>,
    /// The MCP session last saved to (or resumed from) the state directory.
    pub saved_session: Option<String>,
    /// Counts not yet merged into the state directory's file.
    pub unsaved: Stats,
    pub unsaved_updates: u32,
    /// Names this instance's count logs apart from every other writer's (random), with
    /// `count_logs_started`.
    pub instance_id: u64,
    pub count_logs_started: u64,
    /// The count log this instance appends its counts to (see [`super::stats::append_counts`]).
    pub count_log: Option<CountLog>,
    /// When this instance last folded the count logs, and what `counts/` held then.
    pub folded_at_ms: u64,
    pub counts_seen: CountsSeen,
    /// When a tick last looked for temporary files a crash left in the spool.
    pub temp_swept_at_ms: u64,
    /// What memory control keeps between calls.
    pub control: ControlState,
    /// The recall cache as this instance last read or wrote it (used while its file is unchanged).
    pub kept_recall: Kept<CacheFile>,
    /// The capture spool's depth as last counted, with its directory's stamp then.
    pub spool_depth: Option<Depth>,
    /// The depth this instance last kept in `spool-depth.json` for the others.
    pub kept_spool_depth: Option<Depth>,
    /// What the last sending pass fed of an import under way.
    pub import_fed: Option<crate::memory::import::Fed>,
}

/// What memory control (`super::control`) keeps between calls.
#[derive(Default)]
pub struct ControlState {
    /// When a tick last looked for the late captures of confirmed forgets.
    pub forget_checked_at_ms: u64,
}

impl MemoryState {
    pub fn new() -> MemoryState {
        MemoryState {
            client: None,
            saved_session: None,
            unsaved: Stats::default(),
            unsaved_updates: 0,
            instance_id: {
                use std::hash::{BuildHasher, Hasher};
                std::collections::hash_map::RandomState::new()
                    .build_hasher()
                    .finish()
            },
            count_logs_started: 0,
            count_log: None,
            folded_at_ms: 0,
            counts_seen: CountsSeen::default(),
            temp_swept_at_ms: 0,
            control: ControlState::default(),
            kept_recall: Kept::new(1),
            spool_depth: None,
            kept_spool_depth: None,
            import_fed: None,
        }
    }
}

impl MemoryState {
    /// The client for the configured Graphiti: made again when the transport or URL changed, then
    /// continuing the MCP session the state directory keeps for that URL.
    pub fn client(&mut self, settings: &GraphitiSettings, state_dir: Option<&Path>) -> &mut Client {
        let (transport, url) = (settings.transport, &settings.url);
        if !matches!(&self.client, Some((t, u, _)) if *t == transport && u == url) {
            let mut client = graphiti::connect(transport, url);
            if let Some(dir) = state_dir
                && let Some(session) = mcp_session::load(dir, url, time::now_ms())
            {
                client.resume_session(session.clone());
                self.saved_session = Some(session);
            }
            self.client = Some((transport, url.clone(), client));
        }
        &mut self.client.as_mut().expect("set above").2
    }

    /// Saves the client's MCP session for the next process when it is new; trouble saving is a note.
    pub fn save_session(&mut self, state_dir: Option<&Path>, notes: &mut Vec<String>) {
        let (Some(dir), Some((_, url, client))) = (state_dir, &self.client) else {
            return;
        };
        let Some(session) = client.session() else {
            return;
        };
        if self.saved_session.as_deref() == Some(session) {
            return;
        }
        match mcp_session::save(dir, url, session, time::now_ms()) {
            Ok(()) => self.saved_session = Some(session.to_string()),
            Err(e) => notes.push(e),
        }
    }
}

impl Default for MemoryState {
    fn default() -> Self {
        Self::new()
    }
}
