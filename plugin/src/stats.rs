//! Counters for `status` (the PRD's post-deploy monitoring), kept in the state directory so they
//! survive restarts and are shared by every instance.

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

fn path(state_dir: &Path) -> PathBuf {
    state_dir.join("stats.json")
}

pub fn load(state_dir: &Path) -> Stats {
    fs::read(path(state_dir)).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

/// Applies `change` to the stored counters. Counters are advisory: a failed write is ignored.
pub fn update(state_dir: Option<&Path>, change: impl FnOnce(&mut Stats)) {
    let Some(dir) = state_dir else { return };
    let mut stats = load(dir);
    change(&mut stats);
    let target = path(dir);
    let tmp = target.with_extension("json.tmp");
    if fs::write(&tmp, serde_json::to_vec(&stats).unwrap_or_default()).is_ok() {
        let _ = fs::rename(&tmp, &target);
    }
}
