//! memory-core's files in the agent's workspace, read as an import may read them: only regular files
//! named as memory-core names them, never through a symbolic link, each within a size bound and in
//! UTF-8; anything else is named with why it was skipped.

use std::fs;
use std::io;
use std::path::Path;

/// A memory file larger than this is skipped: memory-core's own files stay far below it.
pub const MAX_FILE_BYTES: u64 = 8 << 20;
/// How deep `memory/imports/` is walked.
const MAX_IMPORT_DEPTH: usize = 4;
/// Files looked at in `memory/` and `memory/imports/` at most.
const MAX_FILES: usize = 20_000;

/// What a memory file is to memory-core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileKind {
    /// `MEMORY.md`: durable facts and decisions.
    Memory,
    /// `USER.md`: directives with observed dates.
    User,
    /// `memory/imports/**.md`: memory imported from other assistants.
    Imported,
    /// `memory/YYYY-MM-DD.md` and `memory/YYYY-MM-DD-<slug>.md`, with that date.
    DailyNote,
    /// A past conversation's turn, from OpenClaw's session store (not a workspace file).
    Transcript,
}

/// A memory file found, by its path in the workspace (`memory/2026-05-01.md`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub relative: String,
    pub kind: FileKind,
}

/// A file that is not imported, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub relative: String,
    pub why: String,
}

/// The memory files of the workspace at `root`, and the files skipped with why. `daily_notes`:
/// whether daily notes are wanted (they are found either way, to be counted).
pub fn find(root: &Path) -> (Vec<Found>, Vec<Skipped>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for (name, kind) in [("MEMORY.md", FileKind::Memory), ("USER.md", FileKind::User)] {
        if exists(&root.join(name)) {
            found.push(Found {
                relative: name.to_string(),
                kind,
            });
        }
    }
    for derived in ["DREAMS.md", "dreams.md"] {
        if exists(&root.join(derived)) {
            skipped.push(Skipped {
                relative: derived.to_string(),
                why: "derived by memory-core's dreaming from the other files: not imported".into(),
            });
        }
    }
    if exists(&root.join("users")) {
        skipped.push(Skipped {
            relative: "users/".into(),
            why:
                "personal USER.md files belong to one person each: not imported into a shared group"
                    .into(),
        });
    }
    let memory = root.join("memory");
    let mut names = list_sorted(&memory);
    names.truncate(MAX_FILES);
    for name in names {
        let relative = format!("memory/{name}");
        if name == "imports" {
            walk_imports(&memory.join(&name), &relative, 1, &mut found, &mut skipped);
        } else if name == "dreaming" {
            skipped.push(Skipped {
                relative: format!("{relative}/"),
                why: "dreaming's phase reports, derived from the rest: not imported".into(),
            });
        } else if daily_note_date(&name).is_some() {
            found.push(Found {
                relative,
                kind: FileKind::DailyNote,
            });
        } else {
            skipped.push(Skipped {
                relative,
                why: "not a file memory-core names (memory/YYYY-MM-DD.md, memory/YYYY-MM-DD-<slug>.md, memory/imports/)".into(),
            });
        }
    }
    (found, skipped)
}

fn walk_imports(
    dir: &Path,
    relative: &str,
    depth: usize,
    found: &mut Vec<Found>,
    skipped: &mut Vec<Skipped>,
) {
    for name in list_sorted(dir).into_iter().take(MAX_FILES) {
        let path = dir.join(&name);
        let relative = format!("{relative}/{name}");
        let is_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if is_dir && depth < MAX_IMPORT_DEPTH {
            walk_imports(&path, &relative, depth + 1, found, skipped);
        } else if name.ends_with(".md") && !is_dir {
            found.push(Found {
                relative,
                kind: FileKind::Imported,
            });
        } else {
            skipped.push(Skipped {
                relative,
                why: if is_dir {
                    format!("nested deeper than {MAX_IMPORT_DEPTH} directories")
                } else {
                    "not a Markdown file".into()
                },
            });
        }
    }
}

/// `2026-05-01` from `2026-05-01.md` or `2026-05-01-standup.md`.
pub fn daily_note_date(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".md")?;
    let date = stem.get(..10)?;
    let rest = &stem[10..];
    let b = date.as_bytes();
    let shaped = b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    (shaped && (rest.is_empty() || (rest.starts_with('-') && rest.len() > 1))).then_some(date)
}

/// The text of `relative` under `root`, or why it cannot be imported: a symbolic link, not a
/// regular file (a FIFO would block the read), too large, or not UTF-8.
pub fn read(root: &Path, relative: &str) -> Result<(String, Option<u64>), String> {
    let path = root.join(relative);
    let meta = fs::symlink_metadata(&path).map_err(|e| format!("cannot be looked at: {e}"))?;
    if meta.file_type().is_symlink() {
        return Err("a symbolic link: not followed (it may lead out of the workspace)".into());
    }
    if !meta.is_file() {
        return Err("not a regular file (a FIFO, a device or a directory): not read".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} bytes, more than the {} MiB an import reads from one file",
            meta.len(),
            MAX_FILE_BYTES >> 20
        ));
    }
    let bytes = crate::platform::files::read_regular(&path, MAX_FILE_BYTES)
        .map_err(|e| describe(&e))?
        .ok_or("removed while the import read it")?;
    let modified_ms = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64);
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, modified_ms)),
        Err(e) => Err(format!(
            "not UTF-8 text (an invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )),
    }
}

fn describe(e: &io::Error) -> String {
    format!("cannot be read: {e}")
}

fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

fn list_sorted(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = crate::platform::files::list_names(dir).unwrap_or_default();
    crate::platform::sorting::sort(&mut names);
    names
}

#[cfg(test)]
mod tests {
    use super::daily_note_date;

    #[test]
    fn daily_notes_are_named_by_date_with_an_optional_slug() {
        assert_eq!(daily_note_date("2026-05-01.md"), Some("2026-05-01"));
        assert_eq!(daily_note_date("2026-05-01-standup.md"), Some("2026-05-01"));
        for not in [
            "2026-05-01-.md",
            "2026-5-01.md",
            "notes.md",
            "2026-05-01.txt",
            "x.md",
        ] {
            assert_eq!(daily_note_date(not), None, "{not}");
        }
    }
}
