//! The `hooks` export: a turn (recall, routing, capture), the capture timer, the routing dry run and
//! the tool-call check.

use super::Component;
use super::bindings::exports::graphiti::openclaw::hooks::{self as wit, Guest};
use super::bindings::graphiti::openclaw::host::{self, LogLevel};
use super::context::hook_context;
use super::instance::with_engine;
use crate::config::ConfigError as NativeConfigError;
use crate::engine::Engine;
use crate::experts::sessions::ToolVerdict;
use crate::platform::api;
use crate::routing::decision;

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
                    falkordb_url: summary.falkordb_url,
                })
            }
            // The host reports the errors (once, whatever the number of instances).
            Err(failure) => Err(wit::ConfigFailure {
                errors: failure.errors.into_iter().map(config_error).collect(),
                in_force: failure.in_force,
                graphiti_url: failure.graphiti_url,
                falkordb_url: failure.falkordb_url,
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
}

pub(super) fn tool_call(call: wit::ToolCall) -> api::ToolCall {
    api::ToolCall {
        tool_name: call.tool_name,
        arguments_json: call.arguments_json,
        call_id: call.call_id,
    }
}

pub(super) fn intent_test_request(r: wit::IntentTestRequest) -> api::IntentTestRequest {
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
