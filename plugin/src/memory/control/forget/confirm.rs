//! A confirmed forget carried out: the spool first (under the send lock, so no send takes what
//! goes), then Graphiti's deletes, a search again to check, and the plugin's own copies. Before
//! confirming, the person may leave items out or add the weaker matches (`edit_forget`).

use super::late_captures::start_follow_up;
use super::rank::text_of;
use super::report::{ForgetDone, ForgetPlan, render_forget_done, render_forget_plan};
use super::search::{GRAPHITI_TIMEOUT, accepted_up_to, find, request_of, sender_of, session_of};
use super::words::Request;
use super::{Confirmer, Kind, Proposal, direct, reach};
use crate::memory::control::context::Context;
use crate::memory::control::error::ControlError;
use crate::memory::graphiti::http::Deadline;
use crate::memory::graphiti::{Cause, Item, Transport};
use crate::memory::recall_cache;
use crate::memory::spool::{Spool, State};
use crate::platform::api::{CommandOutput, HookContext};
use crate::platform::locks;
use crate::platform::time;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a confirmation waits for a send in progress to finish before it touches the spool.
const SEND_LOCK_WAIT: Duration = Duration::from_secs(20);
const SEND_LOCK_LEASE: Duration = Duration::from_secs(60);

/// The state directory a forget waits in, and who acts on it.
fn forget_parts<'a>(
    cx: &Context,
    ctx: &'a HookContext,
    operator: bool,
) -> Result<(PathBuf, Confirmer<'a>), ControlError> {
    let dir = cx.state_dir_for("no forget can be waiting")?.to_path_buf();
    let confirmer = if operator {
        Confirmer::Operator
    } else {
        Confirmer::Chat {
            group: cx.group(ctx),
            sender: sender_of(ctx),
            session: session_of(ctx),
        }
    };
    Ok((dir, confirmer))
}

/// Leaves the items numbered `drop` out of a proposed forget and adds the left-out ones numbered
/// `add`; shows the proposal as it now stands.
pub fn edit_forget(
    cx: &mut Context,
    id: &str,
    ctx: &HookContext,
    operator: bool,
    choice: (&[u32], &[u32]),
) -> CommandOutput {
    let (dir, confirmer) = match forget_parts(cx, ctx, operator) {
        Ok(parts) => parts,
        Err(refused) => return refused.output(),
    };
    if choice.0.is_empty() && choice.1.is_empty() {
        return ControlError::Unusable(
            "name the numbers of the items to leave out or to add".into(),
        )
        .output();
    }
    let now = time::now_ms();
    match super::edit(&dir, id, &confirmer, choice, now, &mut *cx.locks) {
        Ok(proposal) => {
            let cannot_delete = reach::deletes_warning(cx, &proposal);
            CommandOutput::success(render_forget_plan(&ForgetPlan {
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
                cannot_delete: cannot_delete.as_deref(),
            }))
        }
        Err(why) => why.output_for("nothing changed"),
    }
}

/// Carries out a proposed forget once its confirmer may, with the items numbered `drop` left
/// out and `add` added first.
pub fn confirm_forget(
    cx: &mut Context,
    id: &str,
    ctx: &HookContext,
    operator: bool,
    choice: (&[u32], &[u32]),
) -> CommandOutput {
    let (dir, confirmer) = match forget_parts(cx, ctx, operator) {
        Ok(parts) => parts,
        Err(refused) => return refused.output(),
    };
    if !choice.0.is_empty() || !choice.1.is_empty() {
        let now = time::now_ms();
        if let Err(why) = super::edit(&dir, id, &confirmer, choice, now, &mut *cx.locks) {
            return why.output_for("nothing deleted");
        }
    }
    // The spool is held first, so no send takes an entry this forget removes.
    if let Err(e) = cx
        .locks
        .acquire(locks::SEND, SEND_LOCK_LEASE, SEND_LOCK_WAIT)
    {
        return ControlError::Busy(format!(
            "the capture spool is being sent ({e}): nothing deleted; confirm again"
        ))
        .output();
    }
    let taken = super::take(&dir, id, &confirmer, time::now_ms(), &mut *cx.locks);
    let proposal = match taken {
        Ok(proposal) => proposal,
        Err(why) => {
            cx.locks.release(locks::SEND);
            return why.output_for("nothing deleted");
        }
    };
    let mut done = ForgetDone::new(&proposal);
    done.no_entity_search = cx.no_entity_search();
    let sent = remove_spooled(&dir, &proposal, &mut done);
    cx.locks.release(locks::SEND);
    let request = proposal.query.as_deref().map(|q| request_of(q, ctx));
    if cx.settings.graphiti.falkordb.configured().is_some() {
        direct::delete(cx, &proposal, &mut done);
        direct::check(cx, &proposal, request.as_ref(), &mut done);
    } else {
        delete_in_graphiti(cx, &proposal, &mut done);
        check_gone(cx, &proposal, request.as_ref(), &mut done);
    }
    clear_local_copies(cx, &dir, &proposal, request.as_ref(), &mut done);
    let by = if operator {
        "operator".to_string()
    } else {
        format!("sender {}", sender_of(ctx).unwrap_or("?"))
    };
    if let Err(e) = super::log(&dir, &done.logged(&proposal, &by, time::now_ms())) {
        done.local_trouble.push(e.to_string());
    }
    let accepted = accepted_up_to(&dir, &proposal.group, proposal.accepted_until.as_deref());
    match start_follow_up(cx, &dir, &proposal, request.as_ref(), sent, accepted) {
        Ok(following) => done.following_up = following,
        Err(e) => done.local_trouble.push(e.to_string()),
    }
    render_forget_done(&done)
}

fn delete_in_graphiti(cx: &mut Context, proposal: &Proposal, done: &mut ForgetDone) {
    let deadline = Deadline::after(GRAPHITI_TIMEOUT);
    // On FalkorDB the API's deletes miss a group's own graph: each reason says so, and a whole
    // group's delete is believed only where the listing can check it.
    let misses = reach::misses(cx, deadline);
    let in_default_graph =
        misses.is_some() && reach::lives_in_default_graph(cx, &proposal.group, deadline);
    done.misses.clone_from(&misses);
    let transport = cx.settings.graphiti.transport;
    let (client, http) = cx.graphiti();
    for (item, kind) in [(Item::Fact, Kind::Fact), (Item::Episode, Kind::Episode)] {
        for chosen in proposal.chosen(kind) {
            match client.delete(http, item, &chosen.id, deadline) {
                Ok(()) => done.deleted(item, &chosen.id),
                Err(e) => {
                    if let Cause::Status(status) = e.cause {
                        done.answered_error.push((chosen.id.clone(), status));
                    }
                    done.missed |= misses.is_some() && !in_default_graph;
                    done.not_removed.push((chosen.id.clone(), e.to_string()));
                }
            }
        }
    }
    for entity in proposal.chosen(Kind::Entity) {
        done.not_removed.push((
            entity.id.clone(),
            "Graphiti's API has no call that deletes an entity: connect the plugin to the \
             FalkorDB behind Graphiti"
                .into(),
        ));
    }
    for group in &proposal.whole_groups {
        let checkable = misses.is_none() || reach::lists_episodes(client, http, group, deadline);
        match client.delete_group(http, group, deadline) {
            Ok(()) if !checkable => {
                done.missed = true;
                done.not_removed.push((
                    format!("group {group}"),
                    "Graphiti answered success, but its listing cannot show the graph gone".into(),
                ));
            }
            Ok(()) => done.groups_deleted.push(group.clone()),
            Err(e) => done
                .not_removed
                .push((format!("group {group}"), e.to_string())),
        }
    }
    cx.save_graphiti_session();
    // A server that deleted by id does reach the group: what was learned otherwise no longer holds.
    let deleted_by_id = !done.facts_deleted.is_empty() || !done.episodes_deleted.is_empty();
    if let (Some(dir), true) = (cx.state_dir, deleted_by_id && transport == Transport::Rest) {
        reach::unlearn(dir);
    }
}

/// Searches and lists again: what is still found was not removed, whatever the delete said;
/// entities whose summary still matches the request are named (Graphiti rewrites a summary only
/// when the MCP server deletes an episode that fed it, from graphiti-core 0.31.2 on).
fn check_gone(
    cx: &mut Context,
    proposal: &Proposal,
    request: Option<&Request>,
    done: &mut ForgetDone,
) {
    if let (Some(query), Some(request)) = (&proposal.query, request) {
        match find(cx, query, &proposal.group) {
            Ok(found) => {
                let still: HashSet<&str> = found
                    .facts
                    .iter()
                    .chain(found.episodes.iter().flatten())
                    .map(|v| text_of(v, "uuid"))
                    .collect();
                done.still_found(|uuid| still.contains(uuid));
                let missed: Vec<(String, u16)> = done
                    .answered_error
                    .iter()
                    .filter(|(uuid, _)| still.contains(uuid.as_str()))
                    .cloned()
                    .collect();
                learn_from_missed(cx, &missed, done);
                done.summaries = super::search::summaries_matching(&found.entities, request);
            }
            Err(why) => done.unchecked = Some(why.to_string()),
        }
    }
    for group in done.groups_deleted.clone() {
        let deadline = Deadline::after(GRAPHITI_TIMEOUT);
        let (client, http) = cx.graphiti();
        match client.recent_episodes(http, &group, 1, deadline) {
            Ok(Some(left)) if !left.is_empty() => {
                done.groups_deleted.retain(|g| *g != group);
                let evidence = "it answered a group's clear with success, yet still listed the \
                                group's episodes, as on FalkorDB";
                done.missed |= learned(cx, evidence, done).is_some();
                done.not_removed.push((
                    format!("group {group}"),
                    "Graphiti still lists episodes of it after the delete".into(),
                ));
            }
            Ok(_) => {}
            Err(e) => {
                let failed = ControlError::Graphiti("the episode listing", e);
                done.unchecked = Some(failed.to_string());
            }
        }
    }
}

/// A server that answered a delete with an error for items a search of the group still finds
/// keeps the group where its deletes do not look (FalkorDB): kept for the next proposal, and each
/// of those items' reasons says so.
fn learn_from_missed(cx: &Context, missed: &[(String, u16)], done: &mut ForgetDone) {
    let Some((_, status)) = missed.first() else {
        return;
    };
    let evidence = format!(
        "a delete it answered with HTTP {status} missed an item a search of the group still \
         found, as on FalkorDB"
    );
    if learned(cx, &evidence, done).is_none() {
        return;
    }
    done.missed = true;
    for (id, why) in &mut done.not_removed {
        if let Some((_, status)) = missed.iter().find(|(uuid, _)| uuid == id) {
            *why = format!("Graphiti answered HTTP {status}, and a search still finds it");
        }
    }
}

/// What the server's misses are known by, learning them from `evidence` when they were not known
/// (trouble keeping it is one of the forget's local troubles).
fn learned(cx: &Context, evidence: &str, done: &mut ForgetDone) -> Option<reach::Misses> {
    if done.misses.is_some() {
        return done.misses.clone();
    }
    // An MCP server names its database: nothing is inferred from its answers.
    if cx.settings.graphiti.transport == Transport::Mcp {
        return None;
    }
    let dir = cx.state_dir?;
    match reach::learn(
        dir,
        &cx.settings.graphiti,
        evidence.to_string(),
        time::now_ms(),
    ) {
        Ok(misses) => {
            done.misses = Some(misses.clone());
            Some(misses)
        }
        Err(why) => {
            done.local_trouble.push(why);
            None
        }
    }
}

fn clear_local_copies(
    cx: &mut Context,
    dir: &Path,
    proposal: &Proposal,
    request: Option<&Request>,
    done: &mut ForgetDone,
) {
    let mut groups = proposal.whole_groups.clone();
    if groups.is_empty() {
        groups.push(proposal.group.clone());
    }
    match recall_cache::forget_groups(&mut cx.memory.kept_recall, dir, &groups) {
        Ok(n) => done.cache_entries = n,
        Err(e) => done.local_trouble.push(e),
    }
    let mentions = |text: &str| request.is_none_or(|r| !r.matched_in(text).is_empty());
    let (removed, troubles) = cx.turns.forget_groups(&groups, &mentions);
    done.turn_records = removed;
    done.local_trouble
        .extend(troubles.iter().map(ToString::to_string));
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
