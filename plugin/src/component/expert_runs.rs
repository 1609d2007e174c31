//! WIT glue of the expert runtime: its four exports, its commands and the host's time zones.

use super::bindings::graphiti::openclaw::host;
use super::bindings::graphiti::openclaw::types as wit;
use crate::experts::runs::TimeZones;
use crate::platform::api;

/// The host's `utc-offset` import.
pub struct HostZones;

impl TimeZones for HostZones {
    fn utc_offset_minutes(&mut self, zone: &str, at_ms: u64) -> Result<i32, String> {
        host::utc_offset(zone, at_ms)
    }
}

pub fn work(w: api::RuntimeWork) -> wit::RuntimeWork {
    for note in &w.notes {
        host::log(host::LogLevel::Info, note);
    }
    wit::RuntimeWork {
        start: w
            .start
            .into_iter()
            .map(|s| wit::RunStart {
                invocation: s.invocation,
                attempt: s.attempt,
                expert: s.expert,
                session_key: s.session_key,
                message: s.message,
                timeout_ms: s.timeout_ms,
            })
            .collect(),
        deliver: w
            .deliver
            .into_iter()
            .map(|d| wit::Delivery {
                run_id: d.run_id(),
                expert: d.expert,
                invocation: d.invocation,
                kind: match d.kind {
                    api::DeliveryKind::Result => wit::DeliveryKind::Result,
                    api::DeliveryKind::Escalation => wit::DeliveryKind::Escalation,
                    api::DeliveryKind::Approval => wit::DeliveryKind::Approval,
                    api::DeliveryKind::Draft => wit::DeliveryKind::Draft,
                    api::DeliveryKind::SlaWarning => wit::DeliveryKind::SlaWarning,
                    api::DeliveryKind::Notice => wit::DeliveryKind::Notice,
                },
                session_key: d.session_key,
                text: d.text,
            })
            .collect(),
        end_sessions: w.end_sessions,
        notes: w.notes,
        tick_in_ms: w.tick_in_ms,
    }
}

pub fn webhook_request(r: wit::WebhookRequest) -> api::WebhookRequest {
    api::WebhookRequest {
        path: r.path,
        headers: r.headers,
        body: r.body,
    }
}

pub fn webhook_answer(a: api::WebhookAnswer) -> wit::WebhookAnswer {
    wit::WebhookAnswer {
        status: a.status,
        body: a.body,
        work: work(a.work),
    }
}

pub fn channel_message(m: wit::ChannelMessage) -> api::ChannelMessage {
    api::ChannelMessage {
        channel_name: m.channel_name,
        sender_id: m.sender_id,
        message_text: m.message_text,
        chat_id: m.chat_id,
        session_key: m.session_key,
        command: m.command,
    }
}

pub fn run_report(r: wit::RunReport) -> api::RunReport {
    api::RunReport {
        invocation: r.invocation,
        attempt: r.attempt,
        outcome: match r.outcome {
            wit::RunOutcome::Completed(text) => api::RunOutcome::Completed(text),
            wit::RunOutcome::Failed(why) => api::RunOutcome::Failed(why),
            wit::RunOutcome::TimedOut => api::RunOutcome::TimedOut,
        },
    }
}

/// The runtime's `experts …` commands (the session commands are mapped beside `run-command`).
pub fn command(c: wit::ExpertsCommand) -> api::ExpertsCommand {
    use api::ExpertsCommand as C;
    match c {
        wit::ExpertsCommand::Fire((expert, trigger, payload_json)) => C::Fire {
            expert,
            trigger,
            payload_json,
        },
        wit::ExpertsCommand::Queue => C::Queue,
        wit::ExpertsCommand::DeadLetters => C::DeadLetters,
        wit::ExpertsCommand::Replay(id) => C::Replay(id),
        wit::ExpertsCommand::Reject(id) => C::Reject(id),
        wit::ExpertsCommand::Run((expert, message)) => C::Run { expert, message },
        wit::ExpertsCommand::Step((step, ctx)) => C::Step {
            step,
            ctx: super::context::hook_context(ctx),
        },
        wit::ExpertsCommand::Learn((proposal_json, ctx)) => C::Learn {
            proposal_json,
            ctx: super::context::hook_context(ctx),
        },
        wit::ExpertsCommand::Due(at) => C::Due(at),
        wit::ExpertsCommand::Function((name, inputs_json, ctx)) => C::Function {
            name,
            inputs_json,
            ctx: super::context::hook_context(ctx),
        },
        wit::ExpertsCommand::Install(source) => C::Install(match source {
            wit::InstallSource::Directory(name) => api::InstallSource::Directory(name),
            wit::InstallSource::Archive((name, bytes)) => api::InstallSource::Archive(name, bytes),
        }),
        wit::ExpertsCommand::Bind((expert, tool, server)) => C::Bind {
            expert,
            tool,
            server,
        },
        wit::ExpertsCommand::Remove(name) => C::Remove(name),
        // Not the command's Debug text: every command's was 4 KB of the component, for this alone.
        _ => unreachable!("a session command is mapped in run-command"),
    }
}
