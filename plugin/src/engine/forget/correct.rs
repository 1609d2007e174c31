//! A correction: an episode naming the fact that is no longer true and what is true now, from
//! which Graphiti decides whether the old fact is superseded.

use super::rank::text_of;
use super::{GRAPHITI_TIMEOUT, request_of};
use crate::engine::Engine;
use crate::memory::graphiti::http::Deadline;
use crate::memory::redaction::Query;
use crate::ops::reports;
use crate::platform::api::{CommandOutput, HookContext};

/// The episode source of a correction.
const CORRECTION_SOURCE: &str = "correction (graphiti-openclaw)";

impl Engine {
    /// Records that what `old` says is no longer true and `now_true` is, naming the fact of the
    /// chat's memories `old` finds: Graphiti compares the episode with what it holds and marks the
    /// old fact no longer true when it agrees.
    pub(in crate::engine) fn correct(
        &mut self,
        old: &str,
        now_true: &str,
        ctx: &HookContext,
    ) -> CommandOutput {
        self.ensure_loaded();
        let (old, now_true) = (old.trim(), now_true.trim());
        if old.is_empty() || now_true.is_empty() {
            return reports::failure(
                2,
                "a correction needs what is no longer true (the words of the old fact) and what \
                 is true now",
            );
        }
        let group = match self.memory_group(ctx) {
            Ok(group) => group,
            Err(why) => return reports::failure(1, format!("not corrected: {why}")),
        };
        let request = request_of(old, ctx);
        let deadline = Deadline::after(GRAPHITI_TIMEOUT);
        let query = Query::new(old, &self.config.settings.capture.redact);
        let (client, http) = self.graphiti();
        let found = client.search_facts(http, &query, &group, 10, deadline);
        let mut notes = Vec::new();
        self.save_graphiti_session(&mut notes);
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
        let named = fact.as_ref().map_or_else(
            || crate::platform::text::one_line(old),
            |f| crate::platform::text::one_line(text_of(f, "fact")),
        );
        let text =
            format!("Correction: \"{named}\" is no longer true. What is true now: {now_true}");
        let mut out = self.ingest(&text, Some(CORRECTION_SOURCE), ctx);
        if out.exit_code == 0 {
            let which = fact.as_ref().map_or_else(
                || {
                    "no current fact of this chat matched it, so the correction names it as said"
                        .to_string()
                },
                |f| format!("fact {}", text_of(f, "uuid")),
            );
            out.stdout = format!(
                "Recorded a correction of {named:?} ({which}): Graphiti compares it with what it \
                 holds and marks the old fact no longer true when it agrees. `memories` shows \
                 the outcome; a fact still current afterwards can be forgotten.\n{}",
                out.stdout
            );
        }
        out
    }
}
