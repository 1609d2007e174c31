//! Forgetting what is remembered for a chat, and correcting it. A forget is proposed first (the
//! `graphiti_forget` tool, `memory forget`): what a search of the chat's own group returned and
//! shares a word with it, or exactly the ids named among those results; nothing is deleted until the
//! person it was proposed to confirms it in that chat, or an operator does. Then the facts and
//! episodes are deleted from Graphiti, the search is run again to check, and every copy the plugin
//! keeps goes: captures still in the spool, the recall cache, the turn records.

mod confirm;
mod correct;
mod follow_up;

use super::Engine;
use crate::memory::forget::{self, Item as ShownItem, Proposal};
use crate::memory::graphiti;
use crate::memory::graphiti::http::Deadline;
use crate::memory::spool::Spool;
use crate::memory::{group_id, recall_cache};
use crate::ops::reports::{self, ForgetPlan};
use crate::platform::api::{ChatType, CommandOutput, HookContext};
use crate::platform::time;
use serde_json::Value;
use std::collections::HashSet;
use std::time::Duration;

/// What a forget searches for at most, and how long Graphiti may take for each step.
const SEARCHED_FACTS: usize = 50;
const SEARCHED_ENTITIES: usize = 20;
const LISTED_EPISODES: usize = 500;
const GRAPHITI_TIMEOUT: Duration = Duration::from_secs(30);

/// A proposal with what the confirmation should know: entities (name, summary) whose summary
/// mentions the search, and how many results were left out for sharing no word with it.
struct Proposed {
    proposal: Proposal,
    summaries: Vec<(String, String)>,
    left_out: usize,
}

/// A forget asked for.
pub struct ForgetAsk<'a> {
    pub query: Option<&'a str>,
    pub ids: &'a [String],
    /// Everything of the chat, under its earlier group ids too (an operator only).
    pub everything: bool,
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

fn text_of<'a>(value: &'a Value, field: &str) -> &'a str {
    value.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// The salient words of a request, as recall's cache keys them.
fn terms_of(text: &str) -> HashSet<String> {
    recall_cache::terms(text).into_iter().collect()
}

fn shares_a_term(text: &str, terms: &HashSet<String>) -> bool {
    recall_cache::terms(text).iter().any(|t| terms.contains(t))
}

/// The entities (name, summary) whose summary shares a word with `terms`: a delete never rewrites
/// a summary, so these may still say what is forgotten.
fn summaries_mentioning(entities: &[Value], terms: &HashSet<String>) -> Vec<(String, String)> {
    entities
        .iter()
        .filter(|n| shares_a_term(text_of(n, "summary"), terms))
        .map(|n| {
            (
                text_of(n, "name").to_string(),
                text_of(n, "summary").to_string(),
            )
        })
        .collect()
}

fn shown_item(value: &Value, field: &str) -> ShownItem {
    ShownItem {
        uuid: text_of(value, "uuid").to_string(),
        shown: crate::platform::text::truncate_chars(text_of(value, field), 200),
    }
}

impl Engine {
    /// Proposes a forget: lists what would go under a pending id, and deletes nothing.
    pub(super) fn propose_forget(&mut self, ask: &ForgetAsk) -> CommandOutput {
        self.ensure_loaded();
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
        let proposal = if ask.everything {
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
            left_out,
        } = proposal;
        if proposal.is_empty() {
            return CommandOutput {
                exit_code: 0,
                stdout: reports::render_nothing_to_forget(&group, ask.query, left_out),
                stderr: String::new(),
            };
        }
        match forget::propose(&dir, proposal, &mut *self.host.locks) {
            Ok(proposal) if ask.operator && ask.at_once => {
                let mut done = self.confirm_forget(&proposal.id, ask.ctx, true);
                done.stdout = format!(
                    "{}{}",
                    reports::render_forget_plan(&ForgetPlan {
                        proposal: &proposal,
                        summaries: &summaries,
                        left_out,
                        operator: true,
                        no_entity_search: self.no_entity_search(),
                        at_once: true,
                    }),
                    done.stdout
                );
                done
            }
            Ok(proposal) => CommandOutput {
                exit_code: 0,
                stdout: reports::render_forget_plan(&ForgetPlan {
                    proposal: &proposal,
                    summaries: &summaries,
                    left_out,
                    operator: ask.operator,
                    no_entity_search: self.no_entity_search(),
                    at_once: false,
                }),
                stderr: kept_out
                    .err()
                    .map(|e| format!("this turn may still be remembered: {e}\n"))
                    .unwrap_or_default(),
            },
            Err(why) => reports::failure(1, format!("nothing proposed: {why}")),
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
                 memories with `memory forget --chat ID`",
            ));
        }
        if ask.everything && !ask.operator {
            return Err(reports::failure(
                1,
                "only an operator forgets everything of a chat at once (`memory forget --all`)",
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
        let has_query = ask.query.is_some_and(|q| !q.trim().is_empty());
        if !ask.everything && !has_query {
            return Err(reports::failure(
                2,
                "what should be forgotten? Give the words of it (a search of this chat's \
                 memories), and optionally the ids among its results",
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

    /// The items of the chat's group the search found that share a word with it (or exactly the
    /// ids named among them), with the entities whose summaries mention it, and how many results
    /// were left out for sharing no word.
    fn matching(
        &mut self,
        dir: &std::path::Path,
        ask: &ForgetAsk,
        group: &str,
    ) -> Result<Proposed, CommandOutput> {
        let query = ask.query.unwrap_or_default().trim();
        let found = self
            .find(query, group)
            .map_err(|why| reports::failure(1, format!("nothing proposed: {why}")))?;
        let terms = terms_of(query);
        let episodes: &[Value] = found.episodes.as_deref().unwrap_or_default();
        let (facts, episodes, left_out) = if ask.ids.is_empty() {
            let facts: Vec<&Value> = found
                .facts
                .iter()
                .filter(|f| {
                    shares_a_term(
                        &format!("{} {}", text_of(f, "fact"), text_of(f, "name")),
                        &terms,
                    )
                })
                .collect();
            let carriers: HashSet<&str> = facts
                .iter()
                .filter_map(|f| f.get("episodes").and_then(Value::as_array))
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let chosen_episodes: Vec<&Value> = episodes
                .iter()
                .filter(|e| {
                    carriers.contains(text_of(e, "uuid"))
                        || shares_a_term(text_of(e, "content"), &terms)
                })
                .collect();
            let left_out = found.facts.len() - facts.len();
            (facts, chosen_episodes, left_out)
        } else {
            let (facts, chosen) = chosen_by_ids(ask.ids, query, &found.facts, episodes)?;
            (facts, chosen, 0)
        };
        let summaries = summaries_mentioning(&found.entities, &terms);
        let spooled = spooled_mentioning(dir, &[group.to_string()], Some(&terms));
        let proposal = Proposal {
            id: String::new(),
            created_ms: time::now_ms(),
            group: group.to_string(),
            sender: sender_of(ask.ctx).map(str::to_string),
            session: session_of(ask.ctx).map(str::to_string),
            query: Some(query.to_string()),
            facts: facts.iter().map(|f| shown_item(f, "fact")).collect(),
            episodes: episodes.iter().map(|e| shown_item(e, "content")).collect(),
            spooled,
            whole_groups: vec![],
            chosen_by_id: !ask.ids.is_empty(),
            accepted: Spool::new(dir).acked_names_containing(&format!("-{group}-")),
        };
        Ok(Proposed {
            proposal,
            summaries,
            left_out,
        })
    }

    fn find(&mut self, query: &str, group: &str) -> Result<Found, String> {
        let deadline = Deadline::after(GRAPHITI_TIMEOUT);
        let (client, http) = self.graphiti();
        let (facts, entities) = client.search_facts_and_nodes(
            http,
            query,
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

    /// An operator's forget of a whole chat: its group, and the groups its conversation mapped to
    /// under earlier group-id rules when no other conversation shares them.
    fn whole_chat(&self, dir: &std::path::Path, ask: &ForgetAsk, group: &str) -> Proposed {
        let mut groups = vec![group.to_string()];
        let legacy = group_id::legacy_group_id(&self.config.settings.graphiti.group_id, ask.ctx);
        if legacy != group && !self.shared_with_other_chats(dir, &legacy, group) {
            groups.push(legacy);
        }
        let spooled = spooled_mentioning(dir, &groups, None);
        let proposal = Proposal {
            id: String::new(),
            created_ms: time::now_ms(),
            group: group.to_string(),
            sender: None,
            session: None,
            query: None,
            facts: vec![],
            episodes: vec![],
            spooled,
            whole_groups: groups,
            chosen_by_id: false,
            accepted: vec![],
        };
        Proposed {
            proposal,
            summaries: vec![],
            left_out: 0,
        }
    }

    /// Whether a recent turn of a conversation that now maps elsewhere than `group` went to `old`.
    fn shared_with_other_chats(&self, dir: &std::path::Path, old: &str, group: &str) -> bool {
        let templates = &self.config.settings.graphiti.group_id;
        crate::engine::turns::all(dir)
            .unwrap_or_default()
            .iter()
            .filter(|r| r.group_id.as_deref() == Some(old))
            .any(|r| {
                let ctx = crate::engine::commands::recorded_context(r);
                group_id::group_id(templates, &ctx).map_or(true, |now| now != group)
            })
    }
}

/// Exactly the named ids among the search's facts and the listed episodes; an id among neither is
/// refused, whatever else it may name.
fn chosen_by_ids<'v>(
    ids: &[String],
    query: &str,
    facts: &'v [Value],
    episodes: &'v [Value],
) -> Result<(Vec<&'v Value>, Vec<&'v Value>), CommandOutput> {
    let named = |v: &&Value| ids.iter().any(|id| id == text_of(v, "uuid"));
    let facts: Vec<&Value> = facts.iter().filter(named).collect();
    let episodes: Vec<&Value> = episodes.iter().filter(named).collect();
    let known: HashSet<&str> = facts
        .iter()
        .chain(&episodes)
        .map(|v| text_of(v, "uuid"))
        .collect();
    let unknown: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| !known.contains(id))
        .collect();
    if unknown.is_empty() {
        return Ok((facts, episodes));
    }
    Err(reports::failure(
        1,
        format!(
            "not among what a search of this chat's memories for {query:?} and its recent \
             episodes returned: {}. Nothing proposed: only ids this chat's own search shows can \
             be forgotten here",
            unknown.join(", ")
        ),
    ))
}

/// The stems of spool entries (in any state) of `groups` that mention one of `terms` (any entry
/// of them when none).
fn spooled_mentioning(
    dir: &std::path::Path,
    groups: &[String],
    terms: Option<&HashSet<String>>,
) -> Vec<String> {
    let spool = Spool::new(dir);
    spool
        .entries()
        .unwrap_or_default()
        .into_iter()
        .filter(|entry| {
            spool.read(entry).is_ok_and(|episode| {
                groups.contains(&episode.group_id)
                    && terms.is_none_or(|terms| shares_a_term(&episode.body(), terms))
            })
        })
        .map(|entry| entry.stem)
        .collect()
}
