//! Layer 3, deciding among candidates: those below their `min_confidence` drop out, the unique
//! highest score wins, a tie means no pack.

use super::model::{Line, Rule, show};
use super::scoring::Scored;

/// The winning rule's index, or why no pack: threshold, unique highest, tie → none.
pub(super) fn winner(
    rules: &[Rule],
    scored: &[Scored],
    trace: &mut Vec<String>,
) -> Result<usize, String> {
    let eligible = eligible(rules, scored, trace);
    if eligible.is_empty() {
        return Err(if scored.iter().all(|s| s.suppressed_by.is_some()) {
            "every matching rule was suppressed by an entity boost".to_string()
        } else {
            "no matching rule reached its min confidence".to_string()
        });
    }
    unique_highest(rules, &eligible, trace)
}

/// Candidates not suppressed and at or above their rule's min confidence.
fn eligible<'a>(rules: &[Rule], scored: &'a [Scored], trace: &mut Vec<String>) -> Vec<&'a Scored> {
    let mut eligible: Vec<&Scored> = Vec::new();
    for s in scored.iter().filter(|s| s.suppressed_by.is_none()) {
        let rule = &rules[s.rule];
        if s.score >= rule.min_confidence {
            eligible.push(s);
        } else {
            trace.push(format!(
                "{}: score {} below min confidence {}",
                rule.id,
                show(s.score),
                show(rule.min_confidence)
            ));
        }
    }
    eligible
}

fn unique_highest(
    rules: &[Rule],
    eligible: &[&Scored],
    trace: &mut Vec<String>,
) -> Result<usize, String> {
    let best = eligible.iter().map(|s| s.score).max().unwrap_or_default();
    let top: Vec<&str> = eligible
        .iter()
        .filter(|s| s.score == best)
        .map(|s| rules[s.rule].id.as_str())
        .collect();
    if top.len() > 1 {
        return Err(format!(
            "tie at {} between {}: ambiguous, no pack",
            show(best),
            top.join(", ")
        ));
    }
    let winner = eligible
        .iter()
        .find(|s| s.score == best)
        .map(|s| s.rule)
        .unwrap_or_default();
    let runner_up = eligible
        .iter()
        .filter(|s| s.rule != winner)
        .map(|s| s.score)
        .max();
    let line = Line::new().text("winner: ").text(&rules[winner].id);
    trace.push(
        match runner_up {
            Some(next) => line
                .text(" (")
                .score(best)
                .text(" over ")
                .score(next)
                .text(")"),
            None => line.text(" (").score(best).text(")"),
        }
        .done(),
    );
    Ok(winner)
}
