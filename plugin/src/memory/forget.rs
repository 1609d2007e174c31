//! Forgets proposed and not yet confirmed, and the log of what was forgotten, in the state
//! directory's `memory/`. The model can only propose a forget (`graphiti_forget`); it is carried out
//! when the person it was proposed to confirms it in the same chat, or an operator does, once and
//! before it expires. A proposal binds exactly its items, its Graphiti group and its sender. The log
//! says what was deleted (ids and counts), by whom and when, never the deleted text.

use super::paused::LOCK;
use crate::platform::files;
use crate::platform::locks::{LockError, Locks};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a proposed forget can be confirmed.
pub const EXPIRES_AFTER_MS: u64 = 60 * 60 * 1000;
/// Proposals kept at most; the oldest go first.
const MAX_PENDING: usize = 64;
/// Hex digits of the id shown (64 bits of SHA-256: no accidental collision).
pub const ID_HEX_DIGITS: usize = 16;
const LOCK_LEASE: Duration = Duration::from_secs(10);
const LOCK_WAIT: Duration = Duration::from_secs(5);
const MAX_FILE_BYTES: u64 = 4 << 20;
const DIGEST_DOMAIN: &str = "graphiti-openclaw forget v1";

/// A fact or episode a proposal would delete: its uuid as the search or listing returned it, and
/// what the confirmation shows of it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Item {
    pub uuid: String,
    pub shown: String,
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
    pub facts: Vec<Item>,
    pub episodes: Vec<Item>,
    /// Capture-spool entries (their stems) of the group that mention the search.
    pub spooled: Vec<String>,
    /// Every memory of the group, and of these earlier groups of the same chat (an operator's
    /// forget of a whole chat).
    pub whole_groups: Vec<String>,
    /// Exactly the ids named, not all the search found: no later capture is looked for.
    #[serde(default)]
    pub chosen_by_id: bool,
    /// The group's captures Graphiti had accepted when the forget was proposed (their episode
    /// names): one not yet listed then may still be ingesting.
    #[serde(default)]
    pub accepted: Vec<String>,
}

impl Proposal {
    /// The id: a digest of everything it binds and when it was made.
    pub fn make_id(&mut self) {
        let fields = serde_json::to_string(&(
            DIGEST_DOMAIN,
            self.created_ms,
            &self.group,
            &self.sender,
            &self.session,
            &self.facts,
            &self.episodes,
            &self.spooled,
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

    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
            && self.episodes.is_empty()
            && self.spooled.is_empty()
            && self.whole_groups.is_empty()
    }
}

/// Who confirms a proposal: the sender in a chat (its group), or an operator.
pub enum Confirmer<'a> {
    Operator,
    Chat {
        group: Result<String, String>,
        sender: Option<&'a str>,
        session: Option<&'a str>,
    },
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct PendingFile {
    proposals: Vec<Proposal>,
}

fn pending_path(state_dir: &Path) -> PathBuf {
    state_dir.join("memory").join("forget-pending.json")
}

fn log_path(state_dir: &Path) -> PathBuf {
    state_dir.join("memory").join("forget-log.jsonl")
}

/// Whether `id` has the shape of a proposal's id, so a typo is told apart from an unknown id.
pub fn check_id(id: &str) -> Result<&str, String> {
    let id = id.trim();
    if id.len() == ID_HEX_DIGITS && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id)
    } else {
        Err(format!(
            "{:?} is not a forget id: an id is the {ID_HEX_DIGITS} hex digits the proposal showed",
            crate::platform::text::truncate_chars(id, 40)
        ))
    }
}

fn locked<T>(locks: &mut dyn Locks, work: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    locks
        .acquire(LOCK, LOCK_LEASE, LOCK_WAIT)
        .map_err(|e| match e {
            LockError::Busy(why) => format!("another process is changing memory settings: {why}"),
            other => format!("the memory settings could not be locked: {other}"),
        })?;
    let done = work();
    locks.release(LOCK);
    done
}

fn load(state_dir: &Path) -> Result<PendingFile, String> {
    let path = pending_path(state_dir);
    match files::read_regular(&path, MAX_FILE_BYTES) {
        Ok(None) => Ok(PendingFile::default()),
        Ok(Some(bytes)) => serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{} cannot be read ({e}); remove it (the forgets it held are proposed again)",
                path.display()
            )
        }),
        Err(e) => Err(format!("{} cannot be read: {e}", path.display())),
    }
}

fn save(state_dir: &Path, pending: &PendingFile) -> Result<(), String> {
    let path = pending_path(state_dir);
    let bytes = serde_json::to_vec_pretty(pending).expect("proposals serialise");
    files::write_atomically(&path, &bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Keeps `proposal` (its id made) for confirmation; expired and the oldest proposals go.
pub fn propose(
    state_dir: &Path,
    mut proposal: Proposal,
    locks: &mut dyn Locks,
) -> Result<Proposal, String> {
    proposal.make_id();
    let now = proposal.created_ms;
    locked(locks, || {
        // An unreadable file holds nothing confirmable: it is replaced.
        let mut pending = load(state_dir).unwrap_or_default();
        pending
            .proposals
            .retain(|p| p.expires_ms() > now && p.id != proposal.id);
        pending.proposals.push(proposal.clone());
        let excess = pending.proposals.len().saturating_sub(MAX_PENDING);
        pending.proposals.drain(..excess);
        save(state_dir, &pending)?;
        Ok(proposal)
    })
}

/// Takes the proposal `id` out of the store when `confirmer` may confirm it now: single use. A
/// confirmation from another chat or sender leaves it for its own.
pub fn take(
    state_dir: &Path,
    id: &str,
    confirmer: &Confirmer,
    now_ms: u64,
    locks: &mut dyn Locks,
) -> Result<Proposal, String> {
    let id = check_id(id)?.to_ascii_lowercase();
    locked(locks, || {
        let mut pending = load(state_dir)?;
        let Some(at) = pending.proposals.iter().position(|p| p.id == id) else {
            return Err(format!(
                "no forget {id} is waiting: it was confirmed already, expired (after {} minutes) \
                 or never proposed",
                EXPIRES_AFTER_MS / 60_000
            ));
        };
        let proposal = &pending.proposals[at];
        if proposal.expires_ms() <= now_ms {
            pending.proposals.remove(at);
            save(state_dir, &pending)?;
            return Err(format!(
                "forget {id} expired: it could be confirmed for {} minutes; ask again",
                EXPIRES_AFTER_MS / 60_000
            ));
        }
        if let Confirmer::Chat {
            group,
            sender,
            session,
        } = confirmer
        {
            let other_session = proposal
                .session
                .as_deref()
                .is_some_and(|s| Some(s) != *session);
            if group.as_deref().ok() != Some(proposal.group.as_str()) || other_session {
                return Err(format!(
                    "forget {id} was proposed in another chat: only there can it be confirmed"
                ));
            }
            if proposal.sender.is_none() || proposal.sender.as_deref() != *sender {
                return Err(format!(
                    "forget {id} was proposed to someone else: only they (or an operator) can \
                     confirm it"
                ));
            }
        }
        let proposal = pending.proposals.remove(at);
        save(state_dir, &pending)?;
        Ok(proposal)
    })
}

/// The spool entries that proposals not yet confirmed nor expired list: they are not sent while
/// their forget may still be confirmed. An unreadable file holds nothing confirmable.
pub fn held_stems(state_dir: &Path, now_ms: u64) -> std::collections::HashSet<String> {
    load(state_dir)
        .map(|pending| {
            pending
                .proposals
                .into_iter()
                .filter(|p| p.expires_ms() > now_ms)
                .flat_map(|p| p.spooled)
                .collect()
        })
        .unwrap_or_default()
}

/// How long after a confirmed forget the captures Graphiti may still have been ingesting are
/// looked for.
pub const FOLLOW_UP_MS: u64 = 30 * 60 * 1000;

/// A confirmed forget that may have missed captures Graphiti had accepted but not yet ingested (or
/// that were sent with no answer): looked for again until `until_ms`, and deleted when found.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FollowUp {
    pub forget: String,
    pub group: String,
    /// The search the forget came from: an accepted capture is the forget's when it shares a
    /// word with it (none: only the episodes in doubt).
    pub query: Option<String>,
    /// Names of the episodes sent with no answer that the forget took out of the spool.
    pub names: Vec<String>,
    /// Names of the group's captures Graphiti had accepted when the forget was proposed.
    pub accepted: Vec<String>,
    pub until_ms: u64,
    /// What the follow-up deleted so far, and what it could not.
    pub deleted: Vec<String>,
    pub not_removed: Vec<(String, String)>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FollowUps {
    pub follow_ups: Vec<FollowUp>,
}

fn follow_ups_path(state_dir: &Path) -> PathBuf {
    state_dir.join("memory").join("forget-follow-ups.json")
}

/// The follow-ups kept, finished ones included until the next change; none when the file is
/// missing. Err: it cannot be read.
pub fn follow_ups(state_dir: &Path) -> Result<FollowUps, String> {
    let path = follow_ups_path(state_dir);
    match files::read_regular(&path, MAX_FILE_BYTES) {
        Ok(None) => Ok(FollowUps::default()),
        Ok(Some(bytes)) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("{} cannot be read ({e})", path.display())),
        Err(e) => Err(format!("{} cannot be read: {e}", path.display())),
    }
}

/// Whether any follow-up file exists (one stat: ticks ask this every time).
pub fn has_follow_ups(state_dir: &Path) -> bool {
    follow_ups_path(state_dir).exists()
}

/// Changes the follow-ups under the lock: `change` gets them all (finished ones dropped once a
/// day old) and saves what it leaves; the file goes when none is left.
pub fn change_follow_ups<T>(
    state_dir: &Path,
    now_ms: u64,
    locks: &mut dyn Locks,
    change: impl FnOnce(&mut Vec<FollowUp>) -> T,
) -> Result<T, String> {
    locked(locks, || {
        let mut kept = follow_ups(state_dir).unwrap_or_default();
        kept.follow_ups
            .retain(|f| now_ms < f.until_ms + 24 * 60 * 60 * 1000);
        let out = change(&mut kept.follow_ups);
        let path = follow_ups_path(state_dir);
        if kept.follow_ups.is_empty() {
            let _ = std::fs::remove_file(&path);
        } else {
            let bytes = serde_json::to_vec_pretty(&kept).expect("follow-ups serialise");
            files::write_atomically(&path, &bytes)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Ok(out)
    })
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

/// Appends `entry` to the deletion log.
pub fn log(state_dir: &Path, entry: &Logged) -> Result<(), String> {
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
        .map_err(|e| format!("cannot append to the deletion log {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::locks::Unshared;

    fn proposal(created_ms: u64) -> Proposal {
        Proposal {
            id: String::new(),
            created_ms,
            group: "dm-ana".into(),
            sender: Some("ana".into()),
            session: Some("agent:main:telegram:direct:ana".into()),
            query: Some("therapist".into()),
            facts: vec![Item {
                uuid: "f1".into(),
                shown: "Ana sees a therapist".into(),
            }],
            episodes: vec![],
            spooled: vec![],
            whole_groups: vec![],
            chosen_by_id: false,
            accepted: vec![],
        }
    }

    fn chat<'a>(group: &str, sender: Option<&'a str>) -> Confirmer<'a> {
        Confirmer::Chat {
            group: Ok(group.into()),
            sender,
            session: Some("agent:main:telegram:direct:ana"),
        }
    }

    #[test]
    fn only_its_sender_in_its_chat_confirms_it_once_before_it_expires() {
        let dir = tempfile::tempdir().unwrap();
        let p = propose(dir.path(), proposal(1_000), &mut Unshared).unwrap();
        assert_eq!(p.id.len(), ID_HEX_DIGITS);
        let other_sender = take(
            dir.path(),
            &p.id,
            &chat("dm-ana", Some("bob")),
            2_000,
            &mut Unshared,
        );
        assert!(other_sender.unwrap_err().contains("someone else"));
        let other_chat = take(
            dir.path(),
            &p.id,
            &chat("dm-bob", Some("ana")),
            2_000,
            &mut Unshared,
        );
        assert!(other_chat.unwrap_err().contains("another chat"));
        let upper = p.id.to_ascii_uppercase();
        let taken = take(
            dir.path(),
            &upper,
            &chat("dm-ana", Some("ana")),
            2_000,
            &mut Unshared,
        );
        assert_eq!(taken.unwrap().facts, p.facts);
        let replayed = take(
            dir.path(),
            &p.id,
            &chat("dm-ana", Some("ana")),
            2_000,
            &mut Unshared,
        );
        assert!(replayed.unwrap_err().contains("no forget"));

        let late = propose(dir.path(), proposal(5_000), &mut Unshared).unwrap();
        let after = late.expires_ms();
        let expired = take(
            dir.path(),
            &late.id,
            &Confirmer::Operator,
            after,
            &mut Unshared,
        );
        assert!(expired.unwrap_err().contains("expired"));
    }

    #[test]
    fn a_proposal_without_a_sender_is_the_operators_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = proposal(1_000);
        p.sender = None;
        let p = propose(dir.path(), p, &mut Unshared).unwrap();
        assert!(
            take(
                dir.path(),
                &p.id,
                &chat("dm-ana", None),
                2_000,
                &mut Unshared
            )
            .is_err()
        );
        assert!(
            take(
                dir.path(),
                &p.id,
                &Confirmer::Operator,
                2_000,
                &mut Unshared
            )
            .is_ok()
        );
    }

    #[test]
    fn ids_that_are_not_hex_digits_are_told_apart() {
        for id in [
            "none",
            "{sender}",
            "abc",
            &"a".repeat(200),
            "0123456789abcdeg",
        ] {
            assert!(
                check_id(id).unwrap_err().contains("not a forget id"),
                "{id}"
            );
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
