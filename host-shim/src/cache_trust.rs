//! Which cache directory and entries the shim may use: none another user could have written.
//!
//! A cache entry is native code the shim runs, so the threat is other users of the machine. An entry
//! is read only from a regular file this user owns, writable by no one else and with one link, in a
//! directory this user owns and no one else can write, whose ancestors up to `/` belong to this user
//! or root and are writable by no one else unless sticky (like /tmp: others may add entries there but
//! not rename ours away). These are OpenSSH's StrictModes rules. The directory is resolved once
//! (symlinks included) and then used through its descriptor; an entry is opened once without
//! following a symlink, checked on that descriptor and read from it, so nothing can be swapped in
//! between the check and the read (the cache maps the checked file's path only after making sure it
//! still names that file). Entries are written to a temporary file created exclusively, 0600,
//! then renamed into place.
//!
//! Out of scope: an edit by the same user. Whoever runs as the user can already replace the wasm or
//! the shim itself; the entry's checksum only catches corruption.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

/// Group- or world-writable.
const WRITABLE_BY_OTHERS: u32 = 0o022;
const STICKY: u32 = 0o1000;
const PRIVATE_DIR: u32 = 0o700;
const PRIVATE_FILE: u32 = 0o600;

/// Whether the cache directory may be used.
pub(crate) enum DirTrust {
    Trusted(CacheDir),
    /// Why not: neither read nor written, and nothing there changed.
    Untrusted(String),
}

/// A cache directory that passed the checks, open.
pub(crate) struct CacheDir {
    dir: fs::File,
    /// The resolved path, for messages and [`CacheDir::file`].
    path: PathBuf,
    /// Set when the directory was ours but writable by others, and has just been made 0700: what was
    /// in it could have been put there by anyone, so no entry in it is trusted this time.
    pub tightened: Option<String>,
}

/// Why an entry was not read.
pub(crate) enum EntryError {
    /// The entry could have been written by someone else.
    Untrusted(String),
    Unreadable(io::Error),
}

/// Creates the directory if needed (0700, missing parents too) and checks it and its ancestors.
/// Err is for I/O errors only (cannot create, cannot resolve).
pub(crate) fn open_dir(path: &Path) -> io::Result<DirTrust> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR)
        .create(path)?;
    let path = fs::canonicalize(path)?;
    // The resolved path has no symlinks left; one that appears now (a swap) makes the open fail.
    let dir = fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::DIRECTORY | OFlags::NOFOLLOW).bits() as i32)
        .open(&path)?;
    let me = rustix::process::geteuid().as_raw();
    for ancestor in path.ancestors().skip(1) {
        let meta = fs::symlink_metadata(ancestor)?;
        if let Some(reason) = untrusted_ancestor(ancestor, &meta, me) {
            return Ok(DirTrust::Untrusted(reason));
        }
    }
    let meta = dir.metadata()?;
    if meta.uid() != me {
        return Ok(DirTrust::Untrusted(owned_by_another(&path, &meta)));
    }
    let mut tightened = None;
    if meta.mode() & WRITABLE_BY_OTHERS != 0 {
        dir.set_permissions(fs::Permissions::from_mode(PRIVATE_DIR))?;
        tightened = Some(format!(
            "{} was writable by others (mode {:04o}); it is 0700 now",
            path.display(),
            meta.mode() & 0o7777
        ));
    }
    Ok(DirTrust::Trusted(CacheDir {
        dir,
        path,
        tightened,
    }))
}

/// Why an ancestor of the cache directory lets someone else swap it, if it does.
fn untrusted_ancestor(ancestor: &Path, meta: &fs::Metadata, me: u32) -> Option<String> {
    if meta.uid() != me && meta.uid() != 0 {
        return Some(owned_by_another(ancestor, meta));
    }
    if meta.mode() & WRITABLE_BY_OTHERS != 0 && meta.mode() & STICKY == 0 {
        return Some(writable_by_others(ancestor, meta));
    }
    None
}

fn owned_by_another(path: &Path, meta: &fs::Metadata) -> String {
    format!(
        "{} is owned by another user (uid {})",
        path.display(),
        meta.uid()
    )
}

fn writable_by_others(path: &Path, meta: &fs::Metadata) -> String {
    format!(
        "{} is writable by others (mode {:04o})",
        path.display(),
        meta.mode() & 0o7777
    )
}

impl CacheDir {
    /// Where the entry `name` lives.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The entry `name`, open for reading once it passed the checks; None when there is none.
    pub fn open_entry(&self, name: &str) -> Result<Option<fs::File>, EntryError> {
        let file = self.file(name);
        // Non-blocking: a FIFO put here must not hang the shim before the type check refuses it.
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let entry = match rustix::fs::openat(&self.dir, name, flags, Mode::empty()) {
            Ok(fd) => fs::File::from(fd),
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => {
                let reason = format!("{} is a symbolic link", file.display());
                return Err(EntryError::Untrusted(reason));
            }
            Err(err) => return Err(EntryError::Unreadable(err.into())),
        };
        let meta = entry.metadata().map_err(EntryError::Unreadable)?;
        let me = rustix::process::geteuid().as_raw();
        let untrusted = if !meta.is_file() {
            Some(format!("{} is not a regular file", file.display()))
        } else if meta.uid() != me {
            Some(owned_by_another(&file, &meta))
        } else if meta.mode() & WRITABLE_BY_OTHERS != 0 {
            Some(writable_by_others(&file, &meta))
        } else if meta.nlink() != 1 {
            Some(format!(
                "{} has {} hard links",
                file.display(),
                meta.nlink()
            ))
        } else {
            None
        };
        if let Some(reason) = untrusted {
            return Err(EntryError::Untrusted(reason));
        }
        Ok(Some(entry))
    }

    /// Writes a temporary file (created exclusively, 0600, never through a symlink) and renames it
    /// over the entry, so readers never see half an entry and a link at the entry's name is replaced,
    /// not written through.
    pub fn write_entry(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        // Unique per process and per write: two shims may be compiling the same wasm at once.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let serial = WRITES.fetch_add(1, Ordering::Relaxed);
        let temp = format!(".{name}.{}-{serial}.tmp", std::process::id());
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(
            &self.dir,
            temp.as_str(),
            flags,
            Mode::from_raw_mode(PRIVATE_FILE),
        )?;
        let written = fs::File::from(fd).write_all(bytes).and_then(|()| {
            Ok(rustix::fs::renameat(
                &self.dir,
                temp.as_str(),
                &self.dir,
                name,
            )?)
        });
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&self.dir, temp.as_str(), AtFlags::empty());
        }
        written
    }
}
