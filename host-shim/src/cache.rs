//! The compiled component, cached on disk.
//!
//! One file per wasm file name (`<stem>.cwasm`), so rebuilding the wasm replaces its entry instead of
//! piling up new ones. Layout: the payload (`Component::serialize`), then a trailer: the wasm's
//! digest, its file's identity, key, checksum (xxh3-128) of the payload, magic. The payload comes first so that wasmtime can map the entry
//! file itself (`Component::deserialize_file`): its code pages are then read from the page cache
//! as they are used, where reading the whole entry and copying it again into wasmtime's own mapping
//! was a large share of an `intent-test` process.
//! The key is sha256(sha256(wasm) ‖ engine compatibility hash): a new wasm or another wasmtime makes the
//! entry stale. The trailer also keeps the wasm's digest and its file's identity (device, inode,
//! size, modification and change times): while the file's identity is unchanged its digest is taken
//! from the trailer instead of reading and hashing the wasm (a sixth of an `intent-test` process).
//! An identity is recorded only for a file whose change time was at least [`SETTLED_NS`] old when it
//! was read: a file rewritten later gets a new change time (which no one can set), even where
//! timestamps are coarse. The payload checksum catches corruption before anything is deserialized (a fast
//! non-cryptographic one: whoever could forge an entry could write its checksum too); what keeps
//! other users' code out is [`cache_trust`](crate::cache_trust): only a directory and an entry no one
//! else can write are read.

use std::hash::{Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::bindings::graphiti::openclaw::host::LogLevel;
use crate::cache_trust::{self, CacheDir, DirTrust, EntryError};
use crate::logs::LogSink;

const MAGIC: &[u8; 8] = b"GOCWASM\x03";
/// What earlier versions of the shim began their entries with.
const OLD_MAGIC: &[u8; 7] = b"GOCWASM";
const KEY_LEN: usize = 32;
const DIGEST_LEN: usize = 32;
const STAMP_LEN: usize = 40;
const CHECKSUM_LEN: usize = 16;
/// Digest of the wasm, its file's identity (zeros: none recorded), key, checksum of the payload, magic.
const TRAILER_LEN: usize = DIGEST_LEN + STAMP_LEN + KEY_LEN + CHECKSUM_LEN + MAGIC.len();
/// How old a wasm file's change time must be for its identity to stand for its contents.
const SETTLED_NS: i64 = 2_000_000_000;

/// The wasm file, read (and hashed) only when its bytes or digest are needed.
pub(crate) struct WasmFile {
    file: std::fs::File,
    /// Its identity when opened; None for a file that is not a regular file.
    stamp: Option<Stamp>,
    bytes: Option<Vec<u8>>,
    /// sha256 of `bytes`, once taken.
    digest: Option<[u8; DIGEST_LEN]>,
    /// Whether the file was unchanged while it was read and had settled by then.
    settled: bool,
}

impl WasmFile {
    /// Opens the wasm at `path` (an error here is the caller's "cannot read the wasm").
    pub fn open(path: &Path) -> std::io::Result<WasmFile> {
        let file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        let mut wasm = WasmFile {
            stamp: meta.is_file().then(|| Stamp::of(&meta)),
            file,
            bytes: None,
            digest: None,
            settled: false,
        };
        if wasm.stamp.is_none() {
            wasm.bytes()?; // a directory or a device: fails or reads now, as a plain read would
        }
        Ok(wasm)
    }

    fn bytes(&mut self) -> std::io::Result<&[u8]> {
        if self.bytes.is_none() {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut &self.file, &mut bytes)?;
            let after = self.file.metadata().map(|meta| Stamp::of(&meta)).ok();
            self.settled = self.stamp.is_some_and(|stamp| stamp.settled()) && after == self.stamp;
            self.bytes = Some(bytes);
        }
        Ok(self.bytes.as_deref().unwrap_or_default())
    }

    /// sha256 of the wasm's bytes, read and hashed once however often it is asked for.
    fn digest(&mut self) -> std::io::Result<[u8; DIGEST_LEN]> {
        if let Some(digest) = self.digest {
            return Ok(digest);
        }
        let digest: [u8; DIGEST_LEN] = Sha256::digest(self.bytes()?).into();
        self.digest = Some(digest);
        Ok(digest)
    }

    /// The identity to record with an entry: none unless the bytes were read from a settled file.
    fn stamp_to_record(&self) -> Stamp {
        match self.stamp {
            Some(stamp) if self.settled => stamp,
            _ => Stamp::NONE,
        }
    }
}

/// A file's identity: device, inode, size, modification and change times (ns since the epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp([i64; 5]);

impl Stamp {
    const NONE: Stamp = Stamp([0; 5]);

    fn of(meta: &std::fs::Metadata) -> Stamp {
        let ns = |secs: i64, nanos: i64| secs.saturating_mul(1_000_000_000).saturating_add(nanos);
        Stamp([
            meta.dev() as i64,
            meta.ino() as i64,
            meta.size() as i64,
            ns(meta.mtime(), meta.mtime_nsec()),
            ns(meta.ctime(), meta.ctime_nsec()),
        ])
    }

    fn settled(&self) -> bool {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
            });
        let changed = self.0[4];
        changed > 0 && now.saturating_sub(changed) >= SETTLED_NS
    }

    fn to_bytes(self) -> [u8; STAMP_LEN] {
        let mut bytes = [0u8; STAMP_LEN];
        for (chunk, value) in bytes.chunks_exact_mut(8).zip(self.0) {
            chunk.copy_from_slice(&value.to_le_bytes());
        }
        bytes
    }

    fn from_bytes(bytes: &[u8]) -> Stamp {
        let mut values = [0i64; 5];
        for (value, chunk) in values.iter_mut().zip(bytes.chunks_exact(8)) {
            *value = i64::from_le_bytes(chunk.try_into().unwrap_or_default());
        }
        Stamp(values)
    }
}

/// What the on-disk cache did when the shim was built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// A valid entry was loaded; nothing was compiled.
    Hit,
    /// There was no entry: compiled (and written, unless the cache directory was unusable).
    Miss,
    /// An entry existed but was stale, corrupt or untrusted (another user could have written it):
    /// compiled and rewritten.
    Recompiled { reason: String },
    /// The cache directory could have been written by another user ("untrusted: …" says how):
    /// compiled in memory; nothing there was read, written or changed.
    Untrusted { reason: String },
}

/// `$XDG_CACHE_HOME/graphiti-openclaw`, else `~/.cache/graphiti-openclaw`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("graphiti-openclaw"))
}

pub(crate) struct Loaded {
    pub component: Component,
    pub outcome: CacheOutcome,
    /// None when no cache directory is in use.
    pub file: Option<PathBuf>,
}

/// Loads the component for `wasm` from `dir`, compiling (and rewriting the entry) when needed.
/// Cache trouble is logged, never fatal; only a wasm that cannot be read or does not compile is an
/// error.
pub(crate) fn load_or_compile(
    engine: &Engine,
    wasm_path: &Path,
    wasm: &mut WasmFile,
    dir: Option<&Path>,
    logs: &LogSink,
) -> wasmtime::Result<Loaded> {
    let unreadable = |err: std::io::Error| {
        wasmtime::Error::msg(format!("cannot read {}: {err}", wasm_path.display()))
    };
    let cache = match usable_dir(dir, logs) {
        Ok(cache) => cache,
        Err(outcome) => {
            return Ok(Loaded {
                component: Component::new(engine, wasm.bytes().map_err(unreadable)?)?,
                outcome,
                file: None,
            });
        }
    };
    let name = format!(
        "{}.cwasm",
        wasm_path
            .file_stem()
            .map_or("plugin".into(), |s| s.to_string_lossy())
    );
    let outcome = match load_entry(engine, &cache, &name, wasm) {
        Ok(component) => {
            return Ok(Loaded {
                component,
                outcome: CacheOutcome::Hit,
                file: Some(cache.file(&name)),
            });
        }
        Err(outcome) => outcome,
    };
    if let CacheOutcome::Recompiled { reason } = &outcome {
        let level = if reason.starts_with("untrusted") {
            LogLevel::Warn
        } else {
            LogLevel::Info
        };
        let message = format!("recompiling {}: cache entry {reason}", wasm_path.display());
        logs.push(level, message);
    }

    let digest = wasm.digest().map_err(unreadable)?;
    let component = Component::new(engine, wasm.bytes().map_err(unreadable)?)?;
    let trailer = Trailer {
        digest,
        stamp: wasm.stamp_to_record(),
        key: cache_key(engine, &digest),
    };
    let written = component
        .serialize()
        .map_err(std::io::Error::other)
        .and_then(|payload| cache.write_entry(&name, &entry_bytes(&trailer, &payload)));
    if let Err(err) = written {
        let file = cache.file(&name);
        logs.push(
            LogLevel::Warn,
            format!("cannot write cache file {}: {err}", file.display()),
        );
    }
    Ok(Loaded {
        component,
        outcome,
        file: Some(cache.file(&name)),
    })
}

/// The cache directory to use; Err is the outcome to report when the component is compiled in
/// memory instead (no directory, an unusable one, or one another user could have written).
fn usable_dir(dir: Option<&Path>, logs: &LogSink) -> Result<CacheDir, CacheOutcome> {
    let Some(dir) = dir else {
        logs.push(
            LogLevel::Warn,
            "no cache directory (neither XDG_CACHE_HOME nor HOME is set)".into(),
        );
        return Err(CacheOutcome::Miss);
    };
    match cache_trust::open_dir(dir) {
        Ok(DirTrust::Trusted(cache)) => {
            if let Some(tightened) = &cache.tightened {
                logs.push(LogLevel::Warn, format!("cache directory: {tightened}"));
            }
            Ok(cache)
        }
        Ok(DirTrust::Untrusted(reason)) => {
            let reason = format!("untrusted: {reason}");
            logs.push(
                LogLevel::Warn,
                format!("not using the compiled-component cache, {reason}: compiled in memory"),
            );
            Err(CacheOutcome::Untrusted { reason })
        }
        Err(err) => {
            logs.push(
                LogLevel::Warn,
                format!("cannot use cache directory {}: {err}", dir.display()),
            );
            Err(CacheOutcome::Miss)
        }
    }
}

/// The cached component, or what to report when there is none that may be used.
fn load_entry(
    engine: &Engine,
    cache: &CacheDir,
    name: &str,
    wasm: &mut WasmFile,
) -> Result<Component, CacheOutcome> {
    let recompiled = |reason: String| CacheOutcome::Recompiled { reason };
    let opened = cache.open_entry(name);
    if let Some(tightened) = &cache.tightened {
        return Err(match opened {
            Ok(None) => CacheOutcome::Miss,
            _ => recompiled(format!("untrusted: {tightened}")),
        });
    }
    let entry = match opened {
        Ok(Some(entry)) => entry,
        Ok(None) => return Err(CacheOutcome::Miss),
        Err(EntryError::Untrusted(reason)) => {
            return Err(recompiled(format!("untrusted: {reason}")));
        }
        Err(EntryError::Unreadable(err)) => return Err(recompiled(format!("unreadable: {err}"))),
    };
    let mapped = Mapped::new(&entry).map_err(|err| recompiled(format!("unreadable: {err}")))?;
    let (payload, trailer, stored_checksum) = split_entry(mapped.bytes()).map_err(recompiled)?;
    let digest = match wasm.stamp {
        Some(stamp) if stamp != Stamp::NONE && stamp == trailer.stamp => trailer.digest,
        // The wasm's bytes are needed anyway when the entry turns out stale.
        _ => wasm
            .digest()
            .map_err(|err| recompiled(format!("the wasm could not be read: {err}")))?,
    };
    if trailer.key != cache_key(engine, &digest) {
        return Err(recompiled(
            "stale: built from another wasm or by another engine".into(),
        ));
    }
    if stored_checksum != checksum(payload) {
        return Err(recompiled("corrupt: checksum mismatch".into()));
    }
    let path = cache.file(name);
    // SAFETY (both calls): the entry was opened from a file only this user (or root) can have
    // written, and its key and checksum match: these are the bytes this cache wrote from
    // `Component::serialize` on an engine of the same configuration. Entries are only ever
    // replaced by a rename, never written in place, so the mapped file does not change under us.
    let loaded = unsafe { Component::deserialize_file(engine, &path) }
        .map_err(|err| recompiled(format!("not loadable: {err}")))?;
    let component = if same_file(&entry, &path) {
        loaded
    } else {
        // Another shim replaced the entry between the check and the mapping: load the checked bytes.
        unsafe { Component::deserialize(engine, payload) }
            .map_err(|err| recompiled(format!("not loadable: {err}")))?
    };
    // A wasm copied, touched or just built is hashed on every start until its identity is in the
    // entry: record it once it has settled (one rewrite, the entry renamed into place as always).
    let stamp = wasm.stamp_to_record();
    if stamp != Stamp::NONE && stamp != trailer.stamp {
        let refreshed = Trailer { stamp, ..trailer };
        let _ = cache.write_entry(name, &entry_bytes(&refreshed, payload));
    }
    Ok(component)
}

/// Whether `path` still names the open file `entry` (the descriptor keeps its inode from being
/// reused).
fn same_file(entry: &std::fs::File, path: &Path) -> bool {
    match (entry.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// What a cache entry says after its payload.
#[derive(Clone, Copy)]
struct Trailer {
    digest: [u8; DIGEST_LEN],
    stamp: Stamp,
    key: [u8; KEY_LEN],
}

/// The payload, trailer and payload checksum of a cache entry, or why it is not a usable entry.
fn split_entry(entry: &[u8]) -> Result<(&[u8], Trailer, &[u8]), String> {
    if entry.starts_with(OLD_MAGIC) {
        return Err("stale: written in another format by another version of the shim".into());
    }
    if entry.len() < TRAILER_LEN || !entry.ends_with(MAGIC) {
        return Err("corrupt: not a cache entry".into());
    }
    let (payload, trailer) = entry.split_at(entry.len() - TRAILER_LEN);
    let (digest, rest) = trailer.split_at(DIGEST_LEN);
    let (stamp, rest) = rest.split_at(STAMP_LEN);
    let (key, rest) = rest.split_at(KEY_LEN);
    let read = Trailer {
        digest: digest.try_into().unwrap_or_default(),
        stamp: Stamp::from_bytes(stamp),
        key: key.try_into().unwrap_or_default(),
    };
    Ok((payload, read, &rest[..CHECKSUM_LEN]))
}

/// A cache entry mapped read-only: its bytes are the page cache's, not copied (reading the entry
/// through a buffer was a noticeable share of an `intent-test` process).
struct Mapped {
    at: std::ptr::NonNull<std::ffi::c_void>,
    len: usize,
}

impl Mapped {
    fn new(file: &std::fs::File) -> std::io::Result<Mapped> {
        let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
        if len == 0 {
            return Ok(Mapped {
                at: std::ptr::NonNull::dangling(),
                len,
            });
        }
        use rustix::mm::{MapFlags, ProtFlags};
        // SAFETY: a new private read-only mapping of an open file; nothing else refers to it. The
        // file is not truncated while mapped: entries are replaced by rename only.
        let at = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ,
                MapFlags::PRIVATE,
                file,
                0,
            )
        }?;
        let at =
            std::ptr::NonNull::new(at).ok_or_else(|| std::io::Error::other("mmap gave null"))?;
        Ok(Mapped { at, len })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` readable bytes at `at`, mapped until `self` drops (or none when len is 0).
        unsafe { std::slice::from_raw_parts(self.at.as_ptr().cast::<u8>(), self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping made in `new`, unmapped once.
            let _ = unsafe { rustix::mm::munmap(self.at.as_ptr(), self.len) };
        }
    }
}

fn cache_key(engine: &Engine, wasm_digest: &[u8; DIGEST_LEN]) -> [u8; KEY_LEN] {
    let mut hasher = Sha256Hasher(Sha256::new());
    hasher.0.update(wasm_digest);
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.finalize().into()
}

fn checksum(payload: &[u8]) -> [u8; CHECKSUM_LEN] {
    xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes()
}

/// A cache entry: the payload, then the trailer.
fn entry_bytes(trailer: &Trailer, payload: &[u8]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(payload.len() + TRAILER_LEN);
    entry.extend_from_slice(payload);
    entry.extend_from_slice(&trailer.digest);
    entry.extend_from_slice(&trailer.stamp.to_bytes());
    entry.extend_from_slice(&trailer.key);
    entry.extend_from_slice(&checksum(payload));
    entry.extend_from_slice(MAGIC);
    entry
}

/// Feeds `Hash` output into sha256, so the engine hash is stable across processes
/// (std's `DefaultHasher` makes no such promise).
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        // Unused: the digest is taken from the inner sha256.
        0
    }
}
