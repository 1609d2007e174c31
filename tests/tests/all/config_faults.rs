//! Configuration faults through the real component in the shim: routing, settings and capture fail
//! apart; messages name the user's own paths and say truthfully what stays in force; ambiguous and
//! malformed files are located errors.

use graphiti_openclaw_tests::{
    standin,
    copy_dir, example_config, exchange, hook_context, plugin_wasm, prompt, temp_dir, workspace,
};
use graphiti_standin::StandIn;
use host_shim::{
    CaptureOutcome, ChatType, Command, Limits, ReloadError, Shim, ShimError,
    ShimOptions,
};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;

fn options(config: &Path) -> ShimOptions {
    let limits = Limits {
        call_timeout: Duration::from_secs(5),
        memory_bytes: 256 << 20,
        send_timeout: Duration::from_secs(10),
    };
    let mut options = ShimOptions::new(plugin_wasm(), config, limits);
    options.cache_dir = Some(workspace().join("target/test-component-cache"));
    options.echo_logs = false;
    options
}


/// A copy of the example configuration whose settings point at `graphiti` (MCP) with fast backoff.
fn config_for(graphiti: &StandIn) -> TempDir {
    let dir = temp_dir("config-faults");
    copy_dir(&example_config(), dir.path());
    std::fs::write(dir.path().join("settings.yaml"), settings_for(graphiti)).unwrap();
    dir
}

fn settings_for(graphiti: &StandIn) -> String {
    format!(
        "graphiti:\n  url: {}/mcp\ncapture:\n  backoff_initial_ms: 10\n  backoff_max_ms: 40\n",
        graphiti.url()
    )
}

/// One memory of the direct chat's group (`main-dm-user-1`), so recall has something to show.
fn seed(graphiti: &StandIn) {
    graphiti
        .seed_json(
            r#"{"group_id": "main-dm-user-1", "nodes": [],
                "facts": [{"uuid": "f1", "name": "MET", "fact": "The user met the Series A founder at Nopa",
                           "valid_at": "2025-02-01T00:00:00+00:00", "invalid_at": null, "expired_at": null}]}"#,
        )
        .expect("seed");
}

fn shim_with_state(config: &Path, state: &Path, graphiti: &StandIn) -> Shim {
    let mut options = options(config);
    options.state_dir = Some(state.to_path_buf());
    options.allowed_origins = vec![graphiti.url()];
    Shim::new(options).expect("shim starts")
}

fn check_config(shim: &mut Shim) -> (u8, String) {
    let out = shim.run_command(&Command::CheckConfig);
    (out.exit_code, out.stdout + &out.stderr)
}

fn status_config_lines(shim: &mut Shim) -> Vec<String> {
    let out = shim.run_command(&Command::Status);
    assert!(out.stdout.starts_with("graphiti: "), "{out:?}");
    out.stdout
        .lines()
        .filter(|l| l.starts_with("config:") || l.starts_with("settings:"))
        .map(str::to_string)
        .collect()
}

const DEMO: &str = "I had dinner with the Series A founder";

/// Item 3: a broken rules file disables routing, never recall or capture; the backlog is sent.
#[test]
fn a_broken_rules_file_turns_off_routing_only() {
    let graphiti = standin();
    seed(&graphiti);
    let config = config_for(&graphiti);
    std::fs::write(config.path().join("intent_rules.yaml"), "rules: [\n").unwrap();
    let state = temp_dir("config-faults-state");
    let mut shim = shim_with_state(config.path(), state.path(), &graphiti);
    let ctx = hook_context("broken-rules", ChatType::Direct);

    let injection = shim.before_agent_start(&prompt(DEMO), &ctx);
    let context = injection.prepend_context.clone().unwrap_or_default();
    assert!(
        context.starts_with("<graphiti-context"),
        "recall still runs: {injection:?}"
    );
    assert!(!context.contains("<pack-context"), "{context}");
    let error = format!(
        "{}/intent_rules.yaml:2: did not find expected node content",
        config.path().display()
    );
    assert_eq!(
        injection.decision.no_pack_reason.as_deref(),
        Some(format!("no routing configuration has loaded yet: {error}").as_str()),
    );
    // The load reported the error; turns do not repeat it.
    assert_eq!(injection.notes, Vec::<String>::new());

    match shim.agent_end(&exchange(DEMO, "Noted."), &ctx) {
        CaptureOutcome::Spooled(turn) => assert_eq!(turn.user, DEMO),
        other => panic!("capture must not depend on routing: {other:?}"),
    }
    let tick = shim.tick();
    assert_eq!(
        (tick.sent, tick.pending, tick.error.as_deref()),
        (1, 0, None),
        "{tick:?}"
    );
    assert_eq!(graphiti.episodes().len(), 1);

    let (code, text) = check_config(&mut shim);
    assert_eq!(code, 1);
    assert_eq!(
        text,
        format!(
            "configuration has 1 error(s):\n  {error}\n\
             routing: no routing configuration has loaded yet: no workflow pack is injected until one does; recall and capture go on\n"
        )
    );
    assert_eq!(
        status_config_lines(&mut shim),
        vec![format!(
            "config:   ROUTING OFF: no routing configuration has loaded yet: {error}"
        )]
    );
}

/// Item 3: after a good load, a broken routing file keeps the last good routing, and says so.
#[test]
fn a_failed_reload_keeps_the_last_good_routing_and_says_so() {
    let graphiti = standin();
    let config = config_for(&graphiti);
    let state = temp_dir("config-faults-state");
    let mut shim = shim_with_state(config.path(), state.path(), &graphiti);
    let rules = config.path().join("intent_rules.yaml");
    let good = std::fs::read_to_string(&rules).unwrap();
    std::fs::write(
        &rules,
        good.replace("    keyword_weight: 1.0\n", "    keyword_weight: -2\n"),
    )
    .unwrap();

    let (code, text) = check_config(&mut shim);
    assert_eq!(code, 1);
    assert_eq!(
        text,
        format!(
            "configuration has 1 error(s):\n  {}/intent_rules.yaml:9: dining.keyword_weight: must be a number above 0, not -2\n\
             routing: the last good routing configuration stays in force\n",
            config.path().display()
        )
    );
    let injection =
        shim.before_agent_start(&prompt(DEMO), &hook_context("last-good", ChatType::Direct));
    assert_eq!(injection.decision.intent.as_deref(), Some("vc_deal"));
    assert_eq!(
        status_config_lines(&mut shim),
        vec!["config:   6 rules, 9 packs, 5 composition rules (the last good routing configuration: the last reload had 1 error(s); check-config lists them)".to_string()]
    );
}

/// Item 3: a bad settings file keeps the defaults (none loaded yet) or the last good settings; routing
/// and capture go on.
#[test]
fn a_bad_settings_file_keeps_the_last_good_settings_and_capture_goes_on() {
    let graphiti = standin();
    let config = config_for(&graphiti);
    let settings = config.path().join("settings.yaml");

    // Never loaded: the defaults (Graphiti at localhost:8000, which this host does not allow).
    std::fs::write(&settings, "recall:\n  timeout_ms: 0\n").unwrap();
    let state = temp_dir("config-faults-state");
    let mut shim = shim_with_state(config.path(), state.path(), &graphiti);
    let ctx = hook_context("bad-settings", ChatType::Direct);
    let injection = shim.before_agent_start(&prompt(DEMO), &ctx);
    assert_eq!(
        injection.decision.intent.as_deref(),
        Some("vc_deal"),
        "routing goes on"
    );
    assert!(
        injection
            .notes
            .iter()
            .any(|n| n.contains("http://localhost:8000 is not an allowed origin")),
        "recall ran with the default URL: {:?}",
        injection.notes
    );
    assert!(matches!(
        shim.agent_end(&exchange(DEMO, "Noted."), &ctx),
        CaptureOutcome::Spooled(_)
    ));
    let error = format!(
        "{}/settings.yaml:2: recall.timeout_ms: must be above 0",
        config.path().display()
    );
    let (code, text) = check_config(&mut shim);
    assert_eq!(code, 1);
    assert_eq!(
        text,
        format!(
            "configuration has 1 error(s):\n  {error}\n\
             settings: no settings have loaded yet: recall and capture run with the defaults\n"
        )
    );
    assert_eq!(
        status_config_lines(&mut shim),
        vec![
            "config:   6 rules, 9 packs, 5 composition rules".to_string(),
            format!("settings: DEFAULTS: no settings have loaded yet: {error}"),
        ]
    );

    // Fixed, then broken again: the last good settings (the stand-in's URL) stay, and the turn
    // spooled above reaches Graphiti.
    std::fs::write(&settings, settings_for(&graphiti)).unwrap();
    assert!(shim.reload_config().is_ok());
    std::fs::write(&settings, "recall:\n  timeout_ms: 0\n").unwrap();
    let errors = match shim.reload_config() {
        Err(ReloadError::Invalid(errors)) => errors,
        other => panic!("{other:?}"),
    };
    assert_eq!(errors.len(), 1, "{errors:?}");
    let tick = shim.tick();
    assert_eq!((tick.sent, tick.error.as_deref()), (1, None), "{tick:?}");
    let (_, text) = check_config(&mut shim);
    assert!(
        text.ends_with("settings: the last good settings stay in force\n"),
        "{text}"
    );
}

/// Item 3: messages name the directories as the user gave them (here relative), overlay files by
/// the overlay's path.
#[test]
fn messages_name_the_users_directories() {
    let base = workspace().join("target/test-config-names");
    let _ = std::fs::remove_dir_all(&base);
    copy_dir(&example_config(), &base.join("cfg"));
    std::fs::create_dir_all(base.join("private")).unwrap();
    // Tests run in the `tests` crate's directory.
    let config = Path::new("../target/test-config-names/cfg");
    let overlay = Path::new("../target/test-config-names/private");
    std::fs::write(
        overlay.join("pack_composition.yaml"),
        "rules:\n  - primary_intent: nowhere\n",
    )
    .unwrap();
    std::fs::remove_file(config.join("packs/content_strategy.pack.yaml")).unwrap();
    let mut options = options(config);
    options.overlay_dir = Some(overlay.to_path_buf());
    let mut shim = Shim::new(options).expect("shim starts");
    let (code, text) = check_config(&mut shim);
    assert_eq!(code, 1);
    assert_eq!(
        text,
        "configuration has 1 error(s):\n  \
         ../target/test-config-names/private/pack_composition.yaml:2: nowhere.primary_intent: \"nowhere\" is not an intent rule id\n\
         routing: no routing configuration has loaded yet: no workflow pack is injected until one does; recall and capture go on\n"
    );
    std::fs::remove_file(overlay.join("pack_composition.yaml")).unwrap();
    std::fs::write(overlay.join("settings.yaml"), "recall:\n  enabled: false\n").unwrap();
    let summary = shim.reload_config().expect("loads");
    assert_eq!(
        summary.files[0],
        "../target/test-config-names/private/settings.yaml (overlay)"
    );
    assert!(
        summary
            .files
            .contains(&"../target/test-config-names/cfg/intent_rules.yaml".to_string()),
        "{:?}",
        summary.files
    );
    assert_eq!(
        summary.warnings,
        vec!["pack content_strategy: pack file packs/content_strategy.pack.yaml not found; it is unavailable".to_string()]
    );
}

/// Item 8: two spellings of one configuration file are an error naming both, in the config directory
/// and in the overlay; the overlay's file of a kind replaces the config directory's, whatever its
/// extension.
#[test]
fn two_spellings_of_one_config_file_are_an_error() {
    let config = temp_dir("spellings");
    copy_dir(&example_config(), config.path());
    std::fs::write(config.path().join("intent_rules.json"), "{\"rules\": []}").unwrap();
    let mut shim = Shim::new(options(config.path())).expect("shim starts");
    let (code, text) = check_config(&mut shim);
    assert_eq!(code, 1, "{text}");
    let dir = config.path().display();
    assert!(
        text.contains(&format!(
            "  {dir}/intent_rules.yaml: {dir}/intent_rules.json exists too: keep one of them\n"
        )),
        "{text}"
    );
    std::fs::remove_file(config.path().join("intent_rules.json")).unwrap();

    let overlay = temp_dir("spellings-overlay");
    std::fs::write(
        overlay.path().join("settings.yml"),
        "recall:\n  enabled: false\n",
    )
    .unwrap();
    std::fs::write(overlay.path().join("settings.json"), "{}").unwrap();
    let mut options = options(config.path());
    options.overlay_dir = Some(overlay.path().to_path_buf());
    let mut shim = Shim::new(options.clone()).expect("shim starts");
    let (code, text) = check_config(&mut shim);
    assert_eq!(code, 1, "{text}");
    let odir = overlay.path().display();
    assert!(
        text.contains(&format!(
            "  {odir}/settings.yml: {odir}/settings.json exists too: keep one of them\n"
        )),
        "{text}"
    );
    // One spelling in the overlay replaces the config directory's settings.yaml.
    std::fs::remove_file(overlay.path().join("settings.yml")).unwrap();
    let summary = shim.reload_config().expect("loads");
    assert_eq!(summary.files[0], format!("{odir}/settings.json (overlay)"));
}

/// Item 8: a control character is reported on its own line.
#[test]
fn a_control_character_is_reported_on_its_line() {
    let config = temp_dir("control-char");
    copy_dir(&example_config(), config.path());
    let rules = config.path().join("intent_rules.yaml");
    let text = std::fs::read_to_string(&rules)
        .unwrap()
        .replacen("dinner", "din\u{1}ner", 1);
    let line = text.lines().position(|l| l.contains('\u{1}')).unwrap() + 1;
    assert!(line > 1);
    std::fs::write(&rules, text).unwrap();
    let (code, text) = check_config(&mut Shim::new(options(config.path())).expect("shim starts"));
    assert_eq!(code, 1);
    assert!(
        text.contains(&format!(
            "  {}/intent_rules.yaml:{line}: control characters are not allowed\n",
            config.path().display()
        )),
        "{text}"
    );
}

/// Item 8: a missing experts directory is named, not blamed on the wasm file.
#[test]
fn a_missing_experts_directory_is_named() {
    let mut options = options(&example_config());
    options.experts_dir = Some(PathBuf::from("no-such-experts-dir"));
    let error = Shim::new(options).err().expect("refused");
    assert!(matches!(error, ShimError::Mount { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "cannot mount no-such-experts-dir at /experts: No such file or directory (os error 2)"
    );
}
