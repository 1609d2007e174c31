//! What proposing, confirming and following up a forget share: whose request it is (the sender, the
//! session, the request's words), the search of the chat's group and its episode listing, and the
//! captures Graphiti had acknowledged when the forget was proposed.

use super::rank::text_of;
use super::words::Request;
use crate::memory::control::context::Context;
use crate::memory::control::error::ControlError;
use crate::memory::graphiti::http::Deadline;
use crate::memory::graphiti::speaker_name;
use crate::memory::group_id;
use crate::memory::redaction::Query;
use crate::memory::spool::Spool;
use crate::platform::api::HookContext;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// What a forget searches for at most, and how long Graphiti may take for each step.
const SEARCHED_FACTS: usize = 50;
const SEARCHED_ENTITIES: usize = 20;
pub(super) const LISTED_EPISODES: usize = 500;
pub const GRAPHITI_TIMEOUT: Duration = Duration::from_secs(30);

/// What a search and a listing of one group returned.
pub(super) struct Found {
    pub(super) facts: Vec<Value>,
    pub(super) entities: Vec<Value>,
    /// None: this server lists no episodes.
    pub(super) episodes: Option<Vec<Value>>,
}

/// The sender as the chat's group names them: the host's sender id, else the session key's peer.
pub(super) fn sender_of(ctx: &HookContext) -> Option<&str> {
    group_id::Conversation::of(ctx).sender
}

pub(super) fn session_of(ctx: &HookContext) -> Option<&str> {
    ctx.session_key
        .as_deref()
        .or(ctx.session_id.as_deref())
        .filter(|s| !s.trim().is_empty())
}

/// The request's content words: the sender's own names carry none (they are in most facts
/// about them).
pub fn request_of(query: &str, ctx: &HookContext) -> Request {
    let speaker = speaker_name(ctx.sender_name.as_deref(), ctx.sender_id.as_deref());
    let names: Vec<&str> = [
        ctx.sender_id.as_deref(),
        ctx.sender_name.as_deref(),
        sender_of(ctx),
    ]
    .into_iter()
    .flatten()
    .chain(speaker.as_deref())
    .collect();
    Request::of(query, &names)
}

/// The entities (name, summary) whose summary matches the request well: a delete rewrites a
/// summary only when the MCP server deletes an episode that fed it (graphiti-core 0.31.2 on), so
/// these may still say what is forgotten.
pub(super) fn summaries_matching(entities: &[Value], request: &Request) -> Vec<(String, String)> {
    entities
        .iter()
        .filter(|n| request.matches_well(request.matched_in(text_of(n, "summary")).len()))
        .map(|n| {
            (
                text_of(n, "name").to_string(),
                text_of(n, "summary").to_string(),
            )
        })
        .collect()
}

/// The chat's group searched for `query`, and its recent episodes listed.
pub(super) fn find(cx: &mut Context, query: &str, group: &str) -> Result<Found, ControlError> {
    let deadline = Deadline::after(GRAPHITI_TIMEOUT);
    let query = Query::new(query, &cx.settings.capture.redact);
    let (client, http) = cx.graphiti();
    let (facts, entities) = client.search_facts_and_nodes(
        http,
        &query,
        group,
        (SEARCHED_FACTS, SEARCHED_ENTITIES),
        deadline,
    );
    cx.save_graphiti_session();
    let episodes = cx.recent_episodes(group, LISTED_EPISODES, deadline);
    let searched = |e| ControlError::Graphiti("the search", e);
    Ok(Found {
        facts: facts.map_err(searched)?,
        entities: entities.map_err(searched)?,
        episodes: episodes.map_err(|e| ControlError::Graphiti("the episode listing", e))?,
    })
}

/// The group's last capture Graphiti acknowledged, as the acknowledgement journal lists them.
pub(super) fn last_accepted(dir: &Path, group: &str) -> Option<String> {
    Spool::new(dir)
        .acked_names_containing(&format!("-{group}-"))
        .pop()
}

/// The group's captures Graphiti acknowledged up to and including `until` (in the journal's
/// order): none when `until` is none or no longer in the journal.
pub(super) fn accepted_up_to(dir: &Path, group: &str, until: Option<&str>) -> Vec<String> {
    let Some(until) = until else {
        return vec![];
    };
    let names = Spool::new(dir).acked_names_containing(&format!("-{group}-"));
    match names.iter().position(|n| n == until) {
        Some(at) => names[..=at].to_vec(),
        None => vec![],
    }
}
