//! The routing case tables against the engine compiled natively (fast feedback; the component runs the
//! same tables in `routing_cases.rs`), and the PRD's minimum counts per property.

use graphiti_openclaw::Engine;
use graphiti_openclaw::config::ConfigRoots;
use graphiti_openclaw::memory::graphiti::http::NoNetwork;
use graphiti_openclaw_native_tests::cases::{self, Observed};
use std::collections::BTreeMap;

#[test]
fn every_case_holds_natively() {
    let mut failures = Vec::new();
    for (file, case_file) in cases::load_all() {
        let config = case_file.config_dir();
        let mut engine = Engine::new(
            ConfigRoots::new(config.clone(), None),
            None,
            Box::new(NoNetwork),
        );
        engine.set_host_settings(case_file.host_settings());
        engine
            .reload()
            .unwrap_or_else(|e| panic!("{file}: config {}: {e:?}", config.display()));
        for case in &case_file.cases {
            let seen: Observed = match engine.dry_run(&case.request(&config)) {
                Ok(injection) => injection.into(),
                Err(e) => {
                    failures.push(format!("{file}: case {}: dry run failed: {e}", case.name));
                    continue;
                }
            };
            if let Err(e) = case.check(&seen) {
                failures.push(format!("{file}: {e}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The PRD's correctness test matrix sets how many cases each property needs.
#[test]
fn the_matrix_has_the_prd_minimum_counts() {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_intent: BTreeMap<String, usize> = BTreeMap::new();
    for (_, file) in cases::load_all() {
        *counts.entry(file.property.clone()).or_default() += file.cases.len();
        if file.property == "P2" {
            for case in &file.cases {
                *per_intent.entry(case.expect.clone()).or_default() += 1;
            }
        }
    }
    let minimums = [
        ("P1", 10),
        ("P3", 10),
        ("P3-tie", 5),
        ("P4", 5),
        ("P5", 5),
        ("sticky", 5),
    ];
    for (property, minimum) in minimums {
        let n = counts.get(property).copied().unwrap_or(0);
        assert!(
            n >= minimum,
            "{property}: {n} cases, the PRD asks for at least {minimum}"
        );
    }
    for intent in [
        "dining",
        "vc_deal",
        "vc_memo",
        "vc_diligence",
        "content_tweet",
        "content_article",
    ] {
        let n = per_intent.get(intent).copied().unwrap_or(0);
        assert!(
            n >= 15,
            "P2: {n} clear-match cases for {intent}, the PRD asks for at least 15"
        );
    }
}
