//! Confirmed forgets that may have missed captures Graphiti had accepted but not yet ingested (or
//! that were sent with no answer), looked for again for a while: `memory/forget-follow-ups.json`.
//! What a follow-up needs to recognise them (the request's word stems, the episode names) is kept
//! only while it looks; once it is done, only what it found stays, for `status`, for a day.

use super::{ControlError, locked, memory_dir};
use crate::platform::files;
use crate::platform::locks::Locks;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How long after a confirmed forget the captures Graphiti may still have been ingesting are
/// looked for.
pub const FOLLOW_UP_MS: u64 = 30 * 60 * 1000;
/// How long a finished follow-up's findings stay for `status`.
const FINDINGS_KEPT_MS: u64 = 24 * 60 * 60 * 1000;
const MAX_FILE_BYTES: u64 = 4 << 20;

/// A confirmed forget that may have missed captures Graphiti had accepted but not yet ingested (or
/// that were sent with no answer): looked for again until `until_ms`, and deleted when found.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FollowUp {
    pub forget: String,
    pub group: String,
    /// The stems of the request's words: an accepted capture is the forget's when it matches them
    /// well (none: only the episodes named).
    #[serde(default)]
    pub stems: Vec<String>,
    /// Names of the episodes the forget took: sent with no answer, or sent before it was
    /// confirmed. Deleted when listed.
    pub names: Vec<String>,
    /// Names of the group's captures Graphiti had accepted when the forget was proposed.
    pub accepted: Vec<String>,
    pub until_ms: u64,
    /// What the follow-up deleted so far, and what it could not.
    pub deleted: Vec<String>,
    pub not_removed: Vec<(String, String)>,
    /// The request's words as an earlier release kept them: read as stems.
    #[serde(default, skip_serializing)]
    query: Option<String>,
}

impl FollowUp {
    pub fn is_looking(&self, now_ms: u64) -> bool {
        now_ms < self.until_ms
    }

    /// Whether it still keeps what it looks by (the request's stems, episode names).
    pub fn keeps_what_it_looks_by(&self) -> bool {
        !self.stems.is_empty() || !self.names.is_empty() || !self.accepted.is_empty()
    }

    /// Forgets what it looked for by (the request's words, episode names); keeps what it found.
    fn finish(&mut self) {
        self.stems.clear();
        self.names.clear();
        self.accepted.clear();
    }
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FollowUps {
    pub follow_ups: Vec<FollowUp>,
}

fn path(state_dir: &Path) -> PathBuf {
    memory_dir(state_dir).join("forget-follow-ups.json")
}

/// The follow-ups kept, finished ones included for a day; none when the file is missing. Err: it
/// cannot be read.
pub fn follow_ups(state_dir: &Path) -> Result<FollowUps, ControlError> {
    let path = path(state_dir);
    match files::read_regular(&path, MAX_FILE_BYTES) {
        Ok(None) => Ok(FollowUps::default()),
        Ok(Some(bytes)) => {
            let mut kept: FollowUps = serde_json::from_slice(&bytes).map_err(|e| {
                ControlError::State(format!("{} cannot be read ({e})", path.display()))
            })?;
            for follow_up in &mut kept.follow_ups {
                if let Some(query) = follow_up.query.take() {
                    follow_up.stems = super::words::Request::of(&query, &[]).stems();
                }
            }
            Ok(kept)
        }
        Err(e) => Err(ControlError::State(format!(
            "{} cannot be read: {e}",
            path.display()
        ))),
    }
}

impl FollowUp {
    /// A follow-up of forget `forget` in `group`, looking until `until_ms`.
    pub fn new(forget: &str, group: &str, until_ms: u64) -> FollowUp {
        FollowUp {
            forget: forget.to_string(),
            group: group.to_string(),
            stems: vec![],
            names: vec![],
            accepted: vec![],
            until_ms,
            deleted: vec![],
            not_removed: vec![],
            query: None,
        }
    }
}

/// Whether any follow-up file exists (one stat: ticks ask this every time).
pub fn has_follow_ups(state_dir: &Path) -> bool {
    path(state_dir).exists()
}

/// Changes the follow-ups under the lock: `change` gets them all (finished ones emptied of what
/// they looked by, and dropped once a day old) and saves what it leaves; the file goes when none
/// is left, and is not written when nothing changed.
pub fn change_follow_ups<T>(
    state_dir: &Path,
    now_ms: u64,
    locks: &mut dyn Locks,
    change: impl FnOnce(&mut Vec<FollowUp>) -> T,
) -> Result<T, ControlError> {
    locked(locks, || {
        let before = follow_ups(state_dir).unwrap_or_default();
        let mut kept = before.follow_ups.clone();
        kept.retain(|f| now_ms < f.until_ms + FINDINGS_KEPT_MS);
        for finished in kept.iter_mut().filter(|f| !f.is_looking(now_ms)) {
            finished.finish();
        }
        let out = change(&mut kept);
        let path = path(state_dir);
        if kept.is_empty() {
            let _ = std::fs::remove_file(&path);
        } else if kept != before.follow_ups {
            let bytes = serde_json::to_vec_pretty(&FollowUps { follow_ups: kept })
                .expect("follow-ups serialise");
            files::write_atomically(&path, &bytes).map_err(|e| {
                ControlError::State(format!("cannot write {}: {e}", path.display()))
            })?;
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::locks::Unshared;

    #[test]
    fn a_finished_follow_up_keeps_what_it_found_and_not_what_it_looked_for() {
        let dir = tempfile::tempdir().unwrap();
        let mut follow_up = FollowUp::new("0123456789abcdef", "main-dm-ana", 1_000);
        follow_up.stems = vec!["therapist".into()];
        follow_up.names = vec!["openclaw-main-dm-ana-1-aa".into()];
        follow_up.accepted = vec!["openclaw-main-dm-ana-2-bb".into()];
        follow_up.deleted = vec!["e1".into()];
        change_follow_ups(dir.path(), 500, &mut Unshared, |all| all.push(follow_up)).unwrap();
        let file = path(dir.path());
        assert!(
            std::fs::read_to_string(&file)
                .unwrap()
                .contains("therapist")
        );
        change_follow_ups(dir.path(), 1_000, &mut Unshared, |_| ()).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("therapist") && !text.contains("openclaw-main"),
            "{text}"
        );
        assert!(text.contains("\"e1\""), "{text}");
        change_follow_ups(dir.path(), 1_000 + FINDINGS_KEPT_MS, &mut Unshared, |_| ()).unwrap();
        assert!(!file.exists());
    }

    #[test]
    fn an_earlier_releases_follow_up_is_read_with_its_words_as_stems() {
        let dir = tempfile::tempdir().unwrap();
        let old = r#"{"follow_ups": [{"forget": "0123456789abcdef", "group": "g", "query": "Therapists",
            "names": [], "accepted": ["n1"], "until_ms": 9, "deleted": [], "not_removed": []}]}"#;
        std::fs::create_dir_all(path(dir.path()).parent().unwrap()).unwrap();
        std::fs::write(path(dir.path()), old).unwrap();
        let read = follow_ups(dir.path()).unwrap();
        assert_eq!(read.follow_ups[0].stems, ["therapist"]);
    }
}
