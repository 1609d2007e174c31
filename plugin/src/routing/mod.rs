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
use crate::decision::Decision;
use crate::packs::PackRegistry;
use crate::recall::Recall;
use matching::KeywordIndex;
use std::collections::HashMap;

mod compose;
mod decide;
mod keywords;
mod load;
mod matching;
mod model;
mod scoring;
mod sticky;

pub use model::{Routed, Rule};

/// Everything routing needs about one turn.
#[derive(Clone, Copy, Debug)]
pub struct RouteInput<'a> {
    pub prompt: &'a str,
    pub recall: &'a Recall,
    pub group_chat: bool,
    /// The previous turn's injected intent (or pack) in this conversation.
    pub previous: Option<&'a str>,
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
        decision.candidates = scored
            .iter()
            .map(|s| s.to_candidate(&self.rules[s.rule]))
            .collect();
        let winner = if scored.is_empty() {
            let previous = input.previous.and_then(|p| self.resolve_previous(p));
            let sticky = &self.settings.sticky;
            let signals = &self.continuation_signals;
            sticky::follow_up(
                &self.rules,
                previous,
                &normalized,
                sticky,
                signals,
                &mut decision,
            )
        } else {
            decide::winner(&self.rules, &scored, &mut decision.trace)
        };
        match winner {
            Ok(winner) => compose::compose(
                &self.rules[winner],
                &self.registry,
                self.settings.max_pack_context_chars,
                input.group_chat,
                decision,
            ),
            Err(reason) => model::no_pack(decision, reason),
        }
    }

    /// A previous turn is remembered by intent id; a pack id is accepted too (first rule using it).
    pub fn resolve_previous(&self, previous: &str) -> Option<usize> {
        self.by_id.get(previous).copied().or_else(|| {
            let pack = self.registry.index_of(previous)?;
            self.by_primary_pack.get(&pack).copied()
        })
    }
}
