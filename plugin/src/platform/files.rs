//! Writing state files so that neither a crash nor a second instance writing at the same moment can
//! leave half a file: write a temporary file of a name no other writer uses, then rename it. And,
//! for the per-turn state that can be recomputed (session routing state, the last-turn record, the
//! recall cache), [`Kept`]: the content kept in the instance's memory, used while one look at the
//! file (its size and modification time) says nobody has written it since, and written in place.

use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// Writes `bytes` to `path` atomically, creating its directory if it is missing (looked for only
/// when the write finds it missing: a turn makes no directory calls).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomically_with(None, path, bytes, Durability::Written)
}

/// How far a write must have gone when it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// In the operating system's hands: it survives the process, not a power cut.
    Written,
    /// On the disk: the file's data synced before the rename, and its directory synced after it
    /// (the rename itself is in the directory), so it survives a power cut or a kernel crash.
    Synced,
}

/// [`write_atomically`] for a file a hook writes anew, as far as `durability` says: its temporary
/// file is one of the state directory's spares when one is ready (see [`crate::platform::spare_files`]).
pub fn write_atomically_from_spare(
    state_dir: &Path,
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> io::Result<()> {
    write_atomically_with(Some(state_dir), path, bytes, durability)
}

fn write_atomically_with(
    spares: Option<&Path>,
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> io::Result<()> {
    match write_renamed(spares, path, bytes, durability) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => {
                fs::create_dir_all(dir)?;
                if durability == Durability::Synced {
                    // The new directory's own entry is in its parent.
                    sync_directory(directory_of(dir))?;
                }
                write_renamed(spares, path, bytes, durability)
            }
            _ => Err(e),
        },
        written => written,
    }
}

fn write_renamed(
    spares: Option<&Path>,
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    // Time and a per-instance counter: distinct across instances and across writes of one instance.
    let nanos = crate::platform::time::since_epoch().as_nanos();
    let tmp = path.with_extension(format!(
        "{nanos:x}-{}.tmp",
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let synced = durability == Durability::Synced;
    // A failed write (a full disk) or rename leaves no temporary file behind.
    spares
        .and_then(|state_dir| crate::platform::spare_files::take(state_dir, &tmp))
        .map_or_else(|| fs::File::create(&tmp), Ok)
        .and_then(|file| {
            write_all_at(&file, bytes, 0)?;
            if synced { file.sync_data() } else { Ok(()) }
        })
        .and_then(|()| fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })?;
    if synced {
        sync_directory(directory_of(path))
    } else {
        Ok(())
    }
}

/// The directory whose entry names `path` (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Syncs directory `dir` itself: the names in it, as a rename or a create left them.
fn sync_directory(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// The bytes of regular file `path` (None when it does not exist). A directory, a FIFO or another
/// special file is refused without being opened (reading a FIFO would wait forever), and so is a
/// file of more than `max_bytes`.
pub fn read_regular(path: &Path, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
    let Some(stamp) = stamp(path)? else {
        return Ok(None);
    };
    stamp.readable_within(max_bytes)?;
    read(path).map(Some)
}

/// The bytes of file `path`, as `fs::read` gives them, in fewer host calls (see [`at_offset`]).
pub fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    read_from(path, 0, usize::MAX)
}

/// The bytes of file `path` from `offset` on (none when it is shorter), about `max` at most (a
/// little more may be read: the caller cuts what it does not want).
pub fn read_from(path: impl AsRef<Path>, offset: u64, max: usize) -> io::Result<Vec<u8>> {
    let file = fs::File::open(path)?;
    read_growing(|buf, at| at_offset::read_at(&file, buf, offset + at), max).map(|(bytes, _)| bytes)
}

/// Reads with `read_at(buffer, position)` until it gives 0 or `max` bytes are in; also how many
/// bytes were copied to grow the buffer. The buffer doubles when full, so each byte read is copied
/// at most about once: linear in the file's size, not quadratic.
fn read_growing(
    mut read_at: impl FnMut(&mut [u8], u64) -> io::Result<usize>,
    max: usize,
) -> io::Result<(Vec<u8>, usize)> {
    let mut bytes = Vec::new();
    let mut len = 0;
    let mut copied = 0;
    loop {
        if len >= max {
            bytes.truncate(len);
            return Ok((bytes, copied));
        }
        if len == bytes.len() {
            // A zeroed allocation (one fill), not `Vec::resize`: in the size-optimized component
            // that writes a byte per step.
            let mut grown = vec![0u8; (len * 2).max(16 * 1024)];
            grown[..len].copy_from_slice(&bytes[..len]);
            copied += len;
            bytes = grown;
        }
        match read_at(&mut bytes[len..], len as u64) {
            Ok(0) => {
                bytes.truncate(len);
                return Ok((bytes, copied));
            }
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The text of file `path`, as `fs::read_to_string` gives it (the same error for bytes that are
/// not UTF-8), in fewer host calls.
pub fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Writes all of `bytes` at `offset` (see [`at_offset`]).
pub fn write_all_at(file: &fs::File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        match at_offset::write_at(file, bytes, offset) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                bytes = &bytes[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads and writes at an offset. On WASI they are wasi-libc's `pread` and `pwrite`, one host call
/// each (`descriptor.read`, `descriptor.write`), where std's `Read` and `Write` on a file go
/// through a stream: five host calls and two drops per write, three and a stat per read. In
/// OpenClaw's WASI host every call costs tens of microseconds (jco's glue keeps task records for
/// each), and a turn writes two or three files.
#[cfg(target_os = "wasi")]
mod at_offset {
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;

    unsafe extern "C" {
        fn pread(fd: i32, buf: *mut u8, len: usize, offset: i64) -> isize;
        fn pwrite(fd: i32, buf: *const u8, len: usize, offset: i64) -> isize;
    }

    fn offset_of(offset: u64) -> io::Result<i64> {
        i64::try_from(offset).map_err(|_| io::ErrorKind::InvalidInput.into())
    }

    pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let offset = offset_of(offset)?;
        // SAFETY: `buf` is valid for writes of its length, and the descriptor is `file`'s, open
        // for the whole call.
        let n = unsafe { pread(file.as_raw_fd(), buf.as_mut_ptr(), buf.len(), offset) };
        usize::try_from(n).map_err(|_| io::Error::last_os_error())
    }

    pub fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
        let offset = offset_of(offset)?;
        // SAFETY: `buf` is valid for reads of its length, and the descriptor is `file`'s, open for
        // the whole call.
        let n = unsafe { pwrite(file.as_raw_fd(), buf.as_ptr(), buf.len(), offset) };
        usize::try_from(n).map_err(|_| io::Error::last_os_error())
    }
}

#[cfg(unix)]
mod at_offset {
    use std::fs::File;
    use std::io;
    use std::os::unix::fs::FileExt;

    pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        FileExt::read_at(file, buf, offset)
    }

    pub fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
        FileExt::write_at(file, buf, offset)
    }
}

/// The names in directory `dir` (not `.` or `..`), in no particular order. On WASI, by the host's
/// `read-directory` alone: std's `read_dir` goes through wasi-libc's `readdir`, which asks the host
/// for every entry's inode (`metadata-hash-at`): a stat of each entry that nothing here reads, and
/// in OpenClaw's WASI host a walk and an lstat each (with a backlog in the spool, most of a tick).
pub fn list_names(dir: &Path) -> io::Result<Vec<String>> {
    Ok(list(dir)?.names)
}

/// A directory's entries: the names, and how many entries have a name that is not UTF-8 (WASI
/// cannot pass such a name, so nothing here can open, move or remove them).
#[derive(Debug, Default)]
pub struct Listing {
    pub names: Vec<String>,
    pub not_utf8: usize,
}

/// The entries of `dir`, as [`list_names`] reads them; an entry whose name is not UTF-8 is counted
/// and passed over, never the end of the listing.
pub fn list(dir: &Path) -> io::Result<Listing> {
    listing::list(dir)
}

#[cfg(target_os = "wasi")]
mod listing {
    use std::io;
    use std::path::Path;
    use wasi::filesystem::preopens;
    use wasi::filesystem::types::{Descriptor, DescriptorFlags, ErrorCode, OpenFlags, PathFlags};

    thread_local! {
        // The host's preopened directories with their guest paths, asked once: each call hands
        // out new handles.
        static PREOPENS: Vec<(Descriptor, String)> = preopens::get_directories();
    }

    pub fn list(dir: &Path) -> io::Result<super::Listing> {
        PREOPENS.with(|preopens| {
            // The preopen with the longest path `dir` is under, as wasi-libc resolves paths.
            let (base, relative) = preopens
                .iter()
                .filter_map(|(descriptor, at)| Some((descriptor, dir.strip_prefix(at).ok()?)))
                .max_by_key(|(_, relative)| std::cmp::Reverse(relative.as_os_str().len()))
                .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
            let relative = relative.to_str().ok_or(io::ErrorKind::InvalidInput)?;
            let opened = if relative.is_empty() {
                None
            } else {
                Some(
                    base.open_at(
                        PathFlags::SYMLINK_FOLLOW,
                        relative,
                        OpenFlags::DIRECTORY,
                        DescriptorFlags::READ,
                    )
                    .map_err(error)?,
                )
            };
            let entries = opened
                .as_ref()
                .unwrap_or(base)
                .read_directory()
                .map_err(error)?;
            let mut listing = super::Listing::default();
            loop {
                match entries.read_directory_entry() {
                    Ok(Some(entry)) => listing.names.push(entry.name),
                    Ok(None) => return Ok(listing),
                    // The host could not pass this entry's name; the next one follows.
                    Err(ErrorCode::IllegalByteSequence) => listing.not_utf8 += 1,
                    Err(code) => return Err(error(code)),
                }
            }
        })
    }

    fn error(code: ErrorCode) -> io::Error {
        let kind = match code {
            ErrorCode::NoEntry => io::ErrorKind::NotFound,
            ErrorCode::Access | ErrorCode::NotPermitted => io::ErrorKind::PermissionDenied,
            ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, format!("WASI error {}", code.name()))
    }
}

#[cfg(not(target_os = "wasi"))]
mod listing {
    use std::io;
    use std::path::Path;

    /// An entry that cannot be read is left out; one whose name is not UTF-8 (which WASI cannot
    /// pass) is counted.
    pub fn list(dir: &Path) -> io::Result<super::Listing> {
        let mut listing = super::Listing::default();
        for entry in std::fs::read_dir(dir)?.flatten() {
            match entry.file_name().into_string() {
                Ok(name) => listing.names.push(name),
                Err(_) => listing.not_utf8 += 1,
            }
        }
        Ok(listing)
    }
}

/// What says whether a file was written since it was last looked at: its size and modification
/// time (None: it does not exist).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    is_file: bool,
}

/// Whether `path` itself (a symlink is not followed) was last modified more than `age_ms` before
/// `now_ms` (unix ms); false when it cannot be looked at.
pub fn modified_before(path: &Path, now_ms: u64, age_ms: u64) -> bool {
    stamp(path)
        .ok()
        .flatten()
        .is_some_and(|stamp| stamp.modified_before(now_ms, age_ms))
}

/// The stamp of `path` itself (a symlink is not followed); None when it does not exist.
pub fn stamp(path: &Path) -> io::Result<Option<Stamp>> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(Stamp::of(&meta))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
            is_file: meta.is_file(),
        }
    }

    /// Whether it was last modified more than `age_ms` before `now_ms` (unix ms).
    pub fn modified_before(&self, now_ms: u64, age_ms: u64) -> bool {
        self.modified
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .is_some_and(|t| now_ms.saturating_sub(t.as_millis() as u64) > age_ms)
    }

    /// Refuses, before anything is opened, what is not a regular file (reading a FIFO would wait
    /// forever) or is larger than `max_bytes`.
    pub fn readable_within(&self, max_bytes: u64) -> io::Result<()> {
        if !self.is_file {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "not a regular file",
            ));
        }
        if self.len > max_bytes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("larger than {max_bytes} bytes"),
            ));
        }
        Ok(())
    }
}

/// Why a kept file could not be had.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    /// Not JSON of the expected shape (a torn or foreign file).
    Parse(serde_json::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => e.fmt(f),
            ReadError::Parse(e) => e.fmt(f),
        }
    }
}

/// The first JSON value of `bytes`; what follows it is ignored. A file written in place ends with
/// the spaces that pad it to its old length, or, when two writers of different lengths met, with
/// the tail of the longer write: the value is then one writer's whole value (a write call is not
/// interleaved with another on the same file).
pub fn parse_first<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<T>();
    match values.next() {
        Some(value) => value,
        None => serde_json::from_slice(bytes),
    }
}

/// Overwrites `path` in place, from the start, padding `bytes` with spaces to the file's old length
/// instead of truncating it (renaming a new file into place costs about a millisecond per write in
/// OpenClaw's WASI host, this about ten microseconds). For files that can be recomputed only
/// (caches and per-session state, never the spool or the counters): a process killed between the
/// calls of a large write, or a power loss, can leave new bytes over the old ones, which almost
/// always fails to parse (the file is then recomputed) and at worst reads as a mix until the next
/// write; a write cut short by a full disk while the file grows never parses. Creates the
/// directory when the write finds it missing. Returns the file's stamp after the write.
///
/// `known_len` is the file's length when this instance last looked at it, if it did: the padding
/// then needs no `stat`. Should another writer have made the file longer since, the tail of its
/// write stays after the padding, which [`parse_first`] ignores.
pub fn write_in_place(path: &Path, bytes: &[u8], known_len: Option<u64>) -> io::Result<Stamp> {
    let write = || -> io::Result<Stamp> {
        let file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let old_len = match known_len {
            Some(len) => len,
            None => file.metadata()?.len(),
        };
        if old_len > bytes.len() as u64 {
            // Filled as one block (`Vec::resize` writes a byte per step in the component).
            let mut padded = vec![b' '; old_len as usize];
            padded[..bytes.len()].copy_from_slice(bytes);
            write_all_at(&file, &padded, 0)?;
        } else {
            write_all_at(&file, bytes, 0)?;
        }
        Ok(Stamp::of(&file.metadata()?))
    };
    write().or_else(|e| match (e.kind(), path.parent()) {
        (io::ErrorKind::NotFound, Some(dir)) if !dir.as_os_str().is_empty() => {
            fs::create_dir_all(dir).and_then(|()| write())
        }
        _ => Err(e),
    })
}

/// Files' contents as this instance last read or wrote them, each with the file's stamp then. A
/// content is used again only while the file's stamp is unchanged: another instance or process
/// that wrote the file since changed its modification time (and the file is read again). One
/// `stat` instead of an open, reads and a close per use. Linux since 6.13 gives each write after a
/// stat a distinct time; on a file system with a coarse clock, a second write of the same length
/// within one tick of ours could go unseen until the next write, which costs no more than the
/// last-writer-wins race that two concurrent turns of one session already have.
pub struct Kept<T> {
    files: HashMap<PathBuf, (Stamp, T)>,
    capacity: usize,
}

impl<T: DeserializeOwned> Kept<T> {
    /// At most `capacity` files are kept (all are forgotten when one more comes).
    pub fn new(capacity: usize) -> Kept<T> {
        Kept {
            files: HashMap::new(),
            capacity,
        }
    }

    /// The content of the regular file `path` (None when it does not exist): the kept one when the
    /// file is unchanged, else the file's, read and parsed (see [`parse_first`]). A directory, a
    /// FIFO or another special file is refused without being opened, and so is a file of more than
    /// `max_bytes`.
    pub fn read(&mut self, path: &Path, max_bytes: u64) -> Result<Option<&T>, ReadError> {
        let Some(now) = stamp(path).map_err(ReadError::Io)? else {
            self.files.remove(path);
            return Ok(None);
        };
        if self.files.get(path).is_some_and(|(kept, _)| *kept == now) {
            return Ok(self.files.get(path).map(|(_, value)| value));
        }
        self.files.remove(path);
        now.readable_within(max_bytes).map_err(ReadError::Io)?;
        let bytes = match read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ReadError::Io(e)),
        };
        let value = parse_first(&bytes).map_err(ReadError::Parse)?;
        // Kept with the stamp seen before reading: a write in between makes the next use read again.
        Ok(Some(&self.keep(path, now, value).1))
    }

    /// The content last read or written for `path`, without looking at the file (another writer
    /// may have changed it since).
    pub fn last(&self, path: &Path) -> Option<&T> {
        self.files.get(path).map(|(_, value)| value)
    }

    /// Writes `bytes`, the encoding of `value`, to `path` in place (see [`write_in_place`]) and
    /// keeps `value` as the file's content. A failed write forgets the file.
    pub fn write(&mut self, path: &Path, bytes: &[u8], value: T) -> io::Result<()> {
        let known_len = self.files.remove(path).map(|(stamp, _)| stamp.len);
        let stamp = write_in_place(path, bytes, known_len)?;
        self.keep(path, stamp, value);
        Ok(())
    }

    fn keep(&mut self, path: &Path, stamp: Stamp, value: T) -> &(Stamp, T) {
        if self.files.len() >= self.capacity {
            self.files.clear();
        }
        self.files.insert(path.to_path_buf(), (stamp, value));
        self.files.get(path).expect("inserted above")
    }
}

/// An empty directory for a unit test, named after `label`, removed when dropped: when the test
/// ends, passed or failed.
#[cfg(test)]
pub(crate) fn temp_dir(label: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{label}-"))
        .tempdir()
        .expect("a temporary directory")
}

#[cfg(test)]
mod tests;
