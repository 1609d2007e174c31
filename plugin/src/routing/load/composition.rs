//! Attaching `pack_composition.yaml` to the compiled rules: each `inject_additional` entry resolved to
//! a registered pack (an unavailable one is a warning, a wrong one an error).

use crate::config::{self, ConfigError};
use crate::routing::model::{Additional, Rule};
use crate::routing::packs::PackRegistry;
use std::collections::{HashMap, HashSet};

pub(super) fn attach_compositions(
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
