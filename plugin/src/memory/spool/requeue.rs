//! `spool requeue`: the set-aside entries back in the queue, saying which were sent before.

use super::{Entry, Spool, State, io, new_stem, now_micros};
use std::fs;

/// What `spool requeue` put back in the queue; `unconfirmed`: sent before with no answer and never
/// seen stored, so sending them again may store them twice.
#[derive(Debug, PartialEq, Eq)]
pub struct Requeued {
    pub total: usize,
    pub unconfirmed: usize,
}

impl Spool {
    /// Puts every set-aside entry back at the end of the queue, in its original order; each keeps
    /// its history (how often it was set aside, and why). Returns how many, and how many of them
    /// were sent before with no answer Graphiti could be seen to have (unconfirmed).
    pub fn requeue_set_aside(&self) -> Result<Requeued, String> {
        let aside: Vec<Entry> = self
            .entries()?
            .into_iter()
            .filter(|e| e.state.is_set_aside())
            .collect();
        for (micros, entry) in (now_micros()..).zip(&aside) {
            let stem = new_stem(micros, &entry.stem);
            let meta_from = self.path(&entry.stem, "meta");
            if meta_from.exists() {
                let meta_to = self.path(&stem, "meta");
                fs::rename(&meta_from, &meta_to).map_err(|e| io("move", &meta_from, e))?;
            }
            let from = self.file_of(entry);
            fs::rename(&from, self.path(&stem, "episode")).map_err(|e| io("move", &from, e))?;
        }
        let unconfirmed = aside.iter().filter(|e| e.state == State::Unconfirmed);
        Ok(Requeued {
            unconfirmed: unconfirmed.count(),
            total: aside.len(),
        })
    }
}
