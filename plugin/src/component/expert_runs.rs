//! The `experts` export: the expert runtime.

use super::Component;
use super::bindings::exports::graphiti::openclaw::experts::{self as wit, Guest};
use super::bindings::graphiti::openclaw::host;
use super::instance::with_engine;
use crate::platform::api;

impl Guest for Component {
    fn expert_webhook(request: wit::WebhookRequest, now_ms: u64) -> wit::WebhookAnswer {
        let request = webhook_request(request);
        webhook_answer(with_engine(|e| e.expert_webhook(&request, now_ms)))
    }

    fn expert_channel_message(message: wit::ChannelMessage, now_ms: u64) -> wit::RuntimeWork {
        let message = channel_message(message);
        work(with_engine(|e| e.expert_channel_message(&message, now_ms)))
    }

    fn expert_tick(now_ms: u64) -> wit::RuntimeWork {
        work(with_engine(|e| e.expert_tick(now_ms)))
    }

    fn expert_run_ended(report: wit::RunReport, now_ms: u64) -> wit::RuntimeWork {
        let report = run_report(report);
        work(with_engine(|e| e.expert_run_ended(&report, now_ms)))
    }

    fn expert_delivered(run_ids: Vec<String>, now_ms: u64) -> Result<(), String> {
        with_engine(|e| e.expert_delivered(&run_ids, now_ms))
    }
}

fn work(w: api::RuntimeWork) -> wit::RuntimeWork {
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

fn webhook_request(r: wit::WebhookRequest) -> api::WebhookRequest {
    api::WebhookRequest {
        path: r.path,
        headers: r.headers,
        body: r.body,
    }
}

fn webhook_answer(a: api::WebhookAnswer) -> wit::WebhookAnswer {
    wit::WebhookAnswer {
        status: a.status,
        body: a.body,
        work: work(a.work),
    }
}

fn channel_message(m: wit::ChannelMessage) -> api::ChannelMessage {
    api::ChannelMessage {
        channel_name: m.channel_name,
        sender_id: m.sender_id,
        message_text: m.message_text,
        chat_id: m.chat_id,
        session_key: m.session_key,
        command: m.command,
    }
}

fn run_report(r: wit::RunReport) -> api::RunReport {
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
