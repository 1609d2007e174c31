//! A forget proposed: what the chat's group and its captures in the spool hold that the request
//! matches (or exactly the ids named among the search's results; or, for an operator, everything
//! of the chat), listed under a pending id. Nothing is deleted until it is confirmed.

use super::confirm::confirm_forget;
use super::entity;
use super::rank;
use super::report::{ForgetPlan, render_forget_plan, render_nothing_to_forget};
use super::search::{Found, find, last_accepted, request_of, sender_of, session_of};
use super::{Candidate, Proposal, reach};
use crate::memory::control::context::Context;
use crate::memory::control::error::ControlError;
use crate::memory::graphiti;
use crate::memory::group_id;
use crate::memory::redaction;
use crate::platform::api::{ChatType, CommandOutput, HookContext};
use crate::platform::time;
use serde_json::Value;
use std::path::Path;

/// A proposal with what the person should know before confirming it.
struct Drafted {
    proposal: Proposal,
    /// Entities (name, summary) whose summary matches the request: a delete may leave it as it is.
    summaries: Vec<(String, String)>,
    /// Search results that share no word with the request.
    unmatched: usize,
    /// Matches beyond what one proposal lists.
    more: usize,
    /// Earlier groups of a whole chat that other ids map to, left alone: each with the other
    /// chats' sessions known to have gone there.
    left_alone: Vec<(String, Vec<String>)>,
}

/// A forget asked for.
pub struct ForgetAsk<'a> {
    pub query: Option<&'a str>,
    pub ids: &'a [String],
    /// Everything of the chat (an operator only).
    pub everything: bool,
    /// With `everything`: the groups the chat's memories went to under earlier group-id rules.
    pub earlier_groups: bool,
    pub ctx: &'a HookContext,
    pub operator: bool,
    /// An operator's forget, carried out without waiting for a confirmation.
    pub at_once: bool,
}

/// Proposes a forget: lists what would go under a pending id, and deletes nothing.
pub fn propose_forget(cx: &mut Context, ask: &ForgetAsk) -> CommandOutput {
    // The request is searched for and kept with the proposal; memories hold only markers.
    let query = ask
        .query
        .map(|q| redaction::redact(q, &cx.settings.capture.redact).text);
    let ask = &ForgetAsk {
        query: query.as_deref(),
        ..*ask
    };
    let dir = match cx
        .state_dir_for("the host mounted none, so a forget cannot wait for its confirmation")
    {
        Ok(dir) => dir.to_path_buf(),
        Err(refused) => return refused.output(),
    };
    let group = match forget_scope(cx, ask) {
        Ok(group) => group,
        Err(refused) => return refused,
    };
    let kept_out = match (ask.operator, session_of(ask.ctx)) {
        (false, Some(key)) => cx
            .turns
            .keep_out_of_capture(key, "the turn asked to forget memories"),
        _ => Ok(()),
    };
    let drafted = if ask.everything {
        whole_chat(cx, &dir, ask, &group)
    } else {
        match matching(cx, &dir, ask, &group) {
            Ok(found) => found,
            Err(refused) => return refused,
        }
    };
    let Drafted {
        proposal,
        summaries,
        unmatched,
        more,
        left_alone,
    } = drafted;
    if proposal.is_empty() && proposal.candidates.is_empty() {
        return CommandOutput {
            exit_code: u8::from(proposal.unsearched.is_some()),
            stdout: render_nothing_to_forget(&proposal, unmatched),
            stderr: String::new(),
        };
    }
    let cannot_delete = reach::deletes_warning(cx, &proposal);
    let stored = match super::propose(&dir, proposal, &mut *cx.locks) {
        Ok(stored) => stored,
        Err(why) => return why.output_for("nothing proposed"),
    };
    let plan = ForgetPlan {
        proposal: &stored.proposal,
        summaries: &summaries,
        unmatched,
        more,
        replaced: stored.replaced.as_deref(),
        notes: &stored.notes,
        left_alone: &left_alone,
        operator: ask.operator,
        no_entity_search: cx.no_entity_search(),
        at_once: ask.operator && ask.at_once,
        cannot_delete: cannot_delete.as_deref(),
    };
    let rendered = render_forget_plan(&plan);
    if plan.at_once {
        let mut done = confirm_forget(cx, &stored.proposal.id, ask.ctx, true, (&[], &[]));
        done.stdout = format!("{rendered}{}", done.stdout);
        return done;
    }
    CommandOutput {
        exit_code: 0,
        stdout: rendered,
        stderr: kept_out
            .err()
            .map(|e| format!("this turn may still be remembered: {e}\n"))
            .unwrap_or_default(),
    }
}

/// The group a forget may reach, or why it may not.
fn forget_scope(cx: &Context, ask: &ForgetAsk) -> Result<String, CommandOutput> {
    let group = cx
        .group(ask.ctx)
        .map_err(|why| why.output_for("nothing to forget"))?;
    let refused = |why: ControlError| Err(why.output());
    if ask.ctx.chat_type == ChatType::Group && !ask.operator {
        return refused(ControlError::Refused(
            "in a group chat everyone would read what is listed: an operator forgets a group's \
             memories with `graphiti-openclaw forget \"<words>\" --chat ID`"
                .into(),
        ));
    }
    if ask.everything && !ask.operator {
        return refused(ControlError::Refused(
            "only an operator forgets everything of a chat at once (`forget --all`)".into(),
        ));
    }
    if let Some(bad) = ask.ids.iter().find(|id| !graphiti::is_uuid_like(id)) {
        return refused(ControlError::Unusable(format!(
            "{:?} cannot be a Graphiti id (letters, digits, - and _, at most {} characters): \
             nothing proposed",
            crate::platform::text::truncate_chars(bad, 60),
            graphiti::MAX_ID_CHARS
        )));
    }
    let query = ask.query.map(str::trim).unwrap_or_default();
    if !ask.everything && query.is_empty() {
        return refused(ControlError::Unusable(
            "what should be forgotten? Give the words of it (a search of this chat's memories), \
             and optionally the ids among its results"
                .into(),
        ));
    }
    if !ask.everything && ask.ids.is_empty() && request_of(query, ask.ctx).is_empty() {
        return refused(ControlError::Unusable(format!(
            "{:?} names nothing to look for: speaker labels (user, assistant), your own name and \
             words such as \"forget\" or \"said\" are not matched. Give the words of what should \
             be forgotten; nothing proposed",
            crate::platform::text::truncate_chars(query, 80)
        )));
    }
    Ok(group)
}

/// What the chat's group and its captures in the spool hold that the request matches, ranked
/// (or exactly the ids named among the search's results). When Graphiti cannot be searched,
/// the captures alone, and the proposal says so.
fn matching(
    cx: &mut Context,
    dir: &Path,
    ask: &ForgetAsk,
    group: &str,
) -> Result<Drafted, CommandOutput> {
    let query = ask.query.unwrap_or_default().trim();
    let request = request_of(query, ask.ctx);
    let found = find(cx, query, group);
    if let (Err(why), false) = (&found, ask.ids.is_empty()) {
        return Err(why.output_for("nothing proposed: the ids named cannot be checked"));
    }
    let captures = rank::captures_of(dir, group);
    let empty = Found {
        facts: vec![],
        entities: vec![],
        episodes: None,
    };
    let searched = found.as_ref().unwrap_or(&empty);
    let episodes: &[Value] = searched.episodes.as_deref().unwrap_or_default();
    let ranked = if ask.ids.is_empty() {
        rank::rank(&request, &searched.facts, episodes, &captures)
    } else {
        let mut ranked = rank::chosen_by_ids(
            ask.ids,
            query,
            &request,
            (&searched.facts, &searched.entities),
            episodes,
            &captures,
        )
        .map_err(|unknown| unknown.output())?;
        entity::with_its_facts(cx, group, ask.ctx, &mut ranked.candidates)
            .map_err(|refused| refused.output())?;
        ranked
    };
    let proposal = Proposal {
        id: String::new(),
        created_ms: time::now_ms(),
        group: group.to_string(),
        sender: sender_of(ask.ctx).map(str::to_string),
        session: session_of(ask.ctx).map(str::to_string),
        query: Some(query.to_string()),
        words: request.words.len(),
        candidates: ranked.candidates,
        whole_groups: vec![],
        chosen_by_id: !ask.ids.is_empty(),
        accepted_until: last_accepted(dir, group),
        unsearched: found.as_ref().err().map(ToString::to_string),
    };
    Ok(Drafted {
        proposal,
        summaries: super::search::summaries_matching(&searched.entities, &request),
        unmatched: ranked.unmatched,
        more: ranked.more,
        left_alone: vec![],
    })
}

/// An operator's forget of a whole chat: its group, and with `earlier_groups` the groups its
/// conversation mapped to under earlier group-id rules. Those rules mapped other ids there too
/// (they cleaned values lossily, or kept a template's separators), so without it they are
/// left alone and named, with the other chats known to have gone there.
fn whole_chat(cx: &Context, dir: &Path, ask: &ForgetAsk, group: &str) -> Drafted {
    let templates = &cx.settings.graphiti.group_id;
    let mut earlier: Vec<String> = Vec::new();
    let previous = group_id::previous_group_id(templates, ask.ctx).ok();
    for old in [
        Some(group_id::legacy_group_id(templates, ask.ctx)),
        previous,
    ]
    .into_iter()
    .flatten()
    {
        if old != group && !earlier.contains(&old) {
            earlier.push(old);
        }
    }
    let mut groups = vec![group.to_string()];
    let mut left_alone = Vec::new();
    if ask.earlier_groups {
        groups.extend(earlier);
    } else {
        left_alone = earlier
            .into_iter()
            .map(|old| {
                let others = other_chats_in(cx, templates, &old, group);
                (old, others)
            })
            .collect();
    }
    let captures: Vec<Candidate> = rank::captures_of_groups(dir, &groups)
        .into_iter()
        .map(|c| Candidate {
            chosen: true,
            ..c.candidate(vec![])
        })
        .collect();
    let proposal = Proposal {
        id: String::new(),
        created_ms: time::now_ms(),
        group: group.to_string(),
        sender: None,
        session: None,
        query: None,
        words: 0,
        candidates: captures,
        whole_groups: groups,
        chosen_by_id: false,
        accepted_until: None,
        unsearched: None,
    };
    Drafted {
        proposal,
        summaries: vec![],
        unmatched: 0,
        more: 0,
        left_alone,
    }
}

/// The recent sessions (at most a few) of conversations other than `group`'s whose turns went to
/// `old`, or would have under an earlier rule.
fn other_chats_in(
    cx: &Context,
    templates: &group_id::GroupIdSettings,
    old: &str,
    group: &str,
) -> Vec<String> {
    let mut sessions: Vec<String> = cx
        .turns
        .sessions()
        .unwrap_or_default()
        .iter()
        .filter(|r| {
            let now = group_id::group_id(templates, &r.ctx).ok();
            let went_there = r.group_id.as_deref() == Some(old)
                || group_id::legacy_group_id(templates, &r.ctx) == old
                || group_id::previous_group_id(templates, &r.ctx)
                    .ok()
                    .as_deref()
                    == Some(old);
            went_there && now.as_deref() != Some(group)
        })
        .map(|r| r.session_key.clone())
        .collect();
    crate::platform::sorting::sort(&mut sessions);
    sessions.dedup();
    sessions.truncate(5);
    sessions
}
