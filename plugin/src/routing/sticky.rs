//! Layer 4, stickiness: when no keyword matched, the previous turn's rule again for a short
//! follow-up or a prompt that starts with a continuation signal.

use super::model::Rule;
use crate::config::StickySettings;
use crate::decision::Decision;
use crate::text;

/// The continuation signals as prompts are matched: normalized, empty ones dropped.
pub(super) fn continuation_signals(sticky: &StickySettings) -> Vec<String> {
    sticky
        .continuation_signals
        .iter()
        .map(|s| text::normalize(s))
        .filter(|s| !s.is_empty())
        .collect()
}

/// The previous turn's rule (`previous`, resolved) when this prompt follows it up, marked sticky in
/// the decision; else why no pack.
pub(super) fn follow_up(
    rules: &[Rule],
    previous: Option<usize>,
    normalized: &str,
    sticky: &StickySettings,
    signals: &[String],
    decision: &mut Decision,
) -> Result<usize, String> {
    let Some(rule) = previous.filter(|_| sticky.enabled) else {
        return Err("no rule's keywords matched".to_string());
    };
    let short = text::word_count(normalized) < sticky.max_words;
    let continues = signals.iter().any(|signal| {
        normalized.starts_with(signal.as_str())
            && text::on_word_boundaries(normalized, 0, signal.len())
    });
    if !(short || continues) {
        return Err(
            "no rule's keywords matched, and the prompt is not a short follow-up".to_string(),
        );
    }
    decision.sticky = true;
    decision.trace.push(format!(
        "no keyword matched; follow-up to the previous turn's {}: sticky",
        rules[rule].id
    ));
    Ok(rule)
}
