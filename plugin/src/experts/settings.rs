//! The `experts` section of the plugin settings: plain data, read by the configuration and used by
//! the expert sessions (it depends on nothing above it).

use serde::Deserialize;
use std::collections::BTreeMap;

/// The `experts` section of the settings.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ExpertsSettings {
    pub enabled: bool,
    /// Session keys or agent ids → expert names, for sessions not labelled `expert:<name>`.
    pub sessions: BTreeMap<String, String>,
    /// The runtime workspace as agents see it (the host's path of `/workspace`), for the prompt.
    pub workspace_dir: String,
    /// MCP servers the host has configured; bindings to other servers are errors. Absent: unchecked.
    pub known_servers: Option<Vec<String>>,
    pub scratch_retention_days: u64,
    /// The main session's key: where results, escalations and approval requests are delivered, and
    /// where `session: main` triggers run.
    pub main_session_key: String,
    /// The bearer token every webhook trigger requires (`Authorization: Bearer …`); none refuses
    /// every webhook with 503 until one is set.
    pub webhook_token: Option<String>,
    /// Largest webhook body accepted, in bytes.
    pub webhook_max_bytes: usize,
    /// How long a dedupe key is remembered, in hours.
    pub dedupe_window_hours: u64,
    /// Runs started at once at most, across experts.
    pub max_running: usize,
    /// `<expert>/<trigger>` → the channel names whose inbound messages fire that channel trigger;
    /// a channel trigger not listed here never fires.
    pub channels: BTreeMap<String, Vec<String>>,
}

impl Default for ExpertsSettings {
    fn default() -> Self {
        ExpertsSettings {
            enabled: true,
            sessions: BTreeMap::new(),
            workspace_dir: "~/.openclaw/workspace".into(),
            known_servers: None,
            scratch_retention_days: 7,
            main_session_key: "agent:main:main".into(),
            webhook_token: None,
            webhook_max_bytes: 256 * 1024,
            dedupe_window_hours: 24,
            max_running: 4,
            channels: BTreeMap::new(),
        }
    }
}
