//! A confirmed forget carried out: the spool first (under the send lock, so no send takes what
//! goes), then Graphiti's deletes, a search again to check, and the plugin's own copies. Before
//! confirming, the person may leave items out or add the weaker matches (`edit_forget`).

use super::rank::text_of;
use super::{GRAPHITI_TIMEOUT, accepted_up_to, request_of, sender_of, session_of};
use crate::engine::Engine;
use crate::memory::forget::words::Request;
use crate::memory::forget::{self, Confirmer, Kind, Proposal};
use crate::memory::graphiti::Item;
use crate::memory::graphiti::http::Deadline;
use crate::memory::recall_cache;
use crate::memory::spool::{Spool, State};
use crate::ops::reports::{self, ForgetDone, ForgetPlan};
use crate::platform::api::{CommandOutput, HookContext};
use crate::platform::locks;
use crate::platform::time;
use std::collections::HashSet;
use std::time::Duration;

/// How long a confirmation waits for a send in progress to finish before it touches the spool.
const SEND_LOCK_WAIT: Duration = Duration::from_secs(20);
const SEND_LOCK_LEASE: Duration = Duration::from_secs(60);

impl Engine {
    /// The state directory a forget waits in, and who acts on it.
    fn forget_parts<'a>(
        &mut self,
        ctx: &'a HookContext,
        operator: bool,
    ) -> Result<(std::path::PathBuf, Confirmer<'a>), CommandOutput> {
        self.ensure_loaded();
        let dir =
            self.host.state_dir.clone().ok_or_else(|| {
                reports::failure(1, "no state directory: no forget can be waiting")
            })?;
        let confirmer = if operator {
            Confirmer::Operator
        } else {
            Confirmer::Chat {
                group: self.memory_group(ctx),
                sender: sender_of(ctx),
                session: session_of(ctx),
            }
        };
        Ok((dir, confirmer))
    }

    /// Leaves the items numbered `drop` out of a proposed forget and adds the left-out ones
    /// numbered `add`; shows the proposal as it now stands.
    pub(in crate::engine) fn edit_forget(
        &mut self,
        id: &str,
        ctx: &HookContext,
        operator: bool,
        choice: (&[u32], &[u32]),
    ) -> CommandOutput {
        let (dir, confirmer) = match self.forget_parts(ctx, operator) {
            Ok(parts) => parts,
            Err(refused) => return refused,
        };
        if choice.0.is_empty() && choice.1.is_empty() {
            return reports::failure(2, "name the numbers of the items to leave out or to add");
        }
        let now = time::now_ms();
        match forget::edit(&dir, id, &confirmer, choice, now, &mut *self.host.locks) {
            Ok(proposal) => CommandOutput {
                exit_code: 0,
                stdout: reports::render_forget_plan(&ForgetPlan {
                    proposal: &proposal,
                    summaries: &[],
                    unmatched: 0,
                    more: 0,
                    replaced: None,
                    notes: &[],
                    left_alone: &[],
                    operator,
                    no_entity_search: false,
                    at_once: false,
                }),
                stderr: String::new(),
            },
            Err(why) => reports::failure(1, format!("nothing changed: {why}")),
        }
    }

    /// Carries out a proposed forget once its confirmer may, with the items numbered `drop` left
    /// out and `add` added first.
    pub(in crate::engine) fn confirm_forget(
        &mut self,
        id: &str,
        ctx: &HookContext,
        operator: bool,
        choice: (&[u32], &[u32]),
    ) -> CommandOutput {
        let (dir, confirmer) = match self.forget_parts(ctx, operator) {
            Ok(parts) => parts,
            Err(refused) => return refused,
        };
        if !choice.0.is_empty() || !choice.1.is_empty() {
            let now = time::now_ms();
            if let Err(why) = forget::edit(&dir, id, &confirmer, choice, now, &mut *self.host.locks)
            {
                return reports::failure(1, format!("nothing deleted: {why}"));
            }
        }
        // The spool is held first, so no send takes an entry this forget removes.
        if let Err(e) = self
            .host
            .locks
            .acquire(locks::SEND, SEND_LOCK_LEASE, SEND_LOCK_WAIT)
        {
            return reports::failure(
                1,
                format!("the capture spool is being sent ({e}): nothing deleted; confirm again"),
            );
        }
        let taken = forget::take(&dir, id, &confirmer, time::now_ms(), &mut *self.host.locks);
        let proposal = match taken {
            Ok(proposal) => proposal,
            Err(why) => {
                self.host.locks.release(locks::SEND);
                return reports::failure(1, format!("nothing deleted: {why}"));
            }
        };
        let mut done = ForgetDone::new(&proposal);
        done.no_entity_search = self.no_entity_search();
        let sent = remove_spooled(&dir, &proposal, &mut done);
        self.host.locks.release(locks::SEND);
        let request = proposal.query.as_deref().map(|q| request_of(q, ctx));
        self.delete_in_graphiti(&proposal, &mut done);
        self.check_gone(&proposal, request.as_ref(), &mut done);
        self.clear_local_copies(&dir, &proposal, request.as_ref(), &mut done);
        let by = if operator {
            "operator".to_string()
        } else {
            format!("sender {}", sender_of(ctx).unwrap_or("?"))
        };
        if let Err(e) = forget::log(&dir, &done.logged(&proposal, &by, time::now_ms())) {
            done.local_trouble.push(e);
        }
        let accepted = accepted_up_to(&dir, &proposal.group, proposal.accepted_until.as_deref());
        match self.start_follow_up(&dir, &proposal, request.as_ref(), sent, accepted) {
            Ok(following) => done.following_up = following,
            Err(e) => done.local_trouble.push(e),
        }
        reports::render_forget_done(&done)
    }

    fn delete_in_graphiti(&mut self, proposal: &Proposal, done: &mut ForgetDone) {
        let deadline = Deadline::after(GRAPHITI_TIMEOUT);
        let (client, http) = self.graphiti();
        // Learns the backend, which only a group delete needs (FalkorDB answers one without
        // deleting).
        if !proposal.whole_groups.is_empty() {
            let _ = client.health(http, deadline);
        }
        let falkordb = client.database() == Some("falkordb");
        for (item, kind) in [(Item::Fact, Kind::Fact), (Item::Episode, Kind::Episode)] {
            for chosen in proposal.chosen(kind) {
                match client.delete(http, item, &chosen.id, deadline) {
                    Ok(()) => done.deleted(item, &chosen.id),
                    Err(e) => done.not_removed.push((chosen.id.clone(), e.to_string())),
                }
            }
        }
        for group in &proposal.whole_groups {
            match client.delete_group(http, group, deadline) {
                Ok(()) if falkordb => done.not_removed.push((
                    format!("group {group}"),
                    "the MCP server runs on FalkorDB, where clearing a group answers success \
                     without deleting: delete the graph in FalkorDB itself (GRAPH.DELETE)"
                        .into(),
                )),
                Ok(()) => done.groups_deleted.push(group.clone()),
                Err(e) => done
                    .not_removed
                    .push((format!("group {group}"), e.to_string())),
            }
        }
        let mut notes = Vec::new();
        self.save_graphiti_session(&mut notes);
    }

    /// Searches and lists again: what is still found was not removed, whatever the delete said;
    /// entities whose summary still matches the request are named (Graphiti does not rewrite a
    /// summary when a fact goes).
    fn check_gone(
        &mut self,
        proposal: &Proposal,
        request: Option<&Request>,
        done: &mut ForgetDone,
    ) {
        if let (Some(query), Some(request)) = (&proposal.query, request) {
            match self.find(query, &proposal.group) {
                Ok(found) => {
                    let still: HashSet<&str> = found
                        .facts
                        .iter()
                        .chain(found.episodes.iter().flatten())
                        .map(|v| text_of(v, "uuid"))
                        .collect();
                    done.still_found(|uuid| still.contains(uuid));
                    done.summaries = super::summaries_matching(&found.entities, request);
                }
                Err(why) => done.unchecked = Some(why),
            }
        }
        for group in done.groups_deleted.clone() {
            let deadline = Deadline::after(GRAPHITI_TIMEOUT);
            let (client, http) = self.graphiti();
            match client.recent_episodes(http, &group, 1, deadline) {
                Ok(Some(left)) if !left.is_empty() => {
                    done.groups_deleted.retain(|g| *g != group);
                    done.not_removed.push((
                        format!("group {group}"),
                        "Graphiti still lists episodes of it after the delete".into(),
                    ));
                }
                Ok(_) => {}
                Err(e) => done.unchecked = Some(format!("the episode listing failed: {e}")),
            }
        }
    }

    fn clear_local_copies(
        &mut self,
        dir: &std::path::Path,
        proposal: &Proposal,
        request: Option<&Request>,
        done: &mut ForgetDone,
    ) {
        let mut groups = proposal.whole_groups.clone();
        if groups.is_empty() {
            groups.push(proposal.group.clone());
        }
        match recall_cache::forget_groups(&mut self.memory.kept_recall, dir, &groups) {
            Ok(n) => done.cache_entries = n,
            Err(e) => done.local_trouble.push(e),
        }
        let mentions = |text: &str| request.is_none_or(|r| !r.matched_in(text).is_empty());
        match crate::engine::turns::forget_groups(dir, &groups, &mentions) {
            Ok(n) => done.turn_records = n,
            Err(e) => done.local_trouble.push(e),
        }
        match crate::engine::turn_history::forget_groups(dir, &groups, &mentions) {
            Ok(n) => done.turn_records += n,
            Err(e) => done.local_trouble.push(e),
        }
    }
}

/// Removes the proposal's spool entries (the send lock held): waiting and set-aside ones never
/// reach Graphiti; one in doubt may have, so it is counted apart. For a whole chat, every entry of
/// its groups goes.
/// Returns the names of the episodes that may be in Graphiti: the ones in doubt it removed, and
/// the chosen captures already sent before the forget was confirmed (added after they left the
/// spool), for the follow-up to delete once Graphiti lists them.
fn remove_spooled(
    dir: &std::path::Path,
    proposal: &Proposal,
    done: &mut ForgetDone,
) -> Vec<String> {
    let spool = Spool::new(dir);
    let mut stems: Vec<&str> = proposal.held_stems().collect();
    // A whole chat: also what was captured since it was proposed.
    let whole = if proposal.whole_groups.is_empty() {
        vec![]
    } else {
        super::rank::captures_of_groups(dir, &proposal.whole_groups)
    };
    stems.extend(whole.iter().map(|c| c.stem.as_str()));
    let entries = match spool.entries() {
        Ok(entries) => entries,
        Err(e) => {
            done.local_trouble.push(e);
            return vec![];
        }
    };
    let mut sent = Vec::new();
    let mut present = HashSet::new();
    for entry in entries.iter().filter(|e| stems.contains(&e.stem.as_str())) {
        present.insert(entry.stem.as_str());
        let in_doubt = matches!(entry.state, State::InDoubt | State::Sending);
        let name = in_doubt
            .then(|| spool.read(entry).ok())
            .flatten()
            .map(|e| e.name);
        match spool.forget(entry) {
            Ok(()) if in_doubt => {
                done.spool_in_doubt += 1;
                sent.extend(name);
            }
            Ok(()) => done.spool_removed += 1,
            Err(e) => done.local_trouble.push(e),
        }
    }
    let whole_chat = !proposal.whole_groups.is_empty();
    for gone in proposal
        .chosen(Kind::Capture)
        .filter(|c| !whole_chat && !present.contains(c.id.as_str()))
    {
        done.spool_sent_before += 1;
        sent.extend(gone.name.clone());
    }
    sent
}
