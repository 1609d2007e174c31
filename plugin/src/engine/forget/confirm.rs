//! A confirmed forget carried out: the spool first (under the send lock, so no send takes what
//! goes), then Graphiti's deletes, a search again to check, and the plugin's own copies.

use super::{
    GRAPHITI_TIMEOUT, sender_of, session_of, shares_a_term, spooled_mentioning,
    summaries_mentioning, terms_of, text_of,
};
use crate::engine::Engine;
use crate::memory::forget::{self, Confirmer, Proposal};
use crate::memory::graphiti::Item;
use crate::memory::graphiti::http::Deadline;
use crate::memory::recall_cache;
use crate::memory::spool::{Spool, State};
use crate::ops::reports::{self, ForgetDone};
use crate::platform::api::{CommandOutput, HookContext};
use crate::platform::locks;
use crate::platform::time;
use std::collections::HashSet;
use std::time::Duration;

/// How long a confirmation waits for a send in progress to finish before it touches the spool.
const SEND_LOCK_WAIT: Duration = Duration::from_secs(20);
const SEND_LOCK_LEASE: Duration = Duration::from_secs(60);

impl Engine {
    /// Carries out a proposed forget once its confirmer may.
    pub(in crate::engine) fn confirm_forget(
        &mut self,
        id: &str,
        ctx: &HookContext,
        operator: bool,
    ) -> CommandOutput {
        self.ensure_loaded();
        let Some(dir) = self.host.state_dir.clone() else {
            return reports::failure(1, "no state directory: no forget can be waiting");
        };
        let confirmer = if operator {
            Confirmer::Operator
        } else {
            Confirmer::Chat {
                group: self.memory_group(ctx),
                sender: sender_of(ctx),
                session: session_of(ctx),
            }
        };
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
        let in_doubt = remove_spooled(&dir, &proposal, &mut done);
        self.host.locks.release(locks::SEND);
        self.delete_in_graphiti(&proposal, &mut done);
        self.check_gone(&proposal, &mut done);
        self.clear_local_copies(&dir, &proposal, &mut done);
        let by = if operator {
            "operator".to_string()
        } else {
            format!("sender {}", sender_of(ctx).unwrap_or("?"))
        };
        if let Err(e) = forget::log(&dir, &done.logged(&proposal, &by, time::now_ms())) {
            done.local_trouble.push(e);
        }
        match self.start_follow_up(&dir, &proposal, in_doubt) {
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
        for (item, list) in [
            (Item::Fact, &proposal.facts),
            (Item::Episode, &proposal.episodes),
        ] {
            for shown in list {
                match client.delete(http, item, &shown.uuid, deadline) {
                    Ok(()) => done.deleted(item, &shown.uuid),
                    Err(e) => done.not_removed.push((shown.uuid.clone(), e.to_string())),
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
    /// entities whose summary still mentions the search are named (Graphiti does not rewrite a
    /// summary when a fact goes).
    fn check_gone(&mut self, proposal: &Proposal, done: &mut ForgetDone) {
        if let Some(query) = &proposal.query {
            let terms = terms_of(query);
            match self.find(query, &proposal.group) {
                Ok(found) => {
                    let still: HashSet<&str> = found
                        .facts
                        .iter()
                        .chain(found.episodes.iter().flatten())
                        .map(|v| text_of(v, "uuid"))
                        .collect();
                    done.still_found(|uuid| still.contains(uuid));
                    done.summaries = summaries_mentioning(&found.entities, &terms);
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
        let terms: Option<HashSet<String>> = proposal.query.as_deref().map(terms_of);
        let mentions = |text: &str| terms.as_ref().is_none_or(|t| shares_a_term(text, t));
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
/// reach Graphiti; one in doubt may have, so it is counted apart.
/// Returns the names of the episodes in doubt it removed, for the follow-up.
fn remove_spooled(
    dir: &std::path::Path,
    proposal: &Proposal,
    done: &mut ForgetDone,
) -> Vec<String> {
    let spool = Spool::new(dir);
    let mut stems = proposal.spooled.clone();
    if !proposal.whole_groups.is_empty() {
        stems.extend(spooled_mentioning(dir, &proposal.whole_groups, None));
    }
    let entries = match spool.entries() {
        Ok(entries) => entries,
        Err(e) => {
            done.local_trouble.push(e);
            return vec![];
        }
    };
    let mut in_doubt = Vec::new();
    for entry in entries.iter().filter(|e| stems.contains(&e.stem)) {
        let sent = matches!(entry.state, State::InDoubt | State::Sending);
        let name = sent
            .then(|| spool.read(entry).ok())
            .flatten()
            .map(|e| e.name);
        match spool.forget(entry) {
            Ok(()) if sent => {
                done.spool_in_doubt += 1;
                in_doubt.extend(name);
            }
            Ok(()) => done.spool_removed += 1,
            Err(e) => done.local_trouble.push(e),
        }
    }
    in_doubt
}
