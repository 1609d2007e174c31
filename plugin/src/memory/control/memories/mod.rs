//! What is remembered for a chat (`memories`, and `export` as JSON): what a search of its Graphiti
//! group and the group's episode listing return, and the session's recent turns with what became of
//! each capture. `report.rs` renders both.

mod report;

use report::{Memories, ShownTurn};

use super::context::{Captured, Context};
use super::error::ControlError;
use crate::memory::graphiti::http::Deadline;
use crate::memory::redaction::Query;
use crate::memory::spool::{Acked, Spool, State};
use crate::platform::api::{ChatType, CommandOutput, HookContext};
use crate::platform::time;
use std::collections::HashMap;
use std::time::Duration;

/// What a listing of memories asks Graphiti for at most, and how long it waits.
#[derive(Clone, Copy)]
struct Limits {
    facts: usize,
    entities: usize,
    episodes: usize,
    timeout: Duration,
}

/// `memories`: what a person reads.
const SEE: Limits = Limits {
    facts: 20,
    entities: 10,
    episodes: 10,
    timeout: Duration::from_secs(10),
};

/// `export`: as much as the APIs give in one answer each.
const EXPORT: Limits = Limits {
    facts: 200,
    entities: 100,
    episodes: 1000,
    timeout: Duration::from_secs(60),
};

/// `memories`: what is remembered for the chat of `ctx`, for a person to read.
pub fn see(
    cx: &mut Context,
    query: Option<&str>,
    ctx: &HookContext,
    operator: bool,
) -> CommandOutput {
    match fetch(cx, query, ctx, operator, SEE) {
        Ok(memories) => report::render_memories(&memories),
        Err(refused) => refused,
    }
}

/// `export`: the same as one JSON document, as much as the APIs give.
pub fn export(
    cx: &mut Context,
    query: Option<&str>,
    ctx: &HookContext,
    operator: bool,
) -> CommandOutput {
    match fetch(cx, query, ctx, operator, EXPORT) {
        Ok(memories) => report::render_export(&memories, &time::iso8601(time::now_ms())),
        Err(refused) => refused,
    }
}

/// What Graphiti remembers for the chat of `ctx`, asked within `limits`. A group chat's
/// memories go to an operator (a CLI) only: everyone in the chat would read them.
fn fetch(
    cx: &mut Context,
    query: Option<&str>,
    ctx: &HookContext,
    operator: bool,
    limits: Limits,
) -> Result<Memories, CommandOutput> {
    let group = cx
        .group(ctx)
        .map_err(|why| why.output_for("nothing to show"))?;
    if ctx.chat_type == ChatType::Group && !operator {
        return Err(ControlError::Refused(
            "in a group chat everyone would read them: an operator lists a group's memories with \
             `graphiti-openclaw memories --chat ID`"
                .into(),
        )
        .output());
    }
    let query = query.map(str::trim).filter(|q| !q.is_empty());
    let searched = query.map(|q| Query::new(q, &cx.settings.capture.redact));
    let no_entity_search = cx.no_entity_search();
    let deadline = Deadline::after(limits.timeout);
    let connected = cx.settings.graphiti.falkordb.configured().is_some();
    // Whether the listing can see the group depends on the database behind an MCP server.
    let (client, http) = cx.graphiti_knowing_database(deadline);
    let (facts, entities) = match &searched {
        Some(q) => client.search_facts_and_nodes(
            http,
            q,
            &group,
            (limits.facts, limits.entities),
            deadline,
        ),
        None => (Ok(vec![]), Ok(vec![])),
    };
    // Read in FalkorDB itself when connected; else, on FalkorDB an MCP server lists only its
    // default graph: an empty listing says nothing of the group (one living in the default graph
    // is listed, and shown).
    let unlisted = client.cannot_confirm().filter(|_| !connected);
    let episodes = match cx.recent_episodes(&group, limits.episodes, deadline) {
        Ok(Some(listed)) if listed.is_empty() && unlisted.is_some() => Ok(None),
        listed => listed,
    };
    cx.save_graphiti_session();
    Ok(Memories {
        group,
        query: query.map(str::to_string),
        facts,
        entities,
        episodes,
        unlisted,
        max: (limits.facts, limits.entities, limits.episodes),
        no_entity_search,
        turns: recent_turns(cx, ctx),
        turn_retention: cx.turns.retention(),
    })
}

/// The session's recent turns with what became of each capture, when the context names a
/// session and there is a state directory.
fn recent_turns(cx: &Context, ctx: &HookContext) -> Option<Result<Vec<ShownTurn>, ControlError>> {
    let dir = cx.state_dir?;
    let key = ctx.session_key.as_deref().or(ctx.session_id.as_deref())?;
    let past = match cx.turns.recent(key) {
        Ok(past) => past,
        Err(why) => return Some(Err(why)),
    };
    let spool = Spool::new(dir);
    let acked = spool.acked();
    let spooled = spooled_by_name(&spool);
    Some(Ok(past
        .into_iter()
        .map(|turn| ShownTurn {
            capture: capture_status(&turn.captured, &acked, &spooled),
            turn,
        })
        .collect()))
}

/// Entries read to find a turn's capture in the spool, at most.
const SPOOL_ENTRIES_READ: usize = 2000;

/// The spool's entries by the name of their episode (the first entries only, in a backlog).
fn spooled_by_name(spool: &Spool) -> HashMap<String, (State, Option<String>)> {
    spool
        .entries()
        .unwrap_or_default()
        .into_iter()
        .take(SPOOL_ENTRIES_READ)
        .filter_map(|entry| {
            let name = spool.read(&entry).ok()?.name;
            let why = entry
                .state
                .is_set_aside()
                .then(|| spool.meta(&entry.stem).set_aside_reason)
                .flatten();
            Some((name, (entry.state, why)))
        })
        .collect()
}

fn capture_status(
    captured: &Captured,
    acked: &Acked,
    spooled: &HashMap<String, (State, Option<String>)>,
) -> String {
    let name = match captured {
        Captured::Spooled(name) => name,
        Captured::Skipped(why) => return format!("not captured: {why}"),
        Captured::Dropped(why) => return format!("LOST before the spool: {why}"),
    };
    match spooled.get(name) {
        Some((State::Waiting, _)) => "waiting to be sent to Graphiti".into(),
        Some((State::Sending | State::InDoubt, _)) => {
            "sent, Graphiti's answer unknown (in doubt: checked before it is sent again)".into()
        }
        Some((_, why)) => format!(
            "set aside: {} (spool requeue sends it again)",
            why.as_deref().unwrap_or("no reason kept")
        ),
        None if acked.contains(name) => "delivered to Graphiti".into(),
        None => "no longer in the spool (delivered long ago, or forgotten)".into(),
    }
}
