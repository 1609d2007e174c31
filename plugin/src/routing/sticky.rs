//! Layer 4, stickiness: when no keyword matched, the previous turn's rule again for a short
//! follow-up or a prompt that starts with a continuation signal, unless the pack has expired (older
//! than the time window, or carried for too many turns in a row) or, in strict mode, the short
//! prompt names an entity the pack's turns did not. The time is the turn's input, never a clock.

use super::model::{PreviousTurn, Rule};
use super::names::Name;
use crate::config::StickySettings;
use crate::platform::text;
use crate::routing::decision::Decision;

/// The continuation signals as prompts are matched: normalized, empty ones dropped.
pub(super) fn continuation_signals(sticky: &StickySettings) -> Vec<String> {
    sticky
        .continuation_signals
        .iter()
        .map(|s| text::normalize(s))
        .filter(|s| !s.is_empty())
        .collect()
}

/// This turn as stickiness judges it.
pub(super) struct FollowUp<'a> {
    pub(super) normalized: &'a str,
    pub(super) now_ms: u64,
    /// The names this prompt mentions (`names::named_in`).
    pub(super) named: &'a [Name],
}

/// The previous turn's rule (`previous`, resolved, with what the state kept of that turn) when this
/// prompt follows it up, marked sticky in the decision, with the number of turns in a row that
/// carried it, this one included; else why no pack.
pub(super) fn follow_up(
    rules: &[Rule],
    previous: Option<(usize, PreviousTurn)>,
    turn: &FollowUp,
    sticky: &StickySettings,
    signals: &[String],
    decision: &mut Decision,
) -> Result<(usize, u32), String> {
    let Some((rule, before)) = previous.filter(|_| sticky.enabled) else {
        return Err("no rule's keywords matched".to_string());
    };
    let short = text::word_count(turn.normalized) < sticky.max_words;
    let continues = signals.iter().any(|signal| {
        turn.normalized.starts_with(signal.as_str())
            && text::on_word_boundaries(turn.normalized, 0, signal.len())
    });
    if !(short || continues) {
        return Err(
            "no rule's keywords matched, and the prompt is not a short follow-up".to_string(),
        );
    }
    let id = &rules[rule].id;
    let age = within_window(id, before.injected_at_ms, turn.now_ms, sticky)?;
    let carried = before.carried_turns.unwrap_or(0);
    if sticky.max_carried_turns > 0 && carried >= sticky.max_carried_turns {
        return Err(format!(
            "no keyword matched; previous pack {id} already carried over {carried} turns in a row \
             (max_carried_turns {}): not carried",
            sticky.max_carried_turns
        ));
    }
    // An explicit continuation signal is the user saying it continues: the strict test is for the
    // short-prompt rule only, which any short statement passes.
    if sticky.strict_follow_up && !continues {
        strict(id, before.named.unwrap_or_default(), turn.named)?;
    }
    decision.sticky = true;
    decision.trace.push(format!(
        "no keyword matched; follow-up to the previous turn's {id} ({}, {age}; carried turn {}{}): sticky",
        if continues { "continuation signal" } else { "short" },
        carried + 1,
        match sticky.max_carried_turns {
            0 => String::new(),
            max => format!(" of at most {max}"),
        },
    ));
    Ok((rule, carried + 1))
}

/// How long ago the pack was injected, when that is within the window; else why not carried.
fn within_window(
    id: &str,
    injected_at_ms: Option<u64>,
    now_ms: u64,
    sticky: &StickySettings,
) -> Result<String, String> {
    let window = sticky.max_age_minutes;
    let Some(at) = injected_at_ms else {
        if window == 0 {
            return Ok("injected at an unknown time, no time window".into());
        }
        return Err(format!(
            "no keyword matched; previous pack {id} was injected at an unknown time (session \
             state from an older version), so it cannot be within the {window} min window: not carried"
        ));
    };
    // A clock that went back (another host, an adjusted clock) counts as no time passed.
    let age_ms = now_ms.saturating_sub(at);
    let ago = format!("injected {} ago", duration(age_ms));
    if window == 0 {
        return Ok(format!("{ago}, no time window"));
    }
    if age_ms > window.saturating_mul(60_000) {
        return Err(format!(
            "no keyword matched; previous pack {id} {ago} > {window} min window: not carried"
        ));
    }
    Ok(format!("{ago}, within the {window} min window"))
}

/// Strict mode: a prompt naming what the pack's turns did not name is not a follow-up.
fn strict(id: &str, before: &[String], named: &[Name]) -> Result<(), String> {
    let new: Vec<&str> = named
        .iter()
        .filter(|n| !before.contains(&n.key))
        .map(|n| n.shown.as_str())
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    Err(format!(
        "no keyword matched; the prompt names {}, which previous pack {id}'s turns did not \
         (strict_follow_up): not a follow-up, not carried",
        new.join(", ")
    ))
}

/// A duration as a person reads it: seconds, minutes, or hours and minutes.
fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..60 => format!("{secs} s"),
        60..7200 => format!("{} min", secs / 60),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}
