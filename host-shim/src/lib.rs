//! The wasmtime host for the graphiti-openclaw component (`plugin.wasm`): the library behind the
//! `graphiti-openclaw` CLI and the workspace tests.
//!
//! A [`Shim`] runs one instance of a component of the `graphiti:openclaw/graphiti-plugin` world
//! (`wit/plugin.wit`) and only moves bytes; every decision is the component's. What the host enforces:
//!
//! - **Files**: only preopens. The configuration directory is read-only at `/config`, an optional
//!   overlay read-only at `/overlay`, an optional state directory read-write at `/state`. The guest
//!   opens only regular files and directories, and its opens never block (a FIFO or a device is
//!   refused with `access`). No environment, no arguments; guest stdout/stderr go to the host's
//!   stderr or nowhere.
//! - **Network**: `host.http-request` reaches only the configured origins (plain HTTP), follows no
//!   redirects and returns every status as a response.
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
//!     chat_id: None,
//!     channel: None,
//!     chat_type: ChatType::Direct,
//!     trigger: Some("user".into()),
//!     run_id: None,
//! };
//! let event = PromptEvent { prompt: "Book a table for dinner".into(), messages_json: "[]".into() };
//! let injection = shim.before_agent_start(&event, &ctx);
//! println!("{:?}", injection.prepend_context);
//! # Ok::<(), host_shim::ShimError>(())
//! ```

mod cache;
mod cache_trust;
mod guest_files;
mod http;
mod limits;
pub mod state_lock;

use std::collections::VecDeque;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store, Trap};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

pub use cache::{CacheOutcome, default_cache_dir};
pub use limits::Limits;
pub use state_lock::{LockError, StateLocks};

use http::HttpGate;
use limits::{EpochTicker, MemoryLimiter};

mod bindings {
    wasmtime::component::bindgen!({
        world: "graphiti-plugin",
        path: "../wit",
        // So hosts can print answers as JSON (`graphiti-openclaw turn --json`).
        additional_derives: [serde::Serialize],
    });
}

use bindings::graphiti::openclaw::host::{
    self as wit_host, HttpError, Mount, Request as HttpRequest, Response as HttpResponse,
};
use bindings::{GraphitiPlugin, GraphitiPluginPre};

pub use bindings::graphiti::openclaw::host::LogLevel;
pub use bindings::graphiti::openclaw::types::{
    AgentEndEvent, BoostHit, Candidate, CaptureOutcome, ChatType, Command, CommandOutput,
    ConfigError, ConfigFailure, ConfigSummary, Decision, ExpertsCommand, HookContext,
    IngestRequest, Injection, IntentTestRequest, OutputFormat, PromptEvent, SearchRequest,
    SkippedPack, SpoolCommand, SpooledTurn, TickReport, ToolCall, ToolVerdict,
};

/// Exit code of [`Shim::run_command`] when the guest failed (EX_SOFTWARE).
pub const GUEST_FAILURE_EXIT_CODE: u8 = 70;

/// Lines kept for [`Shim::take_logs`]; older ones are dropped.
const KEPT_LOG_LINES: usize = 10_000;

/// What a [`Shim`] runs, with which files, origins and limits.
#[derive(Clone, Debug)]
pub struct ShimOptions {
    /// The component.
    pub wasm: PathBuf,
    /// Mounted read-only at `/config`.
    pub config_dir: PathBuf,
    /// Mounted read-only at `/overlay`.
    pub overlay_dir: Option<PathBuf>,
    /// Mounted read-write at `/state`; without it the guest keeps no state.
    pub state_dir: Option<PathBuf>,
    /// Where compiled components are cached; None means [`default_cache_dir`].
    pub cache_dir: Option<PathBuf>,
    /// Origins `host.http-request` may reach, such as `http://localhost:8000`.
    pub allowed_origins: Vec<String>,
    pub limits: Limits,
    /// Also write guest logs (and guest stdout/stderr) to the host's stderr.
    pub echo_logs: bool,
    /// A JSON object laid over the settings file, as OpenClaw's plugin config is.
    pub host_settings: Option<String>,
    /// Mounted read-only at `/experts`: installed openexperts packages.
    pub experts_dir: Option<PathBuf>,
    /// Mounted read-write at `/workspace`: the agents' workspace (EXPERTS.md, expert state).
    pub workspace_dir: Option<PathBuf>,
}

impl ShimOptions {
    /// Runs `wasm` with `config_dir` within `limits`; nothing else mounted, no origins allowed,
    /// the default cache directory, logs echoed.
    pub fn new(wasm: impl Into<PathBuf>, config_dir: impl Into<PathBuf>, limits: Limits) -> Self {
        ShimOptions {
            wasm: wasm.into(),
            config_dir: config_dir.into(),
            overlay_dir: None,
            state_dir: None,
            cache_dir: None,
            allowed_origins: Vec::new(),
            limits,
            echo_logs: true,
            host_settings: None,
            experts_dir: None,
            workspace_dir: None,
        }
    }
}

/// Why a [`Shim`] could not be built. Guest misbehaviour after that is never an error of this type.
#[derive(Debug)]
pub enum ShimError {
    /// The wasm file cannot be read.
    ReadWasm {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A directory to mount is missing or unusable.
    Mount {
        guest_path: &'static str,
        path: PathBuf,
        reason: String,
    },
    /// An allowed origin that is not an http origin.
    InvalidOrigin { origin: String, reason: String },
    /// Limits that would make every call fail.
    InvalidLimits(String),
    /// The wasm is not a component this host can run (does not compile, or wrong world).
    Load { path: PathBuf, reason: String },
    /// The engine could not be set up.
    Engine(String),
}

impl fmt::Display for ShimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReadWasm { path, source } => {
                write!(f, "cannot read wasm file {}: {source}", path.display())
            }
            Self::Mount {
                guest_path,
                path,
                reason,
            } => {
                write!(
                    f,
                    "cannot mount {} at {guest_path}: {reason}",
                    path.display()
                )
            }
            Self::InvalidOrigin { origin, reason } => {
                write!(f, "invalid allowed origin {origin:?}: {reason}")
            }
            Self::InvalidLimits(reason) => write!(f, "invalid limits: {reason}"),
            Self::Load { path, reason } => write!(f, "cannot load {}: {reason}", path.display()),
            Self::Engine(reason) => write!(f, "cannot set up wasmtime: {reason}"),
        }
    }
}

impl std::error::Error for ShimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::ReadWasm { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Why [`Shim::reload_config`] kept the previous configuration.
#[derive(Clone, Debug)]
pub enum ReloadError {
    /// The guest found these problems in the configuration.
    Invalid(Vec<ConfigError>),
    /// The guest failed (deadline, memory, trap); the text says how.
    Failed(String),
}

impl fmt::Display for ReloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(errors) => {
                let lines: Vec<String> = errors.iter().map(config_error_line).collect();
                write!(f, "{}", lines.join("\n"))
            }
            Self::Failed(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for ReloadError {}

/// "file:line: field: message", leaving out what is unknown.
pub fn config_error_line(error: &ConfigError) -> String {
    let mut line = error.file.clone();
    if let Some(number) = error.line {
        line += &format!(":{number}");
    }
    if let Some(field) = &error.field {
        line += &format!(": {field}");
    }
    line + ": " + &error.message
}

/// Guest and host log lines: echoed to stderr if asked, and kept for [`Shim::take_logs`].
#[derive(Clone)]
pub(crate) struct LogSink {
    echo: bool,
    kept: Arc<Mutex<VecDeque<(LogLevel, String)>>>,
}

impl LogSink {
    pub(crate) fn push(&self, level: LogLevel, message: String) {
        if self.echo {
            eprintln!("[graphiti-openclaw] {}: {message}", level_name(level));
        }
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if kept.len() == KEPT_LOG_LINES {
            kept.pop_front();
        }
        kept.push_back((level, message));
    }
}

/// "debug", "info", "warn" or "error".
pub fn level_name(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Warn => "warn",
        LogLevel::Error => "error",
    }
}

/// The data of one guest instance's store.
struct GuestState {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryLimiter,
    http: Arc<HttpGate>,
    logs: LogSink,
    /// The cross-process locks this instance holds; released when the instance is dropped.
    locks: StateLocks,
    /// The mounted directories as the user gave them, for the guest's messages.
    mounts: Vec<Mount>,
    /// When the current export call must be over; host calls are cut short to fit.
    call_deadline: Instant,
}

impl WasiView for GuestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

// The `types` interface has no functions to provide.
impl bindings::graphiti::openclaw::types::Host for GuestState {}

impl wit_host::Host for GuestState {
    fn log(&mut self, level: LogLevel, message: String) {
        self.logs.push(level, message);
    }

    fn http_request(&mut self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let budget = self.call_deadline.saturating_duration_since(Instant::now());
        self.http.send(request, budget)
    }

    fn acquire_lock(&mut self, name: String, lease_ms: u32, wait_ms: u32) -> Result<(), LockError> {
        // Waiting past the call's deadline would only end in the guest being stopped.
        let budget = self.call_deadline.saturating_duration_since(Instant::now());
        let wait = Duration::from_millis(wait_ms.into()).min(budget);
        self.locks
            .acquire(&name, Duration::from_millis(lease_ms.into()), wait)
    }

    fn release_lock(&mut self, name: String) {
        self.locks.release(&name);
    }

    fn mounts(&mut self) -> Vec<Mount> {
        self.mounts.clone()
    }
}

/// A live instance and its store; dropped as a whole once the guest has failed.
struct Instance {
    store: Store<GuestState>,
    plugin: GraphitiPlugin,
}

const RELOAD_CONFIG: &str = "reload-config";

/// One component instance behind the [`ShimOptions`] limits.
pub struct Shim {
    options: ShimOptions,
    engine: Engine,
    instance_pre: GraphitiPluginPre<GuestState>,
    /// None after a failure until the next instance is up.
    instance: Option<Instance>,
    http: Arc<HttpGate>,
    logs: LogSink,
    cache_outcome: CacheOutcome,
    cache_file: Option<PathBuf>,
    _ticker: EpochTicker,
}

impl Shim {
    /// Compiles (or loads from the cache) the component, instantiates it and loads its
    /// configuration. Configuration errors are logged, not returned: the guest then keeps what
    /// loaded (no routing until a good one loads; recall and capture go on with the settings in force).
    pub fn new(options: ShimOptions) -> Result<Shim, ShimError> {
        if options.limits.call_timeout.is_zero() {
            return Err(ShimError::InvalidLimits("the call timeout is zero".into()));
        }
        if options.limits.send_timeout.is_zero() {
            return Err(ShimError::InvalidLimits("the send timeout is zero".into()));
        }
        if options.limits.memory_bytes == 0 {
            return Err(ShimError::InvalidLimits("the memory limit is zero".into()));
        }
        let wasm = std::fs::read(&options.wasm).map_err(|source| ShimError::ReadWasm {
            path: options.wasm.clone(),
            source,
        })?;
        for (guest_path, dir) in mounts(&options) {
            if !dir.is_dir() {
                let reason = match std::fs::metadata(dir) {
                    Ok(_) => "not a directory".to_string(),
                    Err(err) => err.to_string(),
                };
                return Err(ShimError::Mount {
                    guest_path,
                    path: dir.to_path_buf(),
                    reason,
                });
            }
        }
        let http = HttpGate::new(&options.allowed_origins)
            .map_err(|(origin, reason)| ShimError::InvalidOrigin { origin, reason })?;
        let logs = LogSink {
            echo: options.echo_logs,
            kept: Arc::default(),
        };

        let mut config = Config::new();
        config.epoch_interruption(true);
        // Copy-on-write memory images live in memfd files, which a file-size limit (`ulimit -f`)
        // refuses: the CLI then could not start at all. Copying the data segments costs nothing
        // measurable here (intent-test: CPU time ratio 0.98 against CoW, median of 20 paired runs).
        config.memory_init_cow(false);
        let engine = Engine::new(&config).map_err(|err| ShimError::Engine(format!("{err:#}")))?;

        let wasm_path = options.wasm.clone();
        let load_error = |err: wasmtime::Error| ShimError::Load {
            path: wasm_path.clone(),
            reason: format!("{err:#}"),
        };
        let cache_dir = options.cache_dir.clone().or_else(default_cache_dir);
        let loaded =
            cache::load_or_compile(&engine, &options.wasm, &wasm, cache_dir.as_deref(), &logs)
                .map_err(load_error)?;

        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(load_error)?;
        guest_files::add_to_linker(&mut linker).map_err(load_error)?;
        GraphitiPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)
            .map_err(load_error)?;
        let instance_pre = linker
            .instantiate_pre(&loaded.component)
            .and_then(GraphitiPluginPre::new)
            .map_err(load_error)?;
        let ticker =
            EpochTicker::start(&engine).map_err(|err| ShimError::Engine(err.to_string()))?;

        let mut shim = Shim {
            engine,
            instance_pre,
            instance: None,
            http: Arc::new(http),
            logs,
            cache_outcome: loaded.outcome,
            cache_file: loaded.file,
            _ticker: ticker,
            options,
        };
        // A component that cannot even be instantiated is the caller's problem, not a guest fault.
        shim.instance = Some(shim.instantiate().map_err(load_error)?);
        let _ = shim.reload_config();
        Ok(shim)
    }

    /// What the compiled-component cache did in [`Shim::new`].
    pub fn cache_outcome(&self) -> &CacheOutcome {
        &self.cache_outcome
    }

    /// The cache entry for this wasm; None when no cache directory is in use (none given, unusable,
    /// or untrusted: see [`CacheOutcome::Untrusted`]).
    pub fn cache_file(&self) -> Option<&Path> {
        self.cache_file.as_deref()
    }

    /// Reloads the configuration; on error the guest keeps the last good one. Errors are also logged.
    pub fn reload_config(&mut self) -> Result<ConfigSummary, ReloadError> {
        let host_settings = self.options.host_settings.clone();
        match self.call(RELOAD_CONFIG, |plugin, store| {
            plugin.call_reload_config(store, host_settings.as_deref())
        }) {
            Ok(Ok(summary)) => Ok(summary),
            Ok(Err(failure)) => {
                for error in &failure.errors {
                    self.logs.push(LogLevel::Error, config_error_line(error));
                }
                for line in &failure.in_force {
                    self.logs.push(LogLevel::Warn, line.clone());
                }
                Err(ReloadError::Invalid(failure.errors))
            }
            Err(reason) => Err(ReloadError::Failed(reason)),
        }
    }

    /// The injection for a prompt; when the guest fails, no injection and the reason.
    pub fn before_agent_start(&mut self, event: &PromptEvent, ctx: &HookContext) -> Injection {
        self.call("before-agent-start", |plugin, store| {
            plugin.call_before_agent_start(store, event, ctx)
        })
        .unwrap_or_else(no_injection)
    }

    /// What the turn captures; when the guest fails, the turn is reported dropped with the reason.
    pub fn agent_end(&mut self, event: &AgentEndEvent, ctx: &HookContext) -> CaptureOutcome {
        self.call("agent-end", |plugin, store| {
            plugin.call_agent_end(store, event, ctx)
        })
        .unwrap_or_else(CaptureOutcome::Dropped)
    }

    /// Sends spooled turns to Graphiti; when the guest fails, a report carrying the reason (the
    /// spool on disk is untouched, so nothing is lost).
    /// Runs within [`Limits::send_timeout`].
    pub fn tick(&mut self) -> TickReport {
        let timeout = self.options.limits.send_timeout;
        self.call_within("tick", timeout, |plugin, store| plugin.call_tick(store))
            .unwrap_or_else(|reason| TickReport {
                sent: 0,
                pending: 0,
                in_doubt: 0,
                error: Some(reason),
                retry_in_ms: None,
                notes: Vec::new(),
            })
    }

    /// The routing decision and injection for a request; Err holds the guest's own error or why
    /// the guest failed.
    pub fn dry_run(&mut self, request: &IntentTestRequest) -> Result<Injection, String> {
        self.call("dry-run", |plugin, store| {
            plugin.call_dry_run(store, request)
        })?
    }

    /// Whether an agent's tool call may run (expert sessions' approval policy); when the guest
    /// fails, the call is refused (an expert must not act unchecked).
    pub fn before_tool_call(&mut self, call: &ToolCall, ctx: &HookContext) -> ToolVerdict {
        self.call("before-tool-call", |plugin, store| {
            plugin.call_before_tool_call(store, call, ctx)
        })
        .unwrap_or_else(|reason| {
            ToolVerdict::Block(format!("the plugin failed ({reason}); refused to be safe"))
        })
    }

    /// Runs an operator command; when the guest fails, exit code [`GUEST_FAILURE_EXIT_CODE`] and
    /// the reason on stderr. `flush` sends, as `tick` does: it runs within [`Limits::send_timeout`].
    pub fn run_command(&mut self, command: &Command) -> CommandOutput {
        let timeout = match command {
            Command::Flush => self.options.limits.send_timeout,
            _ => self.options.limits.call_timeout,
        };
        self.call_within("run-command", timeout, |plugin, store| {
            plugin.call_run_command(store, command)
        })
        .unwrap_or_else(|reason| CommandOutput {
            exit_code: GUEST_FAILURE_EXIT_CODE,
            stdout: String::new(),
            stderr: format!("{reason}\n"),
        })
    }

    /// Log lines (guest and shim) since the last call, oldest first.
    pub fn take_logs(&self) -> Vec<(LogLevel, String)> {
        let mut kept = self
            .logs
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.drain(..).collect()
    }

    /// Calls an export within the limits (the call timeout). A failed guest is dropped, then
    /// replaced by a fresh instance with its configuration reloaded; Err says what went wrong.
    fn call<R>(
        &mut self,
        export: &str,
        run: impl FnOnce(
            &bindings::exports::graphiti::openclaw::plugin::Guest,
            &mut Store<GuestState>,
        ) -> wasmtime::Result<R>,
    ) -> Result<R, String> {
        let timeout = self.options.limits.call_timeout;
        self.call_within(export, timeout, run)
    }

    /// [`Shim::call`] with a deadline of `timeout`.
    fn call_within<R>(
        &mut self,
        export: &str,
        timeout: Duration,
        run: impl FnOnce(
            &bindings::exports::graphiti::openclaw::plugin::Guest,
            &mut Store<GuestState>,
        ) -> wasmtime::Result<R>,
    ) -> Result<R, String> {
        if self.instance.is_none() {
            self.restart()?;
        }
        let Instance { store, plugin } = self.instance.as_mut().expect("restart left an instance");

        let limits = self.options.limits;
        store.set_epoch_deadline(Limits::deadline_ticks(timeout));
        let state = store.data_mut();
        state.memory.exceeded = false;
        state.call_deadline = Instant::now() + timeout;

        let error = match run(plugin.graphiti_openclaw_plugin(), store) {
            Ok(answer) => return Ok(answer),
            Err(error) => error,
        };
        let reason = if error.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
            format!(
                "plugin call {export} exceeded its {} ms deadline",
                timeout.as_millis()
            )
        } else if store.data().memory.exceeded {
            format!(
                "plugin call {export} exceeded its memory limit of {}",
                limits.memory_text()
            )
        } else {
            format!("plugin call {export} trapped: {}", error.root_cause())
        };
        self.logs.push(LogLevel::Error, reason.clone());

        // The instance may be in any state now: never call it again.
        self.instance = None;
        // A failed reload is not retried here, or a guest that always fails it would never stop.
        if export != RELOAD_CONFIG {
            let _ = self.restart();
        }
        Err(reason)
    }

    /// A fresh instance with its configuration loaded.
    fn restart(&mut self) -> Result<(), String> {
        let instance = self.instantiate().map_err(|err| {
            let reason = format!("cannot instantiate the plugin: {err:#}");
            self.logs.push(LogLevel::Error, reason.clone());
            reason
        })?;
        self.instance = Some(instance);
        match self.reload_config() {
            Err(ReloadError::Failed(reason)) => Err(reason),
            // Bad configuration is logged already; the instance answers "no injection" meanwhile.
            Ok(_) | Err(ReloadError::Invalid(_)) => Ok(()),
        }
    }

    fn instantiate(&self) -> wasmtime::Result<Instance> {
        let options = &self.options;
        let mut wasi = WasiCtxBuilder::new();
        // The only network is `host.http-request`, behind the allowlist.
        wasi.allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .allow_blocking_current_thread(guest_files::FILE_IO_ON_CALLING_THREAD);
        wasi.preopened_dir(&options.config_dir, "/config", FsPerms::ReadOnly)?;
        if let Some(dir) = &options.overlay_dir {
            wasi.preopened_dir(dir, "/overlay", FsPerms::ReadOnly)?;
        }
        if let Some(dir) = &options.state_dir {
            wasi.preopened_dir(dir, "/state", FsPerms::ReadWrite)?;
        }
        if let Some(dir) = &options.experts_dir {
            wasi.preopened_dir(dir, "/experts", FsPerms::ReadOnly)?;
        }
        if let Some(dir) = &options.workspace_dir {
            wasi.preopened_dir(dir, "/workspace", FsPerms::ReadWrite)?;
        }
        if options.echo_logs {
            // The host's stdout is for command output only.
            wasi.stdout(std::io::stderr()).stderr(std::io::stderr());
        }
        let state = GuestState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            memory: MemoryLimiter::new(options.limits.memory_bytes),
            http: Arc::clone(&self.http),
            logs: self.logs.clone(),
            locks: StateLocks::new(options.state_dir.clone(), {
                let logs = self.logs.clone();
                move |line| logs.push(LogLevel::Info, line)
            }),
            mounts: mounts(options)
                .into_iter()
                .map(|(guest_path, dir)| Mount {
                    guest_path: guest_path.into(),
                    host_path: dir.display().to_string(),
                })
                .collect(),
            call_deadline: Instant::now() + options.limits.call_timeout,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.memory);
        // Instantiation runs guest code too (start functions): same deadline as a call.
        store.set_epoch_deadline(Limits::deadline_ticks(options.limits.call_timeout));
        let plugin = self.instance_pre.instantiate(&mut store)?;
        Ok(Instance { store, plugin })
    }
}

/// The directories to mount, with their guest paths.
fn mounts(options: &ShimOptions) -> Vec<(&'static str, &Path)> {
    let mut mounts = vec![("/config", options.config_dir.as_path())];
    mounts.extend(options.overlay_dir.as_deref().map(|dir| ("/overlay", dir)));
    mounts.extend(options.state_dir.as_deref().map(|dir| ("/state", dir)));
    mounts.extend(options.experts_dir.as_deref().map(|dir| ("/experts", dir)));
    mounts.extend(
        options
            .workspace_dir
            .as_deref()
            .map(|dir| ("/workspace", dir)),
    );
    mounts
}

/// The fail-safe answer to `before-agent-start`.
fn no_injection(reason: String) -> Injection {
    Injection {
        prepend_context: None,
        system_context: None,
        append_system_context: None,
        decision: Decision {
            intent: None,
            primary_pack: None,
            additional_packs: Vec::new(),
            skipped_packs: Vec::new(),
            sticky: false,
            no_pack_reason: Some(reason.clone()),
            candidates: Vec::new(),
            trace: Vec::new(),
        },
        notes: vec![reason],
    }
}
