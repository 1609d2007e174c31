//! Forgetting what is remembered for a chat, and correcting it. A forget is proposed first (the
//! `graphiti_forget` tool, `forget`): what a search of the chat's own group and the chat's
//! captures still in the spool hold, ranked by how many of the request's words they have (see
//! `memory::forget::words`); the good matches are proposed, the weaker ones listed apart for the
//! person to add, or exactly the ids named among the search's results. Nothing is deleted until the
//! person it was proposed to confirms it in that chat, or an operator does. Then the facts and
//! episodes are deleted from Graphiti, the search is run again to check, and every copy the plugin
//! keeps goes: captures still in the spool, the recall cache, the turn records.

mod confirm;
mod correct;
mod follow_up;
mod rank;

use rank::text_of;

use super::Engine;
use crate::memory::forget::words::Request;
use crate::memory::forget::{self, Candidate, Proposal};
use crate::memory::graphiti;
use crate::memory::graphiti::http::Deadline;
use crate::memory::graphiti::speaker_name;
use crate::memory::group_id;
use crate::memory::redaction::{self, Query};
use crate::memory::spool::Spool;
use crate::ops::reports::{self, ForgetPlan};
use crate::platform::api::{ChatType, CommandOutput, HookContext};
use crate::platform::time;
use serde_json::Value;
use std::time::Duration;

/// What a forget searches for at most, and how long Graphiti may take for each step.
const SEARCHED_FACTS: usize = 50;
const SEARCHED_ENTITIES: usize = 20;
const LISTED_EPISODES: usize = 500;
const GRAPHITI_TIMEOUT: Duration = Duration::from_secs(30);

/// A proposal with what the person should know before confirming it.
struct Proposed {
    proposal: Proposal,
    /// Entities (name, summary) whose summary matches the request: a delete never rewrites one.
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

/// What a search and a listing of one group returned.
struct Found {
    facts: Vec<Value>,
    entities: Vec<Value>,
    /// None: this server lists no episodes.
    episodes: Option<Vec<Value>>,
}

/// The sender as the chat's group names them: the host's sender id, else the session key's peer.
fn sender_of(ctx: &HookContext) -> Option<&str> {
    group_id::Conversation::of(ctx).sender
}

fn session_of(ctx: &HookContext) -> Option<&str> {
    ctx.session_key
        .as_deref()
        .or(ctx.session_id.as_deref())
        .filter(|s| !s.trim().is_empty())
}

/// The request's content words: the sender's own names carry none (they are in most facts
/// about them).
fn request_of(query: &str, ctx: &HookContext) -> Request {
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

/// The entities (name, summary) whose summary matches the request well: a delete never rewrites
/// a summary, so these may still say what is forgotten.
fn summaries_matching(entities: &[Value], request: &Request) -> Vec<(String, String)> {
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

impl Engine {
    /// Proposes a forget: lists what would go under a pending id, and deletes nothing.
    pub(super) fn propose_forget(&mut self, ask: &ForgetAsk) -> CommandOutput {
        self.ensure_loaded();
        // The request is searched for and kept with the proposal; memories hold only markers.
        let query = ask
            .query
            .map(|q| redaction::redact(q, &self.config.settings.capture.redact).text);
        let ask = &ForgetAsk {
            query: query.as_deref(),
            ..*ask
        };
        let Some(dir) = self.host.state_dir.clone() else {
            return reports::failure(
                1,
                "no state directory: the host mounted none, so a forget cannot wait for its \
                 confirmation",
            );
        };
        let group = match self.forget_scope(ask) {
            Ok(group) => group,
            Err(refused) => return refused,
        };
        let kept_out = if ask.operator {
            Ok(())
        } else {
            self.keep_turn_out_of_capture(ask.ctx)
        };
        let proposed = if ask.everything {
            self.whole_chat(&dir, ask, &group)
        } else {
            match self.matching(&dir, ask, &group) {
                Ok(found) => found,
                Err(refused) => return refused,
            }
        };
        let Proposed {
            proposal,
            summaries,
            unmatched,
            more,
            left_alone,
        } = proposed;
        if proposal.is_empty() && proposal.candidates.is_empty() {
            return CommandOutput {
                exit_code: u8::from(proposal.unsearched.is_some()),
                stdout: reports::render_nothing_to_forget(&proposal, unmatched),
                stderr: String::new(),
            };
        }
        let stored = match forget::propose(&dir, proposal, &mut *self.host.locks) {
            Ok(stored) => stored,
            Err(why) => return reports::failure(1, format!("nothing proposed: {why}")),
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
            no_entity_search: self.no_entity_search(),
            at_once: ask.operator && ask.at_once,
        };
        let rendered = reports::render_forget_plan(&plan);
        if plan.at_once {
            let mut done = self.confirm_forget(&stored.proposal.id, ask.ctx, true, (&[], &[]));
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

    fn no_entity_search(&self) -> bool {
        self.config.settings.graphiti.transport == crate::config::Transport::Rest
    }

    /// The group a forget may reach, or why it may not.
    fn forget_scope(&self, ask: &ForgetAsk) -> Result<String, CommandOutput> {
        let group = self
            .memory_group(ask.ctx)
            .map_err(|why| reports::failure(1, format!("nothing to forget: {why}")))?;
        if ask.ctx.chat_type == ChatType::Group && !ask.operator {
            return Err(reports::failure(
                1,
                "in a group chat everyone would read what is listed: an operator forgets a group's \
                 memories with `graphiti-openclaw forget \"<words>\" --chat ID`",
            ));
        }
        if ask.everything && !ask.operator {
            return Err(reports::failure(
                1,
                "only an operator forgets everything of a chat at once (`forget --all`)",
            ));
        }
        if let Some(bad) = ask.ids.iter().find(|id| !graphiti::is_uuid_like(id)) {
            return Err(reports::failure(
                2,
                format!(
                    "{:?} cannot be a Graphiti id (letters, digits, - and _, at most {} \
                     characters): nothing proposed",
                    crate::platform::text::truncate_chars(bad, 60),
                    graphiti::MAX_ID_CHARS
                ),
            ));
        }
        let query = ask.query.map(str::trim).unwrap_or_default();
        if !ask.everything && query.is_empty() {
            return Err(reports::failure(
                2,
                "what should be forgotten? Give the words of it (a search of this chat's \
                 memories), and optionally the ids among its results",
            ));
        }
        if !ask.everything && ask.ids.is_empty() && request_of(query, ask.ctx).is_empty() {
            return Err(reports::failure(
                2,
                format!(
                    "{:?} names nothing to look for: speaker labels (user, assistant), your own \
                     name and words such as \"forget\" or \"said\" are not matched. Give the \
                     words of what should be forgotten; nothing proposed",
                    crate::platform::text::truncate_chars(query, 80)
                ),
            ));
        }
        Ok(group)
    }

    /// The turn in which the model proposes a forget is not remembered: neither the request nor
    /// the listed items.
    fn keep_turn_out_of_capture(&mut self, ctx: &HookContext) -> Result<(), String> {
        match (self.host.state_dir.as_deref(), session_of(ctx)) {
            (Some(dir), Some(key)) => crate::engine::turns::keep_out_of_capture(
                &mut self.turns.kept,
                dir,
                key,
                "the turn asked to forget memories",
            ),
            _ => Ok(()),
        }
    }

    /// What the chat's group and its captures in the spool hold that the request matches, ranked
    /// (or exactly the ids named among the search's results). When Graphiti cannot be searched,
    /// the captures alone, and the proposal says so.
    fn matching(
        &mut self,
        dir: &std::path::Path,
        ask: &ForgetAsk,
        group: &str,
    ) -> Result<Proposed, CommandOutput> {
        let query = ask.query.unwrap_or_default().trim();
        let request = request_of(query, ask.ctx);
        let found = self.find(query, group);
        if let (Err(why), false) = (&found, ask.ids.is_empty()) {
            return Err(reports::failure(
                1,
                format!("nothing proposed: the ids named cannot be checked: {why}"),
            ));
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
            rank::chosen_by_ids(
                ask.ids,
                query,
                &request,
                &searched.facts,
                episodes,
                &captures,
            )?
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
            unsearched: found.as_ref().err().cloned(),
        };
        Ok(Proposed {
            proposal,
            summaries: summaries_matching(&searched.entities, &request),
            unmatched: ranked.unmatched,
            more: ranked.more,
            left_alone: vec![],
        })
    }

    fn find(&mut self, query: &str, group: &str) -> Result<Found, String> {
        let deadline = Deadline::after(GRAPHITI_TIMEOUT);
        let query = Query::new(query, &self.config.settings.capture.redact);
        let (client, http) = self.graphiti();
        let (facts, entities) = client.search_facts_and_nodes(
            http,
            &query,
            group,
            (SEARCHED_FACTS, SEARCHED_ENTITIES),
            deadline,
        );
        let episodes = client.recent_episodes(http, group, LISTED_EPISODES, deadline);
        let mut notes = Vec::new();
        self.save_graphiti_session(&mut notes);
        let searched = |e: graphiti::GraphitiError| format!("the search failed: {e}");
        Ok(Found {
            facts: facts.map_err(searched)?,
            entities: entities.map_err(searched)?,
            episodes: episodes.map_err(|e| format!("the episode listing failed: {e}"))?,
        })
    }

    /// An operator's forget of a whole chat: its group, and with `earlier_groups` the groups its
    /// conversation mapped to under earlier group-id rules. Those rules mapped other ids there too
    /// (they cleaned values lossily, or kept a template's separators), so without it they are
    /// left alone and named, with the other chats known to have gone there.
    fn whole_chat(&self, dir: &std::path::Path, ask: &ForgetAsk, group: &str) -> Proposed {
        let templates = &self.config.settings.graphiti.group_id;
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
                    let others = other_chats_in(dir, templates, &old, group);
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
        Proposed {
            proposal,
            summaries: vec![],
            unmatched: 0,
            more: 0,
            left_alone,
        }
    }
}

/// The recent sessions (at most a few) of conversations other than `group`'s whose turns went to
/// `old`, or would have under an earlier rule.
fn other_chats_in(
    dir: &std::path::Path,
    templates: &group_id::GroupIdSettings,
    old: &str,
    group: &str,
) -> Vec<String> {
    let mut sessions: Vec<String> = crate::engine::turns::all(dir)
        .unwrap_or_default()
        .iter()
        .filter(|r| {
            let ctx = crate::engine::commands::recorded_context(r);
            let now = group_id::group_id(templates, &ctx).ok();
            let went_there = r.group_id.as_deref() == Some(old)
                || group_id::legacy_group_id(templates, &ctx) == old
                || group_id::previous_group_id(templates, &ctx).ok().as_deref() == Some(old);
            went_there && now.as_deref() != Some(group)
        })
        .map(|r| r.session_key.clone())
        .collect();
    crate::platform::sorting::sort(&mut sessions);
    sessions.dedup();
    sessions.truncate(5);
    sessions
}

/// The group's last capture Graphiti acknowledged, as the acknowledgement journal lists them.
fn last_accepted(dir: &std::path::Path, group: &str) -> Option<String> {
    Spool::new(dir)
        .acked_names_containing(&format!("-{group}-"))
        .pop()
}

/// The group's captures Graphiti acknowledged up to and including `until` (in the journal's
/// order): none when `until` is none or no longer in the journal.
fn accepted_up_to(dir: &std::path::Path, group: &str, until: Option<&str>) -> Vec<String> {
    let Some(until) = until else {
        return vec![];
    };
    let names = Spool::new(dir).acked_names_containing(&format!("-{group}-"));
    match names.iter().position(|n| n == until) {
        Some(at) => names[..=at].to_vec(),
        None => vec![],
    }
}
