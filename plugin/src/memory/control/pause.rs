//! A chat's user pausing memory (`/graphiti pause`: nothing said there is captured until `/graphiti
//! resume`), the operator's list of what memory leaves out (`paused`), and the check capture makes
//! before it keeps a turn. The paused chats are kept by `paused.rs`.

use super::context::Context;
use super::error::ControlError;
use super::paused;
use crate::memory::spool::{Spool, State};
use crate::platform::api::{CommandOutput, HookContext};
use crate::platform::locks;
use crate::platform::time;
use std::path::Path;
use std::time::Duration;

/// Why nothing may be captured into `group` now: its chat is paused, or the paused chats cannot
/// be read (then no chat is captured, rather than one that was paused).
pub fn capture_paused(state_dir: Option<&Path>, group: &str) -> Option<String> {
    match paused::is_paused(state_dir?, group) {
        Ok(false) => None,
        Ok(true) => Some(format!(
            "memory is paused for this chat (group {group}); /graphiti resume turns it back on"
        )),
        Err(why) => Some(format!("the paused chats are unknown: {why}")),
    }
}

/// Pauses (`pause`) or resumes memory for the chat of `ctx`.
pub fn pause(cx: &mut Context, ctx: &HookContext, pause: bool) -> CommandOutput {
    let dir = match cx.state_dir_for("the host mounted none, so a pause cannot be kept") {
        Ok(dir) => dir.to_path_buf(),
        Err(refused) => return refused.output(),
    };
    let group = match cx.group(ctx) {
        Ok(group) => group,
        Err(why) => return why.output_for("nothing to pause or resume"),
    };
    let since = time::now_ms();
    let changed = match paused::set(&dir, &group, pause, since, &mut *cx.locks) {
        Ok(changed) => changed,
        Err(why) => return why.output(),
    };
    let raced = if pause && changed {
        drop_captures_since(cx, &dir, &group, since)
    } else {
        Ok(0)
    };
    let mut stdout = match (pause, changed) {
        (true, true) => "Memory is paused for this chat: nothing said here is remembered until \
                         /graphiti resume. What was remembered before still helps.\n"
            .to_string(),
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
    cx: &mut Context,
    dir: &Path,
    group: &str,
    since_ms: u64,
) -> Result<usize, ControlError> {
    let spool = Spool::new(dir);
    cx.locks
        .acquire(
            locks::SEND,
            Duration::from_secs(60),
            Duration::from_secs(20),
        )
        .map_err(|e| ControlError::Busy(format!("the capture spool is being sent ({e})")))?;
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
    cx.locks.release(locks::SEND);
    trouble.map_or(Ok(removed), |e| Err(ControlError::State(e)))
}

/// `paused`: the chats paused by their users, and the chats the settings keep out.
pub fn paused_report(cx: &Context) -> CommandOutput {
    let mut out = String::new();
    match cx.state_dir {
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
            Err(why) => return why.output(),
        },
    }
    match cx.settings.skip.kept_out_summary() {
        Some(summary) => out.push_str(&format!("kept out: {summary} (skip settings)\n")),
        None => out.push_str("kept out: nothing (skip settings)\n"),
    }
    CommandOutput::success(out)
}
