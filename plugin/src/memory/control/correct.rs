//! A correction: an episode naming the fact that is no longer true and what is true now, from
//! which Graphiti decides whether the old fact is superseded. Memory control finds the fact and
//! words the episode; the engine stores it as any text to remember, and the outcome is said here.

use super::context::Context;
use super::error::ControlError;
use super::forget::{GRAPHITI_TIMEOUT, request_of, text_of};
use crate::memory::graphiti::http::Deadline;
use crate::memory::redaction::Query;
use crate::platform::api::{CommandOutput, HookContext};
use crate::platform::text::one_line;
use serde_json::Value;

/// A correction worded, for the engine to store as an episode.
pub struct Correction<'c> {
    /// The chat it is stored for.
    pub ctx: &'c HookContext,
    /// The episode's text.
    pub text: String,
    /// What the old fact says.
    named: String,
    /// The chat's current fact it names, when one matched.
    fact: Option<Value>,
}

impl Correction<'_> {
    /// The episode source of a correction.
    pub const SOURCE: &'static str = "correction (graphiti-openclaw)";

    /// What storing the correction (`stored`) says, with what it corrects.
    pub fn reported(&self, mut stored: CommandOutput) -> CommandOutput {
        if stored.exit_code == 0 {
            let which = self.fact.as_ref().map_or_else(
                || {
                    "no current fact of this chat matched it, so the correction names it as said"
                        .to_string()
                },
                |f| format!("fact {}", text_of(f, "uuid")),
            );
            stored.stdout = format!(
                "Recorded a correction of {:?} ({which}): Graphiti compares it with what it holds \
                 and marks the old fact no longer true when it agrees. `memories` shows the \
                 outcome; a fact still current afterwards can be forgotten.\n{}",
                self.named, stored.stdout
            );
        }
        stored
    }
}

/// Words the correction that what `old` says is no longer true and `now_true` is, naming the fact
/// of the chat's memories `old` finds: Graphiti compares the episode with what it holds and marks
/// the old fact no longer true when it agrees.
pub fn correct<'c>(
    cx: &mut Context,
    old: &str,
    now_true: &str,
    ctx: &'c HookContext,
) -> Result<Correction<'c>, CommandOutput> {
    let (old, now_true) = (old.trim(), now_true.trim());
    if old.is_empty() || now_true.is_empty() {
        return Err(ControlError::Unusable(
            "a correction needs what is no longer true (the words of the old fact) and what is \
             true now"
                .into(),
        )
        .output());
    }
    let group = cx
        .group(ctx)
        .map_err(|why| why.output_for("not corrected"))?;
    let request = request_of(old, ctx);
    let deadline = Deadline::after(GRAPHITI_TIMEOUT);
    let query = Query::new(old, &cx.settings.capture.redact);
    let (client, http) = cx.graphiti();
    let found = client.search_facts(http, &query, &group, 10, deadline);
    cx.save_graphiti_session();
    // The current fact that has most of the request's words, among those that match it well.
    let fact = found.ok().and_then(|facts| {
        facts
            .into_iter()
            .filter(|f| text_of(f, "invalid_at").is_empty())
            .map(|f| (request.matched_in(text_of(&f, "fact")).len(), f))
            .filter(|(matched, _)| request.matches_well(*matched))
            .rev()
            .max_by_key(|(matched, _)| *matched)
            .map(|(_, f)| f)
    });
    let named = fact
        .as_ref()
        .map_or_else(|| one_line(old), |f| one_line(text_of(f, "fact")));
    Ok(Correction {
        ctx,
        text: format!("Correction: \"{named}\" is no longer true. What is true now: {now_true}"),
        named,
        fact,
    })
}
