//! What the waiting forgets hold back, read without the lock (every write is a rename), what
//! `status` says of them, and the tick's setting aside of a chat's file that cannot be read.

use super::legacy::{LegacyFile, tidy};
use super::store::{
    EVERYTHING, LEGACY_FILE, LEGACY_MAX_BYTES, Loaded, aside_of, dir, file_stem, load, set_aside,
    unreadable_note,
};
use crate::memory::control::forget::{EXPIRES_AFTER_MS, Proposal, locked, memory_dir};
use crate::platform::files;
use crate::platform::locks::Locks;
use std::collections::HashMap;
use std::io;
use std::path::Path;

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
                    Err(e) => notes.push(e.to_string()),
                }
            }
        }
        Ok(notes)
    })
    .unwrap_or_else(|e| vec![e.to_string()])
}
