//! Recall for one turn: both searches at once within the budget, the recent-results cache when they
//! miss it, the relevance floor on what is shown, and the outcome for the turn's record and counters.

use super::Engine;
use crate::memory::graphiti::http::Deadline;
use crate::memory::graphiti::{Cause, GraphitiError};
use crate::memory::recall::{self, Recall};
use crate::memory::recall_cache;
use crate::memory::redaction::Query;
use crate::memory::relevance;
use crate::platform::api::PromptEvent;
use crate::platform::time;
use serde_json::Value;
use std::time::Duration;

impl Engine {
    /// Recall for one turn, within its budget: the block to show (what passes the relevance floor,
    /// explained into `relevance`), the data for routing's boosts (all Graphiti returned), and what
    /// happened. Never fails: trouble gives the fallback note.
    pub(super) fn recall_for_turn(
        &mut self,
        event: &PromptEvent,
        group: &str,
        notes: &mut Vec<String>,
        relevance: &mut Vec<String>,
    ) -> (Option<String>, Recall, RecallOutcome) {
        let settings = self.config.settings.recall.clone();
        if !settings.enabled || self.too_short(&event.prompt) {
            return (None, Recall::default(), RecallOutcome::Skipped);
        }
        // Redacted once for the search and the recall cache: the earlier messages in it were not
        // redacted with the prompt.
        let query = Query::new(
            &recall::query(&event.prompt, &event.messages_json, &settings),
            &self.config.settings.capture.redact,
        );
        let deadline = Deadline::after(Duration::from_millis(settings.timeout_ms));
        let (facts, nodes) = self.search_both(&query, group, deadline, notes);
        let (found, outcome) = match facts {
            Ok(facts) => {
                let found = Recall::from_lists(nodes.unwrap_or_default(), facts);
                self.cache_answer(group, query.as_str(), &found, notes);
                (found, RecallOutcome::Recalled)
            }
            Err(e) => {
                let fresh_nodes = nodes.unwrap_or_default();
                match self.cached_answer(group, query.as_str(), &e, notes) {
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
    fn cache_answer(&mut self, group: &str, query: &str, found: &Recall, notes: &mut Vec<String>) {
        let on = self.cache_max_age_ms() > 0;
        if let Some(dir) = self.host.state_dir.as_deref().filter(|_| on)
            && let Err(e) = recall_cache::store(
                &mut self.memory.kept_recall,
                dir,
                group,
                query,
                found,
                time::now_ms(),
            )
        {
            notes.push(e);
        }
    }

    /// A recent answer of the group sharing the query's terms, standing in for the search that
    /// failed (`why`); the notes say which and why.
    fn cached_answer(
        &mut self,
        group: &str,
        query: &str,
        why: &GraphitiError,
        notes: &mut Vec<String>,
    ) -> Option<Recall> {
        let max_age_ms = self.cache_max_age_ms();
        let dir = self.host.state_dir.as_deref().filter(|_| max_age_ms > 0)?;
        match recall_cache::lookup(
            &mut self.memory.kept_recall,
            dir,
            group,
            query,
            time::now_ms(),
            max_age_ms,
        ) {
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
        self.config
            .settings
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
        let query = Query::new(query, &self.config.settings.capture.redact);
        let (facts, nodes) = self.search_both(&query, group, deadline, notes);
        Ok(Recall::from_lists(nodes.unwrap_or_default(), facts?))
    }

    /// Facts and entity nodes, searched at the same time, each answered on its own; a failed entity
    /// search is a note.
    fn search_both(
        &mut self,
        query: &Query,
        group: &str,
        deadline: Deadline,
        notes: &mut Vec<String>,
    ) -> (Result<Vec<Value>, GraphitiError>, Option<Vec<Value>>) {
        let (max_facts, max_nodes) = (
            self.config.settings.recall.max_facts,
            self.config.settings.recall.max_nodes,
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
pub(super) enum RecallOutcome {
    Recalled,
    /// The search failed; a recent answer stood in.
    Cached,
    Fallback,
    Skipped,
}

impl RecallOutcome {
    /// One line for the turn's record; a fallback's reason is the last note.
    pub(super) fn summary(self, recall: &Recall, notes: &[String]) -> String {
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
    match e.cause {
        Cause::TimedOut => "it did not answer in time",
        Cause::Unreachable => "it is unreachable",
        Cause::Status(_) | Cause::ToolError | Cause::Other => "it answered with an error",
    }
}
