//! The shim set up with the example expert package, shared by the expert tests.

use graphiti_openclaw_tests::{example_config, expert_shim_options, hook_context, temp_dir};
use host_shim::{ChatType, Command, ExpertsCommand, HookContext, Shim, ToolCall, ToolVerdict};
use std::path::PathBuf;
use tempfile::TempDir;

pub const EXPERT: &str = "trip-planner-expert";
/// The example expert's session, by its `expert:<name>` label.
pub const SESSION: &str = "agent:main:expert:trip-planner-expert";

pub struct Setup {
    pub shim: Shim,
    /// The agents' workspace.
    pub workspace: PathBuf,
    /// The plugin's state directory (approval stores under `experts/<name>/`).
    pub state: PathBuf,
    /// The directories above, removed when dropped: a test that takes the shim out of its setup
    /// keeps them too (`temp_dirs: _temp_dirs`).
    pub temp_dirs: [TempDir; 2],
}

/// The shim with the example configuration, its experts directory, a fresh workspace and state.
pub fn setup() -> Setup {
    setup_with(example_config().join("experts"))
}

pub fn setup_with(experts_dir: PathBuf) -> Setup {
    let state = temp_dir("experts-state");
    let agents_workspace = temp_dir("experts-workspace");
    // Recall is not what these tests are about.
    let options = expert_shim_options(
        &experts_dir,
        state.path(),
        agents_workspace.path(),
        r#"{"recall": {"enabled": false}}"#,
    );
    Setup {
        shim: Shim::new(options).expect("shim starts"),
        workspace: agents_workspace.path().to_path_buf(),
        state: state.path().to_path_buf(),
        temp_dirs: [agents_workspace, state],
    }
}

/// A session of the example expert (`session_key`), as a sub-agent.
pub fn session(session_key: &str) -> HookContext {
    HookContext {
        session_key: Some(session_key.into()),
        session_id: Some("session-1".into()),
        trigger: Some("sub-agent".into()),
        ..hook_context("unused", ChatType::Direct)
    }
}

pub fn expert_session() -> HookContext {
    session(SESSION)
}

pub fn main_session() -> HookContext {
    hook_context("agent:main:main", ChatType::Direct)
}

pub fn call(tool: &str, arguments: &str) -> ToolCall {
    call_with_id(tool, arguments, None)
}

pub fn call_with_id(tool: &str, arguments: &str, call_id: Option<&str>) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        arguments_json: arguments.into(),
        call_id: call_id.map(Into::into),
    }
}

pub fn run(shim: &mut Shim, command: ExpertsCommand) -> (u8, String) {
    let out = shim.run_command(&Command::Experts(command));
    (out.exit_code, out.stdout + &out.stderr)
}

/// The refusal message, or a panic saying what ran.
pub fn blocked(verdict: ToolVerdict, what: &str) -> String {
    match verdict {
        ToolVerdict::Block(message) => message,
        ToolVerdict::Allow => panic!("{what} ran"),
    }
}

pub fn allowed(verdict: ToolVerdict) -> bool {
    matches!(verdict, ToolVerdict::Allow)
}

/// The request id a refusal asks the user to approve.
pub fn request_id(message: &str) -> String {
    let start = message
        .find("approve request ")
        .unwrap_or_else(|| panic!("no request id in: {message}"))
        + "approve request ".len();
    message[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect()
}

/// Approves request `id` and checks it worked.
pub fn approve(shim: &mut Shim, id: &str) {
    let (code, out) = run(shim, ExpertsCommand::Approve(id.into()));
    assert_eq!(code, 0, "approve {id}: {out}");
}
