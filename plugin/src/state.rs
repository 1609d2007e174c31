//! Per-conversation routing state in the state directory: which intent the previous turn injected,
//! for conversation stickiness. Files, not memory, so every instance of the component sees it.

use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct SessionState {
    pub session_key: String,
    /// The intent injected on the previous turn, if any.
    pub intent: Option<String>,
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

pub fn previous_intent(dir: &Path, session_key: &str) -> Result<Option<String>, String> {
    let path = file_for(&dir.join("routing"), session_key);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let state: SessionState = serde_json::from_str(&text)
        .map_err(|e| format!("ignoring corrupt session state {}: {e}", path.display()))?;
    // A hash collision must not carry one conversation's pack into another.
    Ok(state.intent.filter(|_| state.session_key == session_key))
}

/// Records this turn's intent; written only when it differs from `previous`, what the turn read.
pub fn remember(
    dir: &Path,
    session_key: &str,
    previous: Option<&str>,
    intent: Option<&str>,
) -> Result<(), String> {
    if previous == intent {
        return Ok(());
    }
    let path = file_for(&dir.join("routing"), session_key);
    let state = SessionState {
        session_key: session_key.into(),
        intent: intent.map(str::to_string),
    };
    crate::files::write_atomically(&path, &serde_json::to_vec(&state).unwrap_or_default())
        .map_err(|e| format!("cannot write session state {}: {e}", path.display()))
}
