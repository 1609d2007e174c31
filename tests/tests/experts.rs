//! Expert packages through the real component in the host shim: the expert session's prompt, the
//! registry for the main agent, approval enforcement on tool calls (with a user's approval in between),
//! and private knowledge kept out of every prompt, command output and log line.

use graphiti_openclaw_tests::{
    example_config, hook_context, plugin_wasm, prompt, temp_dir, workspace,
};
use host_shim::{
    ChatType, Command, ExpertsCommand, HookContext, Limits, Shim, ShimOptions, ToolCall,
    ToolVerdict,
};
use std::path::PathBuf;
use std::time::Duration;

/// Text that appears only in the example package's private knowledge file.
const PRIVATE_MARKER: &str = "HARBORLIGHT-ZX4471";
const EXPERT: &str = "trip-planner-expert";

struct Setup {
    shim: Shim,
    workspace: PathBuf,
}

fn setup() -> Setup {
    let state = temp_dir("experts-state");
    let agents_workspace = temp_dir("experts-workspace");
    let mut options = ShimOptions::new(
        plugin_wasm(),
        example_config(),
        Limits {
            call_timeout: Duration::from_secs(10),
            send_timeout: Duration::from_secs(10),
            memory_bytes: 128 << 20,
        },
    );
    options.cache_dir = Some(workspace().join("target/test-component-cache"));
    options.echo_logs = false;
    options.state_dir = Some(state);
    options.experts_dir = Some(example_config().join("experts"));
    options.workspace_dir = Some(agents_workspace.clone());
    // Recall is not what this test is about.
    options.host_settings = Some(r#"{"recall": {"enabled": false}}"#.into());
    Setup {
        shim: Shim::new(options).expect("shim starts"),
        workspace: agents_workspace,
    }
}

fn expert_session() -> HookContext {
    HookContext {
        session_key: Some(format!("agent:main:expert:{EXPERT}")),
        session_id: Some("session-1".into()),
        trigger: Some("sub-agent".into()),
        ..hook_context("unused", ChatType::Direct)
    }
}

fn call(tool: &str, arguments: &str) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        arguments_json: arguments.into(),
    }
}

fn run(shim: &mut Shim, command: ExpertsCommand) -> (u8, String) {
    let out = shim.run_command(&Command::Experts(command));
    (out.exit_code, out.stdout + &out.stderr)
}

#[test]
fn an_expert_session_gets_its_prompt_and_the_main_agent_the_registry() {
    let Setup {
        mut shim,
        workspace,
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
    let Setup { mut shim, .. } = setup();
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
    let id = pending
        .split_whitespace()
        .next()
        .expect("a pending request id")
        .to_string();
    assert!(pending.contains("travel.hold_booking"), "{pending}");
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
    let (code, unknown) = run(&mut shim, ExpertsCommand::Approve("00000000".into()));
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

#[test]
fn validate_and_prompt_work_on_the_example_package() {
    let Setup { mut shim, .. } = setup();
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
