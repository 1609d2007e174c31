//! Loading the routing configuration: the registry and packs, the rules compiled (keywords, boost
//! regexes), composition attached, one keyword automaton over all rules. Every problem is reported,
//! each located; work is linear in the files' size.

use super::matching::KeywordIndex;
use super::model::Rule;
use super::{LoadedRouting, Router};
use crate::config::{self, ConfigError, ConfigRoots, RoutingSettings};
use crate::routing::packs::{self, PackRegistry};
use std::collections::{HashMap, HashSet};

mod boosts;
mod composition;
mod rules;

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
        let mut warnings = overlay_warnings(roots);
        let mut errors = Vec::new();
        let registry = PackRegistry::load(roots, &mut files, &mut warnings, &mut errors);
        let (mut rules, declared_rules) = read_rules(roots, &registry, &mut files, &mut errors);
        let composition_rules = read_composition(
            roots,
            &registry,
            declared_rules.as_ref(),
            &mut rules,
            &mut files,
            &mut warnings,
            &mut errors,
        );
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut router = assemble(rules, registry, composition_rules);
        router.set_settings(settings.clone());
        Ok(LoadedRouting {
            router,
            files,
            warnings,
        })
    }
}

fn overlay_warnings(roots: &ConfigRoots) -> Vec<String> {
    roots
        .missing_overlay
        .iter()
        .map(|overlay| {
            format!(
                "the overlay directory {overlay} does not exist: only {} is read",
                roots.config_name()
            )
        })
        .collect()
}

/// The compiled rules, and the ids the rules file declares: None when the rules file could not be
/// read, and then no rule id can be checked against it.
fn read_rules(
    roots: &ConfigRoots,
    registry: &PackRegistry,
    files: &mut Vec<String>,
    errors: &mut Vec<ConfigError>,
) -> (Vec<Rule>, Option<HashSet<String>>) {
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
    let mut declared_rules: Option<HashSet<String>> = None;
    if let Some(source) = &rules_source {
        files.push(config::display_name(source));
        match config::parse::<config::RulesFile>(source) {
            Ok(spec) => {
                if spec.schema_version != 1 {
                    errors.push(config::schema_error(&source.display, spec.schema_version));
                }
                let (compiled, declared) =
                    rules::compile_rules(spec.rules, source, registry, errors);
                rules = compiled;
                declared_rules = Some(declared);
            }
            Err(e) => errors.push(e),
        }
    }
    (rules, declared_rules)
}

/// Attaches the composition file (optional) to `rules`; the number of composition rules it holds.
fn read_composition(
    roots: &ConfigRoots,
    registry: &PackRegistry,
    declared_rules: Option<&HashSet<String>>,
    rules: &mut [Rule],
    files: &mut Vec<String>,
    warnings: &mut Vec<String>,
    errors: &mut Vec<ConfigError>,
) -> usize {
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
                    composition::attach_compositions(
                        spec.rules,
                        &source,
                        registry,
                        declared_rules,
                        rules,
                        warnings,
                        errors,
                    );
                }
                Err(e) => errors.push(e),
            }
        }
        Ok(None) => {}
        Err(e) => errors.push(e),
    }
    composition_rules
}

/// The router over compiled rules: the keyword automaton and the lookups built once.
fn assemble(rules: Vec<Rule>, registry: PackRegistry, composition_rules: usize) -> Router {
    let keywords = KeywordIndex::build(&rules);
    let by_id = rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.clone(), i))
        .collect();
    let mut by_primary_pack = HashMap::new();
    for (i, rule) in rules.iter().enumerate() {
        by_primary_pack.entry(rule.primary_pack).or_insert(i);
    }
    Router {
        rules,
        registry,
        settings: RoutingSettings::default(),
        keywords,
        continuation_signals: vec![],
        composition_rules,
        by_id,
        by_primary_pack,
    }
}
