//! Expert packages through the real component in the host shim: the expert session's prompt, the
//! registry for the main agent, approval enforcement on tool calls (with a user's approval in between),
//! and private knowledge kept out of every prompt, command output, log line and the agents'
//! workspace, read only by the expert's own session through the `expert_knowledge` tool. What an
//! approval binds is in `experts_approval.rs`, Tool Search and `check-tool` in `experts_tool_search.rs`.


use crate::experts_common::*;
use graphiti_openclaw_tests::{
    copy_dir, example_config, hook_context, prompt, temp_dir, workspace,
};
use host_shim::{
    AgentEndEvent, CaptureOutcome, ChatType, ExpertsCommand, HookContext, KnowledgeRequest,
    ToolCheck, ToolVerdict,
};
use std::path::Path;

/// Text that appears only in the example package's private knowledge file.
const PRIVATE_MARKER: &str = "HARBORLIGHT-ZX4471";

#[test]
fn an_expert_session_gets_its_prompt_and_the_main_agent_the_registry() {
    let Setup {
        mut shim,
        workspace,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let expert = shim.before_agent_start(
        &prompt("Plan my trip to Lisbon next Tuesday"),
        &expert_session(),
    );
    let system = expert.system_context.expect("the expert's prompt");
    let sections: Vec<&str> = system.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        sections,
        [
            "## Identity",
            "## Rules",
            "## How to Operate",
            "## Available Functions",
            "## Available Processes",
            "## Knowledge Available",
            "## State Files",
            "## Tool Approval Policy",
            "## Instructions",
        ],
        "{system}"
    );
    assert!(
        system.to_lowercase().contains("escalat"),
        "on_low_confidence: the escalation instruction"
    );
    assert!(
        expert.append_system_context.is_none(),
        "an expert gets no registry"
    );
    let state = workspace.join("expert-state").join(EXPERT).join("state");
    assert!(
        state.is_dir(),
        "the expert's state templates are copied to its runtime workspace"
    );

    let main = shim.before_agent_start(
        &prompt("Draft a tweet about our launch"),
        &hook_context("main", ChatType::Direct),
    );
    assert!(main.system_context.is_none());
    let registry = main
        .append_system_context
        .expect("the registry for the main agent");
    assert!(registry.contains(EXPERT), "{registry}");
    assert!(
        main.prepend_context
            .is_some_and(|c| c.contains("<pack-context")),
        "routing still works"
    );
    let md = std::fs::read_to_string(workspace.join("EXPERTS.md")).expect("EXPERTS.md written");
    assert!(md.contains(&format!("## {EXPERT}")), "{md}");
}

#[test]
fn tool_calls_follow_the_approval_tiers_and_a_confirm_waits_for_the_users_approval() {
    let Setup {
        mut shim,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let session = expert_session();
    // auto, by the MCP tool name the bindings map to `travel.search_flights`
    assert!(matches!(
        shim.before_tool_call(&call("flights_search", r#"{"to":"LIS"}"#), &session),
        ToolVerdict::Allow
    ));
    // manual: refused, deliver a draft instead
    match shim.before_tool_call(&call("flights_purchase", r#"{"offer":"X1"}"#), &session) {
        ToolVerdict::Block(message) => {
            assert!(message.to_lowercase().contains("draft"), "{message}")
        }
        ToolVerdict::Allow => panic!("a manual operation ran"),
    }
    // confirm: refused until the user approves, then allowed once
    let hold = call("travel.hold_booking", r#"{"offer":"X1"}"#);
    let ToolVerdict::Block(message) = shim.before_tool_call(&hold, &session) else {
        panic!("a confirm operation ran without approval");
    };
    assert!(message.to_lowercase().contains("approv"), "{message}");
    let (code, pending) = run(&mut shim, ExpertsCommand::Pending);
    assert_eq!(code, 0, "{pending}");
    let id = request_id(&message);
    assert!(
        pending.contains(&format!("{id}  {EXPERT}  travel.hold_booking")),
        "{pending}"
    );
    let (code, approved) = run(&mut shim, ExpertsCommand::Approve(id.clone()));
    assert_eq!(code, 0, "{approved}");
    assert!(
        matches!(shim.before_tool_call(&hold, &session), ToolVerdict::Allow),
        "approved once"
    );
    assert!(
        matches!(
            shim.before_tool_call(&hold, &session),
            ToolVerdict::Block(_)
        ),
        "an approval is used once"
    );
    let (code, unknown) = run(
        &mut shim,
        ExpertsCommand::Approve("0000000000000000".into()),
    );
    assert_eq!(code, 1, "{unknown}");
    // Other sessions are not the expert's: no policy applies.
    assert!(matches!(
        shim.before_tool_call(
            &call("flights_purchase", "{}"),
            &hook_context("main", ChatType::Direct)
        ),
        ToolVerdict::Allow
    ));
}

#[test]
fn private_knowledge_never_leaks_into_prompts_registry_commands_or_logs() {
    let Setup {
        mut shim,
        workspace,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let mut seen = String::new();
    let expert = shim.before_agent_start(
        &prompt("What rate do we get at the partner hotel?"),
        &expert_session(),
    );
    seen.push_str(&format!("{expert:?}"));
    let main = shim.before_agent_start(
        &prompt("Plan a trip"),
        &hook_context("main", ChatType::Direct),
    );
    seen.push_str(&format!("{main:?}"));
    for command in [
        ExpertsCommand::List,
        ExpertsCommand::Validate(EXPERT.into()),
        ExpertsCommand::Prompt(EXPERT.into()),
        ExpertsCommand::Registry,
        ExpertsCommand::Pending,
    ] {
        seen.push_str(&run(&mut shim, command).1);
    }
    let _ = shim.before_tool_call(
        &call("travel.hold_booking", r#"{"code":"x"}"#),
        &expert_session(),
    );
    seen.push_str(&run(&mut shim, ExpertsCommand::Pending).1);
    for (name, ctx) in [
        (None, main_session()),
        (Some("negotiated-rates"), main_session()),
    ] {
        seen.push_str(
            &run(
                &mut shim,
                ExpertsCommand::Knowledge(KnowledgeRequest { file: name.map(Into::into), ctx }),
            )
            .1,
        );
    }
    seen.push_str(
        &run(
            &mut shim,
            ExpertsCommand::CheckTool(ToolCheck {
                expert: None,
                call: call("hold_booking", r#"{"offer_id":"X1"}"#),
                ctx: expert_session(),
            }),
        )
        .1,
    );
    // The workspace (which every agent's `read` can open) holds neither the text nor the
    // description; a function file that names the private file is mirrored as its author wrote it.
    let tree = files_text(&workspace);
    assert!(
        !tree.contains(PRIVATE_MARKER) && !tree.contains("Corporate rate codes"),
        "private knowledge in the workspace:\n{tree}"
    );
    seen.push_str(&std::fs::read_to_string(workspace.join("EXPERTS.md")).unwrap_or_default());
    for (_, line) in shim.take_logs() {
        seen.push_str(&line);
    }
    assert!(
        seen.contains("travel-policy"),
        "public knowledge is indexed"
    );
    assert!(!seen.contains(PRIVATE_MARKER), "private knowledge leaked");
    assert!(
        !seen.contains("negotiated-rates"),
        "private knowledge is not even indexed"
    );
}

/// What an expert reads in its session (private knowledge through `expert_knowledge`) could be in its
/// reply: an expert session's turns are never captured into Graphiti, where every session could recall
/// them.
#[test]
fn an_expert_sessions_turns_are_not_captured() {
    let Setup {
        mut shim,
        state,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let event = AgentEndEvent {
        success: true,
        error: None,
        messages_json: serde_json::json!([
            {"role": "user", "content": "Which rate do we get at the partner hotel in Lisbon?"},
            {"role": "assistant", "content": format!("Our negotiated code is {PRIVATE_MARKER}.")},
        ])
        .to_string(),
        duration_ms: None,
    };
    // A person talking to the expert directly (trigger "user"), not a sub-agent run.
    let talked_to = HookContext {
        trigger: Some("user".into()),
        ..expert_session()
    };
    match shim.agent_end(&event, &talked_to) {
        CaptureOutcome::Skipped(why) => assert!(why.contains("not captured"), "{why}"),
        other => panic!("an expert session's turn was captured: {other:?}"),
    }
    let spooled = std::fs::read_dir(state.join("spool")).map_or(0, Iterator::count);
    assert_eq!(spooled, 0, "nothing of the expert session is spooled");
    // The same exchange in the main session is captured as before.
    assert!(matches!(
        shim.agent_end(&event, &main_session()),
        CaptureOutcome::Spooled(_)
    ));
}

#[test]
fn entries_whose_names_are_not_utf8_hide_no_package_and_are_named() {
    use std::os::unix::ffi::OsStrExt;
    let experts = graphiti_openclaw_tests::temp_dir("experts-strays");
    graphiti_openclaw_tests::copy_dir(
        &graphiti_openclaw_tests::example_config().join("experts"),
        experts.path(),
    );
    // Many, so that the directory's order puts some before the package, whatever it is.
    for n in 0..20u8 {
        let name = [0xff, b'a' + n];
        std::fs::create_dir(experts.path().join(std::ffi::OsStr::from_bytes(&name))).unwrap();
    }
    let Setup {
        mut shim,
        temp_dirs: _temp_dirs,
        ..
    } = setup_with(experts.path().to_path_buf());
    let (_, listed) = run(&mut shim, ExpertsCommand::List);
    assert!(
        listed.contains(&format!("✓ {EXPERT}")),
        "the package loads past the strays: {listed}"
    );
    assert!(listed.contains("✗ (names not UTF-8)"), "{listed}");
    let (_, why) = run(
        &mut shim,
        ExpertsCommand::Validate("(names not UTF-8)".into()),
    );
    assert!(
        why.contains("20 entries in the experts directory have a name that is not UTF-8"),
        "{why}"
    );
}

#[test]
fn a_cron_trigger_in_a_time_zone_the_host_does_not_know_is_inactive_and_the_package_loads() {
    let experts = temp_dir("experts-tz");
    copy_dir(&example_config().join("experts"), experts.path());
    graphiti_openclaw_tests::replace_in_file(
        &experts.path().join(EXPERT).join("expert.yaml"),
        "tz: Europe/Berlin",
        "tz: Europe/Berln",
    );
    let Setup {
        mut shim,
        temp_dirs: _temp_dirs,
        ..
    } = setup_with(experts.path().to_path_buf());
    let (code, validate) = run(&mut shim, ExpertsCommand::Validate(EXPERT.into()));
    assert_eq!(code, 0, "{validate}");
    assert!(
        validate.contains(
            ".tz: trigger \"fare_watch\" stays inactive: unknown time zone \"Europe/Berln\" (an \
             IANA name such as Europe/Berlin)"
        ),
        "{validate}"
    );
    let (_, listed) = run(&mut shim, ExpertsCommand::List);
    assert!(listed.contains(&format!("✓ {EXPERT}")), "{listed}");
}

#[test]
fn validate_and_prompt_work_on_the_example_package() {
    let Setup {
        mut shim,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let (code, validate) = run(&mut shim, ExpertsCommand::Validate(EXPERT.into()));
    assert_eq!(code, 0, "{validate}");
    assert!(validate.contains("✓ Package structure valid"), "{validate}");
    let (code, missing) = run(&mut shim, ExpertsCommand::Validate("no-such-expert".into()));
    assert_eq!(code, 1, "{missing}");
    let (code, first) = run(&mut shim, ExpertsCommand::Prompt(EXPERT.into()));
    assert_eq!(code, 0);
    let (_, second) = run(&mut shim, ExpertsCommand::Prompt(EXPERT.into()));
    assert_eq!(first, second, "byte-stable");
}

/// Every file under `dir`, as text, with its path.
fn files_text(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&files_text(&path));
        } else {
            out.push_str(&format!("{}\n", path.display()));
            out.push_str(&String::from_utf8_lossy(
                &std::fs::read(&path).unwrap_or_default(),
            ));
        }
    }
    out
}

/// What versions before 0.4 left in the workspace: the private knowledge mirrored in clear.
fn plant_old_private_copy(workspace: &Path) -> std::path::PathBuf {
    let copy = workspace
        .join("expert-state")
        .join(EXPERT)
        .join("knowledge/negotiated-rates.md");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(
        example_config()
            .join("experts")
            .join(EXPERT)
            .join("knowledge/negotiated-rates.md"),
        &copy,
    )
    .unwrap();
    copy
}

#[test]
fn private_knowledge_is_never_in_the_agents_workspace() {
    let Setup {
        mut shim,
        workspace,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let old_copy = plant_old_private_copy(&workspace);
    let _ = shim.before_agent_start(&prompt("Plan my trip to Lisbon"), &expert_session());
    let tree = files_text(&workspace);
    assert!(
        tree.contains("travel-policy"),
        "public knowledge is mirrored for the expert to read: {tree}"
    );
    assert!(
        !old_copy.exists(),
        "the old private copy is removed on prepare"
    );
    assert!(
        !tree.contains(PRIVATE_MARKER) && !tree.contains("Corporate rate codes"),
        "private text in the workspace:\n{tree}"
    );

    // Also removed when the main agent's turn comes first (the registry is built then).
    let Setup {
        mut shim,
        workspace,
        temp_dirs: _temp_dirs,
        ..
    } = setup();
    let old_copy = plant_old_private_copy(&workspace);
    let main = shim.before_agent_start(&prompt("Plan a trip"), &main_session());
    assert!(!old_copy.exists(), "removed before any expert turn");
    assert!(
        main.notes.iter().any(
            |n| n.contains("removed 1 copied private knowledge file(s) of trip-planner-expert")
        ),
        "{:?}",
        main.notes
    );
}

#[test]
fn the_knowledge_tool_answers_only_in_the_experts_own_session() {
    // Two experts: the example and the fixture package (with private knowledge of its own).
    let experts = temp_dir("two-experts");
    copy_dir(
        &example_config().join("experts").join(EXPERT),
        &experts.path().join(EXPERT),
    );
    copy_dir(
        &workspace().join("plugin/tests/experts/base"),
        &experts.path().join("fixture-expert"),
    );
    let Setup {
        mut shim,
        temp_dirs: _temp_dirs,
        ..
    } = setup_with(experts.path().to_path_buf());
    let knowledge = |shim: &mut host_shim::Shim, name: Option<&str>, ctx: HookContext| {
        run(shim, ExpertsCommand::Knowledge(KnowledgeRequest { file: name.map(Into::into), ctx }))
    };

    let (code, list) = knowledge(&mut shim, None, expert_session());
    assert_eq!(code, 0, "{list}");
    assert!(
        list.contains("- negotiated-rates (private): Corporate rate codes")
            && list.contains("- travel-policy (static)"),
        "{list}"
    );
    let (code, text) = knowledge(&mut shim, Some("negotiated-rates"), expert_session());
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(PRIVATE_MARKER), "{text}");

    let (code, refused) = knowledge(&mut shim, Some("negotiated-rates"), main_session());
    assert_eq!(code, 1);
    assert!(
        refused.starts_with("expert_knowledge refused: this session is not an expert's"),
        "{refused}"
    );
    assert!(!refused.contains(PRIVATE_MARKER));

    let other = session("agent:main:expert:fixture-expert");
    let (code, refused) = knowledge(&mut shim, Some("negotiated-rates"), other.clone());
    assert_eq!(code, 1);
    assert!(
        refused.contains("fixture-expert has no knowledge named \"negotiated-rates\""),
        "{refused}"
    );
    let (_, list) = knowledge(&mut shim, None, other);
    assert!(
        list.contains("secret-ledger (private)") && !list.contains("negotiated-rates"),
        "{list}"
    );

    // The tool is not governed by the approval policy in the expert's session.
    assert!(matches!(
        shim.before_tool_call(
            &call("expert_knowledge", r#"{"name":"negotiated-rates"}"#),
            &expert_session()
        ),
        ToolVerdict::Allow
    ));
}
