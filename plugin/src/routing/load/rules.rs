//! Compiling `intent_rules.yaml`: each rule's id, keywords, weights and consumer profile checked,
//! its boosts compiled; every problem reported, each located.

use super::boosts::BoostCompiler;
use crate::config::{self, ConfigError, KeywordMatch};
use crate::platform::text;
use crate::routing::model::{Boost, Rule, to_milli};
use crate::routing::packs::{self, PackRegistry};
use std::collections::HashSet;

/// The rules that compiled, and the ids of all the file declares (those that failed included: a
/// composition rule naming one is not said to name an unknown rule).
pub(super) fn compile_rules(
    specs: Vec<config::RuleSpec>,
    source: &config::SourceFile,
    registry: &PackRegistry,
    errors: &mut Vec<ConfigError>,
) -> (Vec<Rule>, HashSet<String>) {
    let boost_compiler = BoostCompiler::new(&specs);
    let lines = config::ItemLines::new(&source.text, "id");
    let mut seen = HashSet::new();
    let mut rules = Vec::new();
    for spec in specs {
        let start = errors.len();
        let mut error = |field: &str, message: String| {
            errors.push(ConfigError {
                file: source.display.clone(),
                line: lines.locate(&spec.id, Some(field)),
                field: Some(format!("{}.{field}", spec.id)),
                message,
            })
        };
        if !packs::valid_id(&spec.id) {
            error(
                "id",
                format!(
                    "rule id {:?} must be letters, digits, '_', '-', '.' or ':'",
                    spec.id
                ),
            );
        }
        if !seen.insert(spec.id.clone()) {
            error("id", format!("rule {:?} is defined twice", spec.id));
        }
        let keywords = compile_keywords(spec.keywords, &mut error);
        if !(spec.keyword_weight.is_finite() && spec.keyword_weight > 0.0) {
            error(
                "keyword_weight",
                format!("must be a number above 0, not {}", spec.keyword_weight),
            );
        }
        if !(spec.min_confidence.is_finite() && spec.min_confidence >= 0.0) {
            error(
                "min_confidence",
                format!("must be a number ≥ 0, not {}", spec.min_confidence),
            );
        }
        if spec.pack_type.trim().is_empty() {
            error("pack_type", "must not be empty".into());
        }
        // A broken profile is reported with the profile itself.
        let broken_profile = registry.is_broken_profile(&spec.consumer_profile);
        let primary_pack = match registry.profile_pack(&spec.consumer_profile) {
            Some(pack) => registry.index_of(pack),
            None if broken_profile => None,
            None => {
                error(
                    "consumer_profile",
                    format!(
                        "consumer profile {:?} is not in the pack registry's consumer_profiles",
                        spec.consumer_profile
                    ),
                );
                None
            }
        };
        let boosts: Vec<Boost> = spec
            .entity_boosts
            .iter()
            .enumerate()
            .map(|(i, b)| boost_compiler.compile(i, b, &mut error))
            .collect();
        if broken_profile || errors.len() > start {
            continue;
        }
        rules.push(Rule {
            id: spec.id,
            pack_type: spec.pack_type,
            scope: spec.scope,
            keywords,
            substring: spec.keyword_match == KeywordMatch::Substring,
            keyword_weight: to_milli(spec.keyword_weight),
            min_confidence: to_milli(spec.min_confidence),
            boosts,
            primary_pack: primary_pack.unwrap_or_default(),
            additional: vec![],
        });
    }
    (rules, seen)
}

/// A rule's keywords, normalized, without duplicates (in linear time: a rule may have 100,000).
fn compile_keywords(keywords: Vec<String>, error: &mut impl FnMut(&str, String)) -> Vec<String> {
    // A few keywords are compared with those kept so far (no hashing, no copy of each); many are
    // kept in a set, so that a rule with 100,000 keywords stays linear.
    const FEW: usize = 16;
    let mut seen = HashSet::with_capacity(if keywords.len() > FEW {
        keywords.len()
    } else {
        0
    });
    let mut compiled: Vec<String> = Vec::with_capacity(keywords.len());
    let mut empty = 0;
    let given = keywords.len();
    for keyword in keywords {
        let normalized = text::normalize_owned(keyword);
        if normalized.is_empty() {
            empty += 1;
        } else if given <= FEW {
            if !compiled.contains(&normalized) {
                compiled.push(normalized);
            }
        } else if seen.insert(normalized.clone()) {
            compiled.push(normalized);
        }
    }
    match empty {
        0 => {}
        1 => error("keywords", "a keyword is empty".into()),
        n => error("keywords", format!("{n} keywords are empty")),
    }
    if given == 0 {
        error(
            "keywords",
            "a rule needs at least one keyword (a rule is a candidate only when one matches)"
                .into(),
        );
    }
    compiled
}
