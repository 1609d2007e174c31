//! `eval`: shadow-compares each case's expected pack type with what routing picks.

use super::{NONE, failure, success};
use crate::memory::recall::Recall;
use crate::platform::api::CommandOutput;
use crate::routing::{PreviousTurn, RouteInput, Router};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Case counts by (expected, predicted) pack type.
type Confusion = BTreeMap<(String, String), usize>;

struct EvalCase {
    id: String,
    prompt: String,
    expected: String,
    recall: Recall,
    group_chat: bool,
    previous: Option<String>,
}

fn parse_cases(text: &str) -> Result<Vec<EvalCase>, String> {
    let value: Value = serde_json::from_slice(text.as_bytes())
        .map_err(|e| format!("cases file is not JSON: {e}"))?;
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
    let (confusion, misses) = score(router, &cases);
    let correct = cases.len() - misses.len();
    let accuracy = correct as f64 / cases.len() as f64;

    let mut out = format!(
        "eval: {correct}/{} correct, accuracy {:.1}% (threshold {:.1}%)\n\n",
        cases.len(),
        accuracy * 100.0,
        threshold * 100.0
    );
    out.push_str(&confusion_table(&confusion));
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

/// Each case routed: (expected, predicted) counts, and a line per miss.
fn score(router: &Router, cases: &[EvalCase]) -> (Confusion, Vec<String>) {
    let mut confusion: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut misses = Vec::new();
    for case in cases {
        let routed = router.route(&RouteInput {
            prompt: &case.prompt,
            recall: &case.recall,
            group_chat: case.group_chat,
            // A case's previous pack was injected the turn just before (no time passed).
            previous: case.previous.as_deref().map(|intent| PreviousTurn {
                intent,
                injected_at_ms: Some(0),
                carried_turns: Some(0),
                named: None,
            }),
            now_ms: 0,
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
    (confusion, misses)
}

/// The confusion matrix as text (rows: expected, columns: predicted).
fn confusion_table(confusion: &Confusion) -> String {
    let mut labels: Vec<String> = confusion
        .keys()
        .flat_map(|(e, p)| [e.clone(), p.clone()])
        .collect();
    crate::platform::sorting::sort(&mut labels);
    labels.dedup();
    let mut out = String::new();
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
    out
}
