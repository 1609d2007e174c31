//! After a confirmed forget, captures Graphiti had accepted but not yet ingested (and ones sent
//! with no answer) appear in its listing only later. Ticks look for them for half an hour, at most
//! once a minute, and delete those of the forget: the episodes in doubt it took out of the spool,
//! and, for a forget by search, the captures Graphiti had accepted when it was proposed that share
//! a word with the search (what the search would have found had Graphiti finished). They are known
//! by name: the MCP server's listing gives no episode's reference time.

use super::{GRAPHITI_TIMEOUT, LISTED_EPISODES, shares_a_term, terms_of, text_of};
use crate::engine::Engine;
use crate::memory::forget::{self, FOLLOW_UP_MS, FollowUp, Logged, Proposal};
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

impl Engine {
    /// Keeps a confirmed forget to look for its late captures; the time it looks until, when it
    /// does.
    pub(in crate::engine) fn start_follow_up(
        &mut self,
        dir: &Path,
        proposal: &Proposal,
        in_doubt: Vec<String>,
    ) -> Result<Option<u64>, String> {
        let query = proposal.query.clone().filter(|_| !proposal.chosen_by_id);
        let accepted = if query.is_some() {
            proposal.accepted.clone()
        } else {
            vec![]
        };
        if accepted.is_empty() && in_doubt.is_empty() {
            return Ok(None);
        }
        let now = time::now_ms();
        let follow_up = FollowUp {
            forget: proposal.id.clone(),
            group: proposal.group.clone(),
            query,
            names: in_doubt,
            accepted,
            until_ms: now + FOLLOW_UP_MS,
            deleted: vec![],
            not_removed: vec![],
        };
        let until = follow_up.until_ms;
        forget::change_follow_ups(dir, now, &mut *self.host.locks, |all| all.push(follow_up))?;
        Ok(Some(until))
    }

    /// On a tick: deletes the late captures of the forgets still followed up.
    pub(in crate::engine) fn follow_up_forgets(&mut self) {
        let Some(dir) = self.host.state_dir.clone() else {
            return;
        };
        let now = time::now_ms();
        // Even the look for a follow-up file is made at most once a minute: a tick does no more.
        if now < self.memory.forget_checked_at_ms + CHECK_EVERY_MS {
            return;
        }
        self.memory.forget_checked_at_ms = now;
        if !forget::has_follow_ups(&dir) {
            return;
        }
        let Ok(kept) = forget::follow_ups(&dir) else {
            return;
        };
        for follow_up in kept.follow_ups.iter().filter(|f| now < f.until_ms) {
            let (deleted, not_removed) = self.delete_late(follow_up);
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
            let _ = forget::log(&dir, &logged);
            let _ = forget::change_follow_ups(&dir, now, &mut *self.host.locks, |all| {
                if let Some(kept) = all.iter_mut().find(|k| k.forget == follow_up.forget) {
                    kept.deleted.extend(deleted);
                    kept.not_removed.extend(not_removed);
                }
            });
        }
    }

    /// The forget's episodes Graphiti lists now that it did not before: deleted, or not with why.
    fn delete_late(&mut self, follow_up: &FollowUp) -> (Vec<String>, Vec<(String, String)>) {
        let terms = follow_up.query.as_deref().map(terms_of).unwrap_or_default();
        let deadline = Deadline::after(GRAPHITI_TIMEOUT);
        let (client, http) = self.graphiti();
        let Ok(Some(episodes)) =
            client.recent_episodes(http, &follow_up.group, LISTED_EPISODES, deadline)
        else {
            return (vec![], vec![]);
        };
        let late: Vec<String> = episodes
            .iter()
            .filter(|e| !follow_up.deleted.iter().any(|d| d == text_of(e, "uuid")))
            .filter(|e| {
                let name = text_of(e, "name");
                follow_up.names.iter().any(|n| is_named(name, n))
                    || (follow_up.accepted.iter().any(|n| is_named(name, n))
                        && shares_a_term(text_of(e, "content"), &terms))
            })
            .map(|e| text_of(e, "uuid").to_string())
            .collect();
        let (mut deleted, mut not_removed) = (vec![], vec![]);
        for uuid in late {
            match client.delete(http, Item::Episode, &uuid, deadline) {
                Ok(()) => deleted.push(uuid),
                Err(e) => not_removed.push((uuid, e.to_string())),
            }
        }
        let mut notes = Vec::new();
        self.save_graphiti_session(&mut notes);
        (deleted, not_removed)
    }
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
