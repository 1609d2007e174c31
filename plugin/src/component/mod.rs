//! WIT glue: maps the `graphiti:openclaw` exports onto [`Engine`] and its types onto the WIT records.
//! No decisions here.

use crate::config::{ConfigError as NativeConfigError, ConfigRoots};
use crate::engine::Engine;
use crate::experts::sessions::{ExpertsCommand, ToolVerdict};
use crate::memory::graphiti::http as net;
use crate::platform::api;
use crate::platform::locks;
use crate::routing::decision;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

mod bindings;
mod context;
mod expert_runs;

use context::hook_context;

use bindings::exports::graphiti::openclaw::plugin::Guest;
use bindings::graphiti::openclaw::host::{self, LogLevel};
use bindings::graphiti::openclaw::types as wit;

/// Guest paths of the host's preopens (see `wit/plugin.wit`).
const CONFIG_DIR: &str = "/config";
const OVERLAY_DIR: &str = "/overlay";
const CONFIG_PRIVATE_OVERLAY: &str = "/config/private";
const STATE_DIR: &str = "/state";
const EXPERTS_DIR: &str = "/experts";
const WORKSPACE_DIR: &str = "/workspace";

fn mounted(dir: &str) -> Option<PathBuf> {
    Path::new(dir).is_dir().then(|| PathBuf::from(dir))
}

/// `dir` as the host was asked to mount it, named as the user named it (mounted or not).
fn named(dir: &str) -> Option<String> {
    host::mounts()
        .into_iter()
        .find(|m| m.guest_path == dir)
        .map(|m| m.host_path)
}

thread_local! {
    static ENGINE: RefCell<Engine> = RefCell::new(
        Engine::new(config_roots(), mounted(STATE_DIR), Box::new(HostHttp))
            .with_experts(mounted(EXPERTS_DIR), named(EXPERTS_DIR), mounted(WORKSPACE_DIR))
            .with_locks(Box::new(HostLocks))
            .with_time_zones(Box::new(expert_runs::HostZones)),
    );
}

/// The config directory and its overlay, named in messages as the host says the user named them.
fn config_roots() -> ConfigRoots {
    let mounts = host::mounts();
    let name_of = |guest: &str| {
        mounts
            .iter()
            .find(|m| m.guest_path == guest)
            .map_or_else(|| guest.to_string(), |m| m.host_path.clone())
    };
    let config_name = name_of(CONFIG_DIR);
    let named_overlay = mounts.iter().any(|m| m.guest_path == OVERLAY_DIR);
    let mounted_overlay = Path::new(OVERLAY_DIR).is_dir();
    let (overlay, overlay_name) = if mounted_overlay {
        (OVERLAY_DIR, name_of(OVERLAY_DIR))
    } else {
        let private = format!("{}/private", config_name.trim_end_matches('/'));
        (CONFIG_PRIVATE_OVERLAY, private)
    };
    ConfigRoots {
        missing_overlay: (named_overlay && !mounted_overlay).then(|| name_of(OVERLAY_DIR)),
        config_name,
        overlay_name: Some(overlay_name),
        ..ConfigRoots::new(PathBuf::from(CONFIG_DIR), Some(PathBuf::from(overlay)))
    }
}

/// The host's lock imports (one lock-file protocol in every host).
struct HostLocks;

impl locks::Locks for HostLocks {
    fn acquire(
        &mut self,
        name: &str,
        lease: std::time::Duration,
        wait: std::time::Duration,
    ) -> Result<(), locks::LockError> {
        let ms = |d: std::time::Duration| u32::try_from(d.as_millis()).unwrap_or(u32::MAX);
        host::acquire_lock(name, ms(lease), ms(wait)).map_err(|e| match e {
            host::LockError::Busy(why) => locks::LockError::Busy(why),
            host::LockError::Lost(why) => locks::LockError::Lost(why),
            host::LockError::Failed(why) => locks::LockError::Failed(why),
        })
    }

    fn release(&mut self, name: &str) {
        host::release_lock(name);
    }

    fn this_process(&self) -> Option<locks::ThisProcess> {
        locks::ThisProcess::from_environment()
    }
}

/// The host's `http-request` import, the only network the component has.
struct HostHttp;

impl net::Http for HostHttp {
    fn send(&mut self, request: net::Request) -> Result<net::Response, net::HttpError> {
        answer(host::http_request(&host_request(request)))
    }

    fn send_all(
        &mut self,
        requests: Vec<net::Request>,
    ) -> Vec<Result<net::Response, net::HttpError>> {
        let requests: Vec<host::Request> = requests.into_iter().map(host_request).collect();
        host::http_batch(&requests)
            .into_iter()
            .map(answer)
            .collect()
    }
}

fn host_request(request: net::Request) -> host::Request {
    host::Request {
        method: request.method.to_string(),
        url: request.url,
        headers: request.headers,
        body: request.body,
        timeout_ms: u32::try_from(request.timeout.as_millis())
            .unwrap_or(u32::MAX)
            .max(1),
    }
}

fn answer(
    result: Result<host::Response, host::HttpError>,
) -> Result<net::Response, net::HttpError> {
    match result {
        Ok(r) => Ok(net::Response {
            status: r.status,
            headers: r.headers,
            body: r.body,
        }),
        Err(host::HttpError::Refused(why)) => Err(net::HttpError::Refused(why)),
        Err(host::HttpError::Timeout) => Err(net::HttpError::Timeout),
        Err(host::HttpError::Connect(why)) => Err(net::HttpError::Connect(why)),
        Err(host::HttpError::Transport(why)) => Err(net::HttpError::Transport(why)),
        Err(host::HttpError::InvalidRequest(why)) => Err(net::HttpError::InvalidRequest(why)),
    }
}

fn with_engine<T>(f: impl FnOnce(&mut Engine) -> T) -> T {
    ENGINE.with(|engine| f(&mut engine.borrow_mut()))
}

struct Component;

impl Guest for Component {
    fn reload_config(
        host_settings: Option<String>,
    ) -> Result<wit::ConfigSummary, wit::ConfigFailure> {
        let loaded = with_engine(|engine| {
            engine.set_host_settings(host_settings);
            engine.reload()
        });
        match loaded {
            Ok(summary) => {
                for warning in &summary.warnings {
                    host::log(LogLevel::Warn, &format!("config: {warning}"));
                }
                Ok(wit::ConfigSummary {
                    rules: summary.rules,
                    packs: summary.packs,
                    composition_rules: summary.composition_rules,
                    files: summary.files,
                    warnings: summary.warnings,
                    graphiti_url: summary.graphiti_url,
                })
            }
            // The host reports the errors (once, whatever the number of instances).
            Err(failure) => Err(wit::ConfigFailure {
                errors: failure.errors.into_iter().map(config_error).collect(),
                in_force: failure.in_force,
                graphiti_url: failure.graphiti_url,
            }),
        }
    }

    fn before_agent_start(event: wit::PromptEvent, ctx: wit::HookContext) -> wit::Injection {
        let event = api::PromptEvent {
            prompt: event.prompt,
            messages_json: event.messages_json,
        };
        let injection = with_engine(|e| e.before_agent_start(&event, &hook_context(ctx)));
        for note in &injection.notes {
            host::log(LogLevel::Warn, note);
        }
        self::injection(injection)
    }

    fn agent_end(event: wit::AgentEndEvent, ctx: wit::HookContext) -> wit::CaptureOutcome {
        let event = api::AgentEndEvent {
            success: event.success,
            error: event.error,
            messages_json: event.messages_json,
            duration_ms: event.duration_ms,
        };
        match with_engine(|e| e.agent_end(&event, &hook_context(ctx))) {
            decision::CaptureOutcome::Skipped(why) => wit::CaptureOutcome::Skipped(why),
            decision::CaptureOutcome::Spooled {
                user,
                assistant,
                episode,
                group_id,
            } => wit::CaptureOutcome::Spooled(wit::SpooledTurn {
                user,
                assistant,
                episode,
                group_id,
            }),
            decision::CaptureOutcome::Dropped(why) => {
                host::log(LogLevel::Error, &format!("capture: {why}"));
                wit::CaptureOutcome::Dropped(why)
            }
        }
    }

    fn tick() -> wit::TickReport {
        let report = with_engine(Engine::tick);
        for note in &report.notes {
            host::log(LogLevel::Warn, &format!("capture: {note}"));
        }
        if let Some(e) = &report.error {
            host::log(
                LogLevel::Warn,
                &format!("capture: sending to Graphiti failed, will retry: {e}"),
            );
        }
        wit::TickReport {
            sent: report.sent,
            pending: report.pending,
            in_doubt: report.in_doubt,
            error: report.error,
            retry_in_ms: report.retry_in_ms,
            notes: report.notes,
        }
    }

    fn dry_run(request: wit::IntentTestRequest) -> Result<wit::Injection, String> {
        with_engine(|e| e.dry_run(&intent_test_request(request))).map(injection)
    }

    fn before_tool_call(call: wit::ToolCall, ctx: wit::HookContext) -> wit::ToolVerdict {
        let tool_name = call.tool_name.clone();
        let check = with_engine(|e| e.before_tool_call(&tool_call(call), &hook_context(ctx)));
        for note in &check.notes {
            host::log(LogLevel::Warn, note);
        }
        if let Some(used) = &check.approval_used {
            host::log(LogLevel::Info, used);
        }
        match check.verdict {
            ToolVerdict::Allow => wit::ToolVerdict::Allow,
            ToolVerdict::Block(message) => {
                host::log(
                    LogLevel::Info,
                    &format!("experts: refused {tool_name}: {message}"),
                );
                wit::ToolVerdict::Block(message)
            }
        }
    }

    fn run_command(cmd: wit::Command) -> wit::CommandOutput {
        let command = match cmd {
            wit::Command::IntentTest((request, format)) => api::Command::IntentTest(
                intent_test_request(request),
                match format {
                    wit::OutputFormat::Text => api::OutputFormat::Text,
                    wit::OutputFormat::Json => api::OutputFormat::Json,
                },
            ),
            wit::Command::LintRules => api::Command::LintRules,
            wit::Command::Eval((cases, threshold)) => api::Command::Eval(cases, threshold),
            wit::Command::CheckConfig => api::Command::CheckConfig,
            wit::Command::Recall((query, group)) => api::Command::Recall(query, group),
            wit::Command::Status => api::Command::Status,
            wit::Command::AuditBoundary => api::Command::AuditBoundary,
            wit::Command::Search(r) => api::Command::Search(r.query, hook_context(r.ctx)),
            wit::Command::Ingest(r) => api::Command::Ingest(r.text, r.source, hook_context(r.ctx)),
            wit::Command::Debug(session_key) => api::Command::Debug(session_key),
            wit::Command::Experts(command) => api::Command::Experts(match command {
                wit::ExpertsCommand::List => ExpertsCommand::List,
                wit::ExpertsCommand::Validate(target) => ExpertsCommand::Validate(target),
                wit::ExpertsCommand::Prompt(target) => ExpertsCommand::Prompt(target),
                wit::ExpertsCommand::Registry => ExpertsCommand::Registry,
                wit::ExpertsCommand::Pending => ExpertsCommand::Pending,
                wit::ExpertsCommand::Approve(id) => ExpertsCommand::Approve(id),
                wit::ExpertsCommand::CheckTool((expert, call, ctx)) => ExpertsCommand::CheckTool {
                    expert,
                    call: tool_call(call),
                    ctx: hook_context(ctx),
                },
                wit::ExpertsCommand::Knowledge((name, ctx)) => ExpertsCommand::Knowledge {
                    name,
                    ctx: hook_context(ctx),
                },
                // The runtime's commands.
                other => expert_runs::command(other),
            }),
            wit::Command::Flush => api::Command::Flush,
            wit::Command::GroupIds => api::Command::GroupIds,
            wit::Command::Spool(command) => api::Command::Spool(match command {
                wit::SpoolCommand::List => api::SpoolCommand::List,
                wit::SpoolCommand::Requeue => api::SpoolCommand::Requeue,
            }),
        };
        let out = with_engine(|e| e.run_command(&command));
        wit::CommandOutput {
            exit_code: out.exit_code,
            stdout: out.stdout,
            stderr: out.stderr,
        }
    }

    fn expert_webhook(request: wit::WebhookRequest, now_ms: u64) -> wit::WebhookAnswer {
        let request = expert_runs::webhook_request(request);
        expert_runs::webhook_answer(with_engine(|e| e.expert_webhook(&request, now_ms)))
    }

    fn expert_channel_message(message: wit::ChannelMessage, now_ms: u64) -> wit::RuntimeWork {
        let message = expert_runs::channel_message(message);
        expert_runs::work(with_engine(|e| e.expert_channel_message(&message, now_ms)))
    }

    fn expert_tick(now_ms: u64) -> wit::RuntimeWork {
        expert_runs::work(with_engine(|e| e.expert_tick(now_ms)))
    }

    fn expert_run_ended(report: wit::RunReport, now_ms: u64) -> wit::RuntimeWork {
        let report = expert_runs::run_report(report);
        expert_runs::work(with_engine(|e| e.expert_run_ended(&report, now_ms)))
    }

    fn expert_delivered(run_ids: Vec<String>, now_ms: u64) -> Result<(), String> {
        with_engine(|e| e.expert_delivered(&run_ids, now_ms))
    }
}

fn tool_call(call: wit::ToolCall) -> api::ToolCall {
    api::ToolCall {
        tool_name: call.tool_name,
        arguments_json: call.arguments_json,
        call_id: call.call_id,
    }
}

fn intent_test_request(r: wit::IntentTestRequest) -> api::IntentTestRequest {
    api::IntentTestRequest {
        prompt: r.prompt,
        recall_json: r.recall_json,
        group_chat: r.group_chat,
        previous_pack: r.previous_pack,
        now_ms: r.now_ms,
        previous_at_ms: r.previous_at_ms,
        carried_turns: r.carried_turns,
        previous_prompt: r.previous_prompt,
    }
}

fn config_error(e: NativeConfigError) -> wit::ConfigError {
    wit::ConfigError {
        file: e.file,
        line: e.line,
        field: e.field,
        message: e.message,
    }
}

fn injection(i: decision::Injection) -> wit::Injection {
    let d = i.decision;
    wit::Injection {
        prepend_context: i.prepend_context,
        system_context: i.system_context,
        append_system_context: i.append_system_context,
        notes: i.notes,
        decision: wit::Decision {
            intent: d.intent,
            primary_pack: d.primary_pack,
            additional_packs: d.additional_packs,
            skipped_packs: d
                .skipped_packs
                .into_iter()
                .map(|s| wit::SkippedPack {
                    pack: s.pack,
                    reason: s.reason,
                })
                .collect(),
            sticky: d.sticky,
            no_pack_reason: d.no_pack_reason,
            candidates: d
                .candidates
                .into_iter()
                .map(|c| wit::Candidate {
                    intent: c.intent,
                    pack_type: c.pack_type,
                    keywords: c.keywords,
                    keyword_score: c.keyword_score,
                    boosts: c
                        .boosts
                        .into_iter()
                        .map(|b| wit::BoostHit {
                            matched_on: b.matched_on,
                            matched_text: b.matched_text,
                            weight: b.weight,
                            suppresses: b.suppresses,
                        })
                        .collect(),
                    score: c.score,
                    min_confidence: c.min_confidence,
                    suppressed_by: c.suppressed_by,
                })
                .collect(),
            trace: d.trace,
        },
    }
}

bindings::export!(Component with_types_in bindings);
