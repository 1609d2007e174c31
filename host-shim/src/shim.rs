//! [`Shim`]: one component instance behind its limits. Each export call runs within a deadline and
//! the memory cap; a guest that fails is dropped and replaced, and the caller gets a fallback answer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store, Trap};

use crate::bindings::exports::graphiti::openclaw::commands::{Command, CommandOutput};
use crate::bindings::exports::graphiti::openclaw::experts::{
    ChannelMessage, RunReport, RuntimeWork, WebhookAnswer, WebhookRequest,
};
use crate::bindings::exports::graphiti::openclaw::hooks::{
    AgentEndEvent, CaptureOutcome, ConfigSummary, Decision, HookContext, Injection,
    IntentTestRequest, PromptEvent, TickReport, ToolCall, ToolVerdict,
};
use crate::bindings::graphiti::openclaw::host::{LogLevel, Mount};
use crate::bindings::{GraphitiPlugin, GraphitiPluginPre};
use crate::cache::{self, CacheOutcome, WasmFile, default_cache_dir};
use crate::database::DatabaseGate;
use crate::engine;
use crate::errors::{ReloadError, ShimError, config_error_line};
use crate::host_imports::GuestState;
use crate::http::HttpGate;
use crate::limits::{EpochTicker, Limits, MemoryLimiter};
use crate::logs::LogSink;
use crate::options::{ShimOptions, mounts};
use crate::state_lock::StateLocks;
use crate::wasi_context::wasi_context;

/// Exit code of [`Shim::run_command`] when the guest failed (EX_SOFTWARE).
pub const GUEST_FAILURE_EXIT_CODE: u8 = 70;

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
    database: Arc<DatabaseGate>,
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
        check_limits(&options.limits)?;
        let mut wasm = WasmFile::open(&options.wasm).map_err(|source| ShimError::ReadWasm {
            path: options.wasm.clone(),
            source,
        })?;
        check_mounts(&options)?;
        let (database_origins, http_origins): (Vec<String>, Vec<String>) = options
            .allowed_origins
            .iter()
            .cloned()
            .partition(|origin| origin.to_ascii_lowercase().starts_with("redis"));
        let http = HttpGate::new(&http_origins, options.extra_ca_file.as_deref())?;
        let database = DatabaseGate::new(&database_origins, options.database_password.clone())?;
        let logs = LogSink {
            echo: options.echo_logs,
            kept: Arc::default(),
        };
        let engine = engine::new_engine()?;

        let wasm_path = options.wasm.clone();
        let load_error = |err: wasmtime::Error| ShimError::Load {
            path: wasm_path.clone(),
            reason: format!("{err:#}"),
        };
        let cache_dir = options.cache_dir.clone().or_else(default_cache_dir);
        let loaded = cache::load_or_compile(
            &engine,
            &options.wasm,
            &mut wasm,
            cache_dir.as_deref(),
            &logs,
        )
        .map_err(load_error)?;
        let instance_pre = engine::link(&engine, &loaded.component).map_err(load_error)?;
        let ticker =
            EpochTicker::start(&engine).map_err(|err| ShimError::Engine(err.to_string()))?;

        let mut shim = Shim {
            engine,
            instance_pre,
            instance: None,
            http: Arc::new(http),
            database: Arc::new(database),
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

    /// Time the guest's HTTP requests have spent waiting on the network since the shim started
    /// (the requests of one batch counted once): what the plugin adds is a call's time less this.
    pub fn network_wait(&self) -> Duration {
        self.http.waited()
    }

    /// Reloads the configuration; on error the guest keeps the last good one. Errors are also logged.
    pub fn reload_config(&mut self) -> Result<ConfigSummary, ReloadError> {
        let host_settings = self.options.host_settings.clone();
        match self.call(RELOAD_CONFIG, |plugin, store| {
            plugin
                .graphiti_openclaw_hooks()
                .call_reload_config(store, host_settings.as_deref())
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
            plugin
                .graphiti_openclaw_hooks()
                .call_before_agent_start(store, event, ctx)
        })
        .unwrap_or_else(no_injection)
    }

    /// What the turn captures; when the guest fails, the turn is reported dropped with the reason.
    pub fn agent_end(&mut self, event: &AgentEndEvent, ctx: &HookContext) -> CaptureOutcome {
        self.call("agent-end", |plugin, store| {
            plugin
                .graphiti_openclaw_hooks()
                .call_agent_end(store, event, ctx)
        })
        .unwrap_or_else(CaptureOutcome::Dropped)
    }

    /// Sends spooled turns to Graphiti; when the guest fails, a report carrying the reason (the
    /// spool on disk is untouched, so nothing is lost).
    /// Runs within [`Limits::send_timeout`].
    pub fn tick(&mut self) -> TickReport {
        let timeout = self.options.limits.send_timeout;
        self.call_within("tick", timeout, |plugin, store| {
            plugin.graphiti_openclaw_hooks().call_tick(store)
        })
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
            plugin
                .graphiti_openclaw_hooks()
                .call_dry_run(store, request)
        })?
    }

    /// Whether an agent's tool call may run (expert sessions' approval policy); when the guest
    /// fails, the call is refused (an expert must not act unchecked).
    pub fn before_tool_call(&mut self, call: &ToolCall, ctx: &HookContext) -> ToolVerdict {
        self.call("before-tool-call", |plugin, store| {
            plugin
                .graphiti_openclaw_hooks()
                .call_before_tool_call(store, call, ctx)
        })
        .unwrap_or_else(|reason| {
            ToolVerdict::Block(format!("the plugin failed ({reason}); refused to be safe"))
        })
    }

    /// Runs an operator command; when the guest fails, exit code [`GUEST_FAILURE_EXIT_CODE`] and
    /// the reason on stderr. `flush` sends, as `tick` does: it runs within [`Limits::send_timeout`].
    pub fn run_command(&mut self, command: &Command) -> CommandOutput {
        let timeout = match command {
            Command::Flush | Command::ImportMemory(_) => self.options.limits.send_timeout,
            _ => self.options.limits.call_timeout,
        };
        self.call_within("run-command", timeout, |plugin, store| {
            plugin
                .graphiti_openclaw_commands()
                .call_run_command(store, command)
        })
        .unwrap_or_else(|reason| CommandOutput {
            exit_code: GUEST_FAILURE_EXIT_CODE,
            stdout: String::new(),
            stderr: format!("{reason}\n"),
        })
    }

    /// An expert webhook request; when the guest fails, a 503 naming why (nothing was queued that
    /// was not saved before the failure, and the sender retries on a 5xx).
    pub fn expert_webhook(&mut self, request: &WebhookRequest, now_ms: u64) -> WebhookAnswer {
        self.call("expert-webhook", |plugin, store| {
            plugin
                .graphiti_openclaw_experts()
                .call_expert_webhook(store, request, now_ms)
        })
        .unwrap_or_else(|reason| WebhookAnswer {
            status: 503,
            body: serde_json::json!({ "error": reason }).to_string(),
            work: no_work(reason),
        })
    }

    pub fn expert_channel_message(&mut self, message: &ChannelMessage, now_ms: u64) -> RuntimeWork {
        self.call("expert-channel-message", |plugin, store| {
            plugin
                .graphiti_openclaw_experts()
                .call_expert_channel_message(store, message, now_ms)
        })
        .unwrap_or_else(no_work)
    }

    /// The runtime's tick; when the guest fails, no work and why (the record on disk is untouched).
    pub fn expert_tick(&mut self, now_ms: u64) -> RuntimeWork {
        self.call("expert-tick", |plugin, store| {
            plugin
                .graphiti_openclaw_experts()
                .call_expert_tick(store, now_ms)
        })
        .unwrap_or_else(no_work)
    }

    pub fn expert_run_ended(&mut self, report: &RunReport, now_ms: u64) -> RuntimeWork {
        self.call("expert-run-ended", |plugin, store| {
            plugin
                .graphiti_openclaw_experts()
                .call_expert_run_ended(store, report, now_ms)
        })
        .unwrap_or_else(no_work)
    }

    /// The host posted these deliveries; until then they stay in the record and are handed out
    /// again after a restart.
    pub fn expert_delivered(&mut self, run_ids: &[String], now_ms: u64) -> Result<(), String> {
        self.call("expert-delivered", |plugin, store| {
            plugin
                .graphiti_openclaw_experts()
                .call_expert_delivered(store, run_ids, now_ms)
        })?
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
        run: impl FnOnce(&GraphitiPlugin, &mut Store<GuestState>) -> wasmtime::Result<R>,
    ) -> Result<R, String> {
        let timeout = self.options.limits.call_timeout;
        self.call_within(export, timeout, run)
    }

    /// [`Shim::call`] with a deadline of `timeout`.
    fn call_within<R>(
        &mut self,
        export: &str,
        timeout: Duration,
        run: impl FnOnce(&GraphitiPlugin, &mut Store<GuestState>) -> wasmtime::Result<R>,
    ) -> Result<R, String> {
        if self.instance.is_none() {
            self.restart()?;
        }
        let Instance { store, plugin } = self.instance.as_mut().expect("restart left an instance");

        let limits = self.options.limits;
        store.set_epoch_deadline(Limits::deadline_ticks(timeout));
        let state = store.data_mut();
        state.memory.exceeded = false;
        state.largest_file_opened = None;
        state.call_deadline = Instant::now() + timeout;

        let error = match run(plugin, store) {
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
                "plugin call {export} exceeded its memory limit of {}{}",
                limits.memory_text(),
                store
                    .data()
                    .largest_file_opened
                    .as_ref()
                    .map(|(path, size)| format!(
                        "; the largest file it opened in the call: {} ({:.1} MiB); \
                         give the host more memory (--memory-limit-mb) or make the file smaller",
                        path.display(),
                        *size as f64 / f64::from(1u32 << 20)
                    ))
                    .unwrap_or_default()
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
        let state = GuestState {
            wasi: wasi_context(options)?,
            table: ResourceTable::new(),
            memory: MemoryLimiter::new(options.limits.memory_bytes),
            http: Arc::clone(&self.http),
            database: Arc::clone(&self.database),
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
            largest_file_opened: None,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.memory);
        // Instantiation runs guest code too (start functions): same deadline as a call.
        store.set_epoch_deadline(Limits::deadline_ticks(options.limits.call_timeout));
        let plugin = self.instance_pre.instantiate(&mut store)?;
        Ok(Instance { store, plugin })
    }
}

/// Limits that would make every call fail are refused.
fn check_limits(limits: &Limits) -> Result<(), ShimError> {
    if limits.call_timeout.is_zero() {
        return Err(ShimError::InvalidLimits("the call timeout is zero".into()));
    }
    if limits.send_timeout.is_zero() {
        return Err(ShimError::InvalidLimits("the send timeout is zero".into()));
    }
    if limits.memory_bytes == 0 {
        return Err(ShimError::InvalidLimits("the memory limit is zero".into()));
    }
    Ok(())
}

/// Every directory to mount must be one.
fn check_mounts(options: &ShimOptions) -> Result<(), ShimError> {
    for (guest_path, dir) in mounts(options) {
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
    Ok(())
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

fn no_work(reason: String) -> RuntimeWork {
    RuntimeWork {
        start: Vec::new(),
        deliver: Vec::new(),
        end_sessions: Vec::new(),
        notes: vec![format!("experts: the component failed: {reason}")],
        tick_in_ms: Some(60_000),
    }
}
