//! Operator commands, rendered here so every host prints the same: `intent-test`, `lint-rules`, `eval`,
//! `check-config`.

use crate::api::{CommandOutput, ConfigResult, IntentTestRequest, OutputFormat, TickReport};
use crate::decision::{Candidate, Injection};
use crate::recall::Recall;
use crate::routing::{RouteInput, Router};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Two rules sharing more than this fraction of the smaller rule's keywords are ambiguous by design.
const MAX_KEYWORD_OVERLAP: f64 = 0.5;
const NONE: &str = "none";

pub fn failure(exit_code: u8, message: impl Into<String>) -> CommandOutput {
    CommandOutput {
        exit_code,
        stdout: String::new(),
        stderr: message.into() + "\n",
    }
}

fn success(stdout: String) -> CommandOutput {
    CommandOutput {
        exit_code: 0,
        stdout,
        stderr: String::new(),
    }
}

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
            "decision": injection.decision,
            "prepend_context": injection.prepend_context,
            "notes": injection.notes,
        });
        return success(serde_json::to_string_pretty(&value).unwrap_or_default() + "\n");
    }
    let d = &injection.decision;
    let mut out = String::new();
    let recall = request
        .recall_json
        .as_deref()
        .and_then(|j| Recall::from_json(j).ok())
        .unwrap_or_default();
    let _ = writeln!(out, "intent-test: {:?}", request.prompt);
    let _ = writeln!(
        out,
        "chat: {}   previous pack: {}   recall: {} nodes, {} facts\n",
        if request.group_chat {
            "group"
        } else {
            "direct"
        },
        request.previous_pack.as_deref().unwrap_or(NONE),
        recall.nodes.len(),
        recall.facts.len()
    );
    if d.candidates.is_empty() {
        out.push_str("No rule matched.\n");
    } else {
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
        out.push_str(&table(
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
        ));
    }
    out.push_str("\nTrace:\n");
    for (i, step) in d.trace.iter().enumerate() {
        let _ = writeln!(out, "  {:>2}. {step}", i + 1);
    }
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

/// A plain left-aligned table.
fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    out
}

pub fn check_config(result: ConfigResult) -> CommandOutput {
    match result {
        Ok(summary) => {
            let mut out = format!(
                "configuration OK: {} rules, {} packs, {} composition rules\n",
                summary.rules, summary.packs, summary.composition_rules
            );
            for file in &summary.files {
                let _ = writeln!(out, "  read {file}");
            }
            for warning in &summary.warnings {
                let _ = writeln!(out, "  warning: {warning}");
            }
            success(out)
        }
        Err(failure) => {
            let mut err = format!("configuration has {} error(s):\n", failure.errors.len());
            for e in &failure.errors {
                let _ = writeln!(err, "  {e}");
            }
            for line in &failure.in_force {
                let _ = writeln!(err, "{line}");
            }
            CommandOutput {
                exit_code: 1,
                stdout: String::new(),
                stderr: err,
            }
        }
    }
}

/// PRD keyword coverage audit: no two rules may share more than half of their keywords.
pub fn lint_rules(router: &Router) -> CommandOutput {
    let mut problems = Vec::new();
    let mut notices = Vec::new();
    for (i, a) in router.rules.iter().enumerate() {
        for b in &router.rules[i + 1..] {
            let shared: Vec<&String> = a
                .keywords
                .iter()
                .filter(|k| b.keywords.contains(k))
                .collect();
            let smaller = a.keywords.len().min(b.keywords.len()).max(1);
            let overlap = shared.len() as f64 / smaller as f64;
            if overlap > MAX_KEYWORD_OVERLAP {
                problems.push(format!(
                    "{} and {} share {} of {} keywords ({:.0}%): {}",
                    a.id,
                    b.id,
                    shared.len(),
                    smaller,
                    overlap * 100.0,
                    shared
                        .iter()
                        .map(|k| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            // Rasa's check: a keyword inside another rule's keyword makes both match.
            for ka in &a.keywords {
                for kb in &b.keywords {
                    if ka != kb && (kb.contains(ka.as_str()) || ka.contains(kb.as_str())) {
                        notices.push(format!(
                            "{}'s {ka:?} and {}'s {kb:?} overlap as text",
                            a.id, b.id
                        ));
                    }
                }
            }
        }
    }
    let mut out = String::new();
    for n in &notices {
        let _ = writeln!(out, "notice: {n}");
    }
    if problems.is_empty() {
        let _ = writeln!(
            out,
            "lint-rules: {} rules, no pair shares more than 50% of its keywords",
            router.rules.len()
        );
        success(out)
    } else {
        let mut err = String::new();
        for p in &problems {
            let _ = writeln!(err, "overlap: {p}");
        }
        let _ = writeln!(
            err,
            "lint-rules: {} rule pair(s) share more than 50% of their keywords",
            problems.len()
        );
        CommandOutput {
            exit_code: 1,
            stdout: out,
            stderr: err,
        }
    }
}

struct EvalCase {
    id: String,
    prompt: String,
    expected: String,
    recall: Recall,
    group_chat: bool,
    previous: Option<String>,
}

fn parse_cases(text: &str) -> Result<Vec<EvalCase>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("cases file is not JSON: {e}"))?;
    let list = match &value {
        Value::Array(list) => list,
        Value::Object(o) => o
            .get("cases")
            .and_then(Value::as_array)
            .ok_or("cases file: expected a list or {\"cases\": [...]}")?,
        _ => return Err("cases file: expected a list or {\"cases\": [...]}".into()),
    };
    list.iter()
        .enumerate()
        .map(|(i, case)| {
            let field = |k: &str| case.get(k);
            let prompt = field("prompt")
                .or(field("query"))
                .and_then(Value::as_str)
                .ok_or(format!(
                    "cases[{i}]: needs a \"prompt\" (or \"query\") string"
                ))?;
            let expected = match field("expected_pack_type").or(field("expected")) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) => NONE.into(),
                _ => {
                    return Err(format!(
                        "cases[{i}]: needs \"expected_pack_type\": a pack type or null"
                    ));
                }
            };
            let recall = match field("recall") {
                Some(r) => {
                    Recall::from_json(&r.to_string()).map_err(|e| format!("cases[{i}]: {e}"))?
                }
                None => Recall::default(),
            };
            Ok(EvalCase {
                id: field("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("#{}", i + 1)),
                prompt: prompt.into(),
                expected,
                recall,
                group_chat: field("group_chat")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                previous: field("previous_pack")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
        })
        .collect()
}

/// Shadow-compare: each case's expected pack type (or none) against what routing picks.
pub fn eval(router: &Router, cases_json: &str, threshold: f64) -> CommandOutput {
    if !(0.0..=1.0).contains(&threshold) {
        return failure(
            2,
            format!("threshold must be between 0 and 1, not {threshold}"),
        );
    }
    let cases = match parse_cases(cases_json) {
        Ok(cases) if cases.is_empty() => return failure(2, "cases file has no cases"),
        Ok(cases) => cases,
        Err(e) => return failure(2, e),
    };
    let mut confusion: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut misses = Vec::new();
    for case in &cases {
        let routed = router.route(&RouteInput {
            prompt: &case.prompt,
            recall: &case.recall,
            group_chat: case.group_chat,
            previous: case.previous.as_deref(),
        });
        let predicted = match (&routed.pack_context, &routed.decision.intent) {
            (Some(_), Some(intent)) => router
                .rule(intent)
                .map(|r| r.pack_type.clone())
                .unwrap_or_else(|| NONE.into()),
            _ => NONE.into(),
        };
        if predicted != case.expected {
            misses.push(format!(
                "{}: expected {}, got {} ({}): {:?}",
                case.id,
                case.expected,
                predicted,
                routed
                    .decision
                    .no_pack_reason
                    .as_deref()
                    .unwrap_or("routed"),
                case.prompt
            ));
        }
        *confusion
            .entry((case.expected.clone(), predicted))
            .or_default() += 1;
    }
    let correct = cases.len() - misses.len();
    let accuracy = correct as f64 / cases.len() as f64;

    let mut labels: Vec<String> = confusion
        .keys()
        .flat_map(|(e, p)| [e.clone(), p.clone()])
        .collect();
    labels.sort();
    labels.dedup();
    let mut out = format!(
        "eval: {correct}/{} correct, accuracy {:.1}% (threshold {:.1}%)\n\n",
        cases.len(),
        accuracy * 100.0,
        threshold * 100.0
    );
    out.push_str("confusion (rows: expected, columns: predicted)\n");
    let width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(4)
        .max(8);
    let _ = write!(out, "{:<width$}", "");
    for l in &labels {
        let _ = write!(out, "  {l:>width$}");
    }
    out.push('\n');
    for expected in &labels {
        let _ = write!(out, "{expected:<width$}");
        for predicted in &labels {
            let n = confusion
                .get(&(expected.clone(), predicted.clone()))
                .copied()
                .unwrap_or(0);
            let _ = write!(out, "  {n:>width$}");
        }
        out.push('\n');
    }
    if !misses.is_empty() {
        out.push_str("\nmisses:\n");
        for m in &misses {
            let _ = writeln!(out, "  {m}");
        }
    }
    if accuracy + 1e-12 < threshold {
        let stderr = format!(
            "eval: accuracy {:.1}% is below the threshold {:.1}%\n",
            accuracy * 100.0,
            threshold * 100.0
        );
        CommandOutput {
            exit_code: 1,
            stdout: out,
            stderr,
        }
    } else {
        success(out)
    }
}

/// Share of turns above which a pack's keywords are probably too broad (PRD post-deploy monitoring).
const BROAD_PACK_RATE: f64 = 0.30;
/// Fewer turns than this say nothing about a rate.
const TURNS_TO_JUDGE_RATES: u64 = 20;

/// The spool's entries by state, for `status`.
pub struct SpoolCounts {
    pub queued: usize,
    pub in_doubt: usize,
    pub set_aside: usize,
}

pub fn render_status(
    graphiti: &crate::config::GraphitiSettings,
    config: &[String],
    health: Result<String, String>,
    stats: &crate::stats::Stats,
    spool: SpoolCounts,
    retry_in_ms: Option<u64>,
) -> CommandOutput {
    let mut out = String::new();
    let reach = match &health {
        Ok(status) => format!("reachable ({status})"),
        Err(e) => format!("UNREACHABLE: {e}"),
    };
    let _ = writeln!(
        out,
        "graphiti: {} {} — {reach}",
        graphiti.transport.name(),
        graphiti.url
    );
    for line in config {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "recall:   {} turns, {} recalled, {} fallbacks, {} skipped",
        stats.turns, stats.recalls, stats.recall_fallbacks, stats.recalls_skipped
    );
    let _ = writeln!(
        out,
        "capture:  {} spooled, {} sent, {} skipped, {} dropped, {} send failures",
        stats.captures_spooled,
        stats.episodes_sent,
        stats.captures_skipped,
        stats.captures_dropped,
        stats.send_failures
    );
    if stats.sends_in_doubt + stats.set_aside > 0 {
        let _ = writeln!(
            out,
            "delivery: {} sends in doubt ({} then found stored, {} sent again), {} set aside",
            stats.sends_in_doubt, stats.doubts_confirmed, stats.resent_after_doubt, stats.set_aside
        );
    }
    let waiting = match retry_in_ms {
        Some(ms) => format!(", backing off: next attempt in {:.1} s", ms as f64 / 1000.0),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "spool:    {} episodes waiting ({} in doubt), {} set aside{waiting}",
        spool.queued, spool.in_doubt, spool.set_aside
    );
    if spool.set_aside > 0 {
        let _ = writeln!(
            out,
            "          see graphiti-openclaw spool list; spool requeue puts them back"
        );
    }
    if let Some(e) = stats.current_error() {
        let _ = writeln!(
            out,
            "last error ({}): {e}",
            crate::time::iso8601(stats.last_error_at_ms)
        );
    }
    if let Some(note) = &stats.restarted {
        let _ = writeln!(out, "note: {note}");
    }
    let judged = stats.turns >= TURNS_TO_JUDGE_RATES;
    let rule = if judged {
        format!("flagged above {:.0}%", BROAD_PACK_RATE * 100.0)
    } else {
        format!(
            "flagged above {:.0}% from {TURNS_TO_JUDGE_RATES} turns on",
            BROAD_PACK_RATE * 100.0
        )
    };
    let _ = writeln!(out, "packs (share of {} turns; {rule}):", stats.turns);
    if stats.packs.is_empty() {
        out.push_str("  none injected yet\n");
    }
    for (pack, count) in &stats.packs {
        let rate = if stats.turns == 0 {
            0.0
        } else {
            *count as f64 / stats.turns as f64
        };
        let flag = if judged && rate > BROAD_PACK_RATE {
            "  ⚠ above 30%: keywords may be too broad"
        } else {
            ""
        };
        let _ = writeln!(out, "  {pack:<28} {count:>6}  {:>5.1}%{flag}", rate * 100.0);
    }
    CommandOutput {
        exit_code: if health.is_ok() { 0 } else { 1 },
        stdout: out,
        stderr: String::new(),
    }
}

/// `flush`: what was sent and what still waits; exit 1 unless the spool is empty.
pub fn render_flush(sent: u32, last: &TickReport, notes: &[String]) -> CommandOutput {
    let mut out = format!("sent {sent} episode(s); {} waiting", last.pending);
    if last.in_doubt > 0 {
        out += &format!(
            " ({} in doubt: sent, outcome unknown; not sent again until Graphiti is seen to lack them)",
            last.in_doubt
        );
    }
    out.push('\n');
    for note in notes {
        let _ = writeln!(out, "note: {note}");
    }
    let stderr = last
        .error
        .as_ref()
        .map(|e| format!("sending stopped: {e}\n"))
        .unwrap_or_default();
    CommandOutput {
        exit_code: u8::from(last.pending > 0),
        stdout: out,
        stderr,
    }
}
