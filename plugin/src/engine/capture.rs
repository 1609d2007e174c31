//! After the turn: the exchange captured (exactly this turn's injected blocks removed) and spooled, so
//! it is on disk when the hook returns.

use super::Engine;
use crate::engine::turn_history::{self, PastTurn};
use crate::engine::turns;
use crate::memory::control::Captured;
use crate::memory::graphiti::{Episode, EpisodeKind, speaker_name};
use crate::memory::spool::{self, Appended, Spool};
use crate::memory::{group_id, redaction};
use crate::platform::api::{self, AgentEndEvent, HookContext};
use crate::platform::time;
use crate::routing::decision::CaptureOutcome;

impl Engine {
    /// Captures the turn; its counts (this hook's and `before-agent-start`'s) are saved before it
    /// returns, since the process may end with the turn (`openclaw agent --local`, the CLI): a line
    /// of this instance's count log, without the `stats` lock (see [`crate::memory::stats::append_counts`]).
    pub fn agent_end(&mut self, event: &AgentEndEvent, ctx: &HookContext) -> CaptureOutcome {
        // It waits on nothing: the episode, its spool file and the count log share one reading.
        time::with_one_reading(|| self.capture_and_count(event, ctx))
    }

    fn capture_and_count(&mut self, event: &AgentEndEvent, ctx: &HookContext) -> CaptureOutcome {
        let outcome = self.capture(event, ctx);
        self.keep_in_history(ctx, &outcome);
        self.count(|s| match &outcome {
            CaptureOutcome::Skipped(_) => s.captures_skipped += 1,
            CaptureOutcome::Spooled { .. } => s.captures_spooled += 1,
            CaptureOutcome::Dropped(why) => {
                s.captures_dropped += 1;
                s.last_error = Some(why.clone());
                s.last_error_at_ms = time::now_ms();
            }
        });
        self.save_counts();
        outcome
    }

    fn capture(&mut self, event: &AgentEndEvent, ctx: &HookContext) -> CaptureOutcome {
        // Capture needs the settings only, never routing.
        self.ensure_loaded();
        // A turn that is not the user's may still carry the user's words: a message OpenClaw moved
        // into a delivery turn of this plugin, which left the transcript with it.
        let queued = match self.not_a_user_turn(event, ctx) {
            None => None,
            Some(why) => match Self::users_message_in_delivery(event, ctx) {
                Ok(Some(exchange)) => Some(exchange),
                Ok(None) => return CaptureOutcome::Skipped(why),
                Err(e) => return CaptureOutcome::Dropped(e),
            },
        };
        if let Some(why) = self.kept_from_memory(ctx) {
            return CaptureOutcome::Skipped(why);
        }
        let (user, assistant) = match queued {
            Some(exchange) => exchange,
            None => match self.users_exchange(event, ctx) {
                Ok(exchange) => exchange,
                Err(why) => return CaptureOutcome::Skipped(why),
            },
        };
        if self.too_short(&user) {
            return CaptureOutcome::Skipped(format!(
                "prompt shorter than {} characters",
                self.config.settings.skip.min_prompt_chars
            ));
        }
        let Some(state_dir) = &self.host.state_dir else {
            return CaptureOutcome::Dropped(
                "no state directory: the host mounted none, so nothing can be spooled".into(),
            );
        };
        let group_id = match self.memory_group(ctx) {
            Ok(group) => group,
            Err(why) => {
                return CaptureOutcome::Dropped(format!("{why}: this turn was NOT captured"));
            }
        };
        if let Some(why) = self.capture_paused(&group_id) {
            return CaptureOutcome::Skipped(why);
        }
        let [user, assistant] =
            redaction::redact_exchange(&[&user, &assistant], &self.config.settings.capture.redact)
                .map(|redacted| redacted.text);
        let episode = Episode {
            name: episode_name(ctx, &group_id, &user, &assistant),
            group_id: group_id.clone(),
            user: user.clone(),
            assistant: assistant.clone(),
            user_name: speaker_name(ctx.sender_name.as_deref(), ctx.sender_id.as_deref()),
            reference_time: time::iso8601(time::now_ms()),
            source_description: self.config.settings.capture.source_description.clone(),
            kind: EpisodeKind::Turn,
        };
        let capture = &self.config.settings.capture;
        let appended = Spool::new(state_dir)
            .synced_to_disk(capture.sync_to_disk)
            .append_counted(
                &episode,
                capture.spool_max_episodes,
                &mut self.memory.spool_depth,
            );
        match appended {
            Ok(Appended::Spooled) => CaptureOutcome::Spooled {
                user,
                assistant,
                episode: episode.name,
                group_id,
            },
            Ok(Appended::Full(depth)) => CaptureOutcome::Dropped(format!(
                "capture spool is full ({depth} episodes are waiting for Graphiti): this turn was NOT captured; \
                 check Graphiti (graphiti-openclaw status) or raise capture.spool_max_episodes"
            )),
            Err(e) => CaptureOutcome::Dropped(format!("{e}: this turn was NOT captured")),
        }
    }

    /// The user's turn in the session's history (`memories`), with what became of its capture;
    /// trouble writing it is only a lost history line.
    fn keep_in_history(&mut self, ctx: &HookContext, outcome: &CaptureOutcome) {
        let key = ctx.session_key.as_deref().or(ctx.session_id.as_deref());
        let (Some(dir), Some(key)) = (self.host.state_dir.clone(), key) else {
            return;
        };
        let Some(record) = turns::kept_record(&mut self.turns.kept, &dir, key) else {
            return;
        };
        if record.not_users.is_some() || !self.is_user_turn(ctx) {
            return;
        }
        let captured = match outcome {
            CaptureOutcome::Spooled { episode, .. } => Captured::Spooled(episode.clone()),
            CaptureOutcome::Skipped(why) => Captured::Skipped(why.clone()),
            CaptureOutcome::Dropped(why) => Captured::Dropped(why.clone()),
        };
        let _ = turn_history::append(&dir, key, &PastTurn::of(&record, captured));
    }

    /// The turn's exchange, without exactly what this session's last turn prepended.
    fn users_exchange(
        &mut self,
        event: &AgentEndEvent,
        ctx: &HookContext,
    ) -> Result<(String, String), String> {
        let record = match (
            &self.host.state_dir,
            ctx.session_key.as_deref().or(ctx.session_id.as_deref()),
        ) {
            (Some(dir), Some(key)) => turns::injection_of(&mut self.turns.kept, dir, key),
            _ => None,
        };
        crate::memory::capture::last_exchange(&event.messages_json, record.as_ref())
    }

    /// The user's message OpenClaw merged into a delivery turn that ended well, and the answer.
    fn users_message_in_delivery(
        event: &AgentEndEvent,
        ctx: &HookContext,
    ) -> Result<Option<(String, String)>, String> {
        let Some(run) = ctx.run_id.as_deref().filter(|r| api::is_delivery_run(r)) else {
            return Ok(None);
        };
        if !event.success {
            return Ok(None);
        }
        crate::memory::capture::queued_in_delivery(&event.messages_json, &|text| {
            api::is_text_of_delivery(run, text)
        })
    }

    /// Why the turn is not the user's to capture, when it is not: it failed, its trigger is not a
    /// user's, or its input is not the user's words.
    fn not_a_user_turn(&mut self, event: &AgentEndEvent, ctx: &HookContext) -> Option<String> {
        if !event.success {
            let why = event.error.as_deref().unwrap_or("no error given");
            return Some(format!("the turn failed ({why})"));
        }
        if !self.is_user_turn(ctx) {
            return Some(format!(
                "trigger {:?} is not a user turn",
                ctx.trigger.as_deref().unwrap_or_default()
            ));
        }
        // The prompt hook's finding stands: OpenClaw may not repeat the provenance here.
        Self::not_users_input(ctx).or_else(|| self.not_users_by_prompt_hook(ctx))
    }

    /// Why the user's turn stays out of memory, when it does: capture is off, the chat is kept out
    /// of memory, or it is an expert's session.
    fn kept_from_memory(&self, ctx: &HookContext) -> Option<String> {
        if !self.config.settings.capture.enabled {
            return Some("capture is disabled in settings".into());
        }
        if let Some(why) = self.config.settings.skip.kept_out(ctx) {
            return Some(why);
        }
        // An expert may read private knowledge in its session; nothing said there leaves it.
        if let Some(expert) = self.experts.sessions.expert_of(ctx) {
            return Some(format!(
                "a session of expert {expert}: not captured (its private knowledge stays in the session)"
            ));
        }
        None
    }

    /// What this turn's `before-agent-start` found: its input was not the user's.
    fn not_users_by_prompt_hook(&mut self, ctx: &HookContext) -> Option<String> {
        let dir = self.host.state_dir.as_ref()?;
        let key = ctx.session_key.as_deref().or(ctx.session_id.as_deref())?;
        turns::not_users(&mut self.turns.kept, dir, key, ctx.run_id.as_deref())
    }
}

/// Stable for the turn: the run id when the host has one, else a hash of what was said and when.
fn episode_name(ctx: &HookContext, group_id: &str, user: &str, assistant: &str) -> String {
    let turn = match &ctx.run_id {
        Some(run) if !run.trim().is_empty() => group_id::name_part(run),
        _ => format!("{:x}", time::now_ms()),
    };
    let digest = spool::stable_hash(&format!("{group_id}\n{turn}\n{user}\n{assistant}"));
    format!("openclaw-{group_id}-{turn}-{:08x}", digest as u32)
}
