//! Forgetting what is remembered for a chat. A forget is proposed first (the `graphiti_forget`
//! tool, `forget`): what a search of the chat's own group and the chat's captures still in the
//! spool hold, ranked by how many of the request's words they have (`words.rs`, `rank.rs`); the
//! good matches are proposed, the weaker ones listed apart for the person to add, or exactly the ids
//! named among the search's results (`propose.rs`). Nothing is deleted until the person it was
//! proposed to confirms it in that chat, or an operator does, once and before it expires; before
//! confirming, that person may leave items out or add the weaker matches. Then the facts and
//! episodes are deleted from Graphiti, the search is run again to check, and every copy the plugin
//! keeps goes: captures still in the spool, the recall cache, the turn records (`confirm.rs`). Ticks
//! then look for the captures Graphiti was still storing (`late_captures.rs`).
//!
//! Kept in the state directory's `memory/`: the proposals waiting (`pending/`), the follow-ups of
//! confirmed ones (`follow_ups.rs`), and the log of what was forgotten: what was deleted (ids and
//! counts), by whom and when, never the deleted text. `report.rs` renders what a forget proposes
//! and what it did.

mod confirm;
mod direct;
mod entity;
mod follow_ups;
mod late_captures;
mod pending;
mod propose;
mod rank;
mod reach;
mod report;
mod search;
pub mod words;

pub use confirm::{confirm_forget, edit_forget};
pub use follow_ups::{
    FOLLOW_UP_MS, FollowUp, FollowUps, change_follow_ups, follow_ups, has_follow_ups,
};
pub use late_captures::follow_up_forgets;
pub use pending::{
    Held, MAX_PER_GROUP, MAX_WAITING_GROUPS, PendingSummary, Proposed, edit, held, propose,
    set_aside_unreadable, summary, take,
};
pub use propose::{ForgetAsk, propose_forget};
pub use rank::text_of;
pub use search::{GRAPHITI_TIMEOUT, request_of};

use super::error::ControlError;
use crate::platform::locks::{LockError, Locks};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a proposed forget can be confirmed.
pub const EXPIRES_AFTER_MS: u64 = 60 * 60 * 1000;
/// Hex digits of the id shown (64 bits of SHA-256: no accidental collision).
pub const ID_HEX_DIGITS: usize = 16;
const LOCK_LEASE: Duration = Duration::from_secs(10);
const LOCK_WAIT: Duration = Duration::from_secs(5);
const DIGEST_DOMAIN: &str = "graphiti-openclaw forget v2";

/// What a proposal's item is.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Fact,
    Episode,
    /// A capture of the chat still in the spool, not yet in Graphiti.
    Capture,
    /// An entity named by its id, deleted with every fact of it (only through the FalkorDB
    /// connection: Graphiti's API has no call that deletes one).
    Entity,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Fact => "fact",
            Kind::Episode => "episode",
            Kind::Capture => "capture",
            Kind::Entity => "entity",
        }
    }
}

/// An item a search or the spool found for a forget: proposed (`chosen`) or left out as a weaker
/// match the person may add. Numbered by its place in the proposal, from 1.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    pub kind: Kind,
    /// A fact's or episode's uuid as Graphiti returned it; a capture's spool entry (its stem).
    pub id: String,
    /// What the proposal shows of it.
    pub shown: String,
    /// The request's words it has, as the request wrote them.
    #[serde(default)]
    pub matched: Vec<String>,
    /// In the forget; otherwise listed as left out.
    pub chosen: bool,
    /// A capture's episode name: should it be sent before the forget is confirmed, it is deleted
    /// from Graphiti by that name.
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    pub id: String,
    pub created_ms: u64,
    /// The Graphiti group of the chat it was proposed in.
    pub group: String,
    /// The sender it was proposed to; none: only an operator can confirm it.
    pub sender: Option<String>,
    /// The session (the chat) it was proposed in, when the host named one: several chats may
    /// share a group.
    pub session: Option<String>,
    /// The search it came from: checked again after deleting.
    pub query: Option<String>,
    /// How many words of the request carry content.
    #[serde(default)]
    pub words: usize,
    pub candidates: Vec<Candidate>,
    /// Every memory of these groups (an operator's forget of a whole chat).
    pub whole_groups: Vec<String>,
    /// Exactly the ids named, not all the search found: no later capture is looked for.
    #[serde(default)]
    pub chosen_by_id: bool,
    /// The group's last capture Graphiti had acknowledged when the forget was proposed: the ones
    /// acknowledged up to it may still have been ingesting, and are looked for after confirming.
    #[serde(default)]
    pub accepted_until: Option<String>,
    /// Why a search of Graphiti could not be made when it was proposed (only the spool was).
    #[serde(default)]
    pub unsearched: Option<String>,
}

impl Proposal {
    /// The id: a digest of everything it binds and when it was made.
    pub fn make_id(&mut self) {
        let items: Vec<(Kind, &str)> = self
            .candidates
            .iter()
            .map(|c| (c.kind, c.id.as_str()))
            .collect();
        let fields = serde_json::to_string(&(
            DIGEST_DOMAIN,
            self.created_ms,
            &self.group,
            &self.sender,
            &self.session,
            &self.query,
            items,
            &self.whole_groups,
        ))
        .expect("strings serialise");
        self.id = Sha256::digest(fields.as_bytes())
            .iter()
            .take(ID_HEX_DIGITS / 2)
            .map(|b| format!("{b:02x}"))
            .collect();
    }

    pub fn expires_ms(&self) -> u64 {
        self.created_ms + EXPIRES_AFTER_MS
    }

    /// The chosen items of `kind`.
    pub fn chosen(&self, kind: Kind) -> impl Iterator<Item = &Candidate> {
        self.candidates
            .iter()
            .filter(move |c| c.chosen && c.kind == kind)
    }

    /// The spool entries it holds back: its chosen captures.
    pub fn held_stems(&self) -> impl Iterator<Item = &str> {
        self.chosen(Kind::Capture).map(|c| c.id.as_str())
    }

    /// Nothing chosen and no whole group: it would delete nothing.
    pub fn is_empty(&self) -> bool {
        self.whole_groups.is_empty() && !self.candidates.iter().any(|c| c.chosen)
    }
}

/// Who confirms a proposal: the sender in a chat (its group), or an operator.
pub enum Confirmer<'a> {
    Operator,
    Chat {
        group: Result<String, ControlError>,
        sender: Option<&'a str>,
        session: Option<&'a str>,
    },
}

impl Confirmer<'_> {
    /// Why this confirmer may not confirm or change `proposal`, when it may not.
    fn refuses(&self, proposal: &Proposal) -> Option<ControlError> {
        let Confirmer::Chat {
            group,
            sender,
            session,
        } = self
        else {
            return None;
        };
        let id = &proposal.id;
        let other_session = proposal
            .session
            .as_deref()
            .is_some_and(|s| Some(s) != *session);
        if group.as_ref().ok() != Some(&proposal.group) || other_session {
            return Some(ControlError::NotYours(format!(
                "forget {id} was proposed in another chat: only there can it be confirmed"
            )));
        }
        if proposal.sender.is_none() || proposal.sender.as_deref() != *sender {
            return Some(ControlError::NotYours(format!(
                "forget {id} was proposed to someone else: only they (or an operator) can \
                 confirm it"
            )));
        }
        None
    }

    /// The group whose proposals a chat confirmer may reach.
    fn group(&self) -> Option<&str> {
        match self {
            Confirmer::Chat { group, .. } => group.as_ref().ok().map(String::as_str),
            Confirmer::Operator => None,
        }
    }
}

fn memory_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("memory")
}

fn log_path(state_dir: &Path) -> PathBuf {
    memory_dir(state_dir).join("forget-log.jsonl")
}

/// Whether `id` has the shape of a proposal's id, so a typo is told apart from an unknown id.
pub fn check_id(id: &str) -> Result<&str, ControlError> {
    let id = id.trim();
    if id.len() == ID_HEX_DIGITS && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id)
    } else {
        Err(ControlError::NotFound(format!(
            "{:?} is not a forget id: an id is the {ID_HEX_DIGITS} hex digits the proposal showed",
            crate::platform::text::truncate_chars(id, 40)
        )))
    }
}

fn locked<T>(
    locks: &mut dyn Locks,
    work: impl FnOnce() -> Result<T, ControlError>,
) -> Result<T, ControlError> {
    locks
        .acquire(super::paused::LOCK, LOCK_LEASE, LOCK_WAIT)
        .map_err(|e| match e {
            LockError::Busy(why) => ControlError::Busy(format!(
                "another process is changing memory settings: {why}"
            )),
            other => {
                ControlError::State(format!("the memory settings could not be locked: {other}"))
            }
        })?;
    let done = work();
    locks.release(super::paused::LOCK);
    done
}

/// One line of the deletion log: ids and counts, never the deleted text.
#[derive(Debug, Serialize)]
pub struct Logged<'a> {
    pub at_ms: u64,
    pub forget: &'a str,
    /// "operator", or "sender <id>".
    pub by: String,
    pub group: &'a str,
    pub facts_deleted: Vec<&'a str>,
    pub episodes_deleted: Vec<&'a str>,
    pub groups_deleted: Vec<&'a str>,
    pub spool_entries_removed: usize,
    /// Each id that could not be removed, with why.
    pub not_removed: Vec<(String, String)>,
}

/// What confirmed forgets (and their follow-ups) could not remove, by the deletion log: the items,
/// and the forgets they were in. A line that cannot be read counts for nothing; a log too large
/// to read counts as empty.
pub fn not_removed_logged(state_dir: &Path) -> (usize, usize) {
    const MAX_LOG_BYTES: u64 = 16 << 20;
    let Ok(Some(log)) = crate::platform::files::read_regular(&log_path(state_dir), MAX_LOG_BYTES)
    else {
        return (0, 0);
    };
    let mut forgets = std::collections::BTreeSet::new();
    let mut items = 0;
    for entry in log
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<serde_json::Value>(line).ok())
    {
        let not_removed = entry["not_removed"].as_array().map_or(0, Vec::len);
        if not_removed > 0 {
            items += not_removed;
            forgets.insert(entry["forget"].as_str().unwrap_or_default().to_string());
        }
    }
    (items, forgets.len())
}

/// What confirmed forgets did to each group, by the deletion log (what an import must not bring
/// back): when the group's whole memory was last deleted, and how many other forgets it had.
#[derive(Debug, Default, PartialEq)]
pub struct ForgottenByGroup {
    pub wiped_at_ms: std::collections::HashMap<String, u64>,
    pub item_forgets: std::collections::HashMap<String, usize>,
}

/// The deletion log read by group (an unreadable line counts for nothing).
pub fn forgotten_by_group(state_dir: &Path) -> ForgottenByGroup {
    const MAX_LOG_BYTES: u64 = 16 << 20;
    let mut forgotten = ForgottenByGroup::default();
    let Ok(Some(log)) = crate::platform::files::read_regular(&log_path(state_dir), MAX_LOG_BYTES)
    else {
        return forgotten;
    };
    for entry in log
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<serde_json::Value>(line).ok())
    {
        let at = entry["at_ms"].as_u64().unwrap_or(0);
        let wiped: Vec<&str> = entry["groups_deleted"]
            .as_array()
            .map(|groups| {
                groups
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .collect()
            })
            .unwrap_or_default();
        for group in &wiped {
            let slot = forgotten
                .wiped_at_ms
                .entry((*group).to_string())
                .or_default();
            *slot = (*slot).max(at);
        }
        let group = entry["group"].as_str().unwrap_or_default();
        if wiped.is_empty() && !group.is_empty() {
            *forgotten.item_forgets.entry(group.to_string()).or_default() += 1;
        }
    }
    forgotten
}

/// Appends `entry` to the deletion log.
pub fn log(state_dir: &Path, entry: &Logged) -> Result<(), ControlError> {
    let path = log_path(state_dir);
    let mut line = serde_json::to_string(entry).expect("log entries serialise");
    line.push('\n');
    std::fs::create_dir_all(path.parent().expect("has a parent"))
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)?
                .write_all(line.as_bytes())
        })
        .map_err(|e| {
            ControlError::State(format!(
                "cannot append to the deletion log {}: {e}",
                path.display()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_are_not_hex_digits_are_told_apart() {
        for id in [
            "none",
            "{sender}",
            "abc",
            &"a".repeat(200),
            "0123456789abcdeg",
        ] {
            let refused = check_id(id).unwrap_err();
            assert!(matches!(refused, ControlError::NotFound(_)), "{id}");
            assert!(refused.to_string().contains("not a forget id"), "{id}");
        }
    }

    #[test]
    fn the_log_holds_ids_and_never_the_text() {
        let dir = tempfile::tempdir().unwrap();
        let entry = Logged {
            at_ms: 1,
            forget: "0123456789abcdef",
            by: "sender ana".into(),
            group: "dm-ana",
            facts_deleted: vec!["f1"],
            episodes_deleted: vec![],
            groups_deleted: vec![],
            spool_entries_removed: 1,
            not_removed: vec![],
        };
        log(dir.path(), &entry).unwrap();
        log(dir.path(), &entry).unwrap();
        let text = std::fs::read_to_string(log_path(dir.path())).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains("\"f1\"") && !text.contains("therapist"));
    }
}
