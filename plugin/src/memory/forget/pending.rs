//! Proposed forgets waiting for their confirmation: `memory/forget-pending/`, one file per Graphiti
//! group, so a proposal's fate depends on its own chat only. A chat keeps at most
//! [`MAX_PER_GROUP`] proposals and at most [`MAX_WAITING_GROUPS`] chats have any: past either, a new
//! proposal is refused, and no proposal is ever dropped to make room. A proposal holds back the
//! captures it lists until it is confirmed or expires. A file that cannot be read fails closed, as
//! `paused.json` does: it is set aside (`<name>.unreadable-<ms>`) and every capture of its chat is
//! held for as long as anything it held could still have been confirmed; `status` names it.

use super::{Candidate, Confirmer, EXPIRES_AFTER_MS, Kind, Proposal, check_id, locked, memory_dir};
use crate::memory::group_id;
use crate::platform::files;
use crate::platform::locks::Locks;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

/// Proposals one chat (Graphiti group) keeps waiting at most.
pub const MAX_PER_GROUP: usize = 8;
/// Chats with a proposal waiting, at most.
pub const MAX_WAITING_GROUPS: usize = 256;
/// A chat's file is refused beyond this: proposals are bounded far below.
const MAX_FILE_BYTES: u64 = 1 << 20;
/// The single file an earlier release kept every proposal in.
const LEGACY_FILE: &str = "forget-pending.json";
const LEGACY_MAX_BYTES: u64 = 4 << 20;
const DIR: &str = "forget-pending";
/// What a set-aside file's name has between the file's stem and when it was set aside.
const ASIDE: &str = ".unreadable-";
/// The stem of what stands for the whole store: an earlier release's single file, or the
/// directory itself, set aside.
const EVERYTHING: &str = "~all";
/// While the store is full: the moment before which no chat's proposals can all have lapsed.
const FULL_UNTIL: &str = "~full-until";

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct GroupFile {
    group: String,
    proposals: Vec<Proposal>,
}

fn dir(state_dir: &Path) -> PathBuf {
    memory_dir(state_dir).join(DIR)
}

/// The name (without `.json`) of `group`'s file: the group id itself when it is a short one, else
/// a digest of it (`~` is never in a group id).
fn file_stem(group: &str) -> String {
    if group.len() <= 160 && group_id::check_group_id(group).is_ok() {
        return group.to_string();
    }
    let hex: String = Sha256::digest(group.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("~{hex}")
}

fn group_path(state_dir: &Path, group: &str) -> PathBuf {
    dir(state_dir).join(format!("{}.json", file_stem(group)))
}

enum Loaded {
    Missing,
    Read(GroupFile),
    Unreadable(String),
}

fn load(path: &Path) -> Loaded {
    match files::read_regular(path, MAX_FILE_BYTES) {
        Ok(None) => Loaded::Missing,
        Ok(Some(bytes)) => match serde_json::from_slice(&bytes) {
            Ok(file) => Loaded::Read(file),
            Err(e) => Loaded::Unreadable(e.to_string()),
        },
        Err(e) => Loaded::Unreadable(e.to_string()),
    }
}

/// Writes `file`, or removes it when no proposal is left.
fn save(path: &Path, file: &GroupFile) -> Result<(), String> {
    if file.proposals.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(format!("cannot remove {}: {e}", path.display()))
            }
            _ => Ok(()),
        };
    }
    let bytes = serde_json::to_vec(file).expect("proposals serialise");
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "the forgets waiting in this chat would take more than {} KiB: confirm or let one \
             lapse first",
            MAX_FILE_BYTES >> 10
        ));
    }
    files::write_atomically(path, &bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Renames the unreadable `path` (whose name's stem is `stem`) to its set-aside name; until when
/// the captures it could cover are held.
fn set_aside(state_dir: &Path, path: &Path, stem: &str, now_ms: u64) -> Result<PathBuf, String> {
    let aside = dir(state_dir).join(format!("{stem}{ASIDE}{now_ms}"));
    let _ = std::fs::create_dir_all(dir(state_dir));
    std::fs::rename(path, &aside)
        .map_err(|e| format!("cannot set {} aside: {e}", path.display()))?;
    Ok(aside)
}

/// A set-aside file's stem and when it was set aside.
fn aside_of(name: &str) -> Option<(&str, u64)> {
    let (stem, ms) = name.split_once(ASIDE)?;
    Some((stem, ms.parse().ok()?))
}

fn unreadable_note(path: &Path, why: &str, aside: &Path, until_ms: u64) -> String {
    format!(
        "{} could not be read ({why}): set aside as {}; the captures it could cover are held \
         until {}, and the forgets it held must be proposed again",
        path.display(),
        aside.display(),
        crate::platform::time::iso8601(until_ms)
    )
}

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
) -> Result<Proposed, String> {
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
            return Err(format!(
                "{MAX_PER_GROUP} forgets are already waiting in this chat: confirm one, or let \
                 them lapse ({} minutes after each was proposed), before proposing another",
                EXPIRES_AFTER_MS / 60_000
            ));
        }
        if file.proposals.is_empty() {
            let waiting = waiting_groups(state_dir, &path, now);
            if waiting >= MAX_WAITING_GROUPS {
                return Err(format!(
                    "forgets are waiting for confirmation in {waiting} chats, as many as are kept \
                     at once: try again once some are confirmed or have lapsed (within {} \
                     minutes)",
                    EXPIRES_AFTER_MS / 60_000
                ));
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
) -> Result<Proposal, String> {
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
) -> Result<Proposal, String> {
    change(state_dir, id, confirmer, now_ms, locks, |file, at| {
        let proposal = &mut file.proposals[at];
        let count = proposal.candidates.len();
        let check = |n: u32| {
            let index = (n as usize).checked_sub(1).filter(|&i| i < count);
            index.ok_or_else(|| match count {
                0 => format!("forget {} lists no items to choose from", proposal.id),
                _ => format!(
                    "forget {} has no item {n}: its items are numbered 1 to {count}",
                    proposal.id
                ),
            })
        };
        if let Some(both) = drop.iter().find(|n| add.contains(n)) {
            return Err(format!("item {both} cannot be both left out and added"));
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
    act: impl FnOnce(&mut GroupFile, usize) -> Result<T, String>,
) -> Result<T, String> {
    let id = check_id(id)?.to_ascii_lowercase();
    locked(locks, || {
        let _ = tidy(state_dir, now_ms);
        let Some((path, mut file, at)) = find(state_dir, &id, confirmer, now_ms)? else {
            return Err(format!(
                "no forget {id} is waiting: it was confirmed already, expired (after {} minutes) \
                 or never proposed",
                EXPIRES_AFTER_MS / 60_000
            ));
        };
        if file.proposals[at].expires_ms() <= now_ms {
            file.proposals.remove(at);
            save(&path, &file)?;
            return Err(format!(
                "forget {id} expired: it could be confirmed for {} minutes; ask again",
                EXPIRES_AFTER_MS / 60_000
            ));
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
) -> Result<Option<(PathBuf, GroupFile, usize)>, String> {
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
                return Err(unreadable_note(
                    &path,
                    &why,
                    &aside,
                    now_ms + EXPIRES_AFTER_MS,
                ));
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

/// Under the lock, before the store is changed: an earlier release's single file is moved into
/// the chats' files (or set aside when it cannot be read), and a store that is not a directory is
/// set aside. What was set aside, said.
fn tidy(state_dir: &Path, now_ms: u64) -> Vec<String> {
    let mut notes = Vec::new();
    let dir = dir(state_dir);
    if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
        let aside = memory_dir(state_dir).join(format!("{DIR}{ASIDE}{now_ms}"));
        match std::fs::rename(&dir, &aside) {
            Ok(()) => {
                let marker = dir.join(format!("{EVERYTHING}{ASIDE}{now_ms}"));
                let _ = files::write_atomically(&marker, aside.display().to_string().as_bytes());
                notes.push(unreadable_note(
                    &dir,
                    "not a directory",
                    &aside,
                    now_ms + EXPIRES_AFTER_MS,
                ));
            }
            Err(e) => notes.push(format!("{} is not a directory: {e}", dir.display())),
        }
    }
    let legacy = memory_dir(state_dir).join(LEGACY_FILE);
    let read = match files::read_regular(&legacy, LEGACY_MAX_BYTES) {
        Ok(None) => return notes,
        Ok(Some(bytes)) => serde_json::from_slice::<LegacyFile>(&bytes).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    match read {
        Ok(old) => {
            let mut moved = true;
            for proposal in old
                .proposals
                .into_iter()
                .filter(|p| p.created_ms + EXPIRES_AFTER_MS > now_ms)
            {
                let proposal = proposal.upgraded();
                let path = group_path(state_dir, &proposal.group);
                let mut file = match load(&path) {
                    Loaded::Read(file) => file,
                    _ => GroupFile {
                        group: proposal.group.clone(),
                        proposals: vec![],
                    },
                };
                if !file.proposals.iter().any(|p| p.id == proposal.id) {
                    file.proposals.push(proposal);
                }
                moved &= save(&path, &file).is_ok();
            }
            if moved {
                let _ = std::fs::remove_file(&legacy);
            }
        }
        Err(why) => match set_aside(state_dir, &legacy, EVERYTHING, now_ms) {
            Ok(aside) => notes.push(unreadable_note(
                &legacy,
                &why,
                &aside,
                now_ms + EXPIRES_AFTER_MS,
            )),
            Err(e) => notes.push(e),
        },
    }
    notes
}

/// The captures held back now: those the waiting proposals list, and every capture of a chat
/// whose proposals cannot be read (or of every chat, when the store itself cannot be).
#[derive(Debug, Default)]
pub struct Held {
    /// Spool entry (stem) → the forget holding it and until when.
    pub stems: HashMap<String, (String, u64)>,
    /// The file stems of chats whose proposals cannot be read, with until when all their
    /// captures are held.
    pub chats: HashMap<String, u64>,
    /// Every capture is held until then.
    pub everything_until: Option<u64>,
}

impl Held {
    /// Until when the spool entry `stem` of `group` is held, if it is.
    pub fn until(&self, stem: &str, group: Option<&str>) -> Option<u64> {
        let by_proposal = self.stems.get(stem).map(|(_, until)| *until);
        let by_chat = group.and_then(|g| self.chats.get(&file_stem(g)).copied());
        by_proposal
            .into_iter()
            .chain(by_chat)
            .chain(self.everything_until)
            .max()
    }

    /// Whether a held entry's group must be read to know (some chat's proposals are unreadable).
    pub fn needs_groups(&self) -> bool {
        !self.chats.is_empty()
    }

    pub fn is_empty(&self) -> bool {
        self.stems.is_empty() && self.chats.is_empty() && self.everything_until.is_none()
    }
}

/// The captures held back at `now_ms` (read without the lock: every write is a rename).
pub fn held(state_dir: &Path, now_ms: u64) -> Held {
    let mut held = Held::default();
    let hold_everything = |held: &mut Held, until: u64| {
        held.everything_until = held.everything_until.max(Some(until));
    };
    match files::read_regular(&memory_dir(state_dir).join(LEGACY_FILE), LEGACY_MAX_BYTES) {
        Ok(None) => {}
        Ok(Some(bytes)) => match serde_json::from_slice::<LegacyFile>(&bytes) {
            Ok(old) => {
                for p in old
                    .proposals
                    .into_iter()
                    .filter(|p| p.created_ms + EXPIRES_AFTER_MS > now_ms)
                {
                    let until = p.created_ms + EXPIRES_AFTER_MS;
                    for stem in p.spooled {
                        held.stems.insert(stem, (p.id.clone(), until));
                    }
                }
            }
            Err(_) => hold_everything(&mut held, now_ms + EXPIRES_AFTER_MS),
        },
        Err(_) => hold_everything(&mut held, now_ms + EXPIRES_AFTER_MS),
    }
    let dir = dir(state_dir);
    let names = match files::list_names(&dir) {
        Ok(names) => names,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return held,
        Err(_) => {
            hold_everything(&mut held, now_ms + EXPIRES_AFTER_MS);
            return held;
        }
    };
    for name in names {
        if let Some(stem) = name.strip_suffix(".json") {
            match load(&dir.join(&name)) {
                Loaded::Read(file) => {
                    for p in file.proposals.iter().filter(|p| p.expires_ms() > now_ms) {
                        for stem in p.held_stems() {
                            held.stems
                                .insert(stem.to_string(), (p.id.clone(), p.expires_ms()));
                        }
                    }
                }
                Loaded::Missing => {}
                Loaded::Unreadable(_) => {
                    held.chats
                        .insert(stem.to_string(), now_ms + EXPIRES_AFTER_MS);
                }
            }
        } else if let Some((stem, at_ms)) = aside_of(&name) {
            let until = at_ms + EXPIRES_AFTER_MS;
            if until <= now_ms {
                continue;
            }
            if stem == EVERYTHING {
                hold_everything(&mut held, until);
            } else {
                let kept = held.chats.entry(stem.to_string()).or_default();
                *kept = (*kept).max(until);
            }
        }
    }
    held
}

/// What `status` says of the forgets waiting.
#[derive(Debug, Default)]
pub struct PendingSummary {
    pub waiting: usize,
    pub chats: usize,
    pub captures_held: usize,
    /// Files that could not be read or were set aside, each with what it means now.
    pub troubles: Vec<String>,
}

/// The proposals waiting at `now_ms`, and what is wrong with the store.
pub fn summary(state_dir: &Path, now_ms: u64) -> PendingSummary {
    let mut summary = PendingSummary::default();
    let legacy = memory_dir(state_dir).join(LEGACY_FILE);
    if let Ok(Some(_)) = files::read_regular(&legacy, LEGACY_MAX_BYTES) {
        summary.troubles.push(format!(
            "{} is an earlier release's: the next forget moves it",
            legacy.display()
        ));
    }
    let dir = dir(state_dir);
    let names = match files::list_names(&dir) {
        Ok(names) => names,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return summary,
        Err(e) => {
            summary.troubles.push(format!(
                "{} cannot be listed ({e}): every capture is held until it can",
                dir.display()
            ));
            return summary;
        }
    };
    for name in names {
        let path = dir.join(&name);
        if name.ends_with(".json") {
            match load(&path) {
                Loaded::Read(file) => {
                    let waiting: Vec<&Proposal> = file
                        .proposals
                        .iter()
                        .filter(|p| p.expires_ms() > now_ms)
                        .collect();
                    summary.waiting += waiting.len();
                    summary.chats += usize::from(!waiting.is_empty());
                    summary.captures_held += waiting
                        .iter()
                        .map(|p| p.held_stems().count())
                        .sum::<usize>();
                }
                Loaded::Missing => {}
                Loaded::Unreadable(why) => summary.troubles.push(format!(
                    "{} cannot be read ({why}): its chat's captures are held until the next \
                     forget or tick sets it aside",
                    path.display()
                )),
            }
        } else if let Some((stem, at_ms)) = aside_of(&name) {
            let until = at_ms + EXPIRES_AFTER_MS;
            let whose = if stem == EVERYTHING {
                "every chat's"
            } else {
                "its chat's"
            };
            summary.troubles.push(if until > now_ms {
                format!(
                    "{} was set aside, unreadable: {whose} captures are held until {}",
                    path.display(),
                    crate::platform::time::iso8601(until)
                )
            } else {
                format!(
                    "{} was set aside, unreadable (it holds nothing now; remove it once read)",
                    path.display()
                )
            });
        }
    }
    summary
}

/// Under the lock: sets aside the chats' files that cannot be read (a tick does, so a corrupt
/// file is named and its hold bounded even when nobody forgets anything). What was set aside.
pub fn set_aside_unreadable(state_dir: &Path, now_ms: u64, locks: &mut dyn Locks) -> Vec<String> {
    let dir = dir(state_dir);
    let names = files::list_names(&dir).unwrap_or_default();
    if names.is_empty() && !memory_dir(state_dir).join(LEGACY_FILE).exists() {
        return vec![];
    }
    locked(locks, || {
        let mut notes = tidy(state_dir, now_ms);
        for name in names {
            let Some(stem) = name.strip_suffix(".json") else {
                continue;
            };
            let path = dir.join(&name);
            if let Loaded::Unreadable(why) = load(&path) {
                match set_aside(state_dir, &path, stem, now_ms) {
                    Ok(aside) => notes.push(unreadable_note(
                        &path,
                        &why,
                        &aside,
                        now_ms + EXPIRES_AFTER_MS,
                    )),
                    Err(e) => notes.push(e),
                }
            }
        }
        Ok(notes)
    })
    .unwrap_or_else(|e| vec![e])
}

/// A proposal as an earlier release kept it, in one file for every chat.
#[derive(Deserialize)]
struct LegacyFile {
    proposals: Vec<LegacyProposal>,
}

#[derive(Deserialize)]
struct LegacyItem {
    uuid: String,
    shown: String,
}

#[derive(Deserialize)]
struct LegacyProposal {
    id: String,
    created_ms: u64,
    group: String,
    sender: Option<String>,
    session: Option<String>,
    query: Option<String>,
    facts: Vec<LegacyItem>,
    episodes: Vec<LegacyItem>,
    spooled: Vec<String>,
    whole_groups: Vec<String>,
    #[serde(default)]
    chosen_by_id: bool,
    #[serde(default)]
    accepted: Vec<String>,
}

impl LegacyProposal {
    /// The same proposal, under its own id, with every item it listed chosen.
    fn upgraded(self) -> Proposal {
        let item = |kind: Kind| {
            move |i: LegacyItem| Candidate {
                kind,
                id: i.uuid,
                shown: i.shown,
                matched: vec![],
                chosen: true,
                name: None,
            }
        };
        let captures = self.spooled.into_iter().map(|stem| Candidate {
            kind: Kind::Capture,
            id: stem,
            shown: "a capture not yet sent".into(),
            matched: vec![],
            chosen: true,
            name: None,
        });
        Proposal {
            id: self.id,
            created_ms: self.created_ms,
            group: self.group,
            sender: self.sender,
            session: self.session,
            query: self.query,
            words: 0,
            candidates: self
                .facts
                .into_iter()
                .map(item(Kind::Fact))
                .chain(self.episodes.into_iter().map(item(Kind::Episode)))
                .chain(captures)
                .collect(),
            whole_groups: self.whole_groups,
            chosen_by_id: self.chosen_by_id,
            accepted_until: self.accepted.last().cloned(),
            unsearched: None,
        }
    }
}

#[cfg(test)]
mod tests;
