//! The turn: before the agent starts, recall (within its budget) and routing, the record of what was
//! injected, and the experts' system context.

use super::Engine;
use super::recall_turn::RecallOutcome;
use crate::engine::turns::{self, TurnRecord};
use crate::experts::runs;
use crate::memory::recall::Recall;
use crate::memory::redaction;
use crate::platform::api::{self, ChatType, HookContext, PromptEvent};
use crate::platform::time;
use crate::routing::decision::{Decision, Injection};
use crate::routing::state::{self, SessionState};
use crate::routing::{PreviousTurn, RouteInput, Routed};

impl Engine {
    /// Recall and routing (the user's own words, outside expert runs), plus the experts' system
    /// context (any turn).
    pub fn before_agent_start(&mut self, event: &PromptEvent, ctx: &HookContext) -> Injection {
        // The turn's one reading of the host's clock: routing and the records take it as an input.
        let now_ms = time::now_ms();
        // Loaded first: the settings say which secrets to redact.
        self.ensure_loaded();
        let redacted = self.without_secrets(event);
        let event = redacted.as_ref().unwrap_or(event);
        let mut injection = self.recall_and_route(event, ctx, now_ms);
        let system = self.experts.sessions.for_turn(ctx, now_ms / 1000);
        injection.system_context = system.expert_prompt;
        injection.append_system_context = system.registry;
        injection.notes.extend(system.notes);
        injection
    }

    /// The event with the prompt's secrets replaced, when it has any: the prompt is searched for
    /// and kept in the turn's records.
    fn without_secrets(&self, event: &PromptEvent) -> Option<PromptEvent> {
        let redacted = redaction::redact(&event.prompt, &self.config.settings.capture.redact);
        (!redacted.replaced.is_empty()).then(|| PromptEvent {
            prompt: redacted.text,
            messages_json: event.messages_json.clone(),
        })
    }

    fn recall_and_route(
        &mut self,
        event: &PromptEvent,
        ctx: &HookContext,
        now_ms: u64,
    ) -> Injection {
        if !self.is_user_turn(ctx) {
            let reason = format!(
                "trigger {:?} is not a user turn",
                ctx.trigger.as_deref().unwrap_or_default()
            );
            return Injection {
                decision: Decision::none(reason),
                ..Injection::default()
            };
        }
        // A run's context is its inputs and its expert's state, never the user's memories or packs.
        let run = ctx
            .session_key
            .as_deref()
            .and_then(runs::invocation_of_session);
        if let Some(invocation) = run {
            let reason = format!(
                "the session of expert run {invocation}: no recall and no pack (its context is its \
                 inputs and its own state)"
            );
            return Injection {
                decision: Decision::none(reason),
                ..Injection::default()
            };
        }
        if let Some(why) = Self::not_users_input(ctx) {
            return self.record_not_users(event, ctx, now_ms, why);
        }
        let mut notes = Vec::new();
        let session_key = ctx.session_key.as_deref().or(ctx.session_id.as_deref());
        let previous = self.previous_turn(session_key, &mut notes);
        let mut relevance = Vec::new();
        let (memory_block, recall, outcome, searched_group) = match self.memory_group(ctx) {
            Ok(group) => {
                let (block, recall, outcome) =
                    self.recall_for_turn(event, &group, &mut notes, &mut relevance);
                let searched = (!matches!(outcome, RecallOutcome::Skipped)).then_some(group);
                (block, recall, outcome, searched)
            }
            Err(why) => {
                notes.push(format!("recall: skipped: {why}"));
                (None, Recall::default(), RecallOutcome::Skipped, None)
            }
        };
        let recall_summary = outcome.summary(&recall, &notes);
        let routed = self.route(event, ctx, &recall, previous.as_ref(), now_ms);
        self.remember_turn(session_key, previous.as_ref(), &routed, now_ms, &mut notes);
        self.count_turn(outcome, recall.facts.len() + recall.nodes.len(), &routed);
        notes.extend(routed.notes);
        let blocks: Vec<String> = memory_block
            .into_iter()
            .chain(routed.pack_context)
            .collect();
        let injection = Injection {
            prepend_context: (!blocks.is_empty()).then(|| blocks.join("\n\n")),
            decision: routed.decision,
            notes,
            ..Injection::default()
        };
        match session_key {
            Some(key) => {
                let recalled = (searched_group, recall_summary, relevance);
                self.record_turn(key, ctx, event, now_ms, recalled, injection)
            }
            None => injection,
        }
    }

    /// Why the turn's input is not the user's words, when it is not: OpenClaw classifies it as another
    /// session's or its own (`inputProvenance`), or it is this plugin's delivery (its run id).
    pub(super) fn not_users_input(ctx: &HookContext) -> Option<String> {
        let provenance = ctx.input_provenance.as_deref().map(str::trim);
        if let Some(kind) =
            provenance.filter(|k| !k.is_empty() && !k.eq_ignore_ascii_case("external_user"))
        {
            return Some(format!("input provenance {kind:?}: not the user's words"));
        }
        ctx.run_id
            .as_deref()
            .filter(|run| api::is_delivery_run(run))
            .map(|_| "a delivery of this plugin's expert runtime: not the user's words".into())
    }

    /// No recall and no routing (the session's routing state stays as the user's last turn left
    /// it); the record says why, for `debug` and for this turn's `agent-end`, which OpenClaw may not
    /// tell where the input came from.
    fn record_not_users(
        &mut self,
        event: &PromptEvent,
        ctx: &HookContext,
        now_ms: u64,
        why: String,
    ) -> Injection {
        let mut injection = Injection {
            decision: Decision::none(why.clone()),
            ..Injection::default()
        };
        let session_key = ctx.session_key.as_deref().or(ctx.session_id.as_deref());
        let (Some(dir), Some(key)) = (&self.host.state_dir, session_key) else {
            return injection;
        };
        let recall = "skipped: the input is not the user's".to_string();
        let mut record = TurnRecord::new(now_ms, key, &event.prompt, None, recall, &injection);
        record.not_users = Some(why);
        record.run_id = ctx.run_id.clone();
        if let Err(e) = turns::save(&mut self.turns.kept, dir, record) {
            injection.notes.push(e);
        }
        injection
    }

    /// What the session's previous turn injected (for stickiness); trouble reading it is a note.
    fn previous_turn(
        &mut self,
        session_key: Option<&str>,
        notes: &mut Vec<String>,
    ) -> Option<SessionState> {
        match (&self.host.state_dir, session_key) {
            (Some(dir), Some(key)) => {
                state::previous_turn(&mut self.routing.kept_sessions, dir, key).unwrap_or_else(
                    |e| {
                        notes.push(e);
                        None
                    },
                )
            }
            _ => None,
        }
    }

    /// Routing with the configuration in force; without one, no pack and the reason the load gave.
    fn route(
        &self,
        event: &PromptEvent,
        ctx: &HookContext,
        recall: &Recall,
        previous: Option<&SessionState>,
        now_ms: u64,
    ) -> Routed {
        let previous = previous.and_then(|p| {
            Some(PreviousTurn {
                intent: p.intent.as_deref()?,
                injected_at_ms: p.injected_at_ms,
                carried_turns: p.carried_turns,
                named: p.named.as_deref(),
            })
        });
        match self.config.in_force.router() {
            Some(router) => router.route(&RouteInput {
                prompt: &event.prompt,
                recall,
                group_chat: ctx.chat_type == ChatType::Group,
                previous,
                now_ms,
            }),
            // The load reported why; the decision says it, the turn's notes do not repeat it.
            None => Routed {
                decision: Decision::none(self.config.in_force.routing_off_reason()),
                ..Routed::default()
            },
        }
    }

    /// Remembers what this turn injected, when, and what stickiness needs of it, for the session's
    /// next turn.
    fn remember_turn(
        &mut self,
        session_key: Option<&str>,
        previous: Option<&SessionState>,
        routed: &Routed,
        now_ms: u64,
        notes: &mut Vec<String>,
    ) {
        if let (Some(dir), Some(key)) = (&self.host.state_dir, session_key) {
            let injected = routed
                .pack_context
                .as_ref()
                .and(routed.decision.intent.clone());
            let state = match injected {
                Some(intent) => SessionState {
                    session_key: key.into(),
                    intent: Some(intent),
                    injected_at_ms: Some(now_ms),
                    carried_turns: Some(routed.carried_turns),
                    // Kept only when strict_follow_up looks for names.
                    named: (!routed.named.is_empty()).then(|| routed.named.clone()),
                },
                None => SessionState::nothing(key),
            };
            if let Err(e) = state::remember(&mut self.routing.kept_sessions, dir, previous, &state)
            {
                notes.push(e);
            }
        }
    }

    fn count_turn(&mut self, outcome: RecallOutcome, recalled: usize, routed: &Routed) {
        let pack = routed
            .pack_context
            .as_ref()
            .and(routed.decision.primary_pack.clone());
        self.count_within(super::STATS_SAVE_IN_TURN_EVERY, |s| {
            s.turns += 1;
            match outcome {
                RecallOutcome::Recalled => s.recalls += 1,
                RecallOutcome::Fallback => s.recall_fallbacks += 1,
                RecallOutcome::Cached => s.recalls_cached += 1,
                RecallOutcome::Skipped => s.recalls_skipped += 1,
            }
            if matches!(outcome, RecallOutcome::Recalled | RecallOutcome::Cached) {
                s.recalled_items += recalled as u64;
            }
            if let Some(pack) = pack {
                *s.packs.entry(pack).or_default() += 1;
            }
        });
    }

    /// Saves the turn's record (what was recalled and injected, for `debug` and for capture to remove
    /// exactly this turn's blocks); trouble saving it is a note on the injection. `recalled`: the
    /// group searched, what recall did, and the relevance floor's explanation.
    fn record_turn(
        &mut self,
        session_key: &str,
        ctx: &HookContext,
        event: &PromptEvent,
        now_ms: u64,
        recalled: (Option<String>, String, Vec<String>),
        mut injection: Injection,
    ) -> Injection {
        let Some(dir) = &self.host.state_dir else {
            return injection;
        };
        let (searched_group, recall_summary, relevance) = recalled;
        let mut record = TurnRecord::new(
            now_ms,
            session_key,
            &event.prompt,
            searched_group,
            recall_summary,
            &injection,
        );
        record.relevance = relevance;
        record.conversation = Some(turns::RecordedConversation::of(ctx));
        if let Err(e) = turns::save(&mut self.turns.kept, dir, record) {
            injection.notes.push(e);
        }
        injection
    }
}
