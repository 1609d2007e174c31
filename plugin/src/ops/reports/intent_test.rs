//! `intent-test`: the candidates, the trace, the decision and what would be injected.

use super::{NONE, success, table};
use crate::memory::recall::Recall;
use crate::platform::api::{CommandOutput, IntentTestRequest, OutputFormat};
use crate::platform::time;
use crate::routing::decision::{Candidate, Decision, Injection};
use serde_json::json;
use std::fmt::Write;

pub fn render_intent_test(
    request: &IntentTestRequest,
    injection: &Injection,
    format: OutputFormat,
) -> CommandOutput {
    if format == OutputFormat::Json {
        let value = json!({
            "prompt": request.prompt,
            "group_chat": request.group_chat,
            "previous_pack": request.previous_pack,
            "now_ms": request.now_ms,
            "previous_at_ms": request.previous_at_ms,
            "carried_turns": request.carried_turns,
            "previous_prompt": request.previous_prompt,
            "decision": injection.decision,
            "prepend_context": injection.prepend_context,
            "notes": injection.notes,
        });
        return success(serde_json::to_string_pretty(&value).unwrap_or_default() + "\n");
    }
    let d = &injection.decision;
    let mut out = header(request);
    if d.candidates.is_empty() {
        out.push_str("No rule matched.\n");
    } else {
        out.push_str(&candidates(d));
    }
    out.push_str("\nTrace:\n");
    for (i, step) in d.trace.iter().enumerate() {
        let _ = writeln!(out, "  {:>2}. {step}", i + 1);
    }
    decision(&mut out, d);
    for skipped in &d.skipped_packs {
        let _ = writeln!(out, "Skipped: {}: {}", skipped.pack, skipped.reason);
    }
    for note in &injection.notes {
        let _ = writeln!(out, "Note: {note}");
    }
    match &injection.prepend_context {
        Some(block) => {
            let _ = writeln!(out, "\nWould inject:\n{block}");
        }
        None => out.push_str("\nWould inject: nothing\n"),
    }
    success(out)
}

/// The prompt, the chat, the previous pack and how much recall data came with it.
fn header(request: &IntentTestRequest) -> String {
    let mut out = String::new();
    let recall = request
        .recall_json
        .as_deref()
        .and_then(|j| Recall::from_json(j).ok())
        .unwrap_or_default();
    let _ = writeln!(out, "intent-test: {:?}", request.prompt);
    let _ = writeln!(
        out,
        "chat: {}   previous pack: {}   recall: {} nodes, {} facts",
        if request.group_chat {
            "group"
        } else {
            "direct"
        },
        request.previous_pack.as_deref().unwrap_or(NONE),
        recall.nodes.len(),
        recall.facts.len()
    );
    if let Some(now) = request.now_ms {
        let _ = write!(out, "now: {}", time::iso8601(now));
        if request.previous_pack.is_some() {
            let at = request.previous_at_ms.unwrap_or(now);
            let carried = request.carried_turns.unwrap_or(0);
            let _ = write!(
                out,
                "   previous pack injected: {}   carried turns: {carried}",
                time::iso8601(at)
            );
        }
        out.push('\n');
    }
    if let Some(previous) = &request.previous_prompt {
        let _ = writeln!(out, "previous prompt: {previous:?}");
    }
    out.push('\n');
    out
}

/// One row per candidate rule: its keywords, scores and what became of it.
fn candidates(d: &Decision) -> String {
    let rows: Vec<[String; 8]> = d
        .candidates
        .iter()
        .map(|c| {
            [
                c.intent.clone(),
                c.pack_type.clone(),
                c.keywords.join(", "),
                format!("{:.2}", c.keyword_score),
                format!("+{:.2}", c.score - c.keyword_score),
                format!("{:.2}", c.score),
                format!("{:.2}", c.min_confidence),
                status(c, d.intent.as_deref()),
            ]
        })
        .collect();
    table(
        &[
            "RULE",
            "PACK TYPE",
            "KEYWORDS",
            "KW",
            "BOOST",
            "SCORE",
            "MIN",
            "STATUS",
        ],
        &rows,
    )
}

fn decision(out: &mut String, d: &Decision) {
    out.push_str("\nDecision: ");
    match (&d.intent, &d.primary_pack) {
        (Some(intent), Some(pack)) => {
            let _ = write!(out, "inject {intent} → pack {pack}");
            if d.sticky {
                out.push_str(" (sticky)");
            }
            if !d.additional_packs.is_empty() {
                let _ = write!(out, " + {}", d.additional_packs.join(" + "));
            }
            out.push('\n');
        }
        _ => {
            let _ = writeln!(
                out,
                "no pack ({})",
                d.no_pack_reason.as_deref().unwrap_or("no reason given")
            );
        }
    }
}

fn status(candidate: &Candidate, winner: Option<&str>) -> String {
    if let Some(by) = &candidate.suppressed_by {
        format!("suppressed by {by}")
    } else if winner == Some(candidate.intent.as_str()) {
        "WINNER".into()
    } else if candidate.score < candidate.min_confidence {
        "below min".into()
    } else {
        "not chosen".into()
    }
}
