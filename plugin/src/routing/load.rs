//! Loading the routing configuration: the registry and packs, the rules compiled (keywords, boost
//! regexes), composition attached, one keyword automaton over all rules. Every problem is reported,
//! each located; work is linear in the files' size.

use super::{
    Additional, Boost, KeywordOwner, LoadedRouting, REGEX_MAX_LEN, REGEX_SIZE_LIMIT, Router, Rule,
    glob_matches, to_milli,
};
use crate::config::{self, ConfigError, ConfigRoots, KeywordMatch, RoutingSettings};
use super::keywords::Automaton;
use crate::packs::{self, PackRegistry};
use crate::text;
use regex::{Regex, RegexBuilder};
use std::collections::{HashMap, HashSet};

impl Router {
    /// Reads and compiles the routing files (rules, registry, packs, composition) with the routing
    /// settings in force; every problem found is returned, not just the first.
    pub fn load(
        roots: &ConfigRoots,
        settings: &RoutingSettings,
    ) -> Result<LoadedRouting, Vec<ConfigError>> {
        if !roots.config_dir().is_dir() {
            return Err(vec![ConfigError {
                file: roots.config_name().into(),
                line: None,
                field: None,
                message: "the configuration directory does not exist".into(),
            }]);
        }
        let mut files = Vec::new();
        let mut warnings: Vec<String> = roots
            .missing_overlay
            .iter()
            .map(|overlay| {
                format!(
                    "the overlay directory {overlay} does not exist: only {} is read",
                    roots.config_name()
                )
            })
            .collect();
        let mut errors = Vec::new();
        let registry = PackRegistry::load(roots, &mut files, &mut warnings, &mut errors);

        let rules_source = match roots.read_named(config::RULES_FILE) {
            Ok(Some(source)) => Some(source),
            Ok(None) => {
                errors.push(packs::missing_file(roots, config::RULES_FILE));
                None
            }
            Err(e) => {
                errors.push(e);
                None
            }
        };
        let mut rules = Vec::new();
        // None when the rules file could not be read: then no rule id can be checked against it.
        let mut declared_rules: Option<HashSet<String>> = None;
        if let Some(source) = &rules_source {
            files.push(config::display_name(source));
            match config::parse::<config::RulesFile>(source) {
                Ok(spec) => {
                    if spec.schema_version != 1 {
                        errors.push(config::schema_error(&source.display, spec.schema_version));
                    }
                    declared_rules = Some(spec.rules.iter().map(|r| r.id.clone()).collect());
                    rules = compile_rules(spec.rules, source, &registry, &mut errors);
                }
                Err(e) => errors.push(e),
            }
        }

        let mut composition_rules = 0;
        match roots.read_named(config::COMPOSITION_FILE) {
            Ok(Some(source)) => {
                files.push(config::display_name(&source));
                match config::parse::<config::CompositionFile>(&source) {
                    Ok(spec) => {
                        if spec.schema_version != 1 {
                            errors.push(config::schema_error(&source.display, spec.schema_version));
                        }
                        composition_rules = spec.rules.len();
                        attach_compositions(
                            spec.rules,
                            &source,
                            &registry,
                            declared_rules.as_ref(),
                            &mut rules,
                            &mut warnings,
                            &mut errors,
                        );
                    }
                    Err(e) => errors.push(e),
                }
            }
            Ok(None) => {}
            Err(e) => errors.push(e),
        }

        if !errors.is_empty() {
            return Err(errors);
        }
        let (automaton, owners) = build_automaton(&rules);
        let by_id = rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.clone(), i))
            .collect();
        let mut by_primary_pack = HashMap::new();
        for (i, rule) in rules.iter().enumerate() {
            by_primary_pack.entry(rule.primary_pack).or_insert(i);
        }
        let mut router = Router {
            rules,
            registry,
            settings: RoutingSettings::default(),
            automaton,
            owners,
            continuation_signals: vec![],
            composition_rules,
            by_id,
            by_primary_pack,
        };
        router.set_settings(settings.clone());
        Ok(LoadedRouting {
            router,
            files,
            warnings,
        })
    }
}

/// Rule ids as declared, for `suppresses` targets: exact ids, and `prefix*` patterns by binary search.
struct RuleIds {
    sorted: Vec<String>,
}

impl RuleIds {
    fn new(specs: &[config::RuleSpec]) -> RuleIds {
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

fn compile_rules(
    specs: Vec<config::RuleSpec>,
    source: &config::SourceFile,
    registry: &PackRegistry,
    errors: &mut Vec<ConfigError>,
) -> Vec<Rule> {
    let ids = RuleIds::new(&specs);
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
        let keywords = compile_keywords(&spec.keywords, &mut error);
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
            .map(|(i, b)| compile_boost(i, b, &ids, &mut error))
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
    rules
}

/// A rule's keywords, normalized, without duplicates (in linear time: a rule may have 100,000).
fn compile_keywords(keywords: &[String], error: &mut impl FnMut(&str, String)) -> Vec<String> {
    let mut seen = HashSet::with_capacity(keywords.len());
    let mut compiled = Vec::with_capacity(keywords.len());
    let mut empty = 0;
    for keyword in keywords {
        let normalized = text::normalize(keyword);
        if normalized.is_empty() {
            empty += 1;
        } else if seen.insert(normalized.clone()) {
            compiled.push(normalized);
        }
    }
    match empty {
        0 => {}
        1 => error("keywords", "a keyword is empty".into()),
        n => error("keywords", format!("{n} keywords are empty")),
    }
    if keywords.is_empty() {
        error(
            "keywords",
            "a rule needs at least one keyword (a rule is a candidate only when one matches)"
                .into(),
        );
    }
    compiled
}

fn compile_boost(
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
        match RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
        {
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

fn attach_compositions(
    specs: Vec<config::CompositionSpec>,
    source: &config::SourceFile,
    registry: &PackRegistry,
    declared_rules: Option<&HashSet<String>>,
    rules: &mut [Rule],
    warnings: &mut Vec<String>,
    errors: &mut Vec<ConfigError>,
) {
    let lines = config::ItemLines::new(&source.text, "primary_intent");
    let rule_index: HashMap<String, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.clone(), i))
        .collect();
    let mut seen = HashSet::new();
    for spec in specs {
        let mut error = |field: &str, message: String| {
            errors.push(ConfigError {
                file: source.display.clone(),
                line: lines.locate(&spec.primary_intent, Some(field)),
                field: Some(format!("{}.{field}", spec.primary_intent)),
                message,
            })
        };
        if !seen.insert(spec.primary_intent.clone()) {
            error(
                "primary_intent",
                format!("two composition rules for {:?}", spec.primary_intent),
            );
            continue;
        }
        let Some(&index) = rule_index.get(&spec.primary_intent) else {
            // Unknown only when the rules file was read: else its own error says why.
            if declared_rules.is_some_and(|declared| !declared.contains(&spec.primary_intent)) {
                error(
                    "primary_intent",
                    format!("{:?} is not an intent rule id", spec.primary_intent),
                );
            }
            continue;
        };
        let rule = &mut rules[index];
        for (i, extra) in spec.inject_additional.iter().enumerate() {
            let (label, pack) = match resolve_additional(i, extra, registry) {
                Ok(resolved) => resolved,
                Err((field, message)) => {
                    error(field, message);
                    continue;
                }
            };
            if let Err(why) = &pack {
                warnings.push(format!(
                    "composition for {}: {label} unavailable ({why})",
                    rule.id
                ));
            }
            rule.additional.push(Additional {
                label,
                mode: extra.mode.clone(),
                required: extra.required,
                pack,
            });
        }
    }
}

/// A composition entry's label, and its pack's registry index or why no pack fits.
type Resolved = (String, Result<usize, String>);

/// The pack an `inject_additional` entry names (unavailable is a warning). Err is a configuration
/// error: field and message.
fn resolve_additional(
    i: usize,
    extra: &config::AdditionalSpec,
    registry: &PackRegistry,
) -> Result<Resolved, (&'static str, String)> {
    if extra.condition != "always" {
        return Err((
            "condition",
            format!(
                "inject_additional[{i}]: condition {:?} is not supported (v1 supports \"always\")",
                extra.condition
            ),
        ));
    }
    match (&extra.pack, &extra.pack_type) {
        (Some(id), None) => {
            let pack = match (registry.index_of(id), &extra.mode) {
                (None, _) => Err(format!("pack {id} is not in the registry")),
                (Some(p), Some(mode)) if !registry.packs[p].modes.contains(mode) => {
                    Err(format!("pack {id} has no mode {mode}"))
                }
                (Some(p), _) => Ok(p),
            };
            Ok((id.clone(), pack))
        }
        (None, Some(pack_type)) => {
            let fits: Vec<usize> = registry
                .of_type(pack_type)
                .filter(|&p| {
                    extra
                        .mode
                        .as_ref()
                        .is_none_or(|m| registry.packs[p].modes.contains(m))
                })
                .collect();
            let pack = match fits.as_slice() {
                [one] => Ok(*one),
                [] => Err(match &extra.mode {
                    Some(mode) => format!("no registered pack of type {pack_type} has mode {mode}"),
                    None => format!("no pack of type {pack_type} is registered"),
                }),
                many => {
                    let ids: Vec<&str> = many
                        .iter()
                        .map(|&p| registry.packs[p].id.as_str())
                        .collect();
                    return Err((
                        "pack_type",
                        format!(
                            "inject_additional[{i}]: {} packs have type {pack_type} ({}); name one with `pack`",
                            many.len(),
                            ids.join(", ")
                        ),
                    ));
                }
            };
            Ok((pack_type.clone(), pack))
        }
        _ => Err((
            "inject_additional",
            format!("inject_additional[{i}] needs exactly one of pack_type and pack"),
        )),
    }
}

/// One automaton over the distinct keywords of all rules; each pattern knows the rules that own it.
fn build_automaton(rules: &[Rule]) -> (Option<Automaton>, Vec<Vec<KeywordOwner>>) {
    let mut patterns: Vec<&str> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut owners: Vec<Vec<KeywordOwner>> = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        for (k, keyword) in rule.keywords.iter().enumerate() {
            let p = *index.entry(keyword.as_str()).or_insert_with(|| {
                patterns.push(keyword);
                owners.push(Vec::new());
                patterns.len() - 1
            });
            owners[p].push(KeywordOwner {
                rule: r as u32,
                keyword: k as u32,
                substring: rule.substring,
            });
        }
    }
    let automaton = (!patterns.is_empty()).then(|| Automaton::new(&patterns));
    (automaton, owners)
}
