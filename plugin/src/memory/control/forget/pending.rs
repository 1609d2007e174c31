//! Proposed forgets waiting for their confirmation: `memory/forget-pending/`, one file per Graphiti
//! group, so a proposal's fate depends on its own chat only. A chat keeps at most
//! [`MAX_PER_GROUP`] proposals and at most [`MAX_WAITING_GROUPS`] chats have any: past either, a new
//! proposal is refused, and no proposal is ever dropped to make room. A proposal holds back the
//! captures it lists until it is confirmed or expires. A file that cannot be read fails closed, as
//! `paused.json` does: it is set aside (`<name>.unreadable-<ms>`) and every capture of its chat is
//! held for as long as anything it held could still have been confirmed; `status` names it.

mod holds;
mod legacy;
mod store;

pub use holds::{Held, PendingSummary, held, set_aside_unreadable, summary};

use super::{Confirmer, ControlError, EXPIRES_AFTER_MS, Proposal, check_id, locked};
use crate::platform::files;
use crate::platform::locks::Locks;
use legacy::tidy;
use std::path::{Path, PathBuf};
use store::{
    GroupFile, Loaded, dir, file_stem, group_path, load, save, set_aside, unreadable_note,
};

/// Proposals one chat (Graphiti group) keeps waiting at most.
pub const MAX_PER_GROUP: usize = 8;
/// Chats with a proposal waiting, at most.
pub const MAX_WAITING_GROUPS: usize = 256;
/// While the store is full: the moment before which no chat's proposals can all have lapsed.
const FULL_UNTIL: &str = "~full-until";

/// What a proposal made: the proposal, the earlier proposal of the same request it replaced, and
/// what was found wrong with the store on the way.
#[derive(Debug)]
pub struct Proposed {
    pub proposal: Proposal,
    pub replaced: Option<String>,
    pub notes: Vec<String>,
}

/// Keeps `proposal` (its id made) for confirmation. An earlier proposal of the same request by
/// the same person in the same chat is replaced; past the caps, the proposal is refused.
pub fn propose(
    state_dir: &Path,
    mut proposal: Proposal,
    locks: &mut dyn Locks,
) -> Result<Proposed, ControlError> {
    proposal.make_id();
    let now = proposal.created_ms;
    locked(locks, || {
        let mut notes = tidy(state_dir, now);
        let path = group_path(state_dir, &proposal.group);
        let mut file = match load(&path) {
            Loaded::Read(file) => file,
            Loaded::Missing => GroupFile {
                group: proposal.group.clone(),
                proposals: vec![],
            },
            Loaded::Unreadable(why) => {
                let aside = set_aside(state_dir, &path, &file_stem(&proposal.group), now)?;
                notes.push(unreadable_note(&path, &why, &aside, now + EXPIRES_AFTER_MS));
                GroupFile {
                    group: proposal.group.clone(),
                    proposals: vec![],
                }
            }
        };
        file.proposals.retain(|p| p.expires_ms() > now);
        let same_request = |p: &Proposal| {
            p.query == proposal.query
                && p.sender == proposal.sender
                && p.session == proposal.session
                && p.whole_groups == proposal.whole_groups
        };
        let replaced = file
            .proposals
            .iter()
            .position(same_request)
            .map(|at| file.proposals.remove(at).id);
        if file.proposals.len() >= MAX_PER_GROUP {
            return Err(ControlError::Refused(format!(
                "{MAX_PER_GROUP} forgets are already waiting in this chat: confirm one, or let \
                 them lapse ({} minutes after each was proposed), before proposing another",
                EXPIRES_AFTER_MS / 60_000
            )));
        }
        if file.proposals.is_empty() {
            let waiting = waiting_groups(state_dir, &path, now);
            if waiting >= MAX_WAITING_GROUPS {
                return Err(ControlError::Refused(format!(
                    "forgets are waiting for confirmation in {waiting} chats, as many as are kept \
                     at once: try again once some are confirmed or have lapsed (within {} \
                     minutes)",
                    EXPIRES_AFTER_MS / 60_000
                )));
            }
        }
        file.proposals.push(proposal.clone());
        save(&path, &file)?;
        Ok(Proposed {
            proposal,
            replaced,
            notes,
        })
    })
}

/// The chats other than `own`'s with a proposal waiting. At the cap, files of lapsed proposals
/// only are removed to make room; when none can lapse before some moment, a marker says so, so
/// the proposals refused meanwhile read no file.
fn waiting_groups(state_dir: &Path, own: &Path, now_ms: u64) -> usize {
    let dir = dir(state_dir);
    let others: Vec<PathBuf> = files::list_names(&dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.ends_with(".json"))
        .map(|n| dir.join(n))
        .filter(|p| p != own)
        .collect();
    if others.len() < MAX_WAITING_GROUPS {
        return others.len();
    }
    let marker = dir.join(FULL_UNTIL);
    let full_until = files::read_regular(&marker, 64)
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok()?.trim().parse::<u64>().ok());
    if full_until.is_some_and(|until| now_ms < until) {
        return others.len();
    }
    let mut first_lapse = u64::MAX;
    let mut waiting = 0;
    for path in others {
        match load(&path) {
            Loaded::Read(file) => {
                let lapses = file
                    .proposals
                    .iter()
                    .map(Proposal::expires_ms)
                    .max()
                    .unwrap_or(0);
                if lapses <= now_ms && std::fs::remove_file(&path).is_ok() {
                    continue;
                }
                first_lapse = first_lapse.min(lapses);
                waiting += 1;
            }
            Loaded::Missing => {}
            Loaded::Unreadable(_) => waiting += 1,
        }
    }
    if waiting >= MAX_WAITING_GROUPS {
        let _ = files::write_atomically(&marker, first_lapse.to_string().as_bytes());
    }
    waiting
}

/// Takes the proposal `id` out of the store when `confirmer` may confirm it now: single use. A
/// confirmation from another chat or sender leaves it for its own.
pub fn take(
    state_dir: &Path,
    id: &str,
    confirmer: &Confirmer,
    now_ms: u64,
    locks: &mut dyn Locks,
) -> Result<Proposal, ControlError> {
    change(state_dir, id, confirmer, now_ms, locks, |file, at| {
        Ok(file.proposals.remove(at))
    })
}

/// Leaves the items numbered `drop` out of proposal `id` and adds the left-out ones numbered
/// `add`, when `confirmer` may confirm it; the proposal as it now stands.
pub fn edit(
    state_dir: &Path,
    id: &str,
    confirmer: &Confirmer,
    (drop, add): (&[u32], &[u32]),
    now_ms: u64,
    locks: &mut dyn Locks,
) -> Result<Proposal, ControlError> {
    change(state_dir, id, confirmer, now_ms, locks, |file, at| {
        let proposal = &mut file.proposals[at];
        let count = proposal.candidates.len();
        let check = |n: u32| {
            let index = (n as usize).checked_sub(1).filter(|&i| i < count);
            index.ok_or_else(|| {
                ControlError::NotFound(match count {
                    0 => format!("forget {} lists no items to choose from", proposal.id),
                    _ => format!(
                        "forget {} has no item {n}: its items are numbered 1 to {count}",
                        proposal.id
                    ),
                })
            })
        };
        if let Some(both) = drop.iter().find(|n| add.contains(n)) {
            return Err(ControlError::Refused(format!(
                "item {both} cannot be both left out and added"
            )));
        }
        let drops = drop
            .iter()
            .map(|&n| check(n))
            .collect::<Result<Vec<_>, _>>()?;
        let adds = add
            .iter()
            .map(|&n| check(n))
            .collect::<Result<Vec<_>, _>>()?;
        for i in drops {
            proposal.candidates[i].chosen = false;
        }
        for i in adds {
            proposal.candidates[i].chosen = true;
        }
        Ok(proposal.clone())
    })
}

/// Finds proposal `id`, checks `confirmer` may act on it now, applies `act` to its chat's file
/// and saves that file.
fn change<T>(
    state_dir: &Path,
    id: &str,
    confirmer: &Confirmer,
    now_ms: u64,
    locks: &mut dyn Locks,
    act: impl FnOnce(&mut GroupFile, usize) -> Result<T, ControlError>,
) -> Result<T, ControlError> {
    let id = check_id(id)?.to_ascii_lowercase();
    locked(locks, || {
        let _ = tidy(state_dir, now_ms);
        let Some((path, mut file, at)) = find(state_dir, &id, confirmer, now_ms)? else {
            return Err(ControlError::NotFound(format!(
                "no forget {id} is waiting: it was confirmed already, expired (after {} minutes) \
                 or never proposed",
                EXPIRES_AFTER_MS / 60_000
            )));
        };
        if file.proposals[at].expires_ms() <= now_ms {
            file.proposals.remove(at);
            save(&path, &file)?;
            return Err(ControlError::NotFound(format!(
                "forget {id} expired: it could be confirmed for {} minutes; ask again",
                EXPIRES_AFTER_MS / 60_000
            )));
        }
        if let Some(why) = confirmer.refuses(&file.proposals[at]) {
            return Err(why);
        }
        let out = act(&mut file, at)?;
        save(&path, &file)?;
        Ok(out)
    })
}

/// The file and place of proposal `id`: looked for in the confirmer's own chat first, then in
/// every chat (so a confirmation from the wrong chat is told so). An unreadable file of the
/// confirmer's chat is set aside and said.
fn find(
    state_dir: &Path,
    id: &str,
    confirmer: &Confirmer,
    now_ms: u64,
) -> Result<Option<(PathBuf, GroupFile, usize)>, ControlError> {
    let in_file = |path: PathBuf, file: GroupFile| {
        let at = file.proposals.iter().position(|p| p.id == id)?;
        Some((path, file, at))
    };
    if let Some(group) = confirmer.group() {
        let path = group_path(state_dir, group);
        match load(&path) {
            Loaded::Read(file) => {
                if let Some(found) = in_file(path, file) {
                    return Ok(Some(found));
                }
            }
            Loaded::Missing => {}
            Loaded::Unreadable(why) => {
                let aside = set_aside(state_dir, &path, &file_stem(group), now_ms)?;
                return Err(ControlError::State(unreadable_note(
                    &path,
                    &why,
                    &aside,
                    now_ms + EXPIRES_AFTER_MS,
                )));
            }
        }
    }
    let dir = dir(state_dir);
    for name in files::list_names(&dir).unwrap_or_default() {
        if !name.ends_with(".json") {
            continue;
        }
        if let Loaded::Read(file) = load(&dir.join(&name))
            && let Some(found) = in_file(dir.join(&name), file)
        {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
