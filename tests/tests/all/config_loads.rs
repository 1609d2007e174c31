//! Loads are linear in the input through the real component in the shim, within the default 5 s call
//! limit: one rule with 100,000 keywords (and 200,000) loads; deeply nested YAML (a configuration file or an expert
//! package's `expert.yaml`) is refused quickly with its file and line, and a package that cannot load
//! costs only its own sessions. Each test prints its figures (input size → time); the assertions are
//! the call limit, not timings, so a noisy machine does not make them flaky.

use graphiti_openclaw_tests::{
    copy_dir, example_config, hook_context, plugin_wasm, prompt, temp_dir, workspace,
};
use host_shim::{ChatType, Command, ExpertsCommand, HookContext, Limits, Shim, ShimOptions};
use std::path::Path;
use std::time::{Duration, Instant};

const CALL_LIMIT: Duration = Duration::from_secs(5);

fn shim(config: &Path, experts: Option<&Path>) -> Shim {
    let limits = Limits {
        call_timeout: CALL_LIMIT,
        memory_bytes: 512 << 20,
        send_timeout: CALL_LIMIT,
    };
    let mut options = ShimOptions::new(plugin_wasm(), config, limits);
    options.cache_dir = Some(workspace().join("target/test-component-cache"));
    options.echo_logs = false;
    options.experts_dir = experts.map(Path::to_path_buf);
    options.host_settings = Some(r#"{"recall": {"enabled": false}}"#.into());
    Shim::new(options).expect("shim starts")
}

fn kb(bytes: usize) -> f64 {
    bytes as f64 / 1024.0
}

#[test]
fn one_rule_with_100k_keywords_loads_within_the_call_limit() {
    let config = temp_dir("bulk-keywords");
    copy_dir(&example_config(), config.path());
    let example_rules = std::fs::read_to_string(config.path().join("intent_rules.yaml")).unwrap();
    let mut shim = shim(config.path(), None);
    // Up to 200,000: twice the size the call limit must hold, so a quadratic load shows (it did).
    for keywords in [25_000, 50_000, 100_000, 200_000] {
        let list: Vec<String> = (0..keywords).map(|k| format!("bulkword{k}")).collect();
        // The big rule first: its keywords open the automaton (the order that made its construction
        // slowest when it was quadratic in the number of keywords).
        let bulk = format!(
            "rules:\n  - id: bulk\n    consumer_profile: dining_concierge\n    pack_type: dining\n    scope: public\n    keywords: [{}]\n",
            list.join(", ")
        );
        let rules = example_rules.replacen("rules:\n", &bulk, 1);
        std::fs::write(config.path().join("intent_rules.yaml"), &rules).unwrap();
        let start = Instant::now();
        let loaded = shim.reload_config();
        let took = start.elapsed();
        println!(
            "one rule of {keywords} keywords ({:.0} KB intent_rules.yaml): reload {:.3} s",
            kb(rules.len()),
            took.as_secs_f64()
        );
        let summary = loaded.unwrap_or_else(|e| panic!("{keywords} keywords: {e}"));
        assert_eq!(summary.rules, 7);
        let last = format!("please bulkword{}", keywords - 1);
        let routed = shim.dry_run(&host_shim::IntentTestRequest {
            prompt: last,
            recall_json: None,
            group_chat: false,
            previous_pack: None,
        now_ms: None,
        previous_at_ms: None,
        carried_turns: None,
        previous_prompt: None,
        });
        assert_eq!(routed.unwrap().decision.intent.as_deref(), Some("bulk"));
    }
}

/// `keywords: [[[[…]]]]` nested `depth` levels.
fn deep_rules(depth: usize) -> String {
    format!(
        "rules:\n  - id: deep\n    keywords: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

#[test]
fn deeply_nested_config_yaml_is_refused_quickly_with_its_line() {
    let config = temp_dir("deep-config");
    copy_dir(&example_config(), config.path());
    let mut shim = shim(config.path(), None);
    for kib in [25, 50, 100] {
        let text = deep_rules(kib * 1024 / 2);
        std::fs::write(config.path().join("intent_rules.yaml"), &text).unwrap();
        let start = Instant::now();
        let out = shim.run_command(&Command::CheckConfig);
        let took = start.elapsed();
        println!(
            "intent_rules.yaml nested {} levels ({:.0} KB): refused in {:.3} s",
            kib * 512,
            kb(text.len()),
            took.as_secs_f64()
        );
        assert_eq!(out.exit_code, 1, "{out:?}");
        assert!(
            out.stderr.contains(&format!(
                "  {}/intent_rules.yaml:3: nested deeper than 64 levels\n",
                config.path().display()
            )),
            "{}",
            out.stderr
        );
    }
    // The same in JSON.
    std::fs::remove_file(config.path().join("intent_rules.yaml")).unwrap();
    let json = format!(
        "{{\n\"rules\": [{{\"id\": \"deep\", \"keywords\": {}{}}}]}}\n",
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    std::fs::write(config.path().join("intent_rules.json"), &json).unwrap();
    let out = shim.run_command(&Command::CheckConfig);
    assert!(
        out.stderr.contains(&format!(
            "  {}/intent_rules.json:2: nested deeper than 64 levels\n",
            config.path().display()
        )),
        "{}",
        out.stderr
    );
}

/// An expert package whose `expert.yaml` nests `depth` levels deep.
fn write_deep_package(root: &Path, depth: usize) -> usize {
    let dir = root.join("deep-expert");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!(
        "spec: \"1.0\"\nname: deep-expert\nversion: 1.0.0\ndescription: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    std::fs::write(dir.join("expert.yaml"), &manifest).unwrap();
    manifest.len()
}

fn expert_session(name: &str) -> HookContext {
    HookContext {
        session_key: Some(format!("agent:main:expert:{name}")),
        session_id: Some("session-1".into()),
        trigger: Some("sub-agent".into()),
        ..hook_context("unused", ChatType::Direct)
    }
}

#[test]
fn a_deeply_nested_expert_package_costs_only_its_own_sessions() {
    let experts = temp_dir("deep-experts");
    copy_dir(
        &example_config().join("experts/trip-planner-expert"),
        &experts.path().join("trip-planner-expert"),
    );
    for kib in [25, 50, 100] {
        let size = write_deep_package(experts.path(), kib * 1024 / 2);
        let mut shim = shim(&example_config(), Some(experts.path()));
        let start = Instant::now();
        let main = shim.before_agent_start(
            &prompt("Draft a tweet about our launch"),
            &hook_context("main", ChatType::Direct),
        );
        let took = start.elapsed();
        println!(
            "expert.yaml nested {} levels ({:.0} KB): main agent's turn {:.3} s",
            kib * 512,
            kb(size),
            took.as_secs_f64()
        );
        assert_eq!(
            main.decision.intent.as_deref(),
            Some("content_tweet"),
            "{main:?}"
        );
        let registry = main.append_system_context.expect("the registry");
        assert!(registry.contains("trip-planner-expert"), "{registry}");
        assert!(!registry.contains("deep-expert"), "{registry}");

        let good = shim.before_agent_start(
            &prompt("Plan my trip to Lisbon"),
            &expert_session("trip-planner-expert"),
        );
        assert!(
            good.system_context
                .is_some_and(|s| s.starts_with("## Identity"))
        );
        let bad = shim.before_agent_start(
            &prompt("Plan my trip to Lisbon"),
            &expert_session("deep-expert"),
        );
        assert_eq!(bad.system_context, None);
        assert!(
            bad.notes
                .iter()
                .any(|n| n.starts_with("expert deep-expert: no expert prompt")),
            "{:?}",
            bad.notes
        );
        let out = shim.run_command(&Command::Experts(ExpertsCommand::Validate(
            "deep-expert".into(),
        )));
        assert_eq!(out.exit_code, 1, "{out:?}");
        assert!(
            out.stdout
                .contains("expert.yaml:4: nested deeper than 64 levels"),
            "{}",
            out.stdout
        );
    }
}
