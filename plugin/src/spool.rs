//! The capture spool: every captured turn is a file in the state directory until Graphiti has accepted
//! it. `agent-end` only appends (no network); `tick` sends in order with exponential backoff.
//!
//! Nothing is lost: an entry is removed only after Graphiti acknowledged it, and its name is written
//! to the acknowledgement journal first, so a replay after a crash or restart skips what was already
//! sent. Files are written to a temporary name and renamed, so a crash never leaves half an entry.

use crate::graphiti::Episode;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Names of recently acknowledged episodes kept for recognising replays.
const ACKED_KEPT: usize = 4096;

pub struct Spool {
    dir: PathBuf,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Backoff {
    pub failures: u32,
    /// Unix milliseconds before which no send is tried.
    pub next_attempt_ms: u64,
    pub last_error: Option<String>,
}

#[derive(Debug, PartialEq)]
pub enum Appended {
    Spooled,
    /// The spool holds its maximum: this turn is not captured.
    Full(usize),
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn io(what: &str, path: &Path, e: std::io::Error) -> String {
    format!("capture spool: cannot {what} {}: {e}", path.display())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::files::write_atomically(path, bytes).map_err(|e| io("write", path, e))
}

/// FNV-1a: a stable short hash for file names.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Spool {
    pub fn new(state_dir: &Path) -> Spool {
        Spool {
            dir: state_dir.join("spool"),
        }
    }

    /// Entries waiting, oldest first.
    pub fn pending(&self) -> Result<Vec<PathBuf>, String> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(io("list", &self.dir, e)),
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "episode"))
            .collect();
        files.sort();
        Ok(files)
    }

    pub fn depth(&self) -> usize {
        self.pending().map(|p| p.len()).unwrap_or(0)
    }

    /// Adds a turn, unless the spool is full.
    pub fn append(&self, episode: &Episode, max_episodes: usize) -> Result<Appended, String> {
        let depth = self.depth();
        if depth >= max_episodes {
            return Ok(Appended::Full(depth));
        }
        // Time first, so names sort in capture order; the hash keeps two turns of one instant apart.
        let micros = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or(0);
        let path = self.dir.join(format!(
            "{micros:020}-{:016x}.episode",
            stable_hash(&episode.name)
        ));
        let bytes = serde_json::to_vec(episode)
            .map_err(|e| format!("capture spool: cannot encode the episode: {e}"))?;
        write_atomically(&path, &bytes)?;
        Ok(Appended::Spooled)
    }

    pub fn read(&self, path: &Path) -> Result<Episode, String> {
        let bytes = fs::read(path).map_err(|e| io("read", path, e))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("capture spool: {} is not an episode ({e})", path.display()))
    }

    /// Moves an unreadable entry aside (kept for an operator, never resent, never lost).
    pub fn quarantine(&self, path: &Path) -> Result<(), String> {
        let target = path.with_extension("corrupt");
        fs::rename(path, &target).map_err(|e| io("quarantine", path, e))
    }

    pub fn remove(&self, path: &Path) -> Result<(), String> {
        fs::remove_file(path).map_err(|e| io("remove", path, e))
    }

    fn acked_path(&self) -> PathBuf {
        self.dir.join("acked.log")
    }

    /// Names Graphiti has acknowledged recently, read once per flush.
    pub fn acked(&self) -> std::collections::HashSet<String> {
        fs::read_to_string(self.acked_path())
            .map(|log| log.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// Records that Graphiti accepted `name`; the journal keeps the last few thousand names.
    pub fn mark_acked(&self, name: &str) -> Result<(), String> {
        let path = self.acked_path();
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io("open", &path, e))?;
        writeln!(file, "{name}").map_err(|e| io("append to", &path, e))?;
        drop(file);
        let log = fs::read_to_string(&path).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        if lines.len() > 2 * ACKED_KEPT {
            let kept = lines[lines.len() - ACKED_KEPT..].join("\n") + "\n";
            write_atomically(&path, kept.as_bytes())?;
        }
        Ok(())
    }

    pub fn backoff(&self) -> Backoff {
        fs::read(self.dir.join("backoff.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    pub fn save_backoff(&self, backoff: &Backoff) -> Result<(), String> {
        write_atomically(
            &self.dir.join("backoff.json"),
            &serde_json::to_vec(backoff).unwrap_or_default(),
        )
    }
}

/// The wait after `failures` failed attempts in a row: initial × 2^(failures-1), capped.
pub fn backoff_delay_ms(failures: u32, initial_ms: u64, max_ms: u64) -> u64 {
    let exponent = failures.saturating_sub(1).min(40);
    initial_ms.saturating_mul(1u64 << exponent).min(max_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(name: &str) -> Episode {
        Episode {
            name: name.into(),
            group_id: "g".into(),
            user: "q".into(),
            assistant: "a".into(),
            user_name: None,
            reference_time: "2026-01-01T00:00:00Z".into(),
            source_description: "test".into(),
            kind: Default::default(),
        }
    }

    fn temp(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spool-unit-{}-{label}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn keeps_order_bounds_and_journals() {
        let dir = temp("order");
        let spool = Spool::new(&dir);
        for i in 0..3 {
            assert_eq!(
                spool.append(&episode(&format!("e{i}")), 3).unwrap(),
                Appended::Spooled
            );
        }
        assert_eq!(spool.append(&episode("e3"), 3).unwrap(), Appended::Full(3));
        let names: Vec<String> = spool
            .pending()
            .unwrap()
            .iter()
            .map(|p| spool.read(p).unwrap().name)
            .collect();
        assert_eq!(names, ["e0", "e1", "e2"]);
        spool.mark_acked("e0").unwrap();
        let acked = spool.acked();
        assert!(acked.contains("e0") && !acked.contains("e1"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let delays: Vec<u64> = (1..=6).map(|f| backoff_delay_ms(f, 1000, 10_000)).collect();
        assert_eq!(delays, [1000, 2000, 4000, 8000, 10_000, 10_000]);
    }
}
