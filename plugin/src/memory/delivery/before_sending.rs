//! What a pass does before it sends: a tick that backs off with the spool unchanged takes the depth
//! kept then, and an import under way is fed into the spool.

use super::{Listed, Sender};
use crate::memory::spool::Entry;
use crate::platform::api::TickReport;

impl Sender<'_> {
    /// Backing off, with the spool as the last pass left it (or as this instance's own append
    /// left it after one): the depth kept then, without listing a backlog of thousands that waits
    /// out an outage on every tick.
    pub(super) fn backing_off_unchanged(
        &mut self,
        now: u64,
        report: &mut TickReport,
    ) -> Option<Listed> {
        let backoff = self.spool.backoff();
        if now >= backoff.next_attempt_ms {
            return None;
        }
        let depth = self.spool.unchanged_since_listed(*self.known_depth)?;
        report.retry_in_ms = Some(backoff.next_attempt_ms - now);
        report.error = backoff.last_error;
        *self.kept_depth = Some(depth);
        Some((Vec::new(), Some(depth)))
    }

    /// Feeds an import under way into the spool (see `import`); whether it moved entries.
    pub(super) fn feed_import(
        &mut self,
        listed: &[Entry],
        now: u64,
        report: &mut TickReport,
    ) -> bool {
        let Some(feeder) = &self.import else {
            return false;
        };
        match feeder.feed(&self.spool, listed, now) {
            Ok(fed) => {
                let moved = fed.as_ref().is_some_and(|f| f.fed > 0 || f.recovered > 0);
                self.import_fed = fed;
                moved
            }
            Err(e) => {
                report.notes.push(format!("import: {e}"));
                false
            }
        }
    }
}
