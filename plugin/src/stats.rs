//! Counters for `status` (the PRD's post-deploy monitoring), kept in the state directory so they
//! survive restarts and are shared by every instance and process. An instance counts in memory and
//! merges its counts into the file under the `stats` lock (on `tick`, `status` and every few dozen
//! updates), so two processes never lose each other's counts and a turn costs no file I/O for them.

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
    let Ok(bytes) = fs::read(&file) else {
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

/// Adds `counts` to the stored counters. The caller holds the `stats` lock.
pub fn merge_into_file(state_dir: &Path, counts: &Stats) -> Result<(), String> {
    let mut stats = load(state_dir);
    stats.merge(counts);
    let file = path(state_dir);
    crate::files::write_atomically(&file, &serde_json::to_vec(&stats).unwrap_or_default())
        .map_err(|e| format!("cannot save the counters to {}: {e}", file.display()))
}
