//! What an import sends: one entry of a file or one past turn, named so that it goes once.

use super::workspace::FileKind;
use crate::memory::spool;

/// An entry longer than this is skipped, named: memory-core's entries are a few lines.
pub const MAX_ITEM_CHARS: usize = 8_000;

/// One entry or past turn to remember, named, timed and given its group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub name: String,
    /// The file in the workspace it comes from (`memory/2026-05-01.md`), or the session.
    pub source: String,
    pub kind: FileKind,
    /// The entry, or a past turn's user message.
    pub text: String,
    /// A past turn's visible reply (empty for a file's entry).
    pub assistant: String,
    pub group_id: String,
    pub user_name: Option<String>,
    /// Its original time: a daily note's date, a directive's observed date, else the file's
    /// modification time.
    pub reference_ms: u64,
}

/// Made of the group, the file and the text: the same entry imported again has the same name.
pub fn item_name(group_id: &str, source: &str, text: &str) -> String {
    let digest = spool::stable_hash(&format!("{group_id}\n{source}\n{text}"));
    format!("openclaw-import-{group_id}-{digest:016x}")
}
