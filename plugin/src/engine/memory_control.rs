//! Memory control (`memory::control`) lent what it works with: the engine builds a
//! [`Context`] from its own state for each operation, and reads and prunes its turn records for it.

use super::Engine;
use super::commands::recorded_context;
use super::turn_history::{self, PastTurn};
use super::turns::{self, TurnsState};
use crate::memory::control::{
    self, Context, ControlError, Ran, RecentTurn, RecordedSession, TurnRecords,
};
use crate::platform::api::{CommandOutput, HookContext, MemoryCommand};
use std::path::Path;

impl Engine {
    /// Runs `work` with memory control's view of the engine.
    fn with_control<T>(&mut self, work: impl FnOnce(&mut Context) -> T) -> T {
        let Engine {
            host,
            config,
            memory,
            turns,
            ..
        } = self;
        let state_dir = host.state_dir.as_deref();
        let mut records = Records { state_dir, turns };
        work(&mut Context {
            settings: &config.settings,
            state_dir,
            memory,
            http: host.http.as_mut(),
            database: host.database.as_mut(),
            locks: host.locks.as_mut(),
            turns: &mut records,
        })
    }

    pub(super) fn memory_command(&mut self, command: &MemoryCommand) -> CommandOutput {
        self.ensure_loaded();
        match self.with_control(|cx| control::run(cx, command)) {
            Ran::Done(out) => out,
            Ran::Store(correction) => {
                let stored = self.ingest(
                    &correction.text,
                    Some(control::Correction::SOURCE),
                    correction.ctx,
                );
                correction.reported(stored)
            }
        }
    }

    /// The Graphiti group of the conversation in `ctx`, unless the settings keep it out of memory
    /// or its ids give none.
    pub(super) fn memory_group(&self, ctx: &HookContext) -> Result<String, ControlError> {
        control::group(&self.config.settings, ctx)
    }

    /// Why nothing may be captured into `group` now (see [`control::capture_paused`]).
    pub(super) fn capture_paused(&self, group: &str) -> Option<String> {
        control::capture_paused(self.host.state_dir.as_deref(), group)
    }

    /// The `status` line about what memory leaves out, when it leaves something out.
    pub(super) fn memory_status_line(&self) -> Option<String> {
        control::status_line(&self.config.settings, self.host.state_dir.as_deref())
    }

    /// On a tick: deletes the late captures of confirmed forgets.
    pub(super) fn follow_up_forgets(&mut self) {
        self.with_control(control::follow_up_forgets);
    }
}

/// The engine's turn records as memory control reads them.
struct Records<'a> {
    state_dir: Option<&'a Path>,
    turns: &'a mut TurnsState,
}

impl TurnRecords for Records<'_> {
    fn sessions(&self) -> Result<Vec<RecordedSession>, ControlError> {
        let Some(dir) = self.state_dir else {
            return Ok(vec![]);
        };
        let records = turns::all(dir).map_err(ControlError::State)?;
        Ok(records
            .iter()
            .map(|record| RecordedSession {
                session_key: record.session_key.clone(),
                at_ms: record.at_ms,
                group_id: record.group_id.clone(),
                ctx: recorded_context(record),
                users: record.not_users.is_none(),
            })
            .collect())
    }

    fn recent(&self, session_key: &str) -> Result<Vec<RecentTurn>, ControlError> {
        let Some(dir) = self.state_dir else {
            return Ok(vec![]);
        };
        let past = turn_history::recent(dir, session_key).map_err(ControlError::State)?;
        Ok(past.into_iter().map(recent_turn).collect())
    }

    fn keep_out_of_capture(&mut self, session_key: &str, why: &str) -> Result<(), ControlError> {
        let Some(dir) = self.state_dir else {
            return Ok(());
        };
        turns::keep_out_of_capture(&mut self.turns.kept, dir, session_key, why)
            .map_err(ControlError::State)
    }

    fn forget_groups(
        &mut self,
        groups: &[String],
        mentions: &dyn Fn(&str) -> bool,
    ) -> (usize, Vec<ControlError>) {
        let Some(dir) = self.state_dir else {
            return (0, vec![]);
        };
        let removed = [
            turns::forget_groups(dir, groups, mentions),
            turn_history::forget_groups(dir, groups, mentions),
        ];
        let count = removed.iter().flatten().sum();
        let troubles = removed
            .into_iter()
            .filter_map(Result::err)
            .map(ControlError::State)
            .collect();
        (count, troubles)
    }

    fn retention(&self) -> String {
        format!(
            "the last {} turns of each of the {} most recent sessions are kept",
            turn_history::KEPT_TURNS,
            turns::KEPT_SESSIONS
        )
    }
}

fn recent_turn(t: PastTurn) -> RecentTurn {
    RecentTurn {
        at_ms: t.at_ms,
        prompt: t.prompt,
        recall: t.recall,
        packs: t.packs,
        trace: t.trace,
        injected: t.injected,
        captured: t.capture,
        scores: serde_json::to_value(&t.scores).expect("scores serialise"),
    }
}
