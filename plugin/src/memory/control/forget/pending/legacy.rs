//! The store as an earlier release kept it (every proposal in one `memory/forget-pending.json`), and
//! the tidying done under the lock before the store is changed.

use super::store::{
    ASIDE, DIR, EVERYTHING, GroupFile, LEGACY_FILE, LEGACY_MAX_BYTES, Loaded, dir, group_path,
    load, save, set_aside, unreadable_note,
};
use crate::memory::control::forget::{Candidate, EXPIRES_AFTER_MS, Kind, Proposal, memory_dir};
use crate::platform::files;
use serde::Deserialize;
use std::path::Path;

/// Under the lock, before the store is changed: an earlier release's single file is moved into
/// the chats' files (or set aside when it cannot be read), and a store that is not a directory is
/// set aside. What was set aside, said.
pub(super) fn tidy(state_dir: &Path, now_ms: u64) -> Vec<String> {
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
            Err(e) => notes.push(e.to_string()),
        },
    }
    notes
}

/// A proposal as an earlier release kept it, in one file for every chat.
#[derive(Deserialize)]
pub(super) struct LegacyFile {
    pub(super) proposals: Vec<LegacyProposal>,
}

#[derive(Deserialize)]
struct LegacyItem {
    uuid: String,
    shown: String,
}

#[derive(Deserialize)]
pub(super) struct LegacyProposal {
    pub(super) id: String,
    pub(super) created_ms: u64,
    group: String,
    sender: Option<String>,
    session: Option<String>,
    query: Option<String>,
    facts: Vec<LegacyItem>,
    episodes: Vec<LegacyItem>,
    pub(super) spooled: Vec<String>,
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
