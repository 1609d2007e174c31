//! The turn: before the agent starts, recall (within its budget) and routing, the record of what was
//! injected, and the experts' system context.

use super::Engine;
use crate::api::{ChatType, HookContext, PromptEvent};
use crate::decision::{Decision, Injection};
use crate::graphiti::GraphitiError;
use crate::graphiti::http::Deadline;
use crate::group_id;
use crate::recall::{self, Recall};
use crate::relevance;
use crate::routing::{RouteInput, Routed};
use crate::state;
use crate::time;
use crate::turns::{self, TurnRecord};
use std::time::Duration;

impl Engine {
    /// Recall and routing (user turns), plus the experts' system context (any turn: expert sessions
    /// are sub-agent turns).
    pub fn before_agent_start(&mut self, event: &PromptEvent, ctx: &HookContext) -> Injection {
        let mut injection = self.recall_and_route(event, ctx);
        let system = self.experts.for_turn(ctx, time::now_ms() / 1000);
        injection.system_context = system.expert_prompt;
        injection.append_system_context = system.registry;
        injection.notes.extend(system.notes);
        injection
    }

    fn recall_and_route(&mut self, event: &PromptEvent, ctx: &HookContext) -> Injection {
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
        let previous = self.previous_intent(session_key, &mut notes);
        let group = group_id::group_id(&self.settings.graphiti.group_id, ctx);
        let mut relevance = Vec::new();
        let (memory_block, recall, outcome) =
            self.recall_for_turn(event, &group, &mut notes, &mut relevance);
        let searched_group = (!matches!(outcome, RecallOutcome::Skipped)).then_some(group);
        let recall_summary = outcome.summary(&recall, &notes);
        let routed = self.route(event, ctx, &recall, previous.as_deref());
        self.remember_intent(session_key, previous.as_deref(), &routed, &mut notes);
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
                self.record_turn(key, event, recalled, injection)
            }
            None => injection,
        }
    }

    /// The intent the session's previous turn injected (for stickiness); trouble reading it is a note.
    fn previous_intent(
        &self,
        session_key: Option<&str>,
        notes: &mut Vec<String>,
    ) -> Option<String> {
        match (&self.state_dir, session_key) {
            (Some(dir), Some(key)) => state::previous_intent(dir, key).unwrap_or_else(|e| {
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
        previous: Option<&str>,
    ) -> Routed {
        match self.config.router() {
            Some(router) => router.route(&RouteInput {
                prompt: &event.prompt,
                recall,
                group_chat: ctx.chat_type == ChatType::Group,
                previous,
            }),
            // The load reported why; the decision says it, the turn's notes do not repeat it.
            None => Routed {
                decision: Decision::none(self.config.routing_off_reason()),
                ..Routed::default()
            },
        }
    }

    /// Remembers what this turn injected, for the session's next turn.
    fn remember_intent(
        &self,
        session_key: Option<&str>,
        previous: Option<&str>,
        routed: &Routed,
        notes: &mut Vec<String>,
    ) {
        if let (Some(dir), Some(key)) = (&self.state_dir, session_key) {
            let injected = routed
                .pack_context
                .as_ref()
                .and(routed.decision.intent.as_deref());
            if let Err(e) = state::remember(dir, key, previous, injected) {
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
        recalled: (Option<String>, String, Vec<String>),
        mut injection: Injection,
    ) -> Injection {
        let Some(dir) = &self.state_dir else {
            return injection;
        };
        let (searched_group, recall_summary, relevance) = recalled;
        let mut record = TurnRecord::new(
            time::now_ms(),
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
        match self.search(
            &query,
            group,
            Deadline::after(Duration::from_millis(settings.timeout_ms)),
            notes,
        ) {
            Ok(found) => {
                let earlier = recall::earlier_user_messages(
                    &event.prompt,
                    &event.messages_json,
                    settings.context_messages,
                );
                let asked = relevance::Asked::new(&event.prompt, &earlier);
                let judged = relevance::judge(&found, &asked, settings.min_relevance);
                *relevance = judged.explanation;
                let block = judged.kept.context_block(group, &settings);
                (block, found, RecallOutcome::Recalled)
            }
            Err(e) => {
                notes.push(format!("recall failed, fallback note injected: {e}"));
                (
                    Some(recall::fallback_block(short_reason(&e))),
                    Recall::default(),
                    RecallOutcome::Fallback,
                )
            }
        }
    }

    /// Facts, then nodes, within one deadline. Nodes are optional: facts alone still make a recall.
    pub(super) fn search(
        &mut self,
        query: &str,
        group: &str,
        deadline: Deadline,
        notes: &mut Vec<String>,
    ) -> Result<Recall, GraphitiError> {
        let (max_facts, max_nodes) = (
            self.settings.recall.max_facts,
            self.settings.recall.max_nodes,
        );
        let (client, http) = self.graphiti();
        // Ask for more facts than shown: invalidated ones and duplicates are filtered out after.
        let facts = client.search_facts(http, query, group, max_facts * 2, deadline)?;
        let nodes = if max_nodes == 0 {
            vec![]
        } else {
            client
                .search_nodes(http, query, group, max_nodes, deadline)
                .unwrap_or_else(|e| {
                    notes.push(format!("recall: entity search failed, facts only: {e}"));
                    vec![]
                })
        };
        Ok(Recall::from_lists(nodes, facts))
    }
}

#[derive(Clone, Copy)]
enum RecallOutcome {
    Recalled,
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
