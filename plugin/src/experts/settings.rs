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
}

impl Default for ExpertsSettings {
    fn default() -> Self {
        ExpertsSettings {
            enabled: true,
            sessions: BTreeMap::new(),
            workspace_dir: "~/.openclaw/workspace".into(),
            known_servers: None,
            scratch_retention_days: 7,
        }
    }
}
