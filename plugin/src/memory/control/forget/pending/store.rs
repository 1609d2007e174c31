//! The files of the store: one per chat (Graphiti group) under `memory/forget-pending/`, how each
//! is read and written, and how one that cannot be read is set aside.

use crate::memory::control::error::ControlError;
use crate::memory::control::forget::Proposal;
use crate::memory::control::forget::memory_dir;
use crate::memory::group_id;
use crate::platform::files;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};

/// A chat's file is refused beyond this: proposals are bounded far below.
pub(super) const MAX_FILE_BYTES: u64 = 1 << 20;
/// The single file an earlier release kept every proposal in.
pub(super) const LEGACY_FILE: &str = "forget-pending.json";
pub(super) const LEGACY_MAX_BYTES: u64 = 4 << 20;
pub(super) const DIR: &str = "forget-pending";
/// What a set-aside file's name has between the file's stem and when it was set aside.
pub(super) const ASIDE: &str = ".unreadable-";
/// The stem of what stands for the whole store: an earlier release's single file, or the
/// directory itself, set aside.
pub(super) const EVERYTHING: &str = "~all";
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GroupFile {
    pub(super) group: String,
    pub(super) proposals: Vec<Proposal>,
}

pub(super) fn dir(state_dir: &Path) -> PathBuf {
    memory_dir(state_dir).join(DIR)
}

/// The name (without `.json`) of `group`'s file: the group id itself when it is short and has no
/// capital letter (group ids differing only in case stay apart on a file system that folds case),
/// else a digest of it (`~` is never in a group id).
pub(super) fn file_stem(group: &str) -> String {
    let plain = !group.bytes().any(|b| b.is_ascii_uppercase());
    if plain && group.len() <= 160 && group_id::check_group_id(group).is_ok() {
        return group.to_string();
    }
    let hex: String = Sha256::digest(group.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("~{hex}")
}

pub(super) fn group_path(state_dir: &Path, group: &str) -> PathBuf {
    dir(state_dir).join(format!("{}.json", file_stem(group)))
}

pub(super) enum Loaded {
    Missing,
    Read(GroupFile),
    Unreadable(String),
}

pub(super) fn load(path: &Path) -> Loaded {
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
pub(super) fn save(path: &Path, file: &GroupFile) -> Result<(), ControlError> {
    if file.proposals.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(ControlError::State(format!(
                "cannot remove {}: {e}",
                path.display()
            ))),
            _ => Ok(()),
        };
    }
    let bytes = serde_json::to_vec(file).expect("proposals serialise");
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ControlError::Refused(format!(
            "the forgets waiting in this chat would take more than {} KiB: confirm or let one \
             lapse first",
            MAX_FILE_BYTES >> 10
        )));
    }
    files::write_atomically(path, &bytes)
        .map_err(|e| ControlError::State(format!("cannot write {}: {e}", path.display())))
}

/// Renames the unreadable `path` (whose name's stem is `stem`) to its set-aside name; until when
/// the captures it could cover are held.
pub(super) fn set_aside(
    state_dir: &Path,
    path: &Path,
    stem: &str,
    now_ms: u64,
) -> Result<PathBuf, ControlError> {
    let aside = dir(state_dir).join(format!("{stem}{ASIDE}{now_ms}"));
    let _ = std::fs::create_dir_all(dir(state_dir));
    std::fs::rename(path, &aside)
        .map_err(|e| ControlError::State(format!("cannot set {} aside: {e}", path.display())))?;
    Ok(aside)
}

/// A set-aside file's stem and when it was set aside.
pub(super) fn aside_of(name: &str) -> Option<(&str, u64)> {
    let (stem, ms) = name.split_once(ASIDE)?;
    Some((stem, ms.parse().ok()?))
}

pub(super) fn unreadable_note(path: &Path, why: &str, aside: &Path, until_ms: u64) -> String {
    format!(
        "{} could not be read ({why}): set aside as {}; the captures it could cover are held \
         until {}, and the forgets it held must be proposed again",
        path.display(),
        aside.display(),
        crate::platform::time::iso8601(until_ms)
    )
}
