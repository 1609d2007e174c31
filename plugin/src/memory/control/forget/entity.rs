//! Forgetting an entity the person names by its id: it goes with every fact of it, so the proposal
//! lists each of those facts. Only through the FalkorDB connection (Graphiti's API has no call
//! that deletes an entity), and never the person's own entity: nearly every memory of the chat is
//! a fact of it, so that is an operator's forget of the whole chat.

use super::search::GRAPHITI_TIMEOUT;
use super::{Candidate, Kind};
use crate::memory::control::context::Context;
use crate::memory::control::error::ControlError;
use crate::memory::falkordb::group_graph;
use crate::memory::graphiti::http::Deadline;
use crate::memory::graphiti::speaker_name;
use crate::platform::api::HookContext;

/// Adds, chosen, every fact of each entity among `candidates`; refuses an entity when the plugin
/// cannot delete one, or when it is the person's own.
pub(super) fn with_its_facts(
    cx: &mut Context,
    group: &str,
    ctx: &HookContext,
    candidates: &mut Vec<Candidate>,
) -> Result<(), ControlError> {
    let entities: Vec<(String, String)> = candidates
        .iter()
        .filter(|c| c.kind == Kind::Entity)
        .map(|c| (c.id.clone(), name_of(&c.shown).to_string()))
        .collect();
    if entities.is_empty() {
        return Ok(());
    }
    if let Some((_, name)) = entities.iter().find(|(_, name)| is_own(name, ctx)) {
        return Err(ControlError::Refused(format!(
            "{name} is you: nearly every memory of this chat is a fact of that entity, so \
             forgetting it would be forgetting the whole chat, which an operator does \
             (`forget --all`). Nothing proposed; name the facts to forget instead"
        )));
    }
    let Some(mut falkor) = cx.falkor(Deadline::after(GRAPHITI_TIMEOUT)) else {
        return Err(ControlError::Refused(
            "Graphiti's API has no call that deletes an entity: connect the plugin to the \
             FalkorDB behind Graphiti (docs/memory-control.md, \"Connecting to FalkorDB\"), or \
             name its facts. Nothing proposed"
                .into(),
        ));
    };
    for (uuid, name) in entities {
        let facts = group_graph::facts_of_entity(&mut falkor, group, &uuid).map_err(|e| {
            ControlError::Unusable(format!(
                "the facts of {name} cannot be listed: FalkorDB: {e}"
            ))
        })?;
        for (fact, text) in facts {
            if !candidates.iter().any(|c| c.id == fact) {
                candidates.push(Candidate {
                    kind: Kind::Fact,
                    id: fact,
                    shown: text,
                    matched: vec![],
                    chosen: true,
                    name: None,
                });
            }
        }
    }
    Ok(())
}

/// The entity's name, from what the proposal shows of it (`name: summary`).
fn name_of(shown: &str) -> &str {
    shown.split_once(": ").map_or(shown, |(name, _)| name)
}

/// Whether `name` names the person asking: their name or id, or the speaker name their turns are
/// captured under.
fn is_own(name: &str, ctx: &HookContext) -> bool {
    let speaker = speaker_name(ctx.sender_name.as_deref(), ctx.sender_id.as_deref());
    [
        ctx.sender_name.as_deref(),
        ctx.sender_id.as_deref(),
        speaker.as_deref(),
        Some("user"),
    ]
    .into_iter()
    .flatten()
    .any(|own| own.trim().eq_ignore_ascii_case(name.trim()))
}
