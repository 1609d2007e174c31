//! Deterministic intent routing and pack composition (PRD §Intent Detection, §Cross-Pack Composition).
//!
//! Built once per configuration (`load/`): one Aho-Corasick automaton over every rule's keywords,
//! compiled boost regexes, resolved packs. Per turn, `Router::route` runs the steps in the order of
//! its files: `matching` (one pass over the prompt), `scoring` (boosts, suppression), `decide`
//! (threshold, tie) or, when no keyword matched, `sticky`; then `compose` (scope, composition, the
//! block). Work is proportional to the rules that matched, never to the number of rules.
//!
//! Scores are kept in thousandths (integers), so ties are exact and the same inputs give the same bytes.

use crate::config::RoutingSettings;
use crate::memory::recall::Recall;
use crate::platform::text;
use crate::routing::decision::Decision;
use crate::routing::packs::PackRegistry;
use matching::KeywordIndex;
use std::collections::HashMap;

mod compose;
mod decide;
pub mod decision;
mod keyword_table;
mod keywords;
mod load;
mod matching;
mod model;
mod names;
mod overlaps;
pub mod packs;
mod scoring;
pub mod state;
mod sticky;

pub use model::{PreviousTurn, Routed, Rule};
pub use overlaps::{shared_keywords, text_overlaps};

/// Everything routing needs about one turn. The same input gives the same decision (P2): the time
/// is part of it, read once by the host boundary, never by routing.
#[derive(Clone, Copy, Debug)]
pub struct RouteInput<'a> {
    pub prompt: &'a str,
    pub recall: &'a Recall,
    pub group_chat: bool,
    /// The previous turn of this conversation, when it injected a pack.
    pub previous: Option<PreviousTurn<'a>>,
    /// This turn's moment, Unix milliseconds.
    pub now_ms: u64,
}

#[derive(Debug)]
pub struct Router {
    pub rules: Vec<Rule>,
    pub registry: PackRegistry,
    pub settings: RoutingSettings,
    keywords: KeywordIndex,
    continuation_signals: Vec<String>,
    pub composition_rules: usize,
    /// Rule index by id.
    by_id: HashMap<String, usize>,
    /// The first rule whose primary pack is this registry index.
    by_primary_pack: HashMap<usize, usize>,
}

/// The routing configuration of a directory: rules, registry, packs, composition.
pub struct LoadedRouting {
    pub router: Router,
    pub files: Vec<String>,
    pub warnings: Vec<String>,
}

impl Router {
    /// The routing settings in force (they come with the settings, which load apart).
    pub fn set_settings(&mut self, settings: RoutingSettings) {
        self.continuation_signals = sticky::continuation_signals(&settings.sticky);
        self.settings = settings;
    }

    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.by_id.get(id).map(|&i| &self.rules[i])
    }

    /// Decides which pack (if any) this turn gets, and builds its block.
    pub fn route(&self, input: &RouteInput) -> Routed {
        let mut decision = Decision::default();
        let trace = &mut decision.trace;
        let normalized =
            matching::matching_text(input.prompt, self.settings.max_prompt_chars, trace);
        // Layer 1: every keyword of every rule in one pass. A rule is a candidate only if one matched.
        let hits = self.keywords.hits(&normalized);
        let mut scored = scoring::score(&self.rules, &hits, input.recall, trace);
        scoring::suppress(&self.rules, &mut scored, trace);
        // Entity names matter only to the strict follow-up test: not looked for without it.
        let named = if self.settings.sticky.strict_follow_up {
            self.names(input.prompt, &normalized, input.recall)
        } else {
            Vec::new()
        };
        let winner = if scored.is_empty() {
            let previous = input
                .previous
                .and_then(|p| Some((self.resolve_previous(p.intent)?, p)));
            let turn = sticky::FollowUp {
                normalized: &normalized,
                now_ms: input.now_ms,
                named: &named,
            };
            let (sticky, signals) = (&self.settings.sticky, &self.continuation_signals);
            sticky::follow_up(&self.rules, previous, &turn, sticky, signals, &mut decision)
        } else {
            decide::winner(&self.rules, &scored, &mut decision.trace).map(|rule| (rule, 0))
        };
        // Listed once the winner is known: the candidates take what scoring found, uncopied.
        decision.candidates = scored
            .into_iter()
            .map(|s| s.into_candidate(&self.rules))
            .collect();
        let (winner, carried_turns) = match winner {
            Ok(won) => won,
            Err(reason) => return model::no_pack(decision, reason),
        };
        let mut routed = compose::compose(
            &self.rules[winner],
            &self.registry,
            self.settings.max_pack_context_chars,
            input.group_chat,
            decision,
        );
        routed.carried_turns = carried_turns;
        routed.named = carried_names(input.previous, carried_turns, &named);
        routed
    }

    /// The entity names (lower case) a prompt mentions, as the strict follow-up test reads them.
    pub fn named_in(&self, prompt: &str, recall: &Recall) -> Vec<String> {
        let normalized = text::normalize(matching::within_limit(
            prompt,
            self.settings.max_prompt_chars,
        ));
        names::keys(&self.names(prompt, &normalized, recall))
    }

    fn names(&self, prompt: &str, normalized: &str, recall: &Recall) -> Vec<names::Name> {
        let prompt = matching::within_limit(prompt, self.settings.max_prompt_chars);
        names::named_in(prompt, normalized, recall)
    }

    /// A previous turn is remembered by intent id; a pack id is accepted too (first rule using it).
    pub fn resolve_previous(&self, previous: &str) -> Option<usize> {
        self.by_id.get(previous).copied().or_else(|| {
            let pack = self.registry.index_of(previous)?;
            self.by_primary_pack.get(&pack).copied()
        })
    }
}

/// What the session state keeps of the turns that injected the pack: a carried turn adds its names
/// to the previous turns', a keyword turn starts afresh. Bounded; what is dropped counts as new.
fn carried_names(
    previous: Option<PreviousTurn>,
    carried_turns: u32,
    named: &[names::Name],
) -> Vec<String> {
    let mut kept: Vec<String> = match previous.and_then(|p| p.named) {
        Some(before) if carried_turns > 0 => before.to_vec(),
        _ => Vec::new(),
    };
    for name in names::keys(named) {
        if kept.len() < names::MAX_NAMES_KEPT && !kept.contains(&name) {
            kept.push(name);
        }
    }
    kept
}
