//! The wasmtime host for the graphiti-openclaw component (`plugin.wasm`): the library behind the
//! `graphiti-openclaw` CLI and the workspace tests.
//!
//! A [`Shim`] runs one instance of a component of the `graphiti:openclaw/graphiti-plugin` world
//! (`wit/`) and only moves bytes; every decision is the component's. What the host enforces:
//!
//! - **Files**: only preopens. The configuration directory is read-only at `/config`, an optional
//!   overlay read-only at `/overlay`, an optional state directory read-write at `/state`. The guest
//!   opens only regular files and directories, and its opens never block (a FIFO or a device is
//!   refused with `access`). No environment, no arguments; guest stdout/stderr go to the host's
//!   stderr or nowhere.
//! - **Network**: `host.http-request` reaches only the configured origins (HTTP, or HTTPS checked
//!   against the system's roots plus an extra CA file), follows no redirects and returns every
//!   status as a response.
//! - **Locks**: `host.acquire-lock` / `host.release-lock` take lock files in the state directory,
//!   so one process at a time sends the spool or merges counters; see [`state_lock`] for the protocol
//!   (the OpenClaw adapter speaks the same). A dropped instance gives up its locks.
//! - **Limits** on every export call: a deadline (epoch interruption) and a memory cap, see [`Limits`].
//!   A guest that overruns either, or traps, cannot take the host down: the call returns a fallback
//!   answer that says why ("no injection" for `before-agent-start`), the poisoned instance is dropped
//!   and a fresh one, with its configuration reloaded, serves the next call. `tick` and the `flush`
//!   command, which send to Graphiti, have a deadline of their own (`send_timeout`).
//! - **Compilation** happens once per wasm and engine: the compiled component is cached on disk,
//!   checksummed, and read only from a directory and file no other user can write, see
//!   [`CacheOutcome`].
//!
//! ```no_run
//! use std::time::Duration;
//! use host_shim::{ChatType, HookContext, Limits, PromptEvent, Shim, ShimOptions};
//!
//! let limits = Limits {
//!     call_timeout: Duration::from_secs(5),
//!     send_timeout: Duration::from_secs(60),
//!     memory_bytes: 256 << 20,
//! };
//! let mut shim = Shim::new(ShimOptions {
//!     allowed_origins: vec!["http://localhost:8000".into()],
//!     ..ShimOptions::new("plugin.wasm", "config", limits)
//! })?;
//! let ctx = HookContext {
//!     session_key: Some("demo".into()),
//!     session_id: None,
//!     agent_id: None,
//!     sender_id: None,
//!     sender_name: None,
//!     chat_id: None,
//!     channel: None,
//!     chat_type: ChatType::Direct,
//!     trigger: Some("user".into()),
//!     run_id: None,
//!     input_provenance: None,
//! };
//! let event = PromptEvent { prompt: "Book a table for dinner".into(), messages_json: "[]".into() };
//! let injection = shim.before_agent_start(&event, &ctx);
//! println!("{:?}", injection.prepend_context);
//! # Ok::<(), host_shim::ShimError>(())
//! ```

// In the order of a call's way through the host: the shared types and what a shim is built from;
// the engine and the compiled component; the instance the guest runs in (its WASI context with
// the non-blocking opens, its imports: HTTP, locks); the call itself, within the limits.
mod bindings;
pub mod cli_grammar;
mod errors;
mod logs;
mod options;

mod cache;
mod cache_trust;
mod clock;
mod database;
mod engine;

mod guest_files;
mod host_imports;
mod http;
pub mod state_lock;
mod tls;
mod wasi_context;

mod limits;
mod shim;

pub use cache::{CacheOutcome, default_cache_dir};
pub use clock::SetClock;
pub use database::{CARRIED_COMMANDS, Secret};
pub use errors::{ReloadError, ShimError, config_error_line};
pub use limits::Limits;
pub use logs::level_name;
pub use options::ShimOptions;
pub use shim::{GUEST_FAILURE_EXIT_CODE, Shim};
pub use state_lock::{LockError, StateLocks};
pub use tls::EXTRA_CA_FILE;

pub use bindings::exports::graphiti::openclaw::commands::{
    Command, CommandOutput, Correction, EvalCommand, ExpertsCommand, ForgetConfirmation,
    ForgetRequest, FunctionCall, FunctionReply, ImportRequest, IngestRequest, InstallSource, IntentTestCommand, KnowledgeRequest,
    LearningProposal, ManualRun, MemoryCommand, MemoryQuery, OutputFormat, PackageArchive,
    RecallCommand, SearchRequest, SpoolCommand, StepDone, ToolBinding, ToolCheck, TriggerFire,
};
pub use bindings::exports::graphiti::openclaw::experts::{
    ChannelMessage, Delivery, DeliveryKind, RunOutcome, RunReport, RunStart, RuntimeWork,
    WebhookAnswer, WebhookRequest,
};
pub use bindings::exports::graphiti::openclaw::hooks::{
    AgentEndEvent, BoostHit, Candidate, CaptureOutcome, ChatType, ConfigError, ConfigFailure,
    ConfigSummary, Decision, HookContext, Injection, IntentTestRequest, PromptEvent, SkippedPack,
    SpooledTurn, TickReport, ToolCall, ToolVerdict,
};
pub use bindings::graphiti::openclaw::host::LogLevel;
