//! Sending the capture spool to Graphiti (`tick`, `flush`): one sender per state directory, every
//! episode delivered once and whole, none lost.
//!
//! - Only the holder of the `send` lock sends; a process that finds it busy leaves the spool to the
//!   holder (turns never wait: they only append).
//! - A send has its own timeout (`capture.send_timeout_ms`), longer than recall's: right after an
//!   outage Graphiti accepts slowly while it ingests the backlog.
//! - An entry is renamed `.sending` before its send. When the answer is lost (timeout, a broken
//!   connection) or the sender died mid-send, the entry is *in doubt*: it is not sent again at once.
//!   Graphiti is asked whether it lists the episode (MCP `get_episodes`, REST `/episodes`); listed →
//!   done. Not listed after `capture.resend_after_doubt_ms`, `capture.when_unconfirmed` decides:
//!   `send-again` (the default) sends it again, the one case where an episode can arrive twice;
//!   `keep-aside` sets it aside as `.unconfirmed` for an operator's `spool requeue`, the one case
//!   where an episode may be missing from Graphiti while the spool keeps it. Neither API takes an
//!   idempotency key, a just-accepted episode is listed only once ingested, and over MCP on
//!   FalkorDB `get_episodes` reads only the server's default graph, so it never confirms.
//! - A failure that says nothing against the entry (Graphiti down, a 5xx, "service not initialized")
//!   backs off and retries; only Graphiti rejecting that entry itself sets it aside, with the reason.

use crate::config::{CaptureSettings, WhenUnconfirmed};
use crate::memory::control::forget;
use crate::memory::graphiti::http::{Deadline, Http};
use crate::memory::graphiti::{Client, ErrorKind, GraphitiError};
use crate::memory::spool::{self, Acked, Depth, Entry, Spool, State, in_state};
use crate::memory::stats::Stats;
use crate::platform::api::TickReport;
use crate::platform::locks::{self, LockError, Locks};
use crate::platform::time;
use std::collections::HashMap;
use std::time::{Duration, Instant};

mod before_sending;
mod listing;
pub use listing::render_list;

/// Added to the send lock's lease beyond the flush budget and one send's timeout.
const LEASE_MARGIN_MS: u64 = 5000;
/// In-doubt entries checked per tick at most.
const DOUBTS_PER_TICK: usize = 20;

/// What sending needs from the engine.
pub struct Sender<'a> {
    pub spool: Spool,
    pub capture: &'a CaptureSettings,
    pub client: &'a mut Client,
    pub http: &'a mut dyn Http,
    /// Where a send in doubt is looked for when Graphiti's listing cannot see the group.
    pub falkordb: Option<crate::memory::falkordb::group_graph::FalkorAt<'a>>,
    pub locks: &'a mut dyn Locks,
    pub counts: &'a mut Stats,
    /// When a pass last removed the temporary files a crash left (the engine keeps it across passes).
    pub temp_swept_at_ms: &'a mut u64,
    /// The spool's depth as this instance knows it (see [`Spool::append_counted`]): each pass
    /// leaves the depth its last listing gave.
    pub known_depth: &'a mut Option<Depth>,
    /// The depth this instance last kept for the others (`spool-depth.json`).
    pub kept_depth: &'a mut Option<Depth>,
    /// An import under way is fed into the spool here, under the send lock, before sending.
    pub import: Option<crate::memory::import::Feeder>,
    /// What the feed did in this pass, if there was an import to feed.
    pub import_fed: Option<crate::memory::import::Fed>,
}

/// A pass's listing of the spool, with the depth it gives under the stamp it was listed at.
type Listed = (Vec<Entry>, Option<Depth>);

/// Ticks look for temporary files a crash left in the spool at most this often (`flush` always
/// does): one is removed only once it is ten minutes old, and the look lists the spool.
const TEMP_SWEEP_INTERVAL_MS: u64 = 60_000;

/// How a pass treats the back-off timer and a busy lock.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// The host's timer: respects the back-off; a busy lock means another process (or another
    /// instance in this one) sends.
    Tick,
    /// An operator's `flush`: tries now, waiting for another sender to finish first.
    Flush,
}

impl Sender<'_> {
    /// Long enough for the budget and one send at its longest.
    fn lease(&self) -> Duration {
        Duration::from_millis(self.capture.flush_budget_ms + LEASE_MARGIN_MS) + self.longest_send()
    }

    /// One pass over the spool under the send lock.
    pub fn pass(&mut self, pass: Pass) -> TickReport {
        let mut report = TickReport::default();
        let wait = match pass {
            Pass::Tick => Duration::ZERO,
            Pass::Flush => self.lease(),
        };
        let mut unmoved = None;
        match self.locks.acquire(locks::SEND, self.lease(), wait) {
            Ok(()) => {
                unmoved = self.send_locked(pass, &mut report);
                self.locks.release(locks::SEND);
            }
            Err(LockError::Busy(who)) => {
                let sender = match self.locks.this_process() {
                    Some(me) if me.holds(&who) => {
                        format!("another instance in this process (pid {})", me.pid)
                    }
                    _ => "another process".to_string(),
                };
                report.notes.push(format!(
                    "{sender} is sending the spool ({who}); it sends these episodes too"
                ))
            }
            Err(e) => report.error = Some(format!("cannot take the send lock: {e}")),
        }
        self.fill_depths(unmoved, &mut report);
        report
    }

    /// `listed`: the pass's listing, when it moved no entry (a backed-off tick, an idle one);
    /// else the spool is listed again.
    fn fill_depths(&mut self, listed: Option<Listed>, report: &mut TickReport) {
        let (entries, depth) = listed
            .or_else(|| self.spool.entries_with_depth().ok())
            .unwrap_or_default();
        // A listing's depth is its entries'; a pass that did not list has the depth it kept.
        let (pending, in_doubt) = match depth {
            Some(known) if entries.is_empty() => (known.queued(), known.in_doubt()),
            _ => (
                spool::queued(&entries),
                entries.iter().filter(|e| e.state == State::InDoubt).count(),
            ),
        };
        report.pending = pending as u32;
        report.in_doubt = in_doubt as u32;
        if let Some(listed) = depth.filter(|d| Some(*d) != *self.kept_depth) {
            match self.spool.save_listed_depth(&listed) {
                Ok(()) => *self.kept_depth = Some(listed),
                Err(e) => report.notes.push(e),
            }
        }
        *self.known_depth = depth;
    }

    /// Returns the spool's listing when the pass moved no entry, for the report's depths.
    ///
    /// The spool is listed once for the pass, and again only after a step that moved entries (a
    /// listing is a host call per entry: with a backlog waiting out an outage, listing twice was
    /// most of a tick). The acknowledgement journal is read only when an entry is looked up in it:
    /// a tick that backs off, or finds the spool empty, does not read it.
    fn send_locked(&mut self, pass: Pass, report: &mut TickReport) -> Option<Listed> {
        let locked_at = Instant::now();
        let now = time::now_ms();
        if pass == Pass::Tick
            && let Some(unchanged) = self.backing_off_unchanged(now, report)
        {
            return Some(unchanged);
        }
        if pass == Pass::Flush
            || now.saturating_sub(*self.temp_swept_at_ms) >= TEMP_SWEEP_INTERVAL_MS
        {
            self.spool.remove_stale_temp_files(now);
            *self.temp_swept_at_ms = now;
        }
        let (listed, depth) = match self.spool.entries_with_depth() {
            Ok(listed) => listed,
            Err(e) => {
                report.error = Some(e);
                return None;
            }
        };
        let mut journal = Journal::default();
        let interrupted = in_state(&listed, State::Sending);
        let mut unmoved = interrupted.is_empty();
        if let Err(e) = self.recover_interrupted(interrupted, &mut journal, now, report) {
            report.error = Some(e);
            return None;
        }
        unmoved &= !self.feed_import(&listed, now, report);
        let mut backoff = self.spool.backoff();
        if pass == Pass::Tick && now < backoff.next_attempt_ms {
            report.retry_in_ms = Some(backoff.next_attempt_ms - now);
            report.error = backoff.last_error.clone();
            return unmoved.then_some((listed, depth));
        }
        let deadline = Deadline::after(Duration::from_millis(self.capture.flush_budget_ms));
        let failure = self
            .listed_again(unmoved.then_some(&listed), State::InDoubt)
            .and_then(|in_doubt| {
                unmoved &= in_doubt.is_empty();
                self.settle_doubts(in_doubt, &mut journal, deadline, report)
            })
            .and_then(|()| {
                let mut waiting = self.listed_again(unmoved.then_some(&listed), State::Waiting)?;
                unmoved &= waiting.is_empty();
                if !waiting.is_empty() {
                    self.hold_for_forgets(&mut waiting, now, report);
                }
                self.send_waiting(waiting, &mut journal, deadline, locked_at, report)
            })
            .err();
        let backoff_before = backoff.clone();
        match failure {
            Some(e) => {
                backoff.failures += 1;
                let delay = spool::backoff_delay_ms(
                    backoff.failures,
                    self.capture.backoff_initial_ms,
                    self.capture.backoff_max_ms,
                );
                backoff.next_attempt_ms = time::now_ms() + delay;
                backoff.last_error = Some(e.clone());
                report.retry_in_ms = Some(delay);
                self.counts.send_failures += 1;
                self.counts.last_error = Some(e.clone());
                self.counts.last_error_at_ms = time::now_ms();
                report.error = Some(e);
            }
            None => backoff = spool::Backoff::default(),
        }
        if backoff != backoff_before
            && let Err(e) = self.spool.save_backoff(&backoff)
        {
            report.notes.push(e);
        }
        // Saving the backoff changed the directory: its stamp from before no longer holds.
        (unmoved && backoff == backoff_before).then_some((listed, depth))
    }

    /// Takes out of `waiting` the captures held back by forgets waiting for confirmation (those
    /// they list, or every capture of a chat whose forgets cannot be read), and says so.
    fn hold_for_forgets(&self, waiting: &mut Vec<Entry>, now: u64, report: &mut TickReport) {
        let held = forget::held(self.spool.state_dir(), now);
        if held.is_empty() {
            return;
        }
        let group_of = |entry: &Entry| {
            held.needs_groups()
                .then(|| self.spool.read(entry).ok().map(|e| e.group_id))
                .flatten()
        };
        let before = waiting.len();
        let mut until = 0;
        waiting.retain(
            |entry| match held.until(&entry.stem, group_of(entry).as_deref()) {
                Some(held_until) => {
                    until = until.max(held_until);
                    false
                }
                None => true,
            },
        );
        if waiting.len() < before {
            report.notes.push(format!(
                "{} capture(s) held back by a forget waiting for its confirmation (at the latest \
                 until {}; `status` says more)",
                before - waiting.len(),
                crate::platform::time::iso8601(until)
            ));
        }
    }

    /// The entries in `state`: from the pass's listing while it is current, else listed again.
    fn listed_again(
        &self,
        current: Option<&Vec<Entry>>,
        state: State,
    ) -> Result<Vec<Entry>, String> {
        match current {
            Some(listed) => Ok(in_state(listed, state)),
            None => self.spool.in_state(state),
        }
    }

    /// The acknowledgement journal, read at its first look-up in this pass.
    fn acked<'j>(&self, journal: &'j mut Journal, report: &mut TickReport) -> &'j Acked {
        journal.0.get_or_insert_with(|| {
            let acked = self.spool.acked();
            if acked.unreadable_lines > 0 {
                report.notes.push(format!(
                    "the acknowledgement journal has {} unreadable line(s): skipped, the rest still counts",
                    acked.unreadable_lines
                ));
            }
            acked
        })
    }

    /// Entries left `.sending` by a sender that stopped mid-send: done if journalled, else in doubt.
    fn recover_interrupted(
        &mut self,
        interrupted: Vec<Entry>,
        journal: &mut Journal,
        now: u64,
        report: &mut TickReport,
    ) -> Result<(), String> {
        for entry in interrupted {
            match self.spool.read(&entry) {
                Ok(episode) if self.acked(journal, report).contains(&episode.name) => {
                    self.spool.forget(&entry)?;
                }
                Ok(episode) => {
                    self.spool.put_in_doubt(&entry, now)?;
                    self.counts.sends_in_doubt += 1;
                    report.notes.push(format!(
                        "episode {} was being sent when its sender stopped: in doubt until Graphiti is seen to have it or to lack it",
                        episode.name
                    ));
                }
                Err(e) => self.set_aside(&entry, State::Corrupt, &e, report)?,
            }
        }
        Ok(())
    }

    /// In-doubt entries: delivered if Graphiti lists them; sent again once it has lacked them long
    /// enough. Err when Graphiti cannot be asked (it is down: the sends would fail too).
    fn settle_doubts(
        &mut self,
        in_doubt: Vec<Entry>,
        journal: &mut Journal,
        deadline: Deadline,
        report: &mut TickReport,
    ) -> Result<(), String> {
        let mut listings: HashMap<String, Option<Vec<String>>> = HashMap::new();
        for entry in in_doubt.into_iter().take(DOUBTS_PER_TICK) {
            let episode = match self.spool.read(&entry) {
                Ok(episode) => episode,
                Err(e) => {
                    self.set_aside(&entry, State::Corrupt, &e, report)?;
                    continue;
                }
            };
            if self.acked(journal, report).contains(&episode.name) {
                self.spool.forget(&entry)?;
                continue;
            }
            if !listings.contains_key(&episode.group_id) {
                let Some(left) = deadline.remaining() else {
                    return Ok(());
                };
                let budget = Deadline::after(left.min(self.send_timeout()));
                let listing = self
                    .listed_names(&episode.group_id, budget)
                    .map_err(|e| format!("checking in-doubt episodes: {e}"))?;
                listings.insert(episode.group_id.clone(), listing);
            }
            let listing = listings[&episode.group_id].as_deref();
            let listed =
                listing.is_some_and(|names| crate::memory::graphiti::lists(names, &episode.name));
            let since = self.spool.meta(&entry.stem).in_doubt_since_ms.unwrap_or(0);
            if listed {
                self.spool.delivered(&entry, &episode.name)?;
                self.counts.doubts_confirmed += 1;
                self.counts.last_sent_at_ms = time::now_ms();
                // The listing sees this group: whatever was concluded before is stale.
                self.spool.forget_unlisted();
                report.notes.push(format!(
                    "episode {} was in doubt: Graphiti has it, done",
                    episode.name
                ));
            } else if time::now_ms().saturating_sub(since) >= self.capture.resend_after_doubt_ms {
                let sees_nothing = listing.is_none_or(<[String]>::is_empty);
                self.unconfirmed(&entry, &episode, since, sees_nothing, report)?;
            }
        }
        Ok(())
    }

    /// The names of the group's recent episodes: read in FalkorDB itself when the settings name
    /// it, else listed by Graphiti.
    fn listed_names(
        &mut self,
        group: &str,
        deadline: Deadline,
    ) -> Result<Option<Vec<String>>, String> {
        match &mut self.falkordb {
            Some(at) => at.recent_episode_names(group, deadline).map(Some),
            None => self
                .client
                .recent_episode_names(self.http, group, deadline)
                .map_err(|e| e.to_string()),
        }
    }

    /// A send in doubt that Graphiti has not listed in time: sent again or kept aside, as the user
    /// chose. `sees_nothing`: the group's listing was empty, so it likely cannot see the group.
    fn unconfirmed(
        &mut self,
        entry: &Entry,
        episode: &crate::memory::graphiti::Episode,
        since: u64,
        sees_nothing: bool,
        report: &mut TickReport,
    ) -> Result<(), String> {
        if sees_nothing {
            let unlisted = spool::Unlisted {
                group_id: episode.group_id.clone(),
                at_ms: time::now_ms(),
            };
            if let Err(e) = self.spool.save_unlisted(&unlisted) {
                report.notes.push(e);
            }
        }
        let why = format!(
            "Graphiti does not list it after {}{}",
            wait_text(self.capture.resend_after_doubt_ms),
            if sees_nothing {
                format!(" (it lists no episode of group {})", episode.group_id)
            } else {
                String::new()
            }
        );
        match self.capture.when_unconfirmed {
            WhenUnconfirmed::SendAgain => {
                self.spool.put_back(entry)?;
                self.counts.resent_after_doubt += 1;
                report.notes.push(format!(
                    "episode {} was in doubt and {why}: sending it again \
                     (capture.when_unconfirmed: send-again; it may be stored twice)",
                    episode.name
                ));
            }
            WhenUnconfirmed::KeepAside => {
                let reason = format!(
                    "sent {}, outcome unknown; Graphiti could not confirm it ({why}): \
                     kept aside, not sent again (capture.when_unconfirmed: keep-aside), so it is \
                     never stored twice; it may be missing from Graphiti until spool requeue sends it",
                    time::iso8601(since)
                );
                self.spool
                    .set_aside(entry, State::Unconfirmed, &reason, time::now_ms())?;
                self.counts.doubts_kept_aside += 1;
                report.notes.push(format!(
                    "episode {}: {reason}; set aside as {}.unconfirmed",
                    episode.name, entry.stem
                ));
            }
        }
        Ok(())
    }

    fn send_timeout(&self) -> Duration {
        Duration::from_millis(self.capture.send_timeout_ms)
    }

    /// A send whose outcome was unknown before gets twice the time when it goes again: Graphiti
    /// that answered too late once is likely still slow, and every late answer is a possible
    /// duplicate.
    fn timeout_for(&self, stem: &str) -> Duration {
        if self.spool.meta(stem).times_in_doubt > 0 {
            self.longest_send()
        } else {
            self.send_timeout()
        }
    }

    fn longest_send(&self) -> Duration {
        self.send_timeout() * 2
    }

    /// Waiting entries in order until the batch or the budget is used, or one fails (Err: why).
    fn send_waiting(
        &mut self,
        waiting: Vec<Entry>,
        journal: &mut Journal,
        deadline: Deadline,
        locked_at: Instant,
        report: &mut TickReport,
    ) -> Result<(), String> {
        let lease = self.lease();
        for entry in waiting.into_iter().take(self.capture.flush_batch) {
            // A send that starts must end within the lease, and the lock must still be ours.
            let timeout = self.timeout_for(&entry.stem);
            let lease_left = lease.saturating_sub(locked_at.elapsed());
            if deadline.remaining().is_none() || lease_left < timeout {
                break;
            }
            if let Err(e) = self.locks.acquire(locks::SEND, lease, Duration::ZERO) {
                report
                    .notes
                    .push(format!("stopped sending: the send lock is {e}"));
                break;
            }
            let episode = match self.spool.read(&entry) {
                Ok(episode) => episode,
                Err(e) => {
                    self.set_aside(&entry, State::Corrupt, &e, report)?;
                    continue;
                }
            };
            if self.acked(journal, report).contains(&episode.name) {
                // Sent before a crash or restart removed it: a replay, not a new turn.
                self.spool.forget(&entry)?;
                continue;
            }
            let sending = self.spool.move_to(&entry, State::Sending)?;
            let sent = self
                .client
                .add_episode(self.http, &episode, Deadline::after(timeout));
            match sent {
                Ok(()) => {
                    self.spool.delivered(&sending, &episode.name)?;
                    report.sent += 1;
                    self.counts.episodes_sent += 1;
                    self.counts.last_sent_at_ms = time::now_ms();
                }
                Err(e) => self.after_failed_send(&sending, &episode.name, e, report)?,
            }
        }
        Ok(())
    }

    /// Err stops the pass (and backs off); Ok goes on with the next entry.
    fn after_failed_send(
        &mut self,
        sending: &Entry,
        name: &str,
        e: GraphitiError,
        report: &mut TickReport,
    ) -> Result<(), String> {
        match e.kind {
            ErrorKind::Rejected => {
                let reason = format!("Graphiti rejected episode {name}: {e}");
                self.set_aside(sending, State::Rejected, &reason, report)
            }
            ErrorKind::Failed => {
                self.spool.move_to(sending, State::Waiting)?;
                Err(e.message)
            }
            ErrorKind::Unknown => {
                self.spool.put_in_doubt(sending, time::now_ms())?;
                self.counts.sends_in_doubt += 1;
                report.notes.push(format!(
                    "episode {name}: the send's outcome is unknown ({e}); in doubt, not sent again until Graphiti is seen to lack it"
                ));
                Err(e.message)
            }
        }
    }

    fn set_aside(
        &mut self,
        entry: &Entry,
        state: State,
        reason: &str,
        report: &mut TickReport,
    ) -> Result<(), String> {
        self.spool.set_aside(entry, state, reason, time::now_ms())?;
        self.counts.set_aside += 1;
        report.notes.push(format!(
            "{reason}; set aside as {}.{} (`graphiti-openclaw spool requeue` puts it back)",
            entry.stem,
            if state == State::Rejected {
                "rejected"
            } else {
                "corrupt"
            }
        ));
        Ok(())
    }
}

/// A wait as `status` and notes say it: seconds, or milliseconds below one.
pub fn wait_text(ms: u64) -> String {
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// The acknowledgement journal once a pass has read it.
#[derive(Default)]
struct Journal(Option<Acked>);
