//! `check-config` and `lint-rules`: what loaded, and keyword overlap between rules.

use super::success;
use crate::platform::api::{CommandOutput, ConfigResult};
use crate::routing::{self, Router};
use std::fmt::Write;

/// Two rules sharing more than this fraction of the smaller rule's keywords are ambiguous by design.
const MAX_KEYWORD_OVERLAP: f64 = 0.5;

pub fn check_config(result: ConfigResult) -> CommandOutput {
    match result {
        Ok(summary) => {
            let mut out = format!(
                "configuration OK: {} rules, {} packs, {} composition rules\n",
                summary.rules, summary.packs, summary.composition_rules
            );
            for file in &summary.files {
                let _ = writeln!(out, "  read {file}");
            }
            for warning in &summary.warnings {
                let _ = writeln!(out, "  warning: {warning}");
            }
            success(out)
        }
        Err(failure) => {
            let mut err = format!("configuration has {} error(s):\n", failure.errors.len());
            for e in &failure.errors {
                let _ = writeln!(err, "  {e}");
            }
            for line in &failure.in_force {
                let _ = writeln!(err, "{line}");
            }
            CommandOutput {
                exit_code: 1,
                stdout: String::new(),
                stderr: err,
            }
        }
    }
}

/// PRD keyword coverage audit: no two rules may share more than half of their keywords.
pub fn lint_rules(router: &Router) -> CommandOutput {
    let rules = &router.rules;
    let mut problems = Vec::new();
    for (i, j, shared) in routing::shared_keywords(rules) {
        let (a, b) = (&rules[i], &rules[j]);
        let smaller = a.keywords.len().min(b.keywords.len()).max(1);
        let overlap = shared.len() as f64 / smaller as f64;
        if overlap > MAX_KEYWORD_OVERLAP {
            problems.push(format!(
                "{} and {} share {} of {} keywords ({:.0}%): {}",
                a.id,
                b.id,
                shared.len(),
                smaller,
                overlap * 100.0,
                shared
                    .iter()
                    .map(|&k| a.keywords[k].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    // Rasa's check: a keyword inside another rule's keyword makes both match.
    let notices: Vec<String> = routing::text_overlaps(rules)
        .into_iter()
        .map(|(i, j, ka, kb)| {
            let (a, b) = (&rules[i], &rules[j]);
            format!(
                "{}'s {:?} and {}'s {:?} overlap as text",
                a.id, a.keywords[ka], b.id, b.keywords[kb]
            )
        })
        .collect();
    let mut out = String::new();
    for n in &notices {
        let _ = writeln!(out, "notice: {n}");
    }
    if problems.is_empty() {
        let _ = writeln!(
            out,
            "lint-rules: {} rules, no pair shares more than 50% of its keywords",
            router.rules.len()
        );
        success(out)
    } else {
        let mut err = String::new();
        for p in &problems {
            let _ = writeln!(err, "overlap: {p}");
        }
        let _ = writeln!(
            err,
            "lint-rules: {} rule pair(s) share more than 50% of their keywords",
            problems.len()
        );
        CommandOutput {
            exit_code: 1,
            stdout: out,
            stderr: err,
        }
    }
}
