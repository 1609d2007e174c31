//! The shipped example configuration loads, routes the README's demo prompt, and lints clean.

use graphiti_openclaw::Engine;
use graphiti_openclaw::config::ConfigRoots;
use graphiti_openclaw::memory::graphiti::http::NoNetwork;
use graphiti_openclaw::platform::api::{Command, IntentTestRequest, OutputFormat};
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

#[test]
fn an_overlay_the_host_could_not_mount_is_a_warning_at_every_load() {
    let config = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../config");
    let roots = ConfigRoots {
        config_name: "~/cfg".into(),
        missing_overlay: Some("~/private".into()),
        ..ConfigRoots::new(config, None)
    };
    let mut engine = Engine::new(roots, None, Box::new(NoNetwork));
    for _ in 0..2 {
        let summary = engine.reload().unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            summary.warnings,
            vec!["the overlay directory ~/private does not exist: only ~/cfg is read".to_string()]
        );
    }
}
