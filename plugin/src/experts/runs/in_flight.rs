//! Tool calls of a running invocation that the approval policy holds (loader design §5 "Approval
//! Enforcement"). No hook may wait for a human, so a CONFIRM call is refused at once and the run
//! pauses: the request goes to the main session, the run ends, and approval queues the invocation
//! again (a new attempt, told that the call is approved); rejection or the approval timeout fails
//! the step and `on_failure` applies. A MANUAL call's draft is delivered and the step is complete.

use super::attempts::store_back;
use super::store::{PlannedCall, Status, Waiting};
use super::{Runtime, invocation_of_session, post_about, texts};
use crate::experts::package::OnFailure;
use crate::platform::api::DeliveryKind;

/// A dry run's calls kept for its report, at most; later ones are only counted in its log.
const MAX_PLANNED_CALLS: usize = 50;
/// A planned call's arguments as kept in the record (characters).
const PLANNED_ARGUMENTS_CHARS: usize = 400;

/// A call the gate held, as the runtime needs it.
pub struct HeldCall<'a> {
    pub session_key: &'a str,
    pub operation: &'a str,
    /// The arguments as shown to the user (bounded).
    pub arguments: &'a str,
    /// The approval request's id (CONFIRM only).
    pub request: Option<&'a str>,
}

impl Runtime<'_> {
    /// A CONFIRM call in an invocation's session: the invocation waits; the user is asked. Returns
    /// the sentence for the agent, or None when the session is no invocation's.
    pub fn hold_for_approval(
        &mut self,
        call: &HeldCall,
        timeout_secs: Option<u64>,
        now_ms: u64,
    ) -> Option<String> {
        let id = invocation_of_session(call.session_key)?.to_string();
        let request = call.request?.to_string();
        let result = self.with_record(now_ms, |rt, runs, _| {
            let Some(mut inv) = runs.get(&id).cloned() else {
                return Ok((None, false));
            };
            if inv.status != Status::Running {
                return Ok((None, false));
            }
            let deadline_ms = timeout_secs.map(|s| now_ms + s * 1000);
            inv.status = Status::WaitingApproval;
            inv.deadline_ms = None;
            inv.waiting = Some(Waiting {
                request: request.clone(),
                operation: call.operation.to_string(),
                since_ms: now_ms,
                deadline_ms,
                escalated: false,
            });
            inv.note(
                now_ms,
                format!("waiting for the approval of {} ({request})", call.operation),
            );
            let deadline = deadline_ms.map(crate::platform::time::iso8601);
            let text = texts::approval_request(
                &inv,
                call.operation,
                call.arguments,
                &request,
                deadline.as_deref(),
            );
            post_about(runs, &inv, DeliveryKind::Approval, text);
            store_back(runs, inv);
            let _ = rt;
            Ok((Some(()), true))
        });
        match result {
            Ok((Some(()), _)) => Some(format!(
                "{} needs the user's approval (CONFIRM tier); it was not executed. The request ({}) \
                 is posted to the user. End this run now with a one-line note of what you proposed: \
                 when the user approves, the process resumes in a new attempt that may make exactly \
                 this call once.",
                call.operation,
                call.request.unwrap_or_default()
            )),
            _ => None,
        }
    }

    /// A MANUAL call in an invocation's session: its draft goes to the user, the step is complete.
    pub fn deliver_draft(&mut self, call: &HeldCall, now_ms: u64) -> Option<String> {
        let id = invocation_of_session(call.session_key)?.to_string();
        let result = self.with_record(now_ms, |rt, runs, _| {
            let Some(mut inv) = runs.get(&id).cloned() else {
                return Ok((None, false));
            };
            // `policy.escalation.on_manual_ready: false`: no notice of its own; the draft goes
            // with the run's result.
            let notify = rt
                .package(&inv.expert)
                .map_or(true, |package| package.policy.notify_on_manual_ready);
            let step = if notify {
                format!("draft of {} delivered to the user", call.operation)
            } else {
                format!("draft of {} left for the run's result", call.operation)
            };
            inv.steps.push(step.clone());
            inv.note(now_ms, step);
            if notify {
                let draft = texts::draft(&inv, call.operation, call.arguments);
                post_about(runs, &inv, DeliveryKind::Draft, draft);
            }
            store_back(runs, inv);
            Ok((Some(notify), true))
        });
        let Ok((Some(notified), _)) = result else {
            return None;
        };
        let what = if notified {
            "this call, as your draft, was delivered to the user, who carries it out"
        } else {
            "put this call, as a draft for the user to carry out, in your final reply: the user \
             gets it with the run's result"
        };
        Some(format!(
            "{} is MANUAL: it was not executed; {what}. The step is complete; go on with the next one.",
            call.operation
        ))
    }

    /// The user's answer to a request an invocation waits on: approval queues it again, rejection
    /// fails the step (then `on_failure`). Returns what happened, or None when no invocation waits
    /// on `request`.
    pub fn approval_answered(
        &mut self,
        request: &str,
        approved: bool,
        now_ms: u64,
    ) -> Option<String> {
        let result = self.with_record(now_ms, |rt, runs, notes| {
            let Some(mut inv) = runs
                .invocations
                .iter()
                .find(|i| {
                    i.status == Status::WaitingApproval
                        && i.waiting.as_ref().is_some_and(|w| w.request == request)
                })
                .cloned()
            else {
                return Ok((None, false));
            };
            let operation = inv.waiting.take().map(|w| w.operation).unwrap_or_default();
            let said = if approved {
                inv.status = Status::Queued;
                inv.note(now_ms, format!("approved: {operation} ({request})"));
                format!("{} resumes: {operation} is approved", inv.id)
            } else {
                let why = format!("the user rejected {operation}");
                inv.note(now_ms, why.clone());
                let on_failure = rt
                    .execution(&inv)
                    .map_or(OnFailure::Escalate, |e| e.on_failure);
                rt.give_up(runs, &mut inv, &why, on_failure, now_ms, notes);
                format!("{} stopped: {why} ({})", inv.id, inv.status.as_str())
            };
            store_back(runs, inv);
            Ok((Some(said), true))
        });
        result.ok().and_then(|(said, _)| said)
    }

    /// A dry run's call that was not executed: kept on its invocation for the planned-execution
    /// report.
    pub fn record_planned(
        &mut self,
        session_key: &str,
        mut call: PlannedCall,
        now_ms: u64,
    ) -> Result<(), String> {
        let id = invocation_of_session(session_key)
            .ok_or_else(|| format!("{session_key} is no invocation's session"))?
            .to_string();
        self.with_record(now_ms, |_, runs, _| {
            let Some(inv) = runs.get_mut(&id).filter(|inv| inv.dry_run) else {
                return Err(format!("{id} is not a dry run in the record"));
            };
            inv.note(
                now_ms,
                format!("dry run: {} ({}) not executed", call.operation, call.tier),
            );
            if inv.planned.len() < MAX_PLANNED_CALLS {
                if call.arguments.chars().count() > PLANNED_ARGUMENTS_CHARS {
                    call.arguments = call
                        .arguments
                        .chars()
                        .take(PLANNED_ARGUMENTS_CHARS)
                        .collect();
                    call.arguments.push('…');
                }
                inv.planned.push(call);
            }
            Ok(((), true))
        })
        .map(|_| ())
    }

    /// An isolated function's child session ended with `reply`: what the calling session gets. Only
    /// the function's outputs (its last json block), or, when they give a low `confidence` and
    /// the policy escalates on it, the instruction to stop; then the caller's invocation escalates
    /// when it ends.
    pub fn function_ended(
        &mut self,
        expert: &str,
        session_key: &str,
        function: &str,
        reply: &str,
        now_ms: u64,
    ) -> Result<String, String> {
        let escalates = self.package(expert)?.policy.escalate_on_low_confidence;
        let outputs = match texts::split_reply(reply) {
            (_, Some(json)) => format!("```json\n{json}\n```"),
            (narrative, None) => narrative,
        };
        if !(escalates && texts::low_confidence(reply)) {
            return Ok(format!("{outputs}\n"));
        }
        if let Some(id) = invocation_of_session(session_key).map(str::to_string) {
            self.with_record(now_ms, |_, runs, _| {
                let Some(inv) = runs.get_mut(&id).filter(|i| i.status == Status::Running) else {
                    return Ok(((), false));
                };
                inv.low_confidence = Some(function.to_string());
                inv.note(
                    now_ms,
                    format!("its function {function} judged its confidence low"),
                );
                Ok(((), true))
            })?;
        }
        Ok(format!(
            "The function {function} judged its confidence low, so its outputs must not be acted \
             on (policy.escalation.on_low_confidence). Make no further calls: end this run now with \
             your recommended action in one or two sentences; the user gets it as an escalation.\n\n\
             Its outputs:\n{outputs}\n"
        ))
    }
}
