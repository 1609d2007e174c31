//! What the user reads in the main session: results (`delivery.format`), failures, SLA breaches,
//! approval requests and drafts. Every text starts with one line naming the expert, the process and
//! the invocation, so a user can tell runs apart and act on one by its id.

use super::store::Invocation;
use crate::experts::package::{Delivery, DeliveryFormat};
use crate::experts::policy::format_duration;

/// `trip-planner-expert · plan-trip (inv-4, trigger trip_request)`.
pub fn title(inv: &Invocation) -> String {
    let what = match (inv.process.as_deref(), inv.dry_run) {
        (Some(process), true) => format!("{process}, a dry run"),
        (None, true) => "manual dry run".into(),
        (process, false) => process.unwrap_or("manual run").into(),
    };
    match &inv.trigger {
        Some(trigger) => format!("{} · {what} ({}, trigger {trigger})", inv.expert, inv.id),
        None => format!("{} · {what} ({})", inv.expert, inv.id),
    }
}

fn elapsed(inv: &Invocation, now_ms: u64) -> String {
    format_duration(now_ms.saturating_sub(inv.accepted_ms) / 1000)
}

/// The reply split into its narrative and its structured outputs (the last fenced `json` block).
pub fn split_reply(reply: &str) -> (String, Option<String>) {
    let Some(start) = reply.rfind("```json") else {
        return (reply.trim().to_string(), None);
    };
    let body_start = start + "```json".len();
    let Some(len) = reply[body_start..].find("```") else {
        return (reply.trim().to_string(), None);
    };
    let json = reply[body_start..body_start + len].trim();
    let narrative = format!("{}{}", &reply[..start], &reply[body_start + len + 3..]);
    (narrative.trim().to_string(), Some(json.to_string()))
}

/// A finished run's output in the delivery format (a manual run's reply is delivered whole).
pub fn result(inv: &Invocation, reply: &str, delivery: Option<&Delivery>, now_ms: u64) -> String {
    let head = format!(
        "{} finished in {} (attempt {}).",
        title(inv),
        elapsed(inv, now_ms),
        inv.attempts
    );
    let format = delivery.map_or(DeliveryFormat::Both, |d| d.format);
    let (narrative, outputs) = split_reply(reply);
    let outputs_block = |json: &str| format!("Outputs:\n```json\n{json}\n```");
    let body = match (format, outputs) {
        (DeliveryFormat::Narrative, _) => narrative,
        (DeliveryFormat::Structured, Some(json)) => outputs_block(&json),
        (DeliveryFormat::Structured, None) => {
            format!("(The run gave no structured outputs; its reply:)\n{narrative}")
        }
        (DeliveryFormat::Both, Some(json)) => format!("{narrative}\n\n{}", outputs_block(&json)),
        (DeliveryFormat::Both, None) => narrative,
    };
    format!("{head}\n\n{body}")
}

/// A dry run's result: the agent's planned-execution report, then every call it made that was not
/// executed, with what a real run would have done.
pub fn dry_run_result(inv: &Invocation, reply: &str, now_ms: u64) -> String {
    let mut text = format!(
        "{} finished in {} (attempt {}). Only AUTO operations were executed.\n\n{}\n\n",
        title(inv),
        elapsed(inv, now_ms),
        inv.attempts,
        reply.trim()
    );
    let skipped = inv
        .log
        .iter()
        .filter(|e| e.text.starts_with("dry run: "))
        .count();
    if skipped == 0 {
        text.push_str("Calls not executed: none.");
        return text;
    }
    text.push_str(&format!("Calls not executed ({skipped}):"));
    for (n, call) in inv.planned.iter().enumerate() {
        text.push_str(&format!(
            "\n{}. {} ({}) {}: a real run would {}",
            n + 1,
            call.operation,
            call.tier,
            call.arguments,
            call.would
        ));
    }
    if skipped > inv.planned.len() {
        text.push_str(&format!(
            "\n… and {} more, not kept",
            skipped - inv.planned.len()
        ));
    }
    text
}

/// An invocation that failed for good.
pub fn failed(inv: &Invocation, action: &str) -> String {
    let why = inv.outcome.as_deref().unwrap_or("it failed");
    let mut text = format!(
        "{} failed after {} attempt{} and is {action}: {why}.",
        title(inv),
        inv.attempts,
        if inv.attempts == 1 { "" } else { "s" }
    );
    if !inv.steps.is_empty() {
        text.push_str(&format!("\nSteps completed: {}.", inv.steps.join("; ")));
    }
    text.push_str(&context(inv));
    text.push_str(&format!("\nRun it again with `experts replay {}`.", inv.id));
    text
}

/// An escalation's inputs shown at most (characters): the user reads it in chat.
const MAX_CONTEXT_CHARS: usize = 2_000;

/// An escalation's context: the run's inputs, bounded (nothing when it has none).
fn context(inv: &Invocation) -> String {
    if inv.inputs.is_empty() {
        return String::new();
    }
    let inputs = serde_json::to_string_pretty(&inv.inputs).unwrap_or_default();
    let shown = crate::platform::text::truncate_chars(&inputs, MAX_CONTEXT_CHARS);
    let cut = if shown == inputs { "" } else { "\n(cut here)" };
    format!("\nContext (its inputs):\n```json\n{shown}{cut}\n```")
}

/// `on_timeout: escalate`: a CONFIRM call still waiting past the approval timeout.
pub fn approval_overdue(inv: &Invocation, operation: &str, request: &str) -> String {
    format!(
        "{} still waits for your approval of {operation}, past the approval timeout; the request \
         stays open.{}\nApprove it with `/experts approve {request}` (the run resumes and makes the \
         call once) or reject it with `/experts reject {request}`.",
        title(inv),
        context(inv)
    )
}

/// A run slower than its process's `sla`.
pub fn sla_breach(inv: &Invocation, sla_secs: u64, escalate: bool, now_ms: u64) -> String {
    format!(
        "{} {} its SLA of {}: {} since it was triggered{}.",
        title(inv),
        if inv.finished_ms.is_some() {
            "missed"
        } else {
            "is past"
        },
        format_duration(sla_secs),
        elapsed(inv, now_ms),
        if escalate {
            "; it needs your attention (sla_breach: escalate)"
        } else {
            ""
        }
    )
}

/// A CONFIRM call that waits for the user.
pub fn approval_request(
    inv: &Invocation,
    operation: &str,
    arguments: &str,
    request: &str,
    deadline: Option<&str>,
) -> String {
    let mut text = format!(
        "{} asks to run {operation} with {arguments}.\nApprove: `experts approve {request}` · reject: `experts reject {request}`.",
        title(inv)
    );
    if let Some(deadline) = deadline {
        text.push_str(&format!("\nThe request lapses at {deadline}."));
    }
    text.push_str("\nThe run is paused; on approval it resumes where it stopped.");
    text
}

/// Whether the run's structured outputs (its last `json` block) say `"confidence": "low"`, the
/// convention spec §6 gives functions that drive escalation.
pub fn low_confidence(reply: &str) -> bool {
    let (_, outputs) = split_reply(reply);
    outputs
        .and_then(|json| serde_json::from_str::<serde_json::Value>(&json).ok())
        .is_some_and(|outputs| outputs.get("confidence").and_then(|c| c.as_str()) == Some("low"))
}

/// A run whose own confidence is low, handed to the user instead of its result
/// (`policy.escalation.on_low_confidence`): which process and why, its context (the inputs), and
/// what the run recommends (its reply and outputs), as spec §3 lists.
pub fn low_confidence_escalation(inv: &Invocation, reply: &str) -> String {
    let (narrative, outputs) = split_reply(reply);
    let inputs = serde_json::to_string_pretty(&inv.inputs).unwrap_or_default();
    let judged = match &inv.low_confidence {
        Some(function) => format!("its function {function} judged its confidence low"),
        None => "the run judged its own confidence low".to_string(),
    };
    let mut text = format!(
        "{} needs you: {judged}, so its result was not acted on \
         (policy.escalation.on_low_confidence).\nContext (its inputs):\n```json\n{inputs}\n```\n\
         Recommended action: {}",
        title(inv),
        if narrative.is_empty() {
            "(the run gave none in words)"
        } else {
            &narrative
        }
    );
    if let Some(json) = outputs {
        text.push_str(&format!("\nOutputs:\n```json\n{json}\n```"));
    }
    text
}

/// A MANUAL call's draft, for the user to carry out by hand.
pub fn draft(inv: &Invocation, operation: &str, arguments: &str) -> String {
    format!(
        "{} prepared a draft for {operation} (manual: only you can carry it out):\n{arguments}",
        title(inv)
    )
}

#[cfg(test)]
mod tests {
    use super::split_reply;

    #[test]
    fn only_a_low_confidence_in_the_outputs_escalates() {
        use super::low_confidence;
        assert!(low_confidence(
            "Unsure.\n```json\n{\"confidence\": \"low\"}\n```"
        ));
        assert!(!low_confidence("```json\n{\"confidence\": \"high\"}\n```"));
        assert!(
            !low_confidence("My confidence is low."),
            "words are not outputs"
        );
        assert!(!low_confidence("```json\n[\"low\"]\n```"));
    }

    #[test]
    fn the_last_json_block_is_the_outputs() {
        let (n, o) = split_reply("Booked.\n```json\n{\"a\": 1}\n```\nBye.");
        assert_eq!(n, "Booked.\n\nBye.");
        assert_eq!(o.as_deref(), Some("{\"a\": 1}"));
        let (n, o) = split_reply("No outputs.");
        assert_eq!((n.as_str(), o), ("No outputs.", None));
        let (n, o) = split_reply("Broken ```json {");
        assert_eq!((n.as_str(), o), ("Broken ```json {", None));
    }
}
