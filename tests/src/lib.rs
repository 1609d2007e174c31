//! Shared pieces of the workspace tests that run the component: paths to the built components, the
//! shim as the tests configure it, and the Graphiti stand-in. What needs no component (the routing
//! case tables, temporary directories, the workspace's paths) comes from `tests/native`.

pub mod bench_rows;
pub mod falkordb;

pub use graphiti_openclaw_native_tests::{
    cases, copy_dir, example_config, module_graph, replace_in_file, temp_dir, tracked_files,
    workspace,
};

use graphiti_standin::StandIn;
use host_shim::{AgentEndEvent, ChatType, HookContext, Limits, PromptEvent, ShimOptions};

use std::path::{Path, PathBuf};

pub mod size_budget;

/// The plugin component built by `scripts/build.sh`.
pub fn plugin_wasm() -> PathBuf {
    built_wasm("graphiti_openclaw.wasm")
}

fn built_wasm(name: &str) -> PathBuf {
    let path = workspace()
        .join("target/wasm32-wasip2/component")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: build it with scripts/build.sh (scripts/build-component.sh)",
        path.display()
    );
    path
}

/// The shim as the expert tests run it: the example configuration, the experts in `experts`, the
/// state and workspace given, `settings` laid over the settings file, the shared compiled cache, no
/// echoed logs, 10 s per call.
pub fn expert_shim_options(
    experts: &Path,
    state: &Path,
    agents: &Path,
    settings: &str,
) -> ShimOptions {
    let limits = Limits {
        call_timeout: std::time::Duration::from_secs(10),
        send_timeout: std::time::Duration::from_secs(10),
        memory_bytes: 128 << 20,
    };
    let mut options = ShimOptions::new(plugin_wasm(), example_config(), limits);
    options.cache_dir = Some(workspace().join("target/test-component-cache"));
    options.echo_logs = false;
    options.state_dir = Some(state.to_path_buf());
    options.experts_dir = Some(experts.to_path_buf());
    options.workspace_dir = Some(agents.to_path_buf());
    options.host_settings = Some(settings.to_string());
    options
}

/// A Graphiti stand-in on a free loopback port, ingesting what it accepts at once.
pub fn standin() -> StandIn {
    StandIn::start(graphiti_standin::Options::default()).expect("stand-in starts")
}

/// A user's turn in `session` from agent `main`, sender `user-1`, chat `chat-1` (Graphiti group
/// `main-dm-user-1` in a direct chat, `main-group-chat-1` in a group).
pub fn hook_context(session: &str, chat_type: ChatType) -> HookContext {
    HookContext {
        session_key: Some(session.into()),
        session_id: None,
        agent_id: Some("main".into()),
        sender_id: Some("user-1".into()),
        sender_name: None,
        chat_id: Some("chat-1".into()),
        channel: Some("telegram".into()),
        chat_type,
        trigger: Some("user".into()),
        run_id: None,
        input_provenance: None,
    }
}

/// A successful turn whose last exchange is `user`, then `assistant`, as `agent_end` gets it.
pub fn exchange(user: &str, assistant: &str) -> AgentEndEvent {
    let messages = serde_json::json!([
        {"role": "user", "content": user},
        {"role": "assistant", "content": assistant},
    ]);
    AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.to_string(),
        duration_ms: None,
    }
}

pub fn prompt(text: &str) -> PromptEvent {
    PromptEvent {
        prompt: text.into(),
        messages_json: "[]".into(),
    }
}

/// A shim on configuration `config` for a Graphiti at `origin` (the only origin it may reach), with
/// state directory `state`, the shared compiled cache, no echoed logs, 30 s per call.
pub fn graphiti_shim(config: &Path, state: &Path, origin: &str) -> host_shim::Shim {
    host_shim::Shim::new(graphiti_shim_options(config, state, origin)).expect("shim starts")
}

/// [`graphiti_shim`], its guest reading the wall clock `clock` (so a test sets when things happen).
pub fn graphiti_shim_at(
    config: &Path,
    state: &Path,
    origin: &str,
    clock: &host_shim::SetClock,
) -> host_shim::Shim {
    let mut options = graphiti_shim_options(config, state, origin);
    options.wall_clock = Some(clock.clone());
    host_shim::Shim::new(options).expect("shim starts")
}

/// [`graphiti_shim`] with the agents' workspace `workspace` mounted (memory-core's files, to import).
pub fn graphiti_shim_with_workspace(
    config: &Path,
    state: &Path,
    origin: &str,
    workspace: &Path,
) -> host_shim::Shim {
    let mut options = graphiti_shim_options(config, state, origin);
    options.workspace_dir = Some(workspace.to_path_buf());
    host_shim::Shim::new(options).expect("shim starts")
}

fn graphiti_shim_options(config: &Path, state: &Path, origin: &str) -> ShimOptions {
    let limits = Limits {
        call_timeout: std::time::Duration::from_secs(30),
        send_timeout: std::time::Duration::from_secs(30),
        memory_bytes: 256 << 20,
    };
    let mut options = ShimOptions::new(plugin_wasm(), config, limits);
    options.cache_dir = Some(workspace().join("target/test-component-cache"));
    options.state_dir = Some(state.to_path_buf());
    options.allowed_origins = vec![origin.to_string()];
    options.echo_logs = false;
    options
}

/// The built CLI (`target/release/graphiti-openclaw`) with the example configuration, the state
/// directory `state`, the shared compiled cache and no echoed logs, running `args`.
pub fn cli_command(state: &Path, args: &[&str]) -> std::process::Command {
    let mut command =
        std::process::Command::new(workspace().join("target/release/graphiti-openclaw"));
    command
        .arg("--config-dir")
        .arg(example_config())
        .arg("--state-dir")
        .arg(state)
        .arg("--cache-dir")
        .arg(workspace().join("target/test-component-cache"))
        .arg("--quiet")
        .args(args);
    command
}
