//! The real `plugin.wasm` in the host shim: its exports, determinism, configuration errors and reloads,
//! the overlay, conversation stickiness through state, capture, and faults (P6).

use graphiti_openclaw_tests::{
    copy_dir, example_config, hook_context, plugin_wasm, prompt, temp_dir, workspace,
};
use host_shim::{
    AgentEndEvent, CaptureOutcome, ChatType, Command, EvalCommand, HookContext, IntentTestCommand,
    IntentTestRequest, Limits, OutputFormat, ReloadError, Shim, ShimOptions,
};
use std::path::Path;
use std::time::Duration;
use tempfile::TempDir;

fn limits() -> Limits {
    Limits {
        call_timeout: Duration::from_secs(10),
        send_timeout: Duration::from_secs(10),
        memory_bytes: 128 << 20,
    }
}

fn options(config: &Path) -> ShimOptions {
    let mut options = ShimOptions::new(plugin_wasm(), config, limits());
    options.cache_dir = Some(workspace().join("target/test-component-cache"));
    options.echo_logs = false;
    options
}

fn shim(config: &Path) -> Shim {
    Shim::new(options(config)).expect("shim starts")
}

fn shim_with_state(config: &Path, state: &Path) -> Shim {
    let mut options = options(config);
    options.state_dir = Some(state.to_path_buf());
    Shim::new(options).expect("shim starts")
}

fn ctx(session: &str, chat_type: ChatType) -> HookContext {
    hook_context(session, chat_type)
}

fn dry(prompt: &str) -> IntentTestRequest {
    IntentTestRequest {
        prompt: prompt.into(),
        recall_json: None,
        group_chat: false,
        previous_pack: None,
        now_ms: None,
        previous_at_ms: None,
        carried_turns: None,
        previous_prompt: None,
    }
}

/// A `.wit` file without its comments and with its blanks collapsed: what hosts and guests bind.
fn wit_contract(text: &str) -> String {
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The contract in the `.wit` files of `dir` (not its subfolders), by file name.
fn wit_files(dir: &Path) -> std::collections::BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wit"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, wit_contract(&std::fs::read_to_string(&path).unwrap()))
        })
        .collect()
}

/// The version in `wit/world.wit`'s `package graphiti:openclaw@<version>;` line.
fn wit_version() -> String {
    std::fs::read_to_string(workspace().join("wit/world.wit"))
        .unwrap()
        .lines()
        .find_map(|line| {
            line.strip_prefix("package graphiti:openclaw@")?
                .strip_suffix(';')
        })
        .expect("a `package graphiti:openclaw@<version>;` line in wit/world.wit")
        .to_string()
}

/// The WIT contract changes only with its version: `wit/v<version>/` holds the contract as released
/// at that version, and the files of `wit/` must bind exactly the same while its version stays.
#[test]
fn the_wit_contract_changes_only_with_its_version() {
    let wit = workspace().join("wit");
    let version = wit_version();
    let frozen_dir = wit.join(format!("v{version}"));
    assert!(
        frozen_dir.is_dir(),
        "wit/ is at {version}, but {} is missing: copy the released contract there",
        frozen_dir.display()
    );
    let (current, frozen) = (wit_files(&wit), wit_files(&frozen_dir));
    assert_eq!(
        current.keys().collect::<Vec<_>>(),
        frozen.keys().collect::<Vec<_>>(),
        "wit/ and wit/v{version}/ hold different files"
    );
    for (name, contract) in &current {
        assert!(
            *contract == frozen[name],
            "wit/{name} differs from the contract released as {version} (wit/v{version}/{name}): \
             bump the package version in wit/world.wit, say what changed in wit/CHANGELOG.md and \
             freeze the new version in wit/v<new version>/"
        );
    }
    let changelog = std::fs::read_to_string(wit.join("CHANGELOG.md")).unwrap();
    assert!(
        changelog.contains(&format!("## {version}")),
        "wit/CHANGELOG.md has no entry for {version}"
    );
}

#[test]
fn a_wit_change_without_a_new_version_is_caught() {
    let current = std::fs::read_to_string(workspace().join("wit/experts.wit")).unwrap();
    let commented = current.replacen("interface experts", "// a note\ninterface experts", 1);
    assert_eq!(
        wit_contract(&commented),
        wit_contract(&current),
        "comments bind nothing"
    );
    let renamed = current.replacen("expert-delivered", "expert-posted", 1);
    assert!(renamed != current, "the planted change applies");
    assert_ne!(wit_contract(&renamed), wit_contract(&current));
}

/// Each `graphiti:openclaw` interface of `resolve`, by name, printed without docs, its items sorted.
fn printed_interfaces(resolve: &wit_parser::Resolve) -> std::collections::BTreeMap<String, String> {
    let mut printed = std::collections::BTreeMap::new();
    for (id, interface) in resolve.interfaces.iter() {
        let ours = interface.package.is_some_and(|package| {
            let name = &resolve.packages[package].name;
            (name.namespace.as_str(), name.name.as_str()) == ("graphiti", "openclaw")
        });
        if let (true, Some(name)) = (ours, &interface.name) {
            let mut printer = wit_component::WitPrinter::default();
            printer.emit_docs(false);
            printer
                .print_interface(resolve, id)
                .expect("an interface prints");
            // Items in order of definition in wit/, of use in a decoded component: compared as a set.
            let text = String::from(printer.output);
            let mut items: Vec<&str> = text.split("\n\n").map(str::trim).collect();
            items.sort_unstable();
            printed.insert(name.clone(), items.join("\n\n"));
        }
    }
    printed
}

/// The contract built into `plugin.wasm` is `wit/`'s: every interface of the package the component
/// imports or exports, decoded from the component, prints as `wit/` defines it.
#[test]
fn the_world_built_into_plugin_wasm_is_wits() {
    let bytes = std::fs::read(plugin_wasm()).unwrap();
    let wit_parser::decoding::DecodedWasm::Component(built, _) =
        wit_component::decode(&bytes).expect("plugin.wasm decodes")
    else {
        panic!("plugin.wasm is a component");
    };
    let mut source = wit_parser::Resolve::new();
    source
        .push_dir(workspace().join("wit"))
        .expect("wit/ parses");
    let (built, source) = (printed_interfaces(&built), printed_interfaces(&source));
    assert!(
        !built.is_empty(),
        "plugin.wasm names no graphiti:openclaw interface"
    );
    for (name, printed) in &built {
        let defined = source.get(name).unwrap_or_else(|| {
            panic!("plugin.wasm uses interface {name}, which wit/ does not define: rebuild it")
        });
        assert!(
            printed == defined,
            "interface {name} in plugin.wasm differs from wit/: rebuild the component \
             (scripts/build.sh)\n--- plugin.wasm\n{printed}\n--- wit/\n{defined}"
        );
    }
}

#[test]
fn plugin_wasm_stays_within_its_size_budget() {
    use graphiti_openclaw_tests::size_budget::{
        RELEASE_GROWTH, budget_bytes, core_module_bytes, packaged_core_module_bytes,
        previous_release,
    };
    let release = previous_release();
    let previous = packaged_core_module_bytes(&release);
    let (bytes, budget) = (core_module_bytes(&plugin_wasm()), budget_bytes(previous));
    println!(
        "plugin.wasm's core module: {bytes} bytes; {}: {previous}; budget {budget}",
        release.display()
    );
    assert!(
        bytes <= budget,
        "plugin.wasm's core module is {bytes} bytes, over its budget of {budget} ({}% more than \
         the previous release's {previous}): find the bytes, or say in \
         docs/decisions/size-budget.md why this release needs more",
        RELEASE_GROWTH * 100.0
    );
}

#[test]
fn the_size_budget_reads_the_previous_release_and_the_components_core_module() {
    use graphiti_openclaw_tests::size_budget::{
        core_module_bytes, packaged_core_module_bytes, previous_release,
    };
    let (core, component) = (
        core_module_bytes(&plugin_wasm()),
        std::fs::metadata(plugin_wasm()).unwrap().len(),
    );
    // The core module is most of the component: the rest is its WIT types and adapter glue.
    assert!(core < component && core > component * 9 / 10, "{core} of {component} bytes");
    let previous = packaged_core_module_bytes(&previous_release());
    assert!(previous > component / 2, "the previous release's core module: {previous} bytes");
}

#[test]
fn the_component_exports_the_hooks_and_imports_only_host_and_wasi() {
    let engine = wasmtime::Engine::default();
    let component =
        wasmtime::component::Component::from_file(&engine, plugin_wasm()).expect("a component");
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(&engine)
        .map(|(name, _)| name.to_string())
        .collect();
    let version = wit_version();
    let interface = |name: &str| format!("graphiti:openclaw/{name}@{version}");
    assert_eq!(
        exports,
        vec![interface("hooks"), interface("commands"), interface("experts")]
    );
    let functions = |name: &str| -> Vec<String> {
        let (_, export) = ty
            .exports(&engine)
            .find(|(export, _)| *export == interface(name))
            .unwrap();
        let wasmtime::component::types::ComponentItem::ComponentInstance(instance) = export.ty else {
            panic!("the {name} export is an instance");
        };
        instance
            .exports(&engine)
            .map(|(name, _)| name.to_string())
            .collect()
    };
    for (name, expected) in [
        ("hooks", &["before-agent-start", "agent-end", "reload-config", "dry-run", "tick"][..]),
        ("commands", &["run-command"][..]),
        ("experts", &["expert-webhook", "expert-tick", "expert-delivered"][..]),
    ] {
        let functions = functions(name);
        for f in expected {
            assert!(
                functions.contains(&f.to_string()),
                "missing export {name}#{f}: {functions:?}"
            );
        }
    }
    let imports: Vec<String> = ty
        .imports(&engine)
        .map(|(name, _)| name.to_string())
        .collect();
    assert!(
        imports.contains(&interface("host")),
        "{imports:?}"
    );
    assert!(
        imports
            .iter()
            .any(|i| i.starts_with("wasi:filesystem/preopens@0.2")),
        "{imports:?}"
    );
    for import in &imports {
        assert!(
            import.starts_with("wasi:") || import.starts_with("graphiti:openclaw/"),
            "unexpected import {import}"
        );
    }
}

#[test]
fn same_input_twice_gives_identical_bytes() {
    let recall =
        std::fs::read_to_string(example_config().join("examples/recall_restaurant.json")).unwrap();
    let request = IntentTestRequest {
        recall_json: Some(recall),
        ..dry("Plan a dinner with a founder at Nopa")
    };
    let json = |shim: &mut Shim| {
        shim.run_command(&Command::IntentTest(IntentTestCommand { request: request.clone(), format: OutputFormat::Json }))
            .stdout
    };
    let mut first = shim(&example_config());
    let mut second = shim(&example_config());
    let a = json(&mut first);
    assert!(a.contains("\"intent\": \"dining\""), "{a}");
    assert_eq!(a, json(&mut first), "same shim, same bytes");
    assert_eq!(a, json(&mut second), "fresh instance, same bytes");

    // The hook itself, from fresh state each time.
    let hook = |state: TempDir| {
        let mut shim = shim_with_state(&example_config(), state.path());
        format!(
            "{:?}",
            shim.before_agent_start(
                &prompt("Outline a blog post about onboarding"),
                &ctx("s", ChatType::Direct)
            )
        )
    };
    assert_eq!(hook(temp_dir("det-a")), hook(temp_dir("det-b")));
}

#[test]
fn config_errors_name_file_line_and_field_and_the_last_good_config_stays() {
    let config = temp_dir("config-errors");
    copy_dir(&example_config(), config.path());
    let mut shim = shim(config.path());
    let before = shim
        .dry_run(&dry("Draft a tweet about our launch"))
        .unwrap();
    assert_eq!(before.decision.intent.as_deref(), Some("content_tweet"));

    let rules = config.path().join("intent_rules.yaml");
    let good = std::fs::read_to_string(&rules).unwrap();
    let broken = good
        .replace("    keyword_weight: 1.0\n", "    keyword_weight: -2\n")
        .replace(
            "  - id: content_tweet\n",
            "  - id: content_tweet\n    keyword_wieght: 2\n",
        );
    assert_ne!(good, broken);
    std::fs::write(&rules, &broken).unwrap();

    let errors = match shim.reload_config() {
        Err(ReloadError::Invalid(errors)) => errors,
        other => panic!("expected config errors, got {other:?}"),
    };
    let text: Vec<String> = errors.iter().map(host_shim::config_error_line).collect();
    let first = &errors[0];
    assert!(first.file.ends_with("intent_rules.yaml"), "{text:?}");
    let line = first.line.expect("a line number") as usize;
    assert!(
        broken
            .lines()
            .nth(line - 1)
            .unwrap()
            .contains("keyword_wieght"),
        "{text:?}"
    );
    assert!(
        first
            .field
            .as_deref()
            .unwrap_or("")
            .contains("keyword_wieght")
            || first.message.contains("keyword_wieght"),
        "{text:?}"
    );

    // The last good configuration still routes.
    let after = shim
        .dry_run(&dry("Draft a tweet about our launch"))
        .unwrap();
    assert_eq!(
        format!("{:?}", after.decision),
        format!("{:?}", before.decision)
    );

    // With only the weight wrong, the error names that field and its line.
    std::fs::write(
        &rules,
        good.replace("    keyword_weight: 1.0\n", "    keyword_weight: -2\n"),
    )
    .unwrap();
    let out = shim.run_command(&Command::CheckConfig);
    assert_eq!(out.exit_code, 1);
    assert!(
        out.stderr
            .contains("intent_rules.yaml:9: dining.keyword_weight: must be a number above 0"),
        "{}",
        out.stderr
    );

    // A fixed file loads again.
    std::fs::write(&rules, &good).unwrap();
    assert!(shim.reload_config().is_ok());
}

#[test]
fn a_bad_regex_and_an_unknown_pack_are_reported_together() {
    let config = temp_dir("config-regex");
    copy_dir(&example_config(), config.path());
    let rules = config.path().join("intent_rules.yaml");
    let text = std::fs::read_to_string(&rules).unwrap().replace(
        "weight: 0.25",
        "weight: 0.25\n        fact_pattern: '(unclosed'",
    );
    std::fs::write(&rules, text).unwrap();
    let registry = config.path().join("pack_registry.yaml");
    let text = std::fs::read_to_string(&registry)
        .unwrap()
        .replace("primary_pack: dining_recs", "primary_pack: dining_recs_v2");
    std::fs::write(&registry, text).unwrap();
    let out = shim(config.path()).run_command(&Command::CheckConfig);
    assert_eq!(out.exit_code, 1);
    assert!(
        out.stderr
            .contains("vc_memo.fact_pattern: entity_boosts[0]: invalid pattern"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("pack_registry.yaml:14: primary_pack: consumer profile \"dining_concierge\" names pack \"dining_recs_v2\""), "{}", out.stderr);
}

#[test]
fn a_unicode_property_the_component_does_not_know_is_named_in_the_error() {
    let config = temp_dir("config-unicode");
    copy_dir(&example_config(), config.path());
    let rules = config.path().join("intent_rules.yaml");
    let original = std::fs::read_to_string(&rules).unwrap();
    let with = |pattern: &str| {
        let text = original.replace(
            "weight: 0.25",
            &format!("weight: 0.25\n        fact_pattern: '{pattern}'"),
        );
        std::fs::write(&rules, text).unwrap();
        shim(config.path()).run_command(&Command::CheckConfig)
    };
    for (pattern, error) in [
        (r"\p{Bogus}", "Unicode property not found"),
        (r"[\p{L}&&\P{Greekish}]", "Unicode property not found"),
        (r"\p{sc=Elvish}", "Unicode property value not found"),
        (r"\p{age=3.0}", "Unicode property not found"),
        (r"(?-u:\p{ascii})", "Unicode not allowed here"),
    ] {
        let out = with(pattern);
        assert_eq!(out.exit_code, 1, "{pattern}: {}", out.stderr);
        assert!(out.stderr.contains(error), "{pattern}: {}", out.stderr);
        assert!(out.stderr.contains(pattern), "{pattern}: {}", out.stderr);
    }
    for pattern in [
        r"\pL\p{Greek}\p{Is_Alphabetic}\p{gc=Lu}\p{scx:Grek}\P{White Space}",
        r"[\p{ascii}--\d]",
        r"(?-i:Chef)(?i:[[:^lower:]]ſ)[^\p{Lu}k](?-u:K)",
    ] {
        let out = with(pattern);
        assert_eq!(out.exit_code, 0, "{pattern}: {}", out.stderr);
    }
}

#[test]
fn the_overlay_replaces_files_of_the_same_name() {
    let mut options = options(&example_config());
    options.overlay_dir = Some(example_config().join("private.example"));
    let mut shim = Shim::new(options).unwrap();
    let injection = shim
        .dry_run(&dry("Book a table for dinner at a bistro"))
        .unwrap();
    let block = injection.prepend_context.expect("dining pack");
    assert!(
        block.contains("Overlay text: only places within a 20-minute walk"),
        "{block}"
    );
    let summary = shim.reload_config().unwrap();
    assert!(
        summary
            .files
            .iter()
            .any(|f| f.contains("dining_recs.pack.yaml (overlay)")),
        "{:?}",
        summary.files
    );
}

#[test]
fn follow_ups_keep_the_pack_per_conversation() {
    let state = temp_dir("sticky-state");
    let mut shim = shim_with_state(&example_config(), state.path());
    let first = shim.before_agent_start(
        &prompt("Book a bistro for dinner on Friday"),
        &ctx("chat-a", ChatType::Direct),
    );
    assert_eq!(first.decision.intent.as_deref(), Some("dining"));
    let follow =
        shim.before_agent_start(&prompt("and Saturday?"), &ctx("chat-a", ChatType::Direct));
    assert!(follow.decision.sticky, "{:?}", follow.decision.trace);
    assert!(
        follow.decision.trace.iter().any(|t| t
            .contains("follow-up to the previous turn's dining (short, injected")
            && t.ends_with("): sticky")),
        "{:?}",
        follow.decision.trace
    );
    assert!(follow.prepend_context.unwrap().contains("sticky=\"true\""));
    // Another conversation has no previous pack.
    let other = shim.before_agent_start(&prompt("and Saturday?"), &ctx("chat-b", ChatType::Direct));
    assert!(
        other.decision.primary_pack.is_none(),
        "{:?}",
        other.decision
    );
    // Graphiti is not reachable in this test: the turn says so and suggests the QMD tools.
    assert!(
        other
            .prepend_context
            .unwrap()
            .starts_with("<graphiti-fallback>")
    );
    // A fresh shim (a restart) still remembers: state lives in the state directory.
    let mut restarted = shim_with_state(&example_config(), state.path());
    let again = restarted.before_agent_start(
        &prompt("what about Sunday?"),
        &ctx("chat-a", ChatType::Direct),
    );
    assert!(again.decision.sticky);
    // Non-user turns are neither routed nor remembered.
    let mut cron = ctx("chat-a", ChatType::Direct);
    cron.trigger = Some("cron".into());
    let skipped = restarted.before_agent_start(&prompt("Book a bistro for dinner"), &cron);
    assert!(skipped.prepend_context.is_none(), "{skipped:?}");
    assert!(
        skipped
            .decision
            .no_pack_reason
            .unwrap()
            .contains("not a user turn")
    );
}

/// A turn whose input OpenClaw classifies as another session's or its own (`inputProvenance`) is
/// not the user's: nothing is recalled or routed (so no pack sticks from it), and it is not
/// captured although `agent_end` does not repeat the provenance.
#[test]
fn a_turn_from_another_session_is_not_recalled_routed_or_captured() {
    let state = temp_dir("provenance-state");
    let mut shim = shim_with_state(&example_config(), state.path());
    let announcement =
        "trip-planner-expert · plan (inv-3) finished: Book a bistro for dinner on Friday";
    for kind in ["inter_session", "internal_system"] {
        let session = format!("chat-{kind}");
        let mut turn = ctx(&session, ChatType::Direct);
        turn.run_id = Some(format!("run-{kind}"));
        turn.input_provenance = Some(kind.into());
        let injection = shim.before_agent_start(&prompt(announcement), &turn);
        assert!(injection.prepend_context.is_none(), "{kind}: {injection:?}");
        let reason = injection.decision.no_pack_reason.unwrap_or_default();
        assert!(
            reason.contains("not the user's") && reason.contains(kind),
            "{reason}"
        );

        turn.input_provenance = None;
        let messages = serde_json::json!([
            {"role": "user", "content": announcement},
            {"role": "assistant", "content": "Relayed."},
        ]);
        let event = AgentEndEvent {
            success: true,
            error: None,
            messages_json: messages.to_string(),
            duration_ms: None,
        };
        match shim.agent_end(&event, &turn) {
            CaptureOutcome::Skipped(why) => assert!(why.contains("not the user's"), "{why}"),
            other => panic!("{kind}: not captured as the user's words: {other:?}"),
        }

        let follow =
            shim.before_agent_start(&prompt("and Saturday?"), &ctx(&session, ChatType::Direct));
        assert!(
            follow.decision.primary_pack.is_none() && !follow.decision.sticky,
            "{kind}: no pack sticks from it: {:?}",
            follow.decision
        );
    }
    assert!(
        !state.path().join("spool").exists()
            || std::fs::read_dir(state.path().join("spool"))
                .unwrap()
                .next()
                .is_none()
    );

    // The user's own words, classified as such, are routed as before.
    let mut own = ctx("chat-own", ChatType::Direct);
    own.input_provenance = Some("external_user".into());
    let routed = shim.before_agent_start(&prompt("Book a bistro for dinner on Friday"), &own);
    assert_eq!(routed.decision.intent.as_deref(), Some("dining"));
}

#[test]
fn capture_takes_the_last_exchange_without_our_blocks_and_spools_it() {
    let state = temp_dir("capture-state");
    let mut with_state = shim_with_state(&example_config(), state.path());
    let injected = with_state
        .dry_run(&dry("Draft a tweet about our launch"))
        .unwrap()
        .prepend_context
        .unwrap();
    let messages = serde_json::json!([
        {"role": "user", "content": format!("{injected}\n\nDraft a tweet about our launch")},
        {"role": "assistant", "content": [{"type": "text", "text": "Launch day! Here is what we built."}]},
    ]);
    let event = AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.to_string(),
        duration_ms: Some(900),
    };
    match with_state.agent_end(&event, &ctx("s", ChatType::Direct)) {
        CaptureOutcome::Spooled(turn) => {
            assert_eq!(turn.user, "Draft a tweet about our launch");
            assert_eq!(turn.assistant, "Launch day! Here is what we built.");
            assert_eq!(turn.group_id, "main-dm-user-1");
        }
        other => panic!("expected a capture, got {other:?}"),
    }
    let spooled: Vec<_> = std::fs::read_dir(state.path().join("spool"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(spooled.len(), 1, "{spooled:?}");
    let episode = std::fs::read_to_string(&spooled[0]).unwrap();
    assert!(!episode.contains("pack-context"), "{episode}");

    // Without a state directory nothing can be spooled: said loudly, not silently skipped.
    let mut stateless = shim(&example_config());
    assert!(
        matches!(stateless.agent_end(&event, &ctx("s", ChatType::Direct)), CaptureOutcome::Dropped(why) if why.contains("no state directory"))
    );
    let failed = AgentEndEvent {
        success: false,
        error: Some("model timeout".into()),
        ..event
    };
    assert!(
        matches!(with_state.agent_end(&failed, &ctx("s", ChatType::Direct)), CaptureOutcome::Skipped(why) if why.contains("model timeout"))
    );
}

/// Capture removes exactly what the plugin prepended to this turn: text that mentions our tag names,
/// in the user's message or the assistant's answer, is theirs and is stored whole.
#[test]
fn capture_keeps_the_users_own_text_that_mentions_a_tag_name() {
    let state = temp_dir("tag-names-state");
    let mut shim = shim_with_state(&example_config(), state.path());
    let asked = "Draft a tweet. Explain what the `<pack-context>` tag does. Also remember: my dentist appointment is on Friday at 9";
    let answered = "Tweet drafted. The <graphiti-context> block holds recalled facts.\nBooking confirmed: Friday 9:00, Dr. Lee, ref 4471.";
    let turn_ctx = ctx("tags", ChatType::Direct);
    let injected = shim
        .before_agent_start(&prompt(asked), &turn_ctx)
        .prepend_context
        .expect("a pack is injected");
    let event = |user: String| AgentEndEvent {
        success: true,
        error: None,
        messages_json: serde_json::json!([
            {"role": "user", "content": user},
            {"role": "assistant", "content": answered},
        ])
        .to_string(),
        duration_ms: None,
    };
    // The turn as OpenClaw sends it back: our blocks in front of the user's text.
    match shim.agent_end(&event(format!("{injected}\n\n{asked}")), &turn_ctx) {
        CaptureOutcome::Spooled(turn) => {
            assert_eq!(turn.user, asked);
            assert_eq!(turn.assistant, answered);
        }
        other => panic!("expected a capture, got {other:?}"),
    }
    // No record of what was injected (another session, or a process killed before writing it):
    // only well-formed blocks at the very start go; the user's mention of a tag stays.
    match shim.agent_end(
        &event(asked.to_string()),
        &ctx("no-record", ChatType::Direct),
    ) {
        CaptureOutcome::Spooled(turn) => {
            assert_eq!(turn.user, asked);
            assert_eq!(turn.assistant, answered);
        }
        other => panic!("expected a capture, got {other:?}"),
    }
}

/// No configuration at all: no pack (recall still runs; Graphiti is not reachable here).
fn no_configuration_gives_no_pack() {
    let empty = temp_dir("no-config");
    let mut shim = shim(empty.path());
    let injection = shim.before_agent_start(
        &prompt("Book a bistro for dinner"),
        &ctx("s", ChatType::Direct),
    );
    assert!(
        !injection
            .prepend_context
            .as_deref()
            .unwrap_or_default()
            .contains("<pack-context"),
        "{injection:?}"
    );
    assert_eq!(
        injection.decision.no_pack_reason.unwrap(),
        format!(
            "no routing configuration has loaded yet: {}/pack_registry.yaml: missing: the config directory needs pack_registry.yaml (or .yml / .json) (and 1 more: check-config lists them)",
            empty.path().display()
        )
    );
}

/// P6: whatever goes wrong, the turn gets no injection and a reason, and the next turn works.
#[test]
fn faults_mean_no_injection_and_the_plugin_keeps_working() {
    // 1. No configuration at all.
    no_configuration_gives_no_pack();

    // 2. Corrupt session state: routing proceeds, the problem is noted.
    let state = temp_dir("corrupt-state");
    let mut shim = shim_with_state(&example_config(), state.path());
    shim.before_agent_start(
        &prompt("Book a bistro for dinner"),
        &ctx("s1", ChatType::Direct),
    );
    for entry in std::fs::read_dir(state.path().join("routing")).unwrap() {
        std::fs::write(entry.unwrap().path(), b"{not json").unwrap();
    }
    let injection = shim.before_agent_start(
        &prompt("Draft a tweet about our launch"),
        &ctx("s1", ChatType::Direct),
    );
    assert_eq!(injection.decision.intent.as_deref(), Some("content_tweet"));
    assert!(
        injection
            .notes
            .iter()
            .any(|n| n.contains("corrupt session state")),
        "{:?}",
        injection.notes
    );

    // 3. A prompt beyond the memory limit traps the guest: no injection, then normal service.
    let mut small = options(&example_config());
    small.limits = Limits {
        call_timeout: Duration::from_secs(10),
        send_timeout: Duration::from_secs(10),
        memory_bytes: 48 << 20,
    };
    let mut shim = Shim::new(small).unwrap();
    let huge = "dinner ".repeat(10 << 20); // 70 MiB: more than the guest may hold
    let injection = shim.before_agent_start(&prompt(&huge), &ctx("s", ChatType::Direct));
    assert!(injection.prepend_context.is_none());
    assert!(
        injection
            .decision
            .no_pack_reason
            .as_deref()
            .unwrap_or("")
            .contains("memory"),
        "{:?}",
        injection.decision
    );
    let next = shim.before_agent_start(
        &prompt("Book a bistro for dinner"),
        &ctx("s", ChatType::Direct),
    );
    assert_eq!(
        next.decision.intent.as_deref(),
        Some("dining"),
        "{:?}",
        next.decision
    );

    // 4. Malformed recall data is an error that names the problem, not a crash.
    let bad = IntentTestRequest {
        recall_json: Some("{\"nodes\": 5}".into()),
        ..dry("dinner")
    };
    assert!(
        shim.dry_run(&bad)
            .unwrap_err()
            .contains("\"nodes\" must be a list")
    );
}

#[test]
fn lint_rules_names_overlapping_rules() {
    let fixture = workspace().join("tests/fixtures/overlapping-rules");
    let out = shim(&fixture).run_command(&Command::LintRules);
    assert_eq!(out.exit_code, 1, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("trip_planning and business_travel share 3 of 4 keywords (75%)"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("dining"), "{}", out.stderr);
    assert_eq!(
        shim(&example_config())
            .run_command(&Command::LintRules)
            .exit_code,
        0
    );
}

#[test]
fn eval_reports_accuracy_and_fails_below_the_threshold() {
    let cases = std::fs::read_to_string(example_config().join("eval/shadow_compare.json")).unwrap();
    let mut shim = shim(&example_config());
    let out = shim.run_command(&Command::Eval(EvalCommand { cases_json: cases.clone(), threshold: 0.9 }));
    assert_eq!(out.exit_code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("eval: 20/20 correct, accuracy 100.0%"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("confusion (rows: expected, columns: predicted)")
    );
    // One wrong expectation drops accuracy below a 100% threshold.
    let wrong = cases.replacen(
        "\"expected_pack_type\": \"dining\"",
        "\"expected_pack_type\": \"vc_deal\"",
        1,
    );
    let out = shim.run_command(&Command::Eval(EvalCommand { cases_json: wrong, threshold: 1.0 }));
    assert_eq!(out.exit_code, 1);
    assert!(
        out.stdout
            .contains("dining-1: expected vc_deal, got dining"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("below the threshold"));
    let out = shim.run_command(&Command::Eval(EvalCommand {
        cases_json: "{\"cases\": [{\"prompt\": 3}]}".into(),
        threshold: 0.5,
    }));
    assert_eq!(out.exit_code, 2);
    assert!(
        out.stderr.contains("cases[0]: needs a \"prompt\""),
        "{}",
        out.stderr
    );
}
