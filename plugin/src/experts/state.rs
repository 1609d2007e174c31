//! The expert's runtime workspace (loader design §4): state templates copied on first run, `session`
//! files kept apart for each session (`sessions/<session>/`, so concurrent runs of one expert never
//! share them) and `persistent` ones shared and kept, functions, processes and public
//! knowledge mirrored for on-demand reading, scratch created on demand and pruned after a retention
//! period. `private` knowledge is never written here: the workspace is shared by every agent, and
//! OpenClaw's `read` tool can open any file in it; the expert reads it through `expert_knowledge`.
//!
//! No clock is read: `now` is given, and the session is whatever id the caller says.

use super::package::{KnowledgeKind, Package, StateScope};
use crate::platform::files::write_atomically;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The workspace file remembering the last session prepared.
pub const SESSION_FILE: &str = ".expert-session.json";
pub const SCRATCH_DIR: &str = "scratch";
/// Each session's own `scope: session` state files: `sessions/<session>/<path>`.
pub const SESSIONS_DIR: &str = "sessions";
pub const LEARNINGS_DIR: &str = "learnings";
/// Scratch directories are pruned this deep at most.
const MAX_SCRATCH_DEPTH: usize = 8;

#[derive(Clone, Debug)]
pub struct StateOptions {
    /// Scratch entries older than this (by modification time) are removed; loader design default 7 days.
    pub scratch_retention_secs: u64,
}

impl Default for StateOptions {
    fn default() -> Self {
        StateOptions {
            scratch_retention_secs: 7 * 86_400,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct SessionRecord {
    package: String,
    version: String,
    session_id: String,
    prepared_at: u64,
}

/// What preparing the workspace did, by path relative to the workspace (each list sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prepared {
    /// No session had been prepared in this workspace before.
    pub first_run: bool,
    /// The session differs from the last one prepared.
    pub new_session: bool,
    /// State files written from their template (first run, new file, or a session's first turn).
    pub state_written: Vec<String>,
    /// State files left as they were.
    pub state_kept: Vec<String>,
    /// Functions, processes and public knowledge (re)written from the package.
    pub files_refreshed: Vec<String>,
    /// Copies of private knowledge an earlier version left in the workspace, removed.
    pub private_removed: Vec<String>,
    /// Scratch entries removed as older than the retention period.
    pub scratch_pruned: Vec<String>,
    /// Other sessions' state files removed as older than the retention period.
    pub sessions_pruned: Vec<String>,
}

/// The directory (under [`SESSIONS_DIR`]) of `session`'s own state: the name as it is when it is
/// plain (an invocation id, a session id), else its plain characters and a digest of the whole, so
/// two sessions never share one.
pub fn session_dir_name(session: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if !session.is_empty() && session.len() <= 64 && session.chars().all(plain) {
        return session.to_string();
    }
    let kept: String = session
        .chars()
        .take(40)
        .map(|c| if plain(c) { c } else { '_' })
        .collect();
    let digest = Sha256::digest(session.as_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{kept}-{hex}")
}

/// Prepares `workspace` (this expert's runtime directory) for session `session_id`, whose own state
/// files are in [`session_dir_name`]`(session_id)` under [`SESSIONS_DIR`].
pub fn prepare_workspace(
    package: &Package,
    workspace: &Path,
    session_id: &str,
    now: u64,
    options: &StateOptions,
) -> Result<Prepared, String> {
    let fail = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
    fs::create_dir_all(workspace).map_err(|e| fail(workspace, e))?;
    let record_path = workspace.join(SESSION_FILE);
    // An unreadable record counts as no record: templates then fill only missing files, so
    // persistent state is never overwritten because of it.
    let previous: Option<SessionRecord> = fs::read_to_string(&record_path)
        .ok()
        .and_then(|text| serde_json::from_slice(text.as_bytes()).ok());
    let mut prepared = Prepared {
        first_run: previous.is_none(),
        new_session: previous.as_ref().is_none_or(|r| r.session_id != session_id),
        ..Prepared::default()
    };

    let own = session_dir_name(session_id);
    for file in &package.state {
        // A session's files start from their template in its own directory: no other session's
        // start resets them.
        let path = match file.scope {
            StateScope::Session => format!("{SESSIONS_DIR}/{own}/{}", file.path),
            StateScope::Persistent => file.path.clone(),
        };
        let target = workspace.join(&path);
        if fs::symlink_metadata(&target).is_ok() {
            prepared.state_kept.push(path);
        } else {
            write_atomically(&target, file.text.as_bytes()).map_err(|e| fail(&target, e))?;
            prepared.state_written.push(path);
        }
    }

    let mirrored = package
        .functions
        .iter()
        .map(|f| (&f.path, &f.text))
        .chain(package.processes.iter().map(|p| (&p.path, &p.text)))
        .chain(package.public_knowledge().map(|k| (&k.path, &k.text)));
    for (path, text) in mirrored {
        let target = workspace.join(path);
        if fs::read(&target).ok().as_deref() != Some(text.as_bytes()) {
            write_atomically(&target, text.as_bytes()).map_err(|e| fail(&target, e))?;
            prepared.files_refreshed.push(path.clone());
        }
    }

    prepared.private_removed = remove_private_copies(package, workspace)?;

    if package.learning.enabled {
        let dir = workspace.join(LEARNINGS_DIR);
        fs::create_dir_all(&dir).map_err(|e| fail(&dir, e))?;
    }

    prepared.scratch_pruned = prune_scratch(workspace, now, options.scratch_retention_secs);
    let cutoff = now.saturating_sub(options.scratch_retention_secs);
    prepared.sessions_pruned = prune_sessions(workspace, &own, cutoff);

    if prepared.new_session
        || previous
            .as_ref()
            .is_some_and(|r| r.version != package.version)
    {
        let record = SessionRecord {
            package: package.name.clone(),
            version: package.version.clone(),
            session_id: session_id.to_string(),
            prepared_at: now,
        };
        let json = serde_json::to_string_pretty(&record).unwrap_or_default() + "\n";
        write_atomically(&record_path, json.as_bytes()).map_err(|e| fail(&record_path, e))?;
    }
    for list in [
        &mut prepared.state_written,
        &mut prepared.state_kept,
        &mut prepared.files_refreshed,
        &mut prepared.sessions_pruned,
    ] {
        crate::platform::sorting::sort(list);
    }
    Ok(prepared)
}

/// Removes the copies of the package's private knowledge that versions before 0.4 mirrored into
/// `workspace` (this expert's runtime directory); returns their paths, sorted.
pub fn remove_private_copies(package: &Package, workspace: &Path) -> Result<Vec<String>, String> {
    let mut removed = Vec::new();
    for knowledge in package
        .knowledge
        .iter()
        .filter(|k| k.kind == KnowledgeKind::Private)
    {
        let target = workspace.join(&knowledge.path);
        if fs::symlink_metadata(&target).is_ok_and(|meta| !meta.is_dir()) {
            fs::remove_file(&target).map_err(|e| format!("{}: {e}", target.display()))?;
            removed.push(knowledge.path.clone());
        }
    }
    crate::platform::sorting::sort(&mut removed);
    Ok(removed)
}

/// The scratch directory, created on first use.
pub fn scratch_dir(workspace: &Path) -> Result<PathBuf, String> {
    let dir = workspace.join(SCRATCH_DIR);
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// Removes scratch entries modified more than `retention_secs` before `now` (epoch seconds); a
/// directory emptied that way goes too. Entries without a modification time count as fresh; symbolic
/// links are removed as links, never followed. Returns the removed paths relative to the workspace.
pub fn prune_scratch(workspace: &Path, now: u64, retention_secs: u64) -> Vec<String> {
    let mut removed = Vec::new();
    let cutoff = now.saturating_sub(retention_secs);
    prune_dir(
        &workspace.join(SCRATCH_DIR),
        SCRATCH_DIR,
        cutoff,
        0,
        &mut removed,
    );
    crate::platform::sorting::sort(&mut removed);
    removed
}

/// Removes other sessions' state files modified before `cutoff` (epoch seconds), and their
/// directories once empty; the session `own` is left alone, however long it has been idle.
fn prune_sessions(workspace: &Path, own: &str, cutoff: u64) -> Vec<String> {
    let root = workspace.join(SESSIONS_DIR);
    let mut removed = Vec::new();
    let Ok(entries) = fs::read_dir(&root) else {
        return removed;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if name == own || !meta.is_dir() {
            continue;
        }
        let shown = format!("{SESSIONS_DIR}/{name}");
        let old = modified_secs(&meta).is_some_and(|m| m < cutoff);
        if prune_dir(&path, &shown, cutoff, 1, &mut removed) && old && fs::remove_dir(&path).is_ok()
        {
            removed.push(format!("{shown}/"));
        }
    }
    removed
}

fn modified_secs(meta: &fs::Metadata) -> Option<u64> {
    meta.modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

/// Prunes inside `dir`; returns whether `dir` is now empty.
fn prune_dir(
    dir: &Path,
    shown: &str,
    cutoff: u64,
    depth: usize,
    removed: &mut Vec<String>,
) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    crate::platform::sorting::sort(&mut names);
    let mut left = 0;
    for name in names {
        let path = dir.join(&name);
        let rel = format!("{shown}/{}", name.to_string_lossy());
        let Ok(meta) = fs::symlink_metadata(&path) else {
            left += 1;
            continue;
        };
        let old = modified_secs(&meta).is_some_and(|m| m < cutoff);
        if meta.is_dir() {
            let empty =
                depth < MAX_SCRATCH_DEPTH && prune_dir(&path, &rel, cutoff, depth + 1, removed);
            if empty && old && fs::remove_dir(&path).is_ok() {
                removed.push(format!("{rel}/"));
                continue;
            }
        } else if old && fs::remove_file(&path).is_ok() {
            removed.push(rel);
            continue;
        }
        left += 1;
    }
    left == 0
}
