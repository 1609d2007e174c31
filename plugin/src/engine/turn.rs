//! The turn: before the agent starts, recall (within its budget) and routing, the record of what was
//! injected, and the experts' system context.

use super::Engine;
use crate::api::{ChatType, HookContext, PromptEvent};
use crate::decision::{Decision, Injection};
use crate::graphiti::GraphitiError;
use crate::graphiti::http::Deadline;
use crate::group_id;
use crate::recall::{self, Recall};
use crate::recall_cache;
use crate::relevance;
use crate::routing::{PreviousTurn, RouteInput, Routed};
use crate::state::{self, SessionState};
use crate::time;
use crate::turns::{self, TurnRecord};
use serde_json::Value;
use std::time::Duration;

impl Engine {
    /// Recall and routing (user turns), plus the experts' system context (any turn: expert sessions
    /// are sub-agent turns).
    pub fn before_agent_start(&mut self, event: &PromptEvent, ctx: &HookContext) -> Injection {
        // The turn's one reading of the host's clock: routing and the records take it as an input.
        let now_ms = time::now_ms();
        let mut injection = self.recall_and_route(event, ctx, now_ms);
        let system = self.experts.for_turn(ctx, now_ms / 1000);
        injection.system_context = system.expert_prompt;
        injection.append_system_context = system.registry;
        injection.notes.extend(system.notes);
        injection
    }

    fn recall_and_route(
        &mut self,
        event: &PromptEvent,
        ctx: &HookContext,
        now_ms: u64,
    ) -> Injection {
        self.ensure_loaded();
        if !self.is_user_turn(ctx) {
            let reason = format!(
                "trigger {:?} is not a user turn",
                ctx.trigger.as_deref().unwrap_or_default()
            );
            return Injection {
                decision: Decision::none(reason),
                ..Injection::default()
            };
        }
        let mut notes = Vec::new();
        let session_key = ctx.session_key.as_deref().or(ctx.session_id.as_deref());
        let previous = self.previous_turn(session_key, &mut notes);
        let group = group_id::group_id(&self.settings.graphiti.group_id, ctx);
        let mut relevance = Vec::new();
        let (memory_block, recall, outcome) =
            self.recall_for_turn(event, &group, &mut notes, &mut relevance);
        let searched_group = (!matches!(outcome, RecallOutcome::Skipped)).then_some(group);
        let recall_summary = outcome.summary(&recall, &notes);
        let routed = self.route(event, ctx, &recall, previous.as_ref(), now_ms);
        self.remember_turn(session_key, previous.as_ref(), &routed, now_ms, &mut notes);
        self.count_turn(outcome, &routed);
        notes.extend(routed.notes);
        let blocks: Vec<String> = memory_block
            .into_iter()
            .chain(routed.pack_context)
            .collect();
        let injection = Injection {
            prepend_context: (!blocks.is_empty()).then(|| blocks.join("\n\n")),
            decision: routed.decision,
            notes,
            ..Injection::default()
        };
        match session_key {
            Some(key) => {
                let recalled = (searched_group, recall_summary, relevance);
                self.record_turn(key, event, now_ms, recalled, injection)
            }
            None => injection,
        }
    }

    /// What the session's previous turn injected (for stickiness); trouble reading it is a note.
    fn previous_turn(
        &self,
        session_key: Option<&str>,
        notes: &mut Vec<String>,
    ) -> Option<SessionState> {
        match (&self.state_dir, session_key) {
            (Some(dir), Some(key)) => state::previous_turn(dir, key).unwrap_or_else(|e| {
                notes.push(e);
                None
            }),
            _ => None,
        }
    }

    /// Routing with the configuration in force; without one, no pack and the reason the load gave.
    fn route(
        &self,
        event: &PromptEvent,
        ctx: &HookContext,
        recall: &Recall,
        previous: Option<&SessionState>,
        now_ms: u64,
    ) -> Routed {
        let previous = previous.and_then(|p| {
            Some(PreviousTurn {
                intent: p.intent.as_deref()?,
                injected_at_ms: p.injected_at_ms,
                carried_turns: p.carried_turns,
                named: p.named.as_deref(),
            })
        });
        match self.config.router() {
            Some(router) => router.route(&RouteInput {
                prompt: &event.prompt,
                recall,
                group_chat: ctx.chat_type == ChatType::Group,
                previous,
                now_ms,
            }),
            // The load reported why; the decision says it, the turn's notes do not repeat it.
            None => Routed {
                decision: Decision::none(self.config.routing_off_reason()),
                ..Routed::default()
            },
        }
    }

    /// Remembers what this turn injected, when, and what stickiness needs of it, for the session's
    /// next turn.
    fn remember_turn(
        &self,
        session_key: Option<&str>,
        previous: Option<&SessionState>,
        routed: &Routed,
        now_ms: u64,
        notes: &mut Vec<String>,
    ) {
        if let (Some(dir), Some(key)) = (&self.state_dir, session_key) {
            let injected = routed
                .pack_context
                .as_ref()
                .and(routed.decision.intent.clone());
            let state = match injected {
                Some(intent) => SessionState {
                    session_key: key.into(),
                    intent: Some(intent),
                    injected_at_ms: Some(now_ms),
                    carried_turns: Some(routed.carried_turns),
                    // Kept only when strict_follow_up looks for names.
                    named: (!routed.named.is_empty()).then(|| routed.named.clone()),
                },
                None => SessionState::nothing(key),
            };
            if let Err(e) = state::remember(dir, previous, &state) {
                notes.push(e);
            }
        }
    }

    fn count_turn(&mut self, outcome: RecallOutcome, routed: &Routed) {
        let pack = routed
            .pack_context
            .as_ref()
            .and(routed.decision.primary_pack.clone());
        self.count(|s| {
            s.turns += 1;
            match outcome {
                RecallOutcome::Recalled => s.recalls += 1,
                RecallOutcome::Fallback => s.recall_fallbacks += 1,
                RecallOutcome::Cached => s.recalls_cached += 1,
                RecallOutcome::Skipped => s.recalls_skipped += 1,
            }
            if let Some(pack) = pack {
                *s.packs.entry(pack).or_default() += 1;
            }
        });
    }

    /// Saves the turn's record (what was recalled and injected, for `debug` and for capture to remove
    /// exactly this turn's blocks); trouble saving it is a note on the injection. `recalled`: the
    /// group searched, what recall did, and the relevance floor's explanation.
    fn record_turn(
        &self,
        session_key: &str,
        event: &PromptEvent,
        now_ms: u64,
        recalled: (Option<String>, String, Vec<String>),
        mut injection: Injection,
    ) -> Injection {
        let Some(dir) = &self.state_dir else {
            return injection;
        };
        let (searched_group, recall_summary, relevance) = recalled;
        let mut record = TurnRecord::new(
            now_ms,
            session_key,
            &event.prompt,
            searched_group,
            recall_summary,
            &injection,
        );
        record.relevance = relevance;
        if let Err(e) = turns::save(dir, &record) {
            injection.notes.push(e);
        }
        injection
    }

    /// Recall for one turn, within its budget: the block to show (what passes the relevance floor,
    /// explained into `relevance`), the data for routing's boosts (all Graphiti returned), and what
    /// happened. Never fails: trouble gives the fallback note.
    fn recall_for_turn(
        &mut self,
        event: &PromptEvent,
        group: &str,
        notes: &mut Vec<String>,
        relevance: &mut Vec<String>,
    ) -> (Option<String>, Recall, RecallOutcome) {
        let settings = self.settings.recall.clone();
        if !settings.enabled || self.too_short(&event.prompt) {
            return (None, Recall::default(), RecallOutcome::Skipped);
        }
        let query = recall::query(&event.prompt, &event.messages_json, &settings);
        let deadline = Deadline::after(Duration::from_millis(settings.timeout_ms));
        let (facts, nodes) = self.search_both(&query, group, deadline, notes);
        let (found, outcome) = match facts {
            Ok(facts) => {
                let found = Recall::from_lists(nodes.unwrap_or_default(), facts);
                self.cache_answer(group, &query, &found, notes);
                (found, RecallOutcome::Recalled)
            }
            Err(e) => {
                let fresh_nodes = nodes.unwrap_or_default();
                match self.cached_answer(group, &query, &e, notes) {
                    // The entities that did arrive are fresher than the cached ones.
                    Some(cached) if !fresh_nodes.is_empty() => (
                        Recall {
                            nodes: Recall::from_lists(fresh_nodes, vec![]).nodes,
                            ..cached
                        },
                        RecallOutcome::Cached,
                    ),
                    Some(cached) => (cached, RecallOutcome::Cached),
                    None if !fresh_nodes.is_empty() => {
                        notes.push(format!(
                            "recall: the fact search failed, entities only: {e}"
                        ));
                        (
                            Recall::from_lists(fresh_nodes, vec![]),
                            RecallOutcome::Recalled,
                        )
                    }
                    None => {
                        notes.push(format!("recall failed, fallback note injected: {e}"));
                        let note = recall::fallback_block(short_reason(&e), &settings);
                        return (Some(note), Recall::default(), RecallOutcome::Fallback);
                    }
                }
            }
        };
        let earlier = recall::earlier_user_messages(
            &event.prompt,
            &event.messages_json,
            settings.context_messages,
        );
        let asked = relevance::Asked::new(&event.prompt, &earlier);
        let judged = relevance::judge(&found, &asked, settings.min_relevance);
        *relevance = judged.explanation;
        (judged.kept.context_block(group, &settings), found, outcome)
    }

    /// Keeps a fresh answer for turns whose search will miss its budget; trouble is a note.
    fn cache_answer(&self, group: &str, query: &str, found: &Recall, notes: &mut Vec<String>) {
        if let Some(dir) = self
            .state_dir
            .as_deref()
            .filter(|_| self.cache_max_age_ms() > 0)
            && let Err(e) = recall_cache::store(dir, group, query, found, time::now_ms())
        {
            notes.push(e);
        }
    }

    /// A recent answer of the group sharing the query's terms, standing in for the search that
    /// failed (`why`); the notes say which and why.
    fn cached_answer(
        &self,
        group: &str,
        query: &str,
        why: &GraphitiError,
        notes: &mut Vec<String>,
    ) -> Option<Recall> {
        let dir = self
            .state_dir
            .as_deref()
            .filter(|_| self.cache_max_age_ms() > 0)?;
        match recall_cache::lookup(dir, group, query, time::now_ms(), self.cache_max_age_ms()) {
            Ok(Some(cached)) => {
                notes.push(format!(
                    "recall: the search failed ({why}); a cached answer from {} s ago stands in (shared terms: {})",
                    cached.age_ms / 1000,
                    cached.shared_terms.join(", ")
                ));
                Some(Recall {
                    cached_age_ms: Some(cached.age_ms),
                    ..cached.recall
                })
            }
            Ok(None) => None,
            Err(e) => {
                notes.push(e);
                None
            }
        }
    }

    fn cache_max_age_ms(&self) -> u64 {
        self.settings
            .recall
            .cache_max_age_minutes
            .saturating_mul(60_000)
    }

    /// Facts and nodes at the same time, within one deadline. Nodes are optional: facts alone still
    /// make a recall.
    pub(super) fn search(
        &mut self,
        query: &str,
        group: &str,
        deadline: Deadline,
        notes: &mut Vec<String>,
    ) -> Result<Recall, GraphitiError> {
        let (facts, nodes) = self.search_both(query, group, deadline, notes);
        Ok(Recall::from_lists(nodes.unwrap_or_default(), facts?))
    }

    /// Facts and entity nodes, searched at the same time, each answered on its own; a failed entity
    /// search is a note.
    fn search_both(
        &mut self,
        query: &str,
        group: &str,
        deadline: Deadline,
        notes: &mut Vec<String>,
    ) -> (Result<Vec<Value>, GraphitiError>, Option<Vec<Value>>) {
        let (max_facts, max_nodes) = (
            self.settings.recall.max_facts,
            self.settings.recall.max_nodes,
        );
        let (client, http) = self.graphiti();
        // Ask for more facts than shown: invalidated ones and duplicates are filtered out after.
        let (facts, nodes) =
            client.search_facts_and_nodes(http, query, group, (max_facts * 2, max_nodes), deadline);
        self.save_graphiti_session(notes);
        let nodes = nodes
            .inspect_err(|e| notes.push(format!("recall: entity search failed: {e}")))
            .ok();
        (facts, nodes)
    }
}

#[derive(Clone, Copy)]
enum RecallOutcome {
    Recalled,
    /// The search failed; a recent answer stood in.
    Cached,
    Fallback,
    Skipped,
}

impl RecallOutcome {
    /// One line for the turn's record; a fallback's reason is the last note.
    fn summary(self, recall: &Recall, notes: &[String]) -> String {
        match self {
            RecallOutcome::Recalled => format!(
                "recalled {} facts, {} entities",
                recall.facts.len(),
                recall.nodes.len()
            ),
            RecallOutcome::Cached => format!(
                "search failed, cached answer used: {} facts, {} entities ({})",
                recall.facts.len(),
                recall.nodes.len(),
                notes.last().map_or("", String::as_str)
            ),
            RecallOutcome::Fallback => format!(
                "failed, fallback note injected ({})",
                notes.last().map_or("", String::as_str)
            ),
            RecallOutcome::Skipped => "skipped (disabled or prompt too short)".into(),
        }
    }
}

/// A few words for the model about why memory is missing (details go to the log).
fn short_reason(e: &GraphitiError) -> &'static str {
    let m = e.message.as_str();
    if m.contains("timed out") || m.contains("no time left") {
        "it did not answer in time"
    } else if m.contains("connection failed")
        || m.contains("connection broken")
        || m.contains("refused by the host")
    {
        "it is unreachable"
    } else {
        "it answered with an error"
    }
}
