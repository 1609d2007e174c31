//! The shipped example configuration loads, routes the README's demo prompt, and lints clean.

use graphiti_openclaw::Engine;
use graphiti_openclaw::api::{Command, IntentTestRequest, OutputFormat};
use graphiti_openclaw::config::ConfigRoots;
use graphiti_openclaw::graphiti::http::NoNetwork;
use std::path::PathBuf;

fn engine() -> Engine {
    let config = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../config");
    Engine::new(ConfigRoots::new(config, None), None, Box::new(NoNetwork))
}

#[test]
fn example_config_loads_without_warnings() {
    let summary = engine().reload().unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        (summary.rules, summary.packs, summary.composition_rules),
        (6, 9, 5)
    );
    assert!(summary.warnings.is_empty(), "{:?}", summary.warnings);
}

#[test]
fn demo_prompt_picks_the_deal_pack() {
    let request = IntentTestRequest {
        prompt: "I had dinner with the Series A founder".into(),
        ..Default::default()
    };
    let out = engine().run_command(&Command::IntentTest(request, OutputFormat::Text));
    println!("{}", out.stdout);
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("Decision: inject vc_deal → pack vc_deal_brief"),
        "{}",
        out.stdout
    );
}

#[test]
fn example_rules_pass_the_overlap_lint() {
    let out = engine().run_command(&Command::LintRules);
    assert_eq!(out.exit_code, 0, "{}{}", out.stdout, out.stderr);
}
