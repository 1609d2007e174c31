//! The text of `experts pending`, `experts approve` and `experts check-tool`, over the approval
//! stores of the installed experts (one directory each). Rendered here so every host prints the same.

use super::approval::{ApprovalRequest, ApprovalStore, Status};
use super::arguments::for_display;
use super::bindings::Bindings;
use super::commands::CommandText;
use super::gate::{CallInput, Verdict, decide_tool_call};
use super::package::Package;
use super::policy::Tier;
use std::path::PathBuf;

/// Arguments are shown up to this many characters (the approval binds them all).
pub const SHOWN_ARGUMENT_CHARS: usize = 500;

/// The last line of every `check-tool` answer.
pub const DRY_RUN: &str = "(dry run: nothing was executed, recorded or used)\n";

/// One expert's approval store: its name and directory.
pub type StoreDir = (String, PathBuf);

/// `experts pending`: every call waiting for the user, with what exactly would be approved. A store
/// of an older format is replaced (its requests dropped, with a note).
pub fn pending_text(stores: &[StoreDir], now: u64) -> CommandText {
    let mut blocks = Vec::new();
    let mut notes = Vec::new();
    for (name, dir) in stores {
        let mut store = match ApprovalStore::load(dir) {
            Ok((store, None)) => store,
            Ok((store, Some(note))) => {
                notes.push(format!("{name}: {note}"));
                if let Err(why) = store.save(dir) {
                    notes.push(format!("{name}: {why}"));
                }
                store
            }
            Err(why) => {
                notes.push(format!("{name}: the approval store is unreadable: {why}"));
                continue;
            }
        };
        blocks.extend(store.pending(now).iter().map(request_block));
    }
    let mut out = match blocks.len() {
        0 => "no calls are waiting for approval\n".to_string(),
        1 => "1 call is waiting for your approval:\n".to_string(),
        n => format!("{n} calls are waiting for your approval:\n"),
    };
    for block in blocks {
        out.push('\n');
        out.push_str(&block);
    }
    for note in notes {
        out.push_str(&format!("note: {note}\n"));
    }
    CommandText {
        text: out,
        ok: true,
    }
}

/// The calls waiting for the user as JSON, for the Control UI; a store that cannot be read is named
/// under `unreadable`. Reads only: an older store is left for `experts pending` to replace.
pub fn pending_json(stores: &[StoreDir], now: u64) -> serde_json::Value {
    let mut waiting = Vec::new();
    let mut unreadable = Vec::new();
    for (name, dir) in stores {
        match ApprovalStore::load(dir) {
            Ok((mut store, _)) => {
                waiting.extend(store.pending(now).iter().map(|r| {
                    serde_json::json!({
                        "id": r.id,
                        "expert": r.expert,
                        "operation": r.operation,
                        "tool": r.tool_name,
                        "session": r.session,
                        "arguments": for_display(&r.arguments, SHOWN_ARGUMENT_CHARS),
                        "requested_at": r.requested_at,
                        "escalated": r.escalated,
                    })
                }));
            }
            Err(why) => unreadable.push(format!("{name}: {why}")),
        }
    }
    serde_json::json!({ "waiting": waiting, "unreadable": unreadable })
}

fn request_block(r: &ApprovalRequest) -> String {
    let mut out = format!(
        "{}  {}  {}\n  tool:      {}\n  session:   {}\n  arguments: {}\n",
        r.id,
        r.expert,
        r.operation,
        r.tool_name,
        r.session,
        for_display(&r.arguments, SHOWN_ARGUMENT_CHARS)
    );
    if r.escalated {
        out.push_str("  escalated: past its timeout; still open for your answer\n");
    }
    out.push_str(&format!("  approve:   /experts approve {}\n", r.id));
    out
}

/// `experts approve <id>`: the pending request with that id (or whole digest), in any store.
pub fn approve_text(stores: &[StoreDir], id: &str, now: u64) -> CommandText {
    answer_text(stores, id, now, true)
}

/// `experts reject <id>`: the request is refused; a run waiting on it fails that step.
pub fn reject_text(stores: &[StoreDir], id: &str, now: u64) -> CommandText {
    answer_text(stores, id, now, false)
}

fn answer_text(stores: &[StoreDir], id: &str, now: u64, approve: bool) -> CommandText {
    let failed = |text: String| CommandText { text, ok: false };
    let verb = if approve { "approve" } else { "reject" };
    for (name, dir) in stores {
        let mut store = match ApprovalStore::load(dir) {
            Ok((store, _)) => store,
            Err(_) => continue,
        };
        let digest = match store.find(id) {
            Ok(Some(digest)) => digest,
            Ok(None) => continue,
            Err(why) => return failed(format!("cannot {verb} {}: {why}\n", id.trim())),
        };
        let answered = if approve {
            store.approve(&digest, now)
        } else {
            store.reject(&digest, now)
        };
        return match answered.and_then(|r| store.save(dir).map(|()| r)) {
            Ok(r) if approve => CommandText {
                text: format!(
                    "approved {} for expert {name}: {} (tool {}) with arguments {}\n\
                     The agent may run exactly this call once, in session {}.\n",
                    r.id,
                    r.operation,
                    r.tool_name,
                    for_display(&r.arguments, SHOWN_ARGUMENT_CHARS),
                    r.session
                ),
                ok: true,
            },
            Ok(r) => CommandText {
                text: format!(
                    "rejected {} for expert {name}: {} (tool {})\n",
                    r.id, r.operation, r.tool_name
                ),
                ok: true,
            },
            Err(why) => failed(format!("cannot {verb} {}: {why}\n", id.trim())),
        };
    }
    failed(format!(
        "no approval request {} (it may have expired; see /experts pending)\n",
        id.trim()
    ))
}

/// `experts check-tool`: what the gate would decide for `call` in `package`'s session, against a
/// copy of `store`; nothing is recorded, used or executed. `header` says which session and expert.
pub fn check_tool_text(
    package: &Package,
    bindings: &Bindings,
    call: &CallInput,
    store: &ApprovalStore,
    store_note: Option<&str>,
    header: &str,
    now: u64,
) -> CommandText {
    let mut before = store.clone();
    before.expire(now);
    let mut scratch = before.clone();
    let d = decide_tool_call(package, bindings, call, &mut scratch, now);
    let mut out = header.to_string();
    let shown_tool = if d.via_tool_call {
        format!("tool_call → {}", d.tool)
    } else {
        d.tool.clone()
    };
    out.push_str(&format!("tool:      {shown_tool}\n"));
    if let Some(arguments) = &d.arguments {
        out.push_str(&format!("operation: {}\n", d.operation));
        out.push_str(&format!("tier:      {}\n", tier_word(d.tier)));
        out.push_str(&format!(
            "arguments: {}\n",
            for_display(arguments, SHOWN_ARGUMENT_CHARS)
        ));
        out.push_str(&format!("approval:  {}\n", approval_line(&d, &before)));
        for other in other_sessions(&d, arguments, &before, package) {
            out.push_str(&format!(
                "           request {} of the same call in session {} ({}): not usable in this one\n",
                other.id,
                other.session,
                other.status.word()
            ));
        }
    }
    out.push_str(&format!("verdict:   {}\n", verdict_line(&d)));
    if !d.allowed() {
        out.push_str(&format!("message:   {}\n", d.message));
    }
    if let Some(note) = store_note {
        out.push_str(&format!("note: {note} (on the next real call)\n"));
    }
    out.push_str(DRY_RUN);
    CommandText {
        text: out,
        ok: true,
    }
}

pub fn tier_word(tier: Tier) -> &'static str {
    match tier {
        Tier::Auto => "AUTO",
        Tier::Confirm => "CONFIRM",
        Tier::Manual => "MANUAL",
    }
}

fn approval_line(d: &super::gate::Decision, store: &ApprovalStore) -> String {
    match d.tier {
        Tier::Auto => return "not needed".into(),
        Tier::Manual => return "never: a MANUAL call is carried out by the user".into(),
        Tier::Confirm => {}
    }
    let Some(binding) = &d.binding else {
        return "none: an approval is bound to a session, and the call names none".into();
    };
    let id = d.request_id.clone().unwrap_or_default();
    let found = store
        .requests
        .get(&binding.digest())
        .filter(|r| r.binds(binding));
    match found.map(|r| r.status) {
        None => format!("none for this call in this session; the call would create request {id}"),
        Some(Status::Pending) => format!("request {id} is waiting for the user's answer"),
        Some(Status::Approved) => {
            format!("request {id} was approved by the user; this call would use it up")
        }
        Some(Status::Used) if d.allowed() => {
            format!(
                "request {id} was used by a tool_call; this is its target call, which may pass once"
            )
        }
        Some(status) => format!(
            "request {id} was {}; the call would ask again under the same id",
            status.word()
        ),
    }
}

/// Requests for the same expert, tool, operation and arguments made in other sessions.
fn other_sessions(
    d: &super::gate::Decision,
    arguments: &str,
    store: &ApprovalStore,
    package: &Package,
) -> Vec<ApprovalRequest> {
    if d.tier != Tier::Confirm {
        return vec![];
    }
    let session = d.binding.as_ref().map(|b| b.session.as_str());
    store
        .requests
        .values()
        .filter(|r| {
            r.expert == package.name
                && r.tool_name == d.tool
                && r.operation == d.operation
                && r.arguments == arguments
                && Some(r.session.as_str()) != session
        })
        .cloned()
        .collect()
}

fn verdict_line(d: &super::gate::Decision) -> String {
    match d.verdict {
        Verdict::Allow if d.tier == Tier::Confirm => {
            let id = d.request_id.as_deref().unwrap_or("?");
            if d.message.ends_with("now used") {
                format!("allowed: it would use up the user's approval (request {id})")
            } else {
                format!("allowed: the target call of the tool_call that used request {id}")
            }
        }
        Verdict::Allow => format!("allowed: {}", d.message),
        Verdict::Draft => "refused: MANUAL, the agent delivers a draft instead".into(),
        Verdict::AwaitApproval => format!(
            "refused until the user approves request {}",
            d.request_id.as_deref().unwrap_or("?")
        ),
        Verdict::Refused => "refused (see the message)".into(),
    }
}
