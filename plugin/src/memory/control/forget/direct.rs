//! A confirmed forget carried out in the FalkorDB behind Graphiti, when the settings name it: each
//! episode deleted by the rule of graphiti-core's own `remove_episode`, each fact by its id, a whole
//! chat by deleting its graph; then a query says what stayed, summaries included (the plugin has no
//! LLM to rebuild a summary, as Graphiti's MCP server does from 0.31.2 on).

use super::report::ForgetDone;
use super::search::GRAPHITI_TIMEOUT;
use super::words::Request;
use super::{Kind, Proposal};
use crate::memory::control::context::Context;
use crate::memory::falkordb::group_graph;
use crate::memory::graphiti::Item;
use crate::memory::graphiti::http::Deadline;

/// Summaries read for the check at most.
const SUMMARIES_CHECKED: usize = 500;

/// Deletes the proposal's facts, episodes and whole groups in FalkorDB.
pub fn delete(cx: &mut Context, proposal: &Proposal, done: &mut ForgetDone) {
    let default_graph = cx.settings.graphiti.falkordb.default_graph.clone();
    let Some(mut falkor) = cx.falkor(Deadline::after(GRAPHITI_TIMEOUT)) else {
        return;
    };
    done.direct = true;
    let group = proposal.group.as_str();
    for chosen in proposal.chosen(Kind::Fact) {
        match group_graph::delete_fact(&mut falkor, group, &chosen.id) {
            Ok(true) => done.deleted(Item::Fact, &chosen.id),
            Ok(false) => done
                .not_removed
                .push((chosen.id.clone(), "no longer in the chat's graph".into())),
            Err(e) => done.not_removed.push((chosen.id.clone(), format!("{e}"))),
        }
    }
    for chosen in proposal.chosen(Kind::Episode) {
        match group_graph::delete_episode(&mut falkor, group, &chosen.id) {
            Ok(Some(removal)) => {
                done.deleted(Item::Episode, &chosen.id);
                for fact in removal.facts_deleted {
                    if !done.facts_deleted.contains(&fact) {
                        done.facts_deleted.push(fact);
                    }
                }
                for name in removal.summaries_left {
                    if !done.summaries_not_rebuilt.contains(&name) {
                        done.summaries_not_rebuilt.push(name);
                    }
                }
            }
            Ok(None) => done
                .not_removed
                .push((chosen.id.clone(), "no longer in the chat's graph".into())),
            Err(e) => done.not_removed.push((chosen.id.clone(), format!("{e}"))),
        }
    }
    for chosen in proposal.chosen(Kind::Entity) {
        match group_graph::delete_entity(&mut falkor, group, &chosen.id) {
            Ok(true) => done.entities_deleted.push(chosen.id.clone()),
            Ok(false) => done
                .not_removed
                .push((chosen.id.clone(), "no longer in the chat's graph".into())),
            Err(e) => done.not_removed.push((chosen.id.clone(), format!("{e}"))),
        }
    }
    for whole in &proposal.whole_groups {
        match group_graph::delete_group(&mut falkor, whole, &default_graph) {
            Ok(()) => done.groups_deleted.push(whole.clone()),
            Err(e) => done
                .not_removed
                .push((format!("group {whole}"), e.to_string())),
        }
    }
}

/// Asks FalkorDB what stayed: deleted items it still holds move to the ones not removed, a whole
/// group still holding nodes is not deleted, and summaries that still say what was forgotten are
/// named.
pub fn check(
    cx: &mut Context,
    proposal: &Proposal,
    request: Option<&Request>,
    done: &mut ForgetDone,
) {
    let Some(mut falkor) = cx.falkor(Deadline::after(GRAPHITI_TIMEOUT)) else {
        return;
    };
    let group = proposal.group.as_str();
    let deleted: Vec<String> = done
        .facts_deleted
        .iter()
        .chain(&done.episodes_deleted)
        .chain(&done.entities_deleted)
        .cloned()
        .collect();
    match group_graph::remaining(&mut falkor, group, &deleted) {
        Ok(left) => done.still_found(|uuid| left.iter().any(|l| l == uuid)),
        Err(e) => done.unchecked = Some(format!("FalkorDB: {e}")),
    }
    for whole in done.groups_deleted.clone() {
        match group_graph::node_count(&mut falkor, &whole) {
            Ok(0) => {}
            Ok(left) => {
                done.groups_deleted.retain(|g| *g != whole);
                done.not_removed.push((
                    format!("group {whole}"),
                    format!("FalkorDB still holds {left} node(s) of it"),
                ));
            }
            Err(e) => done.unchecked = Some(format!("FalkorDB: {e}")),
        }
    }
    let Some(request) = request else { return };
    match group_graph::summaries(&mut falkor, group, SUMMARIES_CHECKED) {
        Ok(summaries) => {
            done.summaries = summaries
                .into_iter()
                .filter(|s| request.matches_well(request.matched_in(&s.summary).len()))
                .map(|s| (format!("{} {}", s.label, s.name), s.summary))
                .collect();
        }
        Err(e) => done.unchecked = Some(format!("FalkorDB: {e}")),
    }
}
