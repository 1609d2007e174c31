//! Counters for `status` (the PRD's post-deploy monitoring), kept in the state directory so they
//! survive restarts and are shared by every instance. An instance counts in memory and merges its
//! counts into the file now and then (on `tick` and `status`), so a turn costs no file I/O for them.

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
    pub recalls_skipped: u64,
    /// Turns that got a pack, by primary pack id.
    pub packs: BTreeMap<String, u64>,
    pub captures_spooled: u64,
    pub captures_skipped: u64,
    /// Turns not captured because the spool was full or could not be written.
    pub captures_dropped: u64,
    pub episodes_sent: u64,
    pub send_failures: u64,
    pub last_error: Option<String>,
}

impl Stats {
    /// Adds another instance's counts to these.
    pub fn merge(&mut self, other: &Stats) {
        self.turns += other.turns;
        self.recalls += other.recalls;
        self.recall_fallbacks += other.recall_fallbacks;
        self.recalls_skipped += other.recalls_skipped;
        for (pack, n) in &other.packs {
            *self.packs.entry(pack.clone()).or_default() += n;
        }
        self.captures_spooled += other.captures_spooled;
        self.captures_skipped += other.captures_skipped;
        self.captures_dropped += other.captures_dropped;
        self.episodes_sent += other.episodes_sent;
        self.send_failures += other.send_failures;
        if other.last_error.is_some() {
            self.last_error.clone_from(&other.last_error);
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Stats::default()
    }
}

fn path(state_dir: &Path) -> PathBuf {
    state_dir.join("stats.json")
}

pub fn load(state_dir: &Path) -> Stats {
    fs::read(path(state_dir))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Adds `counts` to the stored counters. Counters are advisory: a failed write is ignored.
pub fn merge_into_file(state_dir: &Path, counts: &Stats) {
    let mut stats = load(state_dir);
    stats.merge(counts);
    let _ = crate::files::write_atomically(
        &path(state_dir),
        &serde_json::to_vec(&stats).unwrap_or_default(),
    );
}
