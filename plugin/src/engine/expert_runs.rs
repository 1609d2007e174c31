//! The expert runtime's entry points (`expert-webhook`, `expert-channel-message`, `expert-tick`,
//! `expert-run-ended`), its `experts …` commands, and what a held tool call does to a run.

use super::Engine;
use crate::experts::runs::Runtime;
use crate::experts::runs::in_flight::HeldCall;
use crate::experts::sessions::{Held, ToolCheck, ToolVerdict};
use crate::platform::api::{
    ChannelMessage, CommandOutput, ExpertsCommand, HookContext, RunReport, RuntimeWork,
    WebhookAnswer, WebhookRequest,
};
use crate::platform::time;

fn output(result: Result<String, String>) -> CommandOutput {
    match result {
        Ok(stdout) => CommandOutput {
            exit_code: 0,
            stdout,
            stderr: String::new(),
        },
        Err(why) => CommandOutput {
            exit_code: 1,
            stdout: String::new(),
            stderr: format!("{why}\n"),
        },
    }
}

/// What reading the record set aside on a hook's path, for the log: no command is there to say it,
/// and the next tick finds the record already replaced.
fn set_aside_notes(rt: &mut Runtime, notes: &mut Vec<String>) {
    notes.extend(rt.set_aside.drain(..).map(|n| format!("experts: {n}")));
}

/// Says what reading the record set aside, as warnings after the command's own answer.
fn with_set_aside(answered: &mut CommandOutput, set_aside: &[String]) {
    for note in set_aside {
        answered.stderr.push_str(&format!("warning: {note}\n"));
    }
}

impl Engine {
    /// Runs `f` on the runtime; without one (no state directory, no experts), the error.
    fn with_runtime<T>(
        &mut self,
        f: impl FnOnce(&mut Runtime, &mut crate::experts::runs::tick::RunnerState) -> T,
    ) -> Result<T, String> {
        self.ensure_loaded();
        let (mut runtime, runner) = self
            .experts
            .sessions
            .runtime(self.host.locks.as_mut(), self.host.zones.as_mut())?;
        Ok(f(&mut runtime, runner))
    }

    pub fn expert_webhook(&mut self, request: &WebhookRequest, now_ms: u64) -> WebhookAnswer {
        self.with_runtime(|rt, _| rt.webhook(request, now_ms))
            .unwrap_or_else(|why| WebhookAnswer {
                status: 503,
                body: serde_json::json!({ "error": why }).to_string(),
                work: RuntimeWork::default(),
            })
    }

    /// A message for the channel triggers bound to its channel, unless it is not one for an expert.
    pub fn expert_channel_message(&mut self, message: &ChannelMessage, now_ms: u64) -> RuntimeWork {
        self.ensure_loaded();
        let not_for_an_expert = self.not_for_an_expert(message);
        self.with_runtime(|rt, _| match not_for_an_expert {
            Some(why) => RuntimeWork {
                notes: vec![format!(
                    "experts: a message on {} fires no channel trigger: {why}",
                    message.channel_name
                )],
                ..RuntimeWork::default()
            },
            None => rt.channel_message(message, now_ms),
        })
        .unwrap_or_default()
    }

    /// A command (as the host classifies it) asks something of OpenClaw or a plugin, and a message in
    /// an expert's own session is that session's turn: neither is a message for an expert.
    fn not_for_an_expert(&self, message: &ChannelMessage) -> Option<String> {
        if message.command {
            return Some("it is a command".into());
        }
        let session = HookContext {
            session_key: message.session_key.clone(),
            ..HookContext::default()
        };
        let expert = self.experts.sessions.expert_of(&session)?;
        Some(format!("it is in a session of expert {expert}"))
    }

    pub fn expert_tick(&mut self, now_ms: u64) -> RuntimeWork {
        self.with_runtime(|rt, runner| rt.tick(runner, now_ms))
            .unwrap_or_else(|why| RuntimeWork {
                notes: vec![format!("experts: no runtime: {why}")],
                ..RuntimeWork::default()
            })
    }

    /// The host posted these deliveries.
    pub fn expert_delivered(&mut self, run_ids: &[String], now_ms: u64) -> Result<(), String> {
        let removed = self.with_runtime(|rt, _| rt.delivered(run_ids, now_ms))??;
        if removed < run_ids.len() {
            return Err(format!(
                "experts: {} of {} posted deliveries were not in the record (posted before, or \
                 not this runtime's)",
                run_ids.len() - removed,
                run_ids.len()
            ));
        }
        Ok(())
    }

    /// A run ended: the record is updated, and what is due now (the next in its lane, deliveries)
    /// is returned at once.
    pub fn expert_run_ended(&mut self, report: &RunReport, now_ms: u64) -> RuntimeWork {
        let ended = self.with_runtime(|rt, _| {
            rt.with_record(now_ms, |rt, runs, notes| {
                let changed = rt.run_ended(runs, report, now_ms, notes);
                Ok(((), changed))
            })
        });
        let mut notes = match ended {
            Ok(Ok(((), notes))) => notes,
            Ok(Err(why)) | Err(why) => vec![format!(
                "experts: the end of {} was not recorded: {why}",
                report.invocation
            )],
        };
        let mut work = self.expert_tick(now_ms);
        notes.append(&mut work.notes);
        work.notes = notes;
        work
    }

    /// A held call in an expert run's session pauses the run (CONFIRM) or delivers its draft
    /// (MANUAL); the agent is told what happened.
    pub(super) fn held_call(&mut self, check: &mut ToolCheck, ctx: &HookContext) {
        let (Some(held), Some(session)) = (check.held.clone(), ctx.session_key.clone()) else {
            return;
        };
        let now_ms = time::now_ms();
        let Held {
            manual,
            operation,
            arguments,
            request,
            timeout_secs,
            ..
        } = held;
        let call = HeldCall {
            session_key: &session,
            operation: &operation,
            arguments: &arguments,
            request: request.as_deref(),
        };
        let said = self.with_runtime(|rt, _| {
            let said = if manual {
                rt.deliver_draft(&call, now_ms)
            } else {
                rt.hold_for_approval(&call, timeout_secs, now_ms)
            };
            set_aside_notes(rt, &mut check.notes);
            said
        });
        // In a run, what happens to the call is the runtime's (the gate's advice to ask the user and
        // call again does not apply: the run ends and resumes on approval).
        if let (Ok(Some(said)), ToolVerdict::Block(message)) = (said, &mut check.verdict) {
            *message = said;
        }
    }

    /// A dry run's call that was not executed goes on its invocation, for the report.
    pub(super) fn planned_call(&mut self, check: &mut ToolCheck, ctx: &HookContext) {
        let (Some(planned), Some(session)) = (check.planned.clone(), ctx.session_key.as_deref())
        else {
            return;
        };
        let now_ms = time::now_ms();
        let recorded = self
            .with_runtime(|rt, _| {
                let recorded = rt.record_planned(session, planned, now_ms);
                set_aside_notes(rt, &mut check.notes);
                recorded
            })
            .and_then(|recorded| recorded);
        if let Err(why) = recorded {
            check
                .notes
                .push(format!("experts: a dry run's call was not recorded: {why}"));
        }
    }

    /// `status`'s line on expert runs (none without installed experts or a record), with what
    /// reading the record set aside.
    pub(super) fn expert_runs_status(&mut self) -> Option<String> {
        let now_ms = time::now_ms();
        let mut set_aside = Vec::new();
        let line = self
            .with_runtime(|rt, _| {
                let line = rt.status_line(now_ms);
                set_aside.append(&mut rt.set_aside);
                line
            })
            .ok()
            .flatten();
        let notes: String = set_aside
            .iter()
            .map(|n| format!("  warning: {n}\n"))
            .collect();
        line.map(|line| line + &notes)
    }

    /// Runs a command on the runtime; what reading the record set aside goes into `set_aside`.
    fn runtime_said(
        &mut self,
        set_aside: &mut Vec<String>,
        f: impl FnOnce(&mut Runtime) -> Result<String, String>,
    ) -> Result<String, String> {
        self.with_runtime(|rt, _| {
            let said = f(rt);
            set_aside.append(&mut rt.set_aside);
            said
        })?
    }

    /// The runtime's `experts …` commands; None for the others. Whatever reading the record set
    /// aside or repaired is said after the command's own answer, with where the old record is kept.
    pub(super) fn runtime_command(&mut self, command: &ExpertsCommand) -> Option<CommandOutput> {
        let now_ms = time::now_ms();
        let mut set_aside = Vec::new();
        let aside = &mut set_aside;
        let result = match command {
            ExpertsCommand::Queue => self.runtime_said(aside, |rt| rt.queue_text(now_ms)),
            ExpertsCommand::DeadLetters => {
                self.runtime_said(aside, |rt| rt.dead_letters_text(now_ms))
            }
            ExpertsCommand::Replay(id) => {
                self.runtime_said(aside, |rt| rt.replay(id.trim(), now_ms))
            }
            ExpertsCommand::Run(run) => self.runtime_said(aside, |rt| rt.run_manual(run, now_ms)),
            ExpertsCommand::Fire {
                expert,
                trigger,
                payload_json,
            } => self.runtime_said(aside, |rt| {
                rt.fire_text(expert, trigger, payload_json, now_ms)
            }),
            ExpertsCommand::Due(at_ms) => self.runtime_said(aside, |rt| rt.due_text(*at_ms)),
            ExpertsCommand::Step { step, ctx } => self.runtime_said(aside, |rt| {
                rt.step(ctx.session_key.as_deref().unwrap_or_default(), step, now_ms)
            }),
            ExpertsCommand::Learn { proposal_json, ctx } => {
                let Some(expert) = self.experts.sessions.expert_of(ctx) else {
                    return Some(output(Err(
                        "expert_learning works in an expert's session only".into(),
                    )));
                };
                let session = ctx.session_key.clone().unwrap_or_default();
                self.runtime_said(aside, |rt| {
                    rt.propose_learning(&expert, &session, proposal_json, now_ms)
                })
            }
            ExpertsCommand::FunctionEnded { name, reply, ctx } => {
                let Some(expert) = self.experts.sessions.expert_of(ctx) else {
                    return Some(output(Err(
                        "expert_function works in an expert's session only".into(),
                    )));
                };
                let session = ctx.session_key.clone().unwrap_or_default();
                self.runtime_said(aside, |rt| {
                    rt.function_ended(&expert, &session, name, reply, now_ms)
                })
            }
            ExpertsCommand::Approve(id) | ExpertsCommand::Reject(id) => {
                let approve = matches!(command, ExpertsCommand::Approve(_));
                let mut answered = self.answer(id.trim(), approve, now_ms, aside)?;
                with_set_aside(&mut answered, &set_aside);
                return Some(answered);
            }
            other => return self.experts.sessions.manage(other, now_ms).map(output),
        };
        let mut answered = output(result);
        with_set_aside(&mut answered, &set_aside);
        Some(answered)
    }

    /// `experts approve|reject <id>`: a proposed learning, or an approval request (then the run
    /// waiting on it resumes or fails that step).
    fn answer(
        &mut self,
        id: &str,
        approve: bool,
        now_ms: u64,
        set_aside: &mut Vec<String>,
    ) -> Option<CommandOutput> {
        let learning = self.with_runtime(|rt, _| {
            let done = rt.answer_learning(id, approve, now_ms);
            set_aside.append(&mut rt.set_aside);
            done
        });
        if let Ok(Some(done)) = learning {
            return Some(output(done.map(|t| format!("{t}\n"))));
        }
        let command = if approve {
            ExpertsCommand::Approve(id.to_string())
        } else {
            ExpertsCommand::Reject(id.to_string())
        };
        let (exit_code, mut stdout) = self.experts.sessions.command(&command, now_ms / 1000);
        if exit_code == 0
            && let Ok(Some(said)) = self.with_runtime(|rt, _| {
                let said = rt.approval_answered(id, approve, now_ms);
                set_aside.append(&mut rt.set_aside);
                said
            })
        {
            stdout.push_str(&format!("{said}\n"));
        }
        Some(CommandOutput {
            exit_code,
            stdout,
            stderr: String::new(),
        })
    }
}
