//! The `commands` export: operator commands and agent tools.

use super::Component;
use super::bindings::exports::graphiti::openclaw::commands::{self as wit, Guest};
use super::context::hook_context;
use super::hooks::{intent_test_request, tool_call};
use super::instance::with_engine;
use crate::platform::api;

impl Guest for Component {
    fn run_command(cmd: wit::Command) -> wit::CommandOutput {
        let command = match cmd {
            wit::Command::IntentTest(c) => api::Command::IntentTest(
                intent_test_request(c.request),
                match c.format {
                    wit::OutputFormat::Text => api::OutputFormat::Text,
                    wit::OutputFormat::Json => api::OutputFormat::Json,
                },
            ),
            wit::Command::LintRules => api::Command::LintRules,
            wit::Command::Eval(c) => api::Command::Eval(c.cases_json, c.threshold),
            wit::Command::CheckConfig => api::Command::CheckConfig,
            wit::Command::Recall(c) => api::Command::Recall(c.query, c.group_id),
            wit::Command::Status => api::Command::Status,
            wit::Command::AuditBoundary => api::Command::AuditBoundary,
            wit::Command::Search(r) => api::Command::Search(r.query, hook_context(r.ctx)),
            wit::Command::Ingest(r) => api::Command::Ingest(r.text, r.source, hook_context(r.ctx)),
            wit::Command::Debug(session_key) => api::Command::Debug(session_key),
            wit::Command::Experts(command) => api::Command::Experts(experts_command(command)),
            wit::Command::Flush => api::Command::Flush,
            wit::Command::GroupIds => api::Command::GroupIds,
            wit::Command::Overview => api::Command::Overview,
            wit::Command::ImportMemory(r) => api::Command::Import(api::ImportRequest {
                ctx: hook_context(r.ctx),
                group_id: r.group_id,
                daily_notes: r.daily_notes,
                dry_run: r.dry_run,
                format: if r.json {
                    api::OutputFormat::Json
                } else {
                    api::OutputFormat::Text
                },
            }),
            wit::Command::Memory(command) => api::Command::Memory(match command {
                wit::MemoryCommand::Pause(ctx) => api::MemoryCommand::Pause(hook_context(ctx)),
                wit::MemoryCommand::Resume(ctx) => api::MemoryCommand::Resume(hook_context(ctx)),
                wit::MemoryCommand::Paused => api::MemoryCommand::Paused,
                wit::MemoryCommand::See(q) => api::MemoryCommand::See {
                    query: q.query,
                    ctx: hook_context(q.ctx),
                    operator: q.operator,
                },
                wit::MemoryCommand::Export(q) => api::MemoryCommand::Export {
                    query: q.query,
                    ctx: hook_context(q.ctx),
                    operator: q.operator,
                },
                wit::MemoryCommand::Forget(f) => api::MemoryCommand::Forget {
                    query: f.query,
                    ids: f.ids,
                    everything: f.everything,
                    earlier_groups: f.earlier_groups,
                    ctx: hook_context(f.ctx),
                    operator: f.operator,
                    at_once: f.at_once,
                },
                wit::MemoryCommand::ConfirmForget(c) => {
                    api::MemoryCommand::ConfirmForget(forget_choice(c))
                }
                wit::MemoryCommand::EditForget(c) => {
                    api::MemoryCommand::EditForget(forget_choice(c))
                }
                wit::MemoryCommand::Chats => api::MemoryCommand::Chats,
                wit::MemoryCommand::Correct(c) => api::MemoryCommand::Correct {
                    old: c.old,
                    now_true: c.now_true,
                    ctx: hook_context(c.ctx),
                },
            }),
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
}

fn forget_choice(c: wit::ForgetConfirmation) -> api::ForgetChoice {
    api::ForgetChoice {
        id: c.id,
        ctx: hook_context(c.ctx),
        operator: c.operator,
        drop: c.drop,
        add: c.add,
    }
}

fn experts_command(command: wit::ExpertsCommand) -> api::ExpertsCommand {
    use api::ExpertsCommand as C;
    match command {
        wit::ExpertsCommand::List => C::List,
        wit::ExpertsCommand::Validate(target) => C::Validate(target),
        wit::ExpertsCommand::Prompt(target) => C::Prompt(target),
        wit::ExpertsCommand::Registry => C::Registry,
        wit::ExpertsCommand::Pending => C::Pending,
        wit::ExpertsCommand::Approve(id) => C::Approve(id),
        wit::ExpertsCommand::CheckTool(c) => C::CheckTool {
            expert: c.expert,
            call: tool_call(c.call),
            ctx: hook_context(c.ctx),
        },
        wit::ExpertsCommand::Knowledge(r) => C::Knowledge {
            name: r.file,
            ctx: hook_context(r.ctx),
        },
        wit::ExpertsCommand::Fire(f) => C::Fire {
            expert: f.expert,
            trigger: f.trigger,
            payload_json: f.payload_json,
        },
        wit::ExpertsCommand::Queue => C::Queue,
        wit::ExpertsCommand::DeadLetters => C::DeadLetters,
        wit::ExpertsCommand::Replay(id) => C::Replay(id),
        wit::ExpertsCommand::Reject(id) => C::Reject(id),
        wit::ExpertsCommand::Run(r) => C::Run(crate::platform::api::ManualRun {
            expert: r.expert,
            message: r.message,
            process: r.process,
            inputs_json: r.inputs_json,
            dry_run: r.dry_run,
        }),
        wit::ExpertsCommand::Step(s) => C::Step {
            step: s.step,
            ctx: hook_context(s.ctx),
        },
        wit::ExpertsCommand::Learn(l) => C::Learn {
            proposal_json: l.proposal_json,
            ctx: hook_context(l.ctx),
        },
        wit::ExpertsCommand::Due(at) => C::Due(at),
        wit::ExpertsCommand::Function(f) => C::Function {
            name: f.name,
            inputs_json: f.inputs_json,
            ctx: hook_context(f.ctx),
        },
        wit::ExpertsCommand::FunctionEnded(f) => C::FunctionEnded {
            name: f.name,
            reply: f.reply,
            ctx: hook_context(f.ctx),
        },
        wit::ExpertsCommand::Install(source) => C::Install(match source {
            wit::InstallSource::Directory(name) => api::InstallSource::Directory(name),
            wit::InstallSource::Archive(a) => api::InstallSource::Archive(a.name, a.bytes),
        }),
        wit::ExpertsCommand::Bind(b) => C::Bind {
            expert: b.expert,
            tool: b.tool,
            server: b.server,
        },
        wit::ExpertsCommand::Remove(name) => C::Remove(name),
    }
}
