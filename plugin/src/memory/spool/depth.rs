//! How many episodes wait in the spool, without counting a backlog of thousands on every turn: the
//! depth an instance last knew, or the one the sending instance last listed, while the spool
//! directory is unchanged since.

use super::{Appended, Entry, Spool, io, new_stem, now_micros};
use crate::memory::graphiti::Episode;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The spool's depth as an instance last counted it, with its directory's stamp then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Depth {
    pub(super) stamp: crate::platform::files::Stamp,
    pub(super) depth: usize,
    /// Of those, the sends in doubt (a listing knows; an append leaves it as it was).
    #[serde(default)]
    pub(super) in_doubt: usize,
}

/// The depth the last sending pass listed, in the state directory (a file in the spool would
/// change the stamp it records). The instances that take turns are not the one that sends (in
/// OpenClaw the sender is an instance of its own), so after a pass that moved entries they find
/// the depth here instead of counting a backlog of thousands again.
pub(super) const LISTED_DEPTH_FILE: &str = "spool-depth.json";

/// This close to the maximum, the depth is counted on every append.
pub(super) const RECOUNT_NEAR_FULL: usize = 16;

impl Depth {
    /// `depth` under the stamp `dir` has now (None when it cannot be looked at).
    pub(super) fn now(dir: &Path, depth: usize) -> Option<Depth> {
        crate::platform::files::stamp(dir)
            .ok()
            .flatten()
            .map(|stamp| Depth {
                stamp,
                depth,
                in_doubt: 0,
            })
    }

    /// Episodes waiting to be delivered, sends in doubt included.
    pub fn queued(&self) -> usize {
        self.depth
    }

    /// Sends in doubt among them.
    pub fn in_doubt(&self) -> usize {
        self.in_doubt
    }
}

impl Spool {
    /// Adds a turn at the end of the queue, unless the spool is full.
    pub fn append(&self, episode: &Episode, max_episodes: usize) -> Result<Appended, String> {
        self.append_counted(episode, max_episodes, &mut None)
    }

    /// [`Spool::append`], with the depth `known` from this instance's last append: used while the
    /// spool directory is unchanged since (any entry added, sent or moved by anyone changes its
    /// modification time), and not near the maximum; else counted (see [`Spool::depth_before_append`]).
    pub fn append_counted(
        &self,
        episode: &Episode,
        max_episodes: usize,
        known: &mut Option<Depth>,
    ) -> Result<Appended, String> {
        let (depth, in_doubt) = self.depth_before_append(known.take(), max_episodes);
        if depth >= max_episodes {
            return Ok(Appended::Full(depth));
        }
        let path = self.path(&new_stem(now_micros(), &episode.name), "episode");
        let bytes = serde_json::to_vec(episode)
            .map_err(|e| format!("capture spool: cannot encode the episode: {e}"))?;
        // The state directory's spares are a rename away; creating a file costs far more.
        crate::platform::files::write_atomically_from_spare(
            self.state_dir(),
            &path,
            &bytes,
            self.durability,
        )
        .map_err(|e| io("write", &path, e))?;
        // The spool as before, and this entry: what a backed-off tick of this instance may use.
        *known = Depth::now(&self.dir, depth + 1).map(|d| Depth { in_doubt, ..d });
        Ok(Appended::Spooled)
    }

    /// The entries, and the depth they give under the directory's stamp read before they were
    /// listed: an append by this instance uses it while the directory is unchanged, so a turn after
    /// a tick that changed the spool does not count a backlog again.
    pub fn entries_with_depth(&self) -> Result<(Vec<Entry>, Option<Depth>), String> {
        let stamp = crate::platform::files::stamp(&self.dir).ok().flatten();
        let entries = self.entries()?;
        let depth = queued(&entries);
        let in_doubt = entries
            .iter()
            .filter(|e| e.state == super::State::InDoubt)
            .count();
        Ok((
            entries,
            stamp.map(|stamp| Depth {
                stamp,
                depth,
                in_doubt,
            }),
        ))
    }

    /// Episodes not yet delivered and not set aside.
    pub fn depth(&self) -> usize {
        self.entries().map(|entries| queued(&entries)).unwrap_or(0)
    }

    /// The depth an append compares with `max_episodes`: `known` (this instance's last append), or
    /// the sending pass's listing, while the spool directory is unchanged since (any entry added,
    /// sent or moved by anyone changes its modification time) and not within [`RECOUNT_NEAR_FULL`]
    /// of the maximum; else counted.
    pub(super) fn depth_before_append(
        &self,
        known: Option<Depth>,
        max_episodes: usize,
    ) -> (usize, usize) {
        let stamp = crate::platform::files::stamp(&self.dir).ok().flatten();
        let holds = |k: &Depth| {
            stamp.is_some_and(|s| s == k.stamp) && k.depth + RECOUNT_NEAR_FULL < max_episodes
        };
        match known
            .filter(holds)
            .or_else(|| self.listed_depth().filter(holds))
        {
            Some(k) => (k.depth, k.in_doubt),
            None => {
                let entries = self.entries().unwrap_or_default();
                let in_doubt = entries
                    .iter()
                    .filter(|e| e.state == super::State::InDoubt)
                    .count();
                (queued(&entries), in_doubt)
            }
        }
    }

    /// Keeps `depth`, a sending pass's listing, for the instances that take turns.
    pub fn save_listed_depth(&self, depth: &Depth) -> Result<(), String> {
        let path = self.state_dir().join(LISTED_DEPTH_FILE);
        let bytes = serde_json::to_vec(depth).unwrap_or_default();
        super::write_atomically(&path, &bytes)
    }

    /// The depth the last sending pass listed, while the spool directory is unchanged since (no
    /// entry added, sent or moved): then the spool is as that pass left it, with nothing being
    /// sent (or only a dead sender's entry, recovered by the next pass that sends), and need not
    /// be listed again.
    /// `known`: this instance's own last look (an append after a listing), tried first.
    pub fn unchanged_since_listed(&self, known: Option<Depth>) -> Option<Depth> {
        let stamp = crate::platform::files::stamp(&self.dir).ok().flatten()?;
        known
            .filter(|k| k.stamp == stamp)
            .or_else(|| self.listed_depth().filter(|listed| listed.stamp == stamp))
    }

    /// The depth a sending pass kept; None when there is none or it cannot be read (then the
    /// spool is counted).
    fn listed_depth(&self) -> Option<Depth> {
        let path = self.state_dir().join(LISTED_DEPTH_FILE);
        let bytes = crate::platform::files::read_regular(&path, 4096).ok()??;
        serde_json::from_slice(&bytes).ok()
    }
}

/// How many of `entries` wait to be delivered (not set aside).
pub fn queued(entries: &[Entry]) -> usize {
    entries.iter().filter(|e| e.state.is_queued()).count()
}
