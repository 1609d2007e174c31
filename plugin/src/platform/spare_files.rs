//! Empty files made ahead of need in the state directory's `spare/`, by `tick` (off the hooks), so
//! that a file `agent-end` writes anew (the turn's spool file, a new count log, its turn history)
//! costs a rename instead of a create. On an ext4 virtio disk like this project's test machines
//! (and many a VPS), creating a file costs an order of magnitude more than a rename: two creates
//! were a large share of `agent-end` in OpenClaw. A spare is taken by renaming it, which only one
//! taker can do; when none is ready, the caller creates its file as before.

use std::cell::Cell;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Spares kept: a turn takes up to three (its spool file, a count log, its turn history), and a
/// few instances may end turns at once.
const SPARES: usize = 6;
/// A spare older than this is not taken. A taken spare keeps its time until it is written, and the
/// sweeps of left-over files (the spool's temporary files, abandoned count logs) remove files
/// left unwritten for ten minutes: a spare that old could be removed under its taker.
const FRESH_MS: u64 = 5 * 60 * 1000;
/// `renew` replaces a spare this old, so that the spares stay fresh while ticks run.
const RENEW_MS: u64 = 3 * 60 * 1000;

fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("spare")
}

fn age_ms(meta: &fs::Metadata, now_ms: u64) -> Option<u64> {
    let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some(now_ms.saturating_sub(modified.as_millis() as u64))
}

/// Whether `meta` is a spare made at most `max_age_ms` ago: an empty regular file (not a link, a
/// directory or a FIFO someone put there).
fn spare_within(meta: &fs::Metadata, now_ms: u64, max_age_ms: u64) -> bool {
    meta.file_type().is_file()
        && meta.len() == 0
        && age_ms(meta, now_ms).is_some_and(|age| age <= max_age_ms)
}

/// `path` opened for writing, created (never an existing file).
fn create_new(path: &Path) -> io::Result<fs::File> {
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// A spare moved to `path` (a new name no other writer uses) and opened for writing; None when no
/// spare is ready (or the one moved could not be opened: it is removed again), and the caller
/// creates `path` itself.
pub fn take(state_dir: &Path, path: &Path) -> Option<fs::File> {
    thread_local! {
        // Which spare to look at next (the component has one thread; a test, one per test).
        static NEXT: Cell<usize> = const { Cell::new(0) };
    }
    let k = NEXT.with(|next| next.replace((next.get() + 1) % SPARES));
    let spare = dir(state_dir).join(k.to_string());
    let meta = fs::symlink_metadata(&spare).ok()?;
    if !spare_within(&meta, crate::platform::time::now_ms(), FRESH_MS) {
        return None;
    }
    fs::rename(&spare, path).ok()?;
    // Not `truncate`: it is empty, and ext4 flushes a truncated file's data when it is closed
    // (`auto_da_alloc`), which made each close several times slower.
    fs::OpenOptions::new()
        .write(true)
        .open(path)
        .inspect_err(|_| {
            let _ = fs::remove_file(path);
        })
        .ok()
}

/// [`take`], else a new file: `path` opened for writing, created (never an existing file).
pub fn take_or_create(state_dir: &Path, path: &Path) -> io::Result<fs::File> {
    take(state_dir, path).map_or_else(|| create_new(path), Ok)
}

/// Makes the spares that are missing and replaces those that are stale or not empty files. Never
/// fails: without spares, hooks create their files.
pub fn renew(state_dir: &Path) {
    let dir = dir(state_dir);
    let now_ms = crate::platform::time::now_ms();
    for k in 0..SPARES {
        let spare = dir.join(k.to_string());
        match fs::symlink_metadata(&spare) {
            Ok(meta) if spare_within(&meta, now_ms, RENEW_MS) => continue,
            // Not ours to remove (`take` refuses it): left as it is.
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => {
                if fs::remove_file(&spare).is_err() {
                    continue;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(_) => continue,
        }
        if let Err(e) = create_new(&spare)
            && e.kind() == io::ErrorKind::NotFound
            && fs::create_dir_all(&dir).is_ok()
        {
            let _ = create_new(&spare);
        }
    }
}

#[cfg(test)]
mod tests;
