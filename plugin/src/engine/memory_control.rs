//! What a chat's user and the operator control: whether a chat is remembered at all (the chats the
//! settings keep out of memory, `skip.channels`, `skip.chat_types`, `skip.chats`: neither recalled
//! nor captured; the chats whose user paused memory, `/graphiti pause`: nothing captured until
//! `/graphiti resume`), and what is remembered for one (`memories`, `export`).

use super::Engine;
use crate::config::Transport;
use crate::engine::turn_history::{self, Captured};
use crate::engine::turns;
use crate::memory::graphiti::http::Deadline;
use crate::memory::redaction::Query;
use crate::memory::spool::{Acked, Spool, State};
use crate::memory::{group_id, paused};
use crate::ops::reports;
use crate::platform::api::{ChatType, CommandOutput, HookContext, MemoryCommand};
use crate::platform::time;
use std::collections::HashMap;
use std::time::Duration;

/// What a listing of memories asks Graphiti for at most, and how long it waits.
#[derive(Clone, Copy)]
struct Limits {
    facts: usize,
    entities: usize,
    episodes: usize,
    timeout: Duration,
}

/// `memories`: what a person reads.
const SEE: Limits = Limits {
    facts: 20,
    entities: 10,
    episodes: 10,
    timeout: Duration::from_secs(10),
};

/// `export`: as much as the APIs give in one answer each.
const EXPORT: Limits = Limits {
    facts: 200,
    entities: 100,
    episodes: 1000,
    timeout: Duration::from_secs(60),
};

impl Engine {
    /// The Graphiti group of the conversation in `ctx`, unless the settings keep it out of memory
    /// (Err says which setting) or its ids give none.
    pub(super) fn memory_group(&self, ctx: &HookContext) -> Result<String, String> {
        let settings = &self.config.settings;
        if let Some(why) = settings.skip.kept_out(ctx) {
            return Err(why);
        }
        group_id::group_id(&settings.graphiti.group_id, ctx)
    }

    /// Why nothing may be captured into `group` now: its chat is paused, or the paused chats cannot
    /// be read (then no chat is captured, rather than one that was paused).
    pub(super) fn capture_paused(&self, group: &str) -> Option<String> {
        let dir = self.host.state_dir.as_deref()?;
        match paused::is_paused(dir, group) {
            Ok(false) => None,
            Ok(true) => Some(format!(
                "memory is paused for this chat (group {group}); /graphiti resume turns it back on"
            )),
            Err(why) => Some(format!("the paused chats are unknown: {why}")),
        }
    }

    pub(super) fn memory_command(&mut self, command: &MemoryCommand) -> CommandOutput {
        self.ensure_loaded();
        match command {
            MemoryCommand::Pause(ctx) => self.pause(ctx, true),
            MemoryCommand::Resume(ctx) => self.pause(ctx, false),
            MemoryCommand::Paused => self.paused_report(),
            MemoryCommand::See {
                query,
                ctx,
                operator,
            } => match self.fetch_memories(query.as_deref(), ctx, *operator, SEE) {
                Ok(memories) => reports::render_memories(&memories),
                Err(refused) => refused,
            },
            MemoryCommand::Export {
                query,
                ctx,
                operator,
            } => match self.fetch_memories(query.as_deref(), ctx, *operator, EXPORT) {
                Ok(memories) => reports::render_export(&memories, &time::iso8601(time::now_ms())),
                Err(refused) => refused,
            },
            MemoryCommand::Forget {
                query,
                ids,
                everything,
                earlier_groups,
                ctx,
                operator,
                at_once,
            } => self.propose_forget(&super::forget::ForgetAsk {
                query: query.as_deref(),
                ids,
                everything: *everything,
                earlier_groups: *earlier_groups,
                ctx,
                operator: *operator,
                at_once: *at_once,
            }),
            MemoryCommand::ConfirmForget(c) => {
                self.confirm_forget(&c.id, &c.ctx, c.operator, (&c.drop, &c.add))
            }
            MemoryCommand::EditForget(c) => {
                self.edit_forget(&c.id, &c.ctx, c.operator, (&c.drop, &c.add))
            }
            MemoryCommand::Chats => self.chats(),
            MemoryCommand::Correct { old, now_true, ctx } => self.correct(old, now_true, ctx),
        }
    }

    /// What Graphiti remembers for the chat of `ctx`, asked within `limits`. A group chat's
    /// memories go to an operator (a CLI) only: everyone in the chat would read them.
    fn fetch_memories(
        &mut self,
        query: Option<&str>,
        ctx: &HookContext,
        operator: bool,
        limits: Limits,
    ) -> Result<reports::Memories, CommandOutput> {
        let group = self
            .memory_group(ctx)
            .map_err(|why| reports::failure(1, format!("nothing to show: {why}")))?;
        if ctx.chat_type == ChatType::Group && !operator {
            return Err(reports::failure(
                1,
                "in a group chat everyone would read them: an operator lists a group's memories \
                 with `graphiti-openclaw memories --chat ID`",
            ));
        }
        let query = query.map(str::trim).filter(|q| !q.is_empty());
        let searched = query.map(|q| Query::new(q, &self.config.settings.capture.redact));
        let transport = self.config.settings.graphiti.transport;
        let deadline = Deadline::after(limits.timeout);
        let (client, http) = self.graphiti();
        let (facts, entities) = match &searched {
            Some(q) => client.search_facts_and_nodes(
                http,
                q,
                &group,
                (limits.facts, limits.entities),
                deadline,
            ),
            None => (Ok(vec![]), Ok(vec![])),
        };
        let episodes = client.recent_episodes(http, &group, limits.episodes, deadline);
        let unlisted = client.cannot_confirm();
        let mut notes = Vec::new();
        self.save_graphiti_session(&mut notes);
        let text = |e: crate::memory::graphiti::GraphitiError| e.to_string();
        Ok(reports::Memories {
            group,
            query: query.map(str::to_string),
            facts: facts.map_err(text),
            entities: entities.map_err(text),
            episodes: episodes.map_err(text),
            unlisted,
            max: (limits.facts, limits.entities, limits.episodes),
            no_entity_search: transport == Transport::Rest,
            turns: self.recent_turns(ctx),
            turn_retention: format!(
                "the last {} turns of each of the {} most recent sessions are kept",
                turn_history::KEPT_TURNS,
                turns::KEPT_SESSIONS
            ),
        })
    }

    fn pause(&mut self, ctx: &HookContext, pause: bool) -> CommandOutput {
        let Some(dir) = self.host.state_dir.clone() else {
            return reports::failure(
                1,
                "no state directory: the host mounted none, so a pause cannot be kept",
            );
        };
        let group = match self.memory_group(ctx) {
            Ok(group) => group,
            Err(why) => return reports::failure(1, format!("nothing to pause or resume: {why}")),
        };
        let since = time::now_ms();
        let changed = match paused::set(&dir, &group, pause, since, &mut *self.host.locks) {
            Ok(changed) => changed,
            Err(why) => return reports::failure(1, why),
        };
        let raced = if pause && changed {
            self.drop_captures_since(&dir, &group, since)
        } else {
            Ok(0)
        };
        let mut stdout = match (pause, changed) {
            (true, true) => {
                "Memory is paused for this chat: nothing said here is remembered until \
                             /graphiti resume. What was remembered before still helps.\n"
                    .to_string()
            }
            (true, false) => {
                "Memory was already paused for this chat; /graphiti resume turns it back on.\n"
                    .to_string()
            }
            (false, true) => {
                "Memory is on again for this chat: what is said here is remembered.\n".to_string()
            }
            (false, false) => "Memory was not paused for this chat.\n".to_string(),
        };
        let stderr = match raced {
            Ok(0) => String::new(),
            Ok(n) => {
                stdout.push_str(&format!(
                    "{n} turn(s) of this chat captured as the pause was made were removed before \
                     being sent.\n"
                ));
                String::new()
            }
            Err(why) => format!("a turn captured as the pause was made may still be sent: {why}\n"),
        };
        CommandOutput {
            exit_code: u8::from(!stderr.is_empty()),
            stdout,
            stderr,
        }
    }

    /// Removes the captures of `group` still waiting in the spool that were captured at or after
    /// `since_ms`: a turn that ended while the pause was being written read the chat as not
    /// paused, yet is said after the pause. Under the send lock, so no send takes them meanwhile.
    fn drop_captures_since(
        &mut self,
        dir: &std::path::Path,
        group: &str,
        since_ms: u64,
    ) -> Result<usize, String> {
        let spool = Spool::new(dir);
        self.host
            .locks
            .acquire(
                crate::platform::locks::SEND,
                Duration::from_secs(60),
                Duration::from_secs(20),
            )
            .map_err(|e| format!("the capture spool is being sent ({e})"))?;
        let listed = spool.in_state(State::Waiting);
        let mut removed = 0;
        let mut trouble = listed.as_ref().err().cloned();
        let late = listed
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e.captured_ms().is_some_and(|at| at >= since_ms));
        for entry in late {
            if !spool.read(&entry).is_ok_and(|e| e.group_id == group) {
                continue;
            }
            match spool.forget(&entry) {
                Ok(()) => removed += 1,
                Err(e) => trouble = Some(e),
            }
        }
        self.host.locks.release(crate::platform::locks::SEND);
        trouble.map_or(Ok(removed), Err)
    }

    fn paused_report(&self) -> CommandOutput {
        let mut out = String::new();
        match &self.host.state_dir {
            None => out.push_str("paused:   no state directory, so no chat can be paused\n"),
            Some(dir) => match paused::load(dir) {
                Ok(chats) if chats.groups.is_empty() => out.push_str("paused:   no chat\n"),
                Ok(chats) => {
                    for (group, since) in &chats.groups {
                        out.push_str(&format!(
                            "paused:   {group} since {}\n",
                            time::iso8601(since.since_ms)
                        ));
                    }
                }
                Err(why) => return reports::failure(1, why),
            },
        }
        match self.config.settings.skip.kept_out_summary() {
            Some(summary) => out.push_str(&format!("kept out: {summary} (skip settings)\n")),
            None => out.push_str("kept out: nothing (skip settings)\n"),
        }
        CommandOutput {
            exit_code: 0,
            stdout: out,
            stderr: String::new(),
        }
    }

    /// The `status` line about what memory leaves out, when it leaves something out.
    pub(super) fn memory_status_line(&self) -> Option<String> {
        let paused = self
            .host
            .state_dir
            .as_deref()
            .map(|dir| paused::load(dir).map(|chats| chats.groups.len()));
        let kept_out = self.config.settings.skip.kept_out_summary();
        let paused = match paused {
            Some(Ok(0)) | None => None,
            Some(Ok(n)) => Some(format!("paused in {n} chat(s) (`paused` lists them)")),
            Some(Err(why)) => Some(format!("NOTHING IS CAPTURED: {why}")),
        };
        let parts: Vec<String> = paused
            .into_iter()
            .chain(kept_out.map(|k| format!("kept out: {k}")))
            .chain(self.forgets_waiting_summary())
            .chain(self.forget_follow_up_summary())
            .collect();
        (!parts.is_empty()).then(|| format!("memory:   {}\n", parts.join("; ")))
    }

    /// The forgets waiting for confirmation, the captures they hold back, and any file of them that
    /// cannot be read.
    fn forgets_waiting_summary(&self) -> Vec<String> {
        let Some(dir) = self.host.state_dir.as_deref() else {
            return vec![];
        };
        let summary = crate::memory::forget::summary(dir, time::now_ms());
        let waiting = (summary.waiting > 0).then(|| {
            format!(
                "forgets: {} waiting for confirmation in {} chat(s), holding back {} capture(s)",
                summary.waiting, summary.chats, summary.captures_held
            )
        });
        waiting
            .into_iter()
            .chain(
                summary
                    .troubles
                    .into_iter()
                    .map(|t| format!("FORGETS: {t}")),
            )
            .collect()
    }

    /// What the follow-ups of confirmed forgets found, while any is kept.
    fn forget_follow_up_summary(&self) -> Option<String> {
        let dir = self.host.state_dir.as_deref()?;
        if !crate::memory::forget::has_follow_ups(dir) {
            return None;
        }
        let kept = match crate::memory::forget::follow_ups(dir) {
            Ok(kept) => kept.follow_ups,
            Err(why) => return Some(format!("forgets: {why}")),
        };
        let now = time::now_ms();
        let looking = kept.iter().filter(|f| now < f.until_ms).count();
        let deleted: usize = kept.iter().map(|f| f.deleted.len()).sum();
        let failed: usize = kept.iter().map(|f| f.not_removed.len()).sum();
        Some(format!(
            "forgets: {looking} looking for captures Graphiti was still storing, {deleted} \
             episode(s) deleted later, {failed} not removable (memory/forget-log.jsonl)"
        ))
    }

    /// The session's recent turns with what became of each capture, when the context names a
    /// session and there is a state directory.
    fn recent_turns(&self, ctx: &HookContext) -> Option<Result<Vec<reports::ShownTurn>, String>> {
        let dir = self.host.state_dir.as_deref()?;
        let key = ctx.session_key.as_deref().or(ctx.session_id.as_deref())?;
        let past = match turn_history::recent(dir, key) {
            Ok(past) => past,
            Err(why) => return Some(Err(why)),
        };
        let spool = Spool::new(dir);
        let acked = spool.acked();
        let spooled = spooled_by_name(&spool);
        Some(Ok(past
            .into_iter()
            .map(|t| reports::ShownTurn {
                capture: capture_status(&t.capture, &acked, &spooled),
                at_ms: t.at_ms,
                prompt: t.prompt,
                recall: t.recall,
                packs: t.packs,
                trace: t.trace,
                injected: t.injected,
                scores: t.scores,
            })
            .collect()))
    }
}

/// Entries read to find a turn's capture in the spool, at most.
const SPOOL_ENTRIES_READ: usize = 2000;

/// The spool's entries by the name of their episode (the first entries only, in a backlog).
fn spooled_by_name(spool: &Spool) -> HashMap<String, (State, Option<String>)> {
    spool
        .entries()
        .unwrap_or_default()
        .into_iter()
        .take(SPOOL_ENTRIES_READ)
        .filter_map(|entry| {
            let name = spool.read(&entry).ok()?.name;
            let why = entry
                .state
                .is_set_aside()
                .then(|| spool.meta(&entry.stem).set_aside_reason)
                .flatten();
            Some((name, (entry.state, why)))
        })
        .collect()
}

fn capture_status(
    captured: &Captured,
    acked: &Acked,
    spooled: &HashMap<String, (State, Option<String>)>,
) -> String {
    let name = match captured {
        Captured::Spooled(name) => name,
        Captured::Skipped(why) => return format!("not captured: {why}"),
        Captured::Dropped(why) => return format!("LOST before the spool: {why}"),
    };
    match spooled.get(name) {
        Some((State::Waiting, _)) => "waiting to be sent to Graphiti".into(),
        Some((State::Sending | State::InDoubt, _)) => {
            "sent, Graphiti's answer unknown (in doubt: checked before it is sent again)".into()
        }
        Some((_, why)) => format!(
            "set aside: {} (spool requeue sends it again)",
            why.as_deref().unwrap_or("no reason kept")
        ),
        None if acked.contains(name) => "delivered to Graphiti".into(),
        None => "no longer in the spool (delivered long ago, or forgotten)".into(),
    }
}
