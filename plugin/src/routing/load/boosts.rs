//! Compiling a rule's entity boosts: size-limited, case-insensitive regexes, a weight that only adds,
//! and `suppresses` targets checked against the declared rule ids.
//!
//! Boosts only ask whether a pattern matches a recalled summary or fact, a few hundred bytes, so
//! they are built without the literal prefilters the `regex` crate always builds: for patterns like
//! `\b(restaurant|bistro|wine bar)\b`, case-insensitive, extracting the literals and building their
//! Aho-Corasick automaton was four fifths of loading the example configuration.

use crate::config;
use crate::routing::model::{Boost, glob_matches, to_milli};
use regex_automata::meta::{self, Regex};
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::util::syntax;

/// Limits for rule authors' regexes: a pattern is data from a config file.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const REGEX_MAX_LEN: usize = 1_000;

/// Rule ids as declared, for `suppresses` targets: exact ids, and `prefix*` patterns by binary search.
pub(super) struct RuleIds {
    sorted: Vec<String>,
}

impl RuleIds {
    pub(super) fn new(specs: &[config::RuleSpec]) -> RuleIds {
        let mut sorted: Vec<String> = specs.iter().map(|s| s.id.clone()).collect();
        sorted.sort_unstable();
        RuleIds { sorted }
    }

    fn any_matches(&self, pattern: &str) -> bool {
        let prefix = pattern.strip_suffix('*').unwrap_or(pattern);
        let first = self.sorted.partition_point(|id| id.as_str() < prefix);
        self.sorted
            .get(first)
            .is_some_and(|id| glob_matches(pattern, id))
    }
}

pub(super) fn compile_boost(
    i: usize,
    spec: &config::BoostSpec,
    ids: &RuleIds,
    error: &mut impl FnMut(&str, String),
) -> Boost {
    let mut compile = |field: &str, pattern: &Option<String>| -> Option<Regex> {
        let pattern = pattern.as_ref()?;
        if pattern.len() > REGEX_MAX_LEN {
            error(
                field,
                format!("entity_boosts[{i}]: pattern longer than {REGEX_MAX_LEN} characters"),
            );
            return None;
        }
        match compile_pattern(pattern) {
            Ok(re) => Some(re),
            Err(e) => {
                error(
                    field,
                    format!("entity_boosts[{i}]: invalid pattern {pattern:?}: {e}"),
                );
                None
            }
        }
    };
    let summary = compile("summary_pattern", &spec.summary_pattern);
    let fact = compile("fact_pattern", &spec.fact_pattern);
    if spec.summary_pattern.is_none() && spec.fact_pattern.is_none() {
        error(
            "entity_boosts",
            format!("entity_boosts[{i}] needs a summary_pattern or a fact_pattern"),
        );
    }
    if !(spec.weight.is_finite() && spec.weight >= 0.0) {
        error(
            "weight",
            format!(
                "entity_boosts[{i}]: weight must be ≥ 0 (boosts only add), not {}",
                spec.weight
            ),
        );
    }
    for target in &spec.suppresses {
        if !ids.any_matches(target) {
            error(
                "suppresses",
                format!("entity_boosts[{i}]: suppresses {target:?}, which names no rule"),
            );
        }
    }
    Boost {
        summary,
        fact,
        weight: to_milli(spec.weight),
        suppresses: spec.suppresses.clone(),
    }
}

/// A boost pattern, case-insensitive, for `is_match` only: no capture groups kept, no prefilter.
/// Errors read as the `regex` crate's.
fn compile_pattern(pattern: &str) -> Result<Regex, String> {
    meta::Builder::new()
        .syntax(syntax::Config::new().case_insensitive(true))
        .configure(
            meta::Config::new()
                .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                .hybrid_cache_capacity(REGEX_SIZE_LIMIT)
                .which_captures(WhichCaptures::None)
                .auto_prefilter(false),
        )
        .build(pattern)
        .map_err(|e| match (e.size_limit(), e.syntax_error()) {
            (Some(limit), _) => format!("Compiled regex exceeds size limit of {limit} bytes."),
            (None, Some(syntax)) => syntax.to_string(),
            (None, None) => e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::compile_pattern;

    #[test]
    fn patterns_match_case_insensitively_with_unicode_classes() {
        let re = compile_pattern(r"\b(café|\p{Greek}+)\b").unwrap();
        assert!(re.is_match("Dinner at CAFÉ Central"));
        assert!(re.is_match("a note in ΑΘΗΝΑ"));
        assert!(!re.is_match("cafeteria"));
        assert!(compile_pattern(r"\w+\s\d").unwrap().is_match("zoë 7"));
    }

    #[test]
    fn a_pattern_the_component_cannot_build_gets_an_error_that_says_why() {
        let unclosed = compile_pattern(r"(chef").unwrap_err();
        assert!(unclosed.contains("unclosed group"), "{unclosed}");
        let huge = compile_pattern(r"\w{1000}\w{1000}\w{1000}").unwrap_err();
        assert!(huge.contains("exceeds size limit"), "{huge}");
    }
}
