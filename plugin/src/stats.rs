//! Counters for `status` (the PRD's post-deploy monitoring), kept in the state directory so they
//! survive restarts and are shared by every instance and process. An instance counts in memory and
//! merges its counts into the file under the `stats` lock (on `tick` and `status`), so two processes
//! never lose each other's counts and a turn costs no file I/O for them. `agent-end`, whose counts
//! must be on disk when it returns, and any call after a few dozen updates take no lock: they write
//! the counts to a file of their own in `counts/`, which the next merge folds into the file (see
//! [`fold_into_file`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Stats {
    /// User turns routed.
    pub turns: u64,
    pub recalls: u64,
    pub recall_fallbacks: u64,
    /// Turns whose search failed and a cached answer stood in.
    pub recalls_cached: u64,
    pub recalls_skipped: u64,
    /// Turns that got a pack, by primary pack id.
    pub packs: BTreeMap<String, u64>,
    pub captures_spooled: u64,
    pub captures_skipped: u64,
    /// Turns not captured because the spool was full or could not be written.
    pub captures_dropped: u64,
    pub episodes_sent: u64,
    pub send_failures: u64,
    /// Sends whose outcome was unknown (no answer in time, the connection broke after sending).
    pub sends_in_doubt: u64,
    /// In-doubt sends Graphiti was then seen to have stored.
    pub doubts_confirmed: u64,
    /// In-doubt sends sent again once Graphiti was seen to lack them: each may be a duplicate.
    pub resent_after_doubt: u64,
    /// Entries set aside (Graphiti rejected them, or they could not be read).
    pub set_aside: u64,
    pub last_error: Option<String>,
    /// When `last_error` happened (unix ms).
    pub last_error_at_ms: u64,
    /// When Graphiti last accepted an episode (unix ms).
    pub last_sent_at_ms: u64,
    /// Said when the counters had to start again (their file was unreadable).
    pub restarted: Option<String>,
    /// The files of `counts/` already added to these counters and not yet seen removed: a merge
    /// that stopped between saving this file and removing them does not add them twice.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<String>,
}

impl Stats {
    /// Adds another instance's counts to these.
    pub fn merge(&mut self, other: &Stats) {
        for (mine, theirs) in [
            (&mut self.turns, other.turns),
            (&mut self.recalls, other.recalls),
            (&mut self.recall_fallbacks, other.recall_fallbacks),
            (&mut self.recalls_cached, other.recalls_cached),
            (&mut self.recalls_skipped, other.recalls_skipped),
            (&mut self.captures_spooled, other.captures_spooled),
            (&mut self.captures_skipped, other.captures_skipped),
            (&mut self.captures_dropped, other.captures_dropped),
            (&mut self.episodes_sent, other.episodes_sent),
            (&mut self.send_failures, other.send_failures),
            (&mut self.sends_in_doubt, other.sends_in_doubt),
            (&mut self.doubts_confirmed, other.doubts_confirmed),
            (&mut self.resent_after_doubt, other.resent_after_doubt),
            (&mut self.set_aside, other.set_aside),
        ] {
            *mine += theirs;
        }
        for (pack, n) in &other.packs {
            *self.packs.entry(pack.clone()).or_default() += n;
        }
        if other.last_error.is_some() && other.last_error_at_ms >= self.last_error_at_ms {
            self.last_error.clone_from(&other.last_error);
            self.last_error_at_ms = other.last_error_at_ms;
        }
        self.last_sent_at_ms = self.last_sent_at_ms.max(other.last_sent_at_ms);
        if other.restarted.is_some() {
            self.restarted.clone_from(&other.restarted);
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Stats::default()
    }

    /// The last error, unless Graphiti has accepted an episode since.
    pub fn current_error(&self) -> Option<&str> {
        self.last_error
            .as_deref()
            .filter(|_| self.last_error_at_ms >= self.last_sent_at_ms)
    }
}

fn path(state_dir: &Path) -> PathBuf {
    state_dir.join("stats.json")
}

/// The stored counters. An unreadable file is kept aside as `stats.json.corrupt` and the counters
/// start again, saying so (`restarted`), rather than silently from zero.
pub fn load(state_dir: &Path) -> Stats {
    let file = path(state_dir);
    let Ok(bytes) = crate::files::read(&file) else {
        return Stats::default();
    };
    match serde_json::from_slice(&bytes) {
        Ok(stats) => stats,
        Err(e) => {
            let aside = state_dir.join("stats.json.corrupt");
            let kept = fs::rename(&file, &aside).is_ok();
            Stats {
                restarted: Some(format!(
                    "counters started again at {}: stats.json was unreadable ({e}){}",
                    crate::time::iso8601(crate::time::now_ms()),
                    if kept {
                        "; kept as stats.json.corrupt"
                    } else {
                        ""
                    }
                )),
                ..Stats::default()
            }
        }
    }
}

fn counts_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("counts")
}

/// A count file that does not parse is being written (it is created, then written in one call), or
/// its writer was killed between the two: removed once it is this old.
const UNREADABLE_COUNTS_KEPT_MS: u64 = 10 * 60 * 1000;

/// Saves one turn's `counts` where the next merge finds them, without the lock: a new file of
/// `counts/` whose name no other writer uses (`unique`: the writer's, e.g. a random instance id and
/// a sequence number), written in one call; the file is one of the state directory's spares when
/// one is ready (see `spare_files`).
pub fn save_counts(state_dir: &Path, unique: &str, counts: &Stats) -> Result<(), String> {
    let dir = counts_dir(state_dir);
    let file = dir.join(format!("{unique}.json"));
    let bytes = serde_json::to_vec(counts).unwrap_or_default();
    let write = || -> std::io::Result<()> {
        let out = crate::spare_files::take_or_create(state_dir, &file)?;
        crate::files::write_all_at(&out, &bytes, 0)
    };
    write()
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::NotFound => fs::create_dir_all(&dir).and_then(|()| write()),
            _ => Err(e),
        })
        .map_err(|e| format!("cannot save the counts to {}: {e}", file.display()))
}

/// Adds `counts` and every count file of `counts/` not yet added to the stored counters, saves
/// them (with the names of the files added), then removes those files. The caller holds the
/// `stats` lock. `fold_at_ms`: the time, for removing count files left unreadable long enough;
/// None: `counts` only, the count files are left for a later merge.
pub fn fold_into_file(
    state_dir: &Path,
    counts: &Stats,
    fold_at_ms: Option<u64>,
) -> Result<(), String> {
    let mut stats = load(state_dir);
    stats.merge(counts);
    let Some(now_ms) = fold_at_ms else {
        let file = path(state_dir);
        return crate::files::write_atomically(
            &file,
            &serde_json::to_vec(&stats).unwrap_or_default(),
        )
        .map_err(|e| format!("cannot save the counters to {}: {e}", file.display()));
    };
    let listed = count_files(state_dir);
    // Folded before, and still there: a merge stopped before removing them. Not added again.
    let already: Vec<String> = std::mem::take(&mut stats.folded)
        .into_iter()
        .filter(|name| listed.iter().any(|(listed, _)| listed == name))
        .collect();
    let mut unreadable_old = Vec::new();
    for (name, path) in &listed {
        if already.contains(name) {
            continue;
        }
        match crate::files::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Stats>(&b).ok())
        {
            Some(turn) => {
                stats.merge(&turn);
                stats.folded.push(name.clone());
            }
            None if older_than(path, now_ms, UNREADABLE_COUNTS_KEPT_MS) => {
                unreadable_old.push(path.clone());
            }
            None => {}
        }
    }
    stats.folded.extend(already);
    let file = path(state_dir);
    crate::files::write_atomically(&file, &serde_json::to_vec(&stats).unwrap_or_default())
        .map_err(|e| format!("cannot save the counters to {}: {e}", file.display()))?;
    for (name, path) in &listed {
        if stats.folded.contains(name) {
            let _ = fs::remove_file(path);
        }
    }
    for path in unreadable_old {
        let _ = fs::remove_file(path);
    }
    Ok(())
}

/// Whether `counts/` holds anything to fold.
pub fn has_count_files(state_dir: &Path) -> bool {
    crate::files::list_names(&counts_dir(state_dir)).is_ok_and(|names| !names.is_empty())
}

/// The count files, by name.
fn count_files(state_dir: &Path) -> Vec<(String, PathBuf)> {
    let dir = counts_dir(state_dir);
    let Ok(names) = crate::files::list_names(&dir) else {
        return vec![];
    };
    names
        .into_iter()
        .filter(|name| name.ends_with(".json"))
        .map(|name| {
            let path = dir.join(&name);
            (name, path)
        })
        .collect()
}

fn older_than(path: &Path, now_ms: u64, age_ms: u64) -> bool {
    fs::symlink_metadata(path)
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .is_some_and(|t| now_ms.saturating_sub(t.as_millis() as u64) > age_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        crate::files::test_scratch(&format!("stats-{name}"))
    }

    fn turn(captures: u64) -> Stats {
        Stats {
            turns: 1,
            captures_spooled: captures,
            ..Stats::default()
        }
    }

    #[test]
    fn count_files_are_folded_once_even_when_a_merge_stopped_before_removing_them() {
        let dir = scratch("fold");
        save_counts(&dir, "a-1", &turn(1)).unwrap();
        save_counts(&dir, "b-1", &turn(2)).unwrap();
        assert!(
            save_counts(&dir, "b-1", &turn(5)).is_err(),
            "a name is never reused"
        );
        let now = crate::time::now_ms();
        fold_into_file(&dir, &turn(0), Some(now)).unwrap();
        let stats = load(&dir);
        assert_eq!((stats.turns, stats.captures_spooled), (3, 3));
        assert_eq!(count_files(&dir).len(), 0, "folded files removed");
        // A merge that saved the counters but stopped before removing a file: it is not added twice.
        fs::write(
            dir.join("counts/a-1.json"),
            serde_json::to_vec(&turn(1)).unwrap(),
        )
        .unwrap();
        fold_into_file(&dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(load(&dir).captures_spooled, 3);
        assert_eq!(count_files(&dir).len(), 0);
        // Once gone, its name is dropped: a later file of that name is new counts.
        fold_into_file(&dir, &Stats::default(), Some(now)).unwrap();
        assert!(load(&dir).folded.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_count_file_being_written_waits_and_an_old_unreadable_one_is_removed() {
        let dir = scratch("unreadable");
        fs::create_dir_all(dir.join("counts")).unwrap();
        fs::write(dir.join("counts/c-1.json"), b"").unwrap();
        let now = crate::time::now_ms();
        fold_into_file(&dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(
            count_files(&dir).len(),
            1,
            "created, not yet written: left for the next merge"
        );
        fs::write(
            dir.join("counts/c-1.json"),
            serde_json::to_vec(&turn(1)).unwrap(),
        )
        .unwrap();
        fold_into_file(&dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(load(&dir).captures_spooled, 1);
        fs::write(dir.join("counts/d-1.json"), b"{").unwrap();
        fold_into_file(
            &dir,
            &Stats::default(),
            Some(now + UNREADABLE_COUNTS_KEPT_MS + 1000),
        )
        .unwrap();
        assert_eq!(
            count_files(&dir).len(),
            0,
            "left unreadable by a killed writer: removed"
        );
        assert_eq!(load(&dir).captures_spooled, 1);
        fs::remove_dir_all(&dir).unwrap();
    }
}
