//! After a confirmed forget, captures Graphiti had accepted but not yet ingested (and ones sent
//! with no answer) appear in its listing only later. Ticks look for them for half an hour, at most
//! once a minute, and delete those of the forget: the episodes in doubt it took out of the spool or
//! that were sent before it was confirmed, and, for a forget by search, the captures Graphiti had
//! accepted when it was proposed that match the request well (what the search would have found had
//! Graphiti finished). They are known by name: the MCP server's listing gives no episode's
//! reference time.

use super::rank::text_of;
use super::search::{GRAPHITI_TIMEOUT, LISTED_EPISODES};
use super::words::{Request, message_text};
use super::{FOLLOW_UP_MS, FollowUp, Logged, Proposal};
use crate::memory::control::context::Context;
use crate::memory::control::error::ControlError;
use crate::memory::falkordb::group_graph;
use crate::memory::graphiti::Item;
use crate::memory::graphiti::http::Deadline;
use crate::platform::time;
use std::path::Path;

/// A tick looks for late captures at most this often.
const CHECK_EVERY_MS: u64 = 60_000;

/// Whether an episode named `listed` is the spooled episode `name` (the REST server stores each
/// message of a turn as `<name>:<role>`).
fn is_named(listed: &str, name: &str) -> bool {
    listed == name
        || listed
            .strip_prefix(name)
            .is_some_and(|role| role == ":user" || role == ":assistant")
}

/// Keeps a confirmed forget to look for its late captures; the time it looks until, when it does.
pub(super) fn start_follow_up(
    cx: &mut Context,
    dir: &Path,
    proposal: &Proposal,
    request: Option<&Request>,
    sent: Vec<String>,
    accepted: Vec<String>,
) -> Result<Option<u64>, ControlError> {
    let request = request.filter(|r| !proposal.chosen_by_id && !r.is_empty());
    let accepted = if request.is_some() { accepted } else { vec![] };
    if accepted.is_empty() && sent.is_empty() {
        return Ok(None);
    }
    let now = time::now_ms();
    let mut follow_up = FollowUp::new(&proposal.id, &proposal.group, now + FOLLOW_UP_MS);
    follow_up.stems = request.map(Request::stems).unwrap_or_default();
    follow_up.names = sent;
    follow_up.accepted = accepted;
    let until = follow_up.until_ms;
    super::change_follow_ups(dir, now, &mut *cx.locks, |all| all.push(follow_up))?;
    Ok(Some(until))
}

/// On a tick: deletes the late captures of the forgets still followed up.
pub fn follow_up_forgets(cx: &mut Context) {
    let Some(dir) = cx.state_dir.map(Path::to_path_buf) else {
        return;
    };
    let now = time::now_ms();
    // Even the look for a follow-up file is made at most once a minute: a tick does no more.
    if now < cx.memory.control.forget_checked_at_ms + CHECK_EVERY_MS {
        return;
    }
    cx.memory.control.forget_checked_at_ms = now;
    // A proposals file that cannot be read is set aside, so its hold ends with what it held.
    let _ = super::set_aside_unreadable(&dir, now, &mut *cx.locks);
    if !super::has_follow_ups(&dir) {
        return;
    }
    let Ok(kept) = super::follow_ups(&dir) else {
        return;
    };
    if kept
        .follow_ups
        .iter()
        .any(|f| !f.is_looking(now) && f.keeps_what_it_looks_by())
    {
        // Finished: what it looked for by goes.
        let _ = super::change_follow_ups(&dir, now, &mut *cx.locks, |_| ());
    }
    for follow_up in kept.follow_ups.iter().filter(|f| f.is_looking(now)) {
        let (deleted, not_removed) = delete_late(cx, follow_up);
        if deleted.is_empty() && not_removed.is_empty() {
            continue;
        }
        let logged = Logged {
            at_ms: now,
            forget: &follow_up.forget,
            by: "follow-up of a confirmed forget".into(),
            group: &follow_up.group,
            facts_deleted: vec![],
            episodes_deleted: deleted.iter().map(String::as_str).collect(),
            groups_deleted: vec![],
            spool_entries_removed: 0,
            not_removed: not_removed.clone(),
        };
        let _ = super::log(&dir, &logged);
        let _ = super::change_follow_ups(&dir, now, &mut *cx.locks, |all| {
            if let Some(kept) = all.iter_mut().find(|k| k.forget == follow_up.forget) {
                kept.deleted.extend(deleted);
                kept.not_removed.extend(not_removed);
            }
        });
    }
}

/// The forget's episodes Graphiti lists now that it did not before: deleted, or not with why.
fn delete_late(cx: &mut Context, follow_up: &FollowUp) -> (Vec<String>, Vec<(String, String)>) {
    let request = Request::of_stems(&follow_up.stems);
    let deadline = Deadline::after(GRAPHITI_TIMEOUT);
    let Ok(Some(episodes)) = cx.recent_episodes(&follow_up.group, LISTED_EPISODES, deadline) else {
        return (vec![], vec![]);
    };
    let late: Vec<String> = episodes
        .iter()
        .filter(|e| !follow_up.deleted.iter().any(|d| d == text_of(e, "uuid")))
        .filter(|e| {
            let name = text_of(e, "name");
            follow_up.names.iter().any(|n| is_named(name, n))
                || (follow_up.accepted.iter().any(|n| is_named(name, n))
                    && request.matches_well(
                        request
                            .matched_in(&message_text(text_of(e, "content")))
                            .len(),
                    ))
        })
        .map(|e| text_of(e, "uuid").to_string())
        .collect();
    let (mut deleted, mut not_removed) = (vec![], vec![]);
    if let Some(mut falkor) = cx.falkor(deadline) {
        for uuid in late {
            match group_graph::delete_episode(&mut falkor, &follow_up.group, &uuid) {
                Ok(_) => deleted.push(uuid),
                Err(e) => not_removed.push((uuid, format!("FalkorDB: {e}"))),
            }
        }
        return (deleted, not_removed);
    }
    let (client, http) = cx.graphiti();
    for uuid in late {
        match client.delete(http, Item::Episode, &uuid, deadline) {
            Ok(()) => deleted.push(uuid),
            Err(e) => not_removed.push((uuid, e.to_string())),
        }
    }
    cx.save_graphiti_session();
    (deleted, not_removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_episode_is_named_by_its_name_or_a_rest_message_of_it() {
        assert!(is_named("turn-1", "turn-1"));
        assert!(is_named("turn-1:user", "turn-1"));
        assert!(!is_named("turn-12", "turn-1"));
        assert!(!is_named("turn-1:system", "turn-1"));
    }
}
