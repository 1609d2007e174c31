//! Chats whose user paused memory (`/graphiti pause`): the Graphiti groups nothing is captured into
//! until they resume, in the state directory's `memory/paused.json`, shared by every process on it.
//! A change is made under the `memory-scopes` lock and written atomically, so two processes pausing
//! at once both count. A file that cannot be read stops capture everywhere rather than risk
//! capturing a paused chat.

use super::error::ControlError;
use crate::platform::files;
use crate::platform::locks::{LockError, Locks};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The lock held while the paused chats are read, changed and written.
pub const LOCK: &str = "memory-scopes";
const LOCK_LEASE: Duration = Duration::from_secs(10);
const LOCK_WAIT: Duration = Duration::from_secs(5);
/// Larger files are refused (a paused chat is one short line).
const MAX_FILE_BYTES: u64 = 4 << 20;

#[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PausedChats {
    /// Each paused Graphiti group, with when it was paused.
    pub groups: BTreeMap<String, Paused>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Paused {
    pub since_ms: u64,
}

fn path(state_dir: &Path) -> PathBuf {
    state_dir.join("memory").join("paused.json")
}

/// The paused chats; none when no chat was ever paused. An unreadable or foreign file is an error
/// naming it.
pub fn load(state_dir: &Path) -> Result<PausedChats, ControlError> {
    let path = path(state_dir);
    let unreadable = |why: String| {
        ControlError::State(format!(
            "{} cannot be read ({why}); fix or remove it (`/graphiti pause` in each chat to pause \
             again)",
            path.display()
        ))
    };
    match files::read_regular(&path, MAX_FILE_BYTES) {
        Ok(None) => Ok(PausedChats::default()),
        Ok(Some(bytes)) => serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string())),
        Err(e) => Err(unreadable(e.to_string())),
    }
}

/// Whether capture into `group` is paused. Err: the file cannot be read, so capture must not go on.
pub fn is_paused(state_dir: &Path, group: &str) -> Result<bool, ControlError> {
    load(state_dir).map(|paused| paused.groups.contains_key(group))
}

/// Pauses (`pause`) or resumes `group`; Ok(false) when it already was so.
pub fn set(
    state_dir: &Path,
    group: &str,
    pause: bool,
    now_ms: u64,
    locks: &mut dyn Locks,
) -> Result<bool, ControlError> {
    locks
        .acquire(LOCK, LOCK_LEASE, LOCK_WAIT)
        .map_err(|e| match e {
            LockError::Busy(why) => ControlError::Busy(format!(
                "another process is changing the paused chats: {why}"
            )),
            other => ControlError::State(format!("the paused chats could not be locked: {other}")),
        })?;
    let changed = change(state_dir, group, pause, now_ms);
    locks.release(LOCK);
    changed
}

fn change(state_dir: &Path, group: &str, pause: bool, now_ms: u64) -> Result<bool, ControlError> {
    let mut paused = load(state_dir)?;
    let changed = if pause {
        paused
            .groups
            .insert(group.to_string(), Paused { since_ms: now_ms })
            .is_none()
    } else {
        paused.groups.remove(group).is_some()
    };
    if changed {
        let bytes = serde_json::to_vec_pretty(&paused).expect("plain data serializes");
        files::write_atomically(&path(state_dir), &bytes)
            .map_err(|e| ControlError::State(format!("{}: {e}", path(state_dir).display())))?;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::locks::Unshared;

    #[test]
    fn a_chat_is_paused_until_it_resumes_and_others_stay_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(is_paused(dir.path(), "main-dm-ana"), Ok(false));
        assert_eq!(
            set(dir.path(), "main-dm-ana", true, 5, &mut Unshared),
            Ok(true)
        );
        assert_eq!(
            set(dir.path(), "main-dm-ana", true, 6, &mut Unshared),
            Ok(false)
        );
        assert_eq!(
            set(dir.path(), "telegram-7", true, 7, &mut Unshared),
            Ok(true)
        );
        assert_eq!(is_paused(dir.path(), "main-dm-ana"), Ok(true));
        assert_eq!(load(dir.path()).unwrap().groups["main-dm-ana"].since_ms, 5);
        assert_eq!(
            set(dir.path(), "main-dm-ana", false, 8, &mut Unshared),
            Ok(true)
        );
        assert_eq!(is_paused(dir.path(), "main-dm-ana"), Ok(false));
        assert_eq!(is_paused(dir.path(), "telegram-7"), Ok(true));
        assert_eq!(
            set(dir.path(), "nobody", false, 9, &mut Unshared),
            Ok(false)
        );
    }

    #[test]
    fn an_unreadable_file_stops_capture_and_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("memory")).unwrap();
        std::fs::write(dir.path().join("memory/paused.json"), "{\"groups\": [").unwrap();
        let why = is_paused(dir.path(), "main-dm-ana").unwrap_err();
        assert!(matches!(why, ControlError::State(_)), "{why}");
        assert!(
            why.to_string()
                .contains("memory/paused.json cannot be read"),
            "{why}"
        );
        assert!(
            set(dir.path(), "main-dm-ana", false, 1, &mut Unshared).is_err(),
            "a resume never overwrites what it could not read"
        );
    }

    #[test]
    fn a_busy_lock_changes_nothing() {
        struct Busy;
        impl Locks for Busy {
            fn acquire(&mut self, _: &str, _: Duration, _: Duration) -> Result<(), LockError> {
                Err(LockError::Busy("held by pid 7".into()))
            }
            fn release(&mut self, _: &str) {}
        }
        let dir = tempfile::tempdir().unwrap();
        let why = set(dir.path(), "g", true, 1, &mut Busy).unwrap_err();
        assert!(matches!(why, ControlError::Busy(_)), "{why}");
        assert!(
            why.to_string()
                .contains("another process is changing the paused chats"),
            "{why}"
        );
        assert_eq!(is_paused(dir.path(), "g"), Ok(false));
    }
}
