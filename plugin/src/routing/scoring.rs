//! Layer 2, scoring: distinct keywords matched × weight, plus entity boosts from recalled data
//! (additive only, P4); then suppression, which removes candidates and never changes a score.

use super::model::{Boost, Line, Milli, Rule, from_milli, glob_matches, show, to_milli};
use crate::memory::recall::Recall;
use crate::platform::text;
use crate::routing::decision::{BoostHit, Candidate};

/// How much of a matched recalled text the trace shows.
const TRACE_TEXT_CHARS: usize = 80;

/// A candidate rule: what matched, what it scored, and whether a boost suppressed it.
pub(super) struct Scored {
    pub(super) rule: usize,
    keywords: Vec<String>,
    keyword_score: Milli,
    boosts: Vec<BoostHit>,
    pub(super) score: Milli,
    pub(super) suppressed_by: Option<String>,
}

/// One candidate per rule with a keyword hit (`hits` sorted by rule), scored, each step traced.
pub(super) fn score(
    rules: &[Rule],
    hits: &[(u32, u32)],
    recall: &Recall,
    trace: &mut Vec<String>,
) -> Vec<Scored> {
    let mut scored: Vec<Scored> = Vec::new();
    for group in hits.chunk_by(|a, b| a.0 == b.0) {
        let rule_index = group[0].0 as usize;
        let rule = &rules[rule_index];
        let keywords: Vec<String> = group
            .iter()
            .map(|&(_, k)| rule.keywords[k as usize].clone())
            .collect();
        let keyword_score = rule.keyword_weight * keywords.len() as Milli;
        trace.push(
            Line::new()
                .text(&rule.id)
                .text(": keywords [")
                .list(&keywords)
                .text("] → ")
                .count(keywords.len())
                .text(" × ")
                .score(rule.keyword_weight)
                .text(" = ")
                .score(keyword_score)
                .done(),
        );
        // Layer 2: entity boosts from recalled data; additive only (P4).
        let mut boosts = Vec::new();
        for boost in &rule.boosts {
            if let Some(hit) = boost.fire(recall) {
                trace.push(format!(
                    "{}: boost +{} ({} matched {:?})",
                    rule.id,
                    show(boost.weight),
                    hit.matched_on,
                    hit.matched_text
                ));
                boosts.push(hit);
            }
        }
        let score = keyword_score + boosts.iter().map(|b| to_milli(b.weight)).sum::<Milli>();
        scored.push(Scored {
            rule: rule_index,
            keywords,
            keyword_score,
            boosts,
            score,
            suppressed_by: None,
        });
    }
    scored
}

/// Suppression removes candidates; it never changes a score.
pub(super) fn suppress(rules: &[Rule], scored: &mut [Scored], trace: &mut Vec<String>) {
    // Only the boosts that suppress add to this list (most turns: none, and nothing is allocated).
    let suppressions: Vec<(String, &str)> = scored
        .iter()
        .flat_map(|s| {
            let by = rules[s.rule].id.as_str();
            s.boosts
                .iter()
                .flat_map(|b| b.suppresses.iter())
                .map(move |target| (target.clone(), by))
        })
        .collect();
    for s in scored.iter_mut() {
        let id = &rules[s.rule].id;
        if let Some((_, by)) = suppressions
            .iter()
            .find(|(target, by)| by != id && glob_matches(target, id))
        {
            trace.push(format!("{id}: suppressed by an entity boost of {by}"));
            s.suppressed_by = Some(by.to_string());
        }
    }
}

impl Scored {
    /// The candidate as the decision lists it (what it matched moved, not copied).
    pub(super) fn into_candidate(self, rules: &[Rule]) -> Candidate {
        let rule = &rules[self.rule];
        Candidate {
            intent: rule.id.clone(),
            pack_type: rule.pack_type.clone(),
            keywords: self.keywords,
            keyword_score: from_milli(self.keyword_score),
            boosts: self.boosts,
            score: from_milli(self.score),
            min_confidence: from_milli(rule.min_confidence),
            suppressed_by: self.suppressed_by,
        }
    }
}

impl Boost {
    /// The first recalled text this boost's patterns match, if any. Facts no longer true don't count.
    fn fire(&self, recall: &Recall) -> Option<BoostHit> {
        let hit = |on: &str, text: &str| BoostHit {
            matched_on: on.into(),
            matched_text: text::truncate_chars(text, TRACE_TEXT_CHARS),
            weight: from_milli(self.weight),
            suppresses: self.suppresses.clone(),
        };
        if let Some(re) = &self.summary {
            for node in &recall.nodes {
                if re.is_match(&node.summary) {
                    return Some(hit("summary", &node.summary));
                }
                if let Some(label) = node.labels.iter().find(|l| re.is_match(l)) {
                    return Some(hit("label", label));
                }
                if re.is_match(&node.name) {
                    return Some(hit("name", &node.name));
                }
            }
        }
        if let Some(re) = &self.fact {
            for fact in recall.facts.iter().filter(|f| f.is_current()) {
                if re.is_match(&fact.fact) {
                    return Some(hit("fact", &fact.fact));
                }
            }
        }
        None
    }
}
