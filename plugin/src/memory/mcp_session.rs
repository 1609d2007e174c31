//! The MCP session id kept in the state directory, so that each CLI process does not pay the
//! `initialize` handshake again: a process resumes the last one for the same endpoint. A session the
//! server no longer knows is answered `404` and set up anew (the client does that), so a stale file
//! costs one round trip, never an error.

use serde::{Deserialize, Serialize};
use std::path::Path;

const FILE: &str = "graphiti-mcp-session.json";
/// Older sessions are not resumed: servers restart, and a fresh handshake is cheap when idle.
const MAX_AGE_MS: u64 = 60 * 60 * 1000;
/// Larger files are not read (the file is a few hundred bytes).
const MAX_FILE_BYTES: u64 = 4096;

#[derive(Debug, Deserialize, Serialize, PartialEq)]
struct SavedSession {
    endpoint: String,
    session: String,
    saved_ms: u64,
}

/// The session saved for `endpoint`, when there is one young enough; anything unreadable is none.
pub fn load(state_dir: &Path, endpoint: &str, now_ms: u64) -> Option<String> {
    let bytes =
        crate::platform::files::read_regular(&state_dir.join(FILE), MAX_FILE_BYTES).ok()??;
    let saved: SavedSession = serde_json::from_slice(&bytes).ok()?;
    let young = now_ms.saturating_sub(saved.saved_ms) <= MAX_AGE_MS;
    (saved.endpoint == endpoint && young && !saved.session.is_empty()).then_some(saved.session)
}

/// Saves the session for `endpoint`; failing to is only a lost shortcut, so the error is a note.
pub fn save(state_dir: &Path, endpoint: &str, session: &str, now_ms: u64) -> Result<(), String> {
    let saved = SavedSession {
        endpoint: endpoint.to_string(),
        session: session.to_string(),
        saved_ms: now_ms,
    };
    let path = state_dir.join(FILE);
    crate::platform::files::write_atomically(&path, &serde_json::to_vec(&saved).unwrap_or_default())
        .map_err(|e| format!("cannot save the MCP session in {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_resumed_for_its_endpoint_while_young() {
        let dir_temp = crate::platform::files::temp_dir("mcp-session");
        let dir = dir_temp.path();
        save(dir, "http://g:8000/mcp", "abc", 1_000).unwrap();
        assert_eq!(
            load(dir, "http://g:8000/mcp", 2_000).as_deref(),
            Some("abc")
        );
        assert_eq!(load(dir, "http://other:8000/mcp", 2_000), None);
        assert_eq!(load(dir, "http://g:8000/mcp", 1_000 + MAX_AGE_MS + 1), None);
        std::fs::write(dir.join(FILE), b"{not json").unwrap();
        assert_eq!(load(dir, "http://g:8000/mcp", 2_000), None);
    }
}
