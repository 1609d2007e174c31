//! Per-conversation routing state in the state directory: what the previous turn injected, when, how
//! many turns in a row carried it and the entity names those turns named, for conversation
//! stickiness. Files, so every instance of the component sees it; each instance keeps what it last
//! read or wrote in memory while the file is unchanged ([`Kept`]), and writes in place.

use crate::platform::files::{Kept, ReadError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Sessions whose state an instance keeps in memory.
pub const KEPT_SESSIONS: usize = 256;
/// A larger session file is not read (a state is a few hundred bytes).
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// One session's file. Fields after `intent` came later: a file without them still reads (each is
/// then unknown, and routing says what it does about that).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct SessionState {
    pub session_key: String,
    /// The intent injected on the previous turn, if any.
    pub intent: Option<String>,
    /// When that turn ran, Unix milliseconds (the host's time, read once per turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected_at_ms: Option<u64>,
    /// Turns in a row that carried `intent` without a keyword, that turn included (0: it matched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_turns: Option<u32>,
    /// The entity names (lower case) of the turns that injected `intent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub named: Option<Vec<String>>,
}

impl SessionState {
    /// A session whose previous turn injected nothing.
    pub fn nothing(session_key: &str) -> SessionState {
        SessionState {
            session_key: session_key.into(),
            ..SessionState::default()
        }
    }
}

/// A file name for a session key: a stable hash (keys are arbitrary text) plus a readable prefix.
pub fn file_for(dir: &Path, session_key: &str) -> PathBuf {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325; // FNV-1a: stable across builds and hosts
    for byte in session_key.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    let readable: String = session_key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(32)
        .collect();
    dir.join(format!("{readable}-{hash:016x}.json"))
}

/// The session's state when its previous turn injected a pack; None when it injected none (or the
/// session is new).
pub fn previous_turn(
    kept: &mut Kept<SessionState>,
    dir: &Path,
    session_key: &str,
) -> Result<Option<SessionState>, String> {
    let path = file_for(&dir.join("routing"), session_key);
    let state = kept.read(&path, MAX_FILE_BYTES).map_err(|e| match e {
        ReadError::Io(e) => format!("cannot read {}: {e}", path.display()),
        ReadError::Parse(e) => {
            format!("ignoring corrupt session state {}: {e}", path.display())
        }
    })?;
    // A hash collision must not carry one conversation's pack into another.
    Ok(state
        .filter(|s| s.session_key == session_key && s.intent.is_some())
        .cloned())
}

/// Records this turn's state; written only when it differs from `previous`, what the turn read.
pub fn remember(
    kept: &mut Kept<SessionState>,
    dir: &Path,
    previous: Option<&SessionState>,
    state: &SessionState,
) -> Result<(), String> {
    let unchanged = match previous {
        Some(previous) => previous == state,
        None => *state == SessionState::nothing(&state.session_key),
    };
    if unchanged {
        return Ok(());
    }
    let path = file_for(&dir.join("routing"), &state.session_key);
    let bytes = serde_json::to_vec(state).unwrap_or_default();
    kept.write(&path, &bytes, state.clone())
        .map_err(|e| format!("cannot write session state {}: {e}", path.display()))
}

/// What an instance keeps for routing between calls: the session states as it last read or wrote
/// them (each used while its file is unchanged).
pub struct RoutingState {
    pub kept_sessions: Kept<SessionState>,
}

impl Default for RoutingState {
    fn default() -> Self {
        RoutingState {
            kept_sessions: Kept::new(KEPT_SESSIONS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_before_the_stickiness_fields_still_reads() {
        let old = r#"{"session_key":"s1","intent":"content_tweet"}"#;
        let state: SessionState = serde_json::from_slice(old.as_bytes()).unwrap();
        assert_eq!(state.intent.as_deref(), Some("content_tweet"));
        assert_eq!(
            (state.injected_at_ms, state.carried_turns, state.named),
            (None, None, None)
        );
    }
}
