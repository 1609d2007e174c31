//! Expert packages (openexperts spec 1.0) for OpenClaw sub-agent sessions: discovery, two-phase
//! validation (package, then the user's bindings), the sub-agent's system prompt, the registry the
//! main agent routes with, the runtime workspace, and approval enforcement for tool calls.
//!
//! Pure Rust on `std::fs` under roots the caller passes (WASI preopens in the component): no home
//! directory, no clock (`now` is a parameter), no randomness; output is sorted and byte-stable.
//! Design: `spec/openexperts-loader-design.md`; format: `spec/openexperts-spec-1.0.md`.

pub mod approval;
pub mod approval_text;
pub mod arguments;
pub mod bindings;
pub mod commands;
pub mod cron;
pub mod findings;
pub mod gate;
pub mod install;
pub mod isolated;
pub mod knowledge;
pub mod loader;
pub mod package;
pub mod policy;
pub mod prompt;
pub mod registry;
pub mod runs;
pub mod sessions;
pub mod settings;
pub mod state;
pub mod tool_search;
pub mod yaml;

pub use approval::{ApprovalRequest, ApprovalStore, Binding, Status};
pub use bindings::{Bindings, ToolBinding, load_bindings};
pub use commands::{CommandText, experts_list, experts_prompt, experts_registry, experts_validate};
pub use findings::{Finding, Rule, Severity};
pub use gate::{CallInput, Decision, Verdict, check_tool_call, decide_tool_call};
pub use isolated::{IsolatedCall, isolated_call};
pub use loader::{
    LoadOptions, LoadedExpert, ZoneCheck, discover, find_expert, load_all, load_expert,
};
pub use package::{LoadLimits, Package, load_package};
pub use policy::{OnTimeout, Policy, Tier, parse_duration};
pub use prompt::{AssembledPrompt, PromptLimits, assemble_prompt};
pub use registry::{RegistryLimits, experts_md, registry_summary};
pub use state::{
    Prepared, StateOptions, prepare_workspace, prune_scratch, remove_private_copies, scratch_dir,
};
