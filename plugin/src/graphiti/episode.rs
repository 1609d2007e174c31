//! A turn or a note to store, as both APIs need it, and how stored episodes are recognised by name.

use serde::Deserialize;
use serde_json::Value;

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

/// Whether episode `name` is among `names` as either API stores it (REST stores each message of a
/// turn as its own episode, `<episode>:<role>`).
pub fn lists(names: &[String], name: &str) -> bool {
    names.iter().any(|n| {
        n == name
            || n.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(':'))
    })
}

/// The `name` of each episode object.
pub(super) fn names_of(episodes: &[Value]) -> Vec<String> {
    episodes
        .iter()
        .filter_map(|e| e.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}
