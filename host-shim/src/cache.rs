//! The compiled component, cached on disk.
//!
//! One file per wasm file name (`<stem>.cwasm`), so rebuilding the wasm replaces its entry instead of
//! piling up new ones. Layout: the payload (`Component::serialize`), then a trailer: key, checksum
//! (xxh3-128) of the payload, magic. The payload comes first so that wasmtime can map the entry
//! file itself (`Component::deserialize_file`): its code pages are then read from the page cache
//! as they are used, where reading the 8.8 MB entry and copying it again into wasmtime's own mapping
//! was a third of an `intent-test` process.
//! The key is sha256(sha256(wasm) ‖ engine compatibility hash): a new wasm or another wasmtime makes the
//! entry stale. The payload checksum catches corruption before anything is deserialized (a fast
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
const CHECKSUM_LEN: usize = 16;
const TRAILER_LEN: usize = KEY_LEN + CHECKSUM_LEN + MAGIC.len();

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
/// Cache trouble is logged, never fatal; only a wasm that does not compile is an error.
pub(crate) fn load_or_compile(
    engine: &Engine,
    wasm_path: &Path,
    wasm: &[u8],
    dir: Option<&Path>,
    logs: &LogSink,
) -> wasmtime::Result<Loaded> {
    let cache = match usable_dir(dir, logs) {
        Ok(cache) => cache,
        Err(outcome) => {
            return Ok(Loaded {
                component: Component::new(engine, wasm)?,
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
    let key = cache_key(engine, wasm);
    let outcome = match load_entry(engine, &cache, &name, &key) {
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

    let component = Component::new(engine, wasm)?;
    let written = component
        .serialize()
        .map_err(std::io::Error::other)
        .and_then(|payload| cache.write_entry(&name, &entry(&key, &payload)));
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
    key: &[u8; KEY_LEN],
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
    let payload = check_entry(mapped.bytes(), key).map_err(recompiled)?;
    let path = cache.file(name);
    // SAFETY (both calls): the entry was opened from a file only this user (or root) can have
    // written, and its key and checksum match: these are the bytes this cache wrote from
    // `Component::serialize` on an engine of the same configuration. Entries are only ever
    // replaced by a rename, never written in place, so the mapped file does not change under us.
    let loaded = unsafe { Component::deserialize_file(engine, &path) }
        .map_err(|err| recompiled(format!("not loadable: {err}")))?;
    if same_file(&entry, &path) {
        return Ok(loaded);
    }
    // Another shim replaced the entry between the check and the mapping: load the checked bytes.
    unsafe { Component::deserialize(engine, payload) }
        .map_err(|err| recompiled(format!("not loadable: {err}")))
}

/// Whether `path` still names the open file `entry` (the descriptor keeps its inode from being
/// reused).
fn same_file(entry: &std::fs::File, path: &Path) -> bool {
    match (entry.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// The payload of a cache entry, or why the entry cannot be used.
fn check_entry<'a>(entry: &'a [u8], key: &[u8; KEY_LEN]) -> Result<&'a [u8], String> {
    if entry.starts_with(OLD_MAGIC) {
        return Err("stale: written in another format by another version of the shim".into());
    }
    if entry.len() < TRAILER_LEN || !entry.ends_with(MAGIC) {
        return Err("corrupt: not a cache entry".into());
    }
    let (payload, trailer) = entry.split_at(entry.len() - TRAILER_LEN);
    let (stored_key, rest) = trailer.split_at(KEY_LEN);
    if stored_key != key {
        return Err("stale: built from another wasm or by another engine".into());
    }
    if rest[..CHECKSUM_LEN] != checksum(payload) {
        return Err("corrupt: checksum mismatch".into());
    }
    Ok(payload)
}

/// A cache entry mapped read-only: its bytes are the page cache's, not copied (reading the 8.8 MB
/// entry through a buffer was a seventh of an `intent-test` process).
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
        let at = std::ptr::NonNull::new(at).ok_or_else(|| std::io::Error::other("mmap gave null"))?;
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

fn cache_key(engine: &Engine, wasm: &[u8]) -> [u8; KEY_LEN] {
    let mut hasher = Sha256Hasher(Sha256::new());
    hasher.0.update(Sha256::digest(wasm));
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.finalize().into()
}

fn checksum(payload: &[u8]) -> [u8; CHECKSUM_LEN] {
    xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes()
}

/// A cache entry: the payload, then the trailer.
fn entry(key: &[u8; KEY_LEN], payload: &[u8]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(payload.len() + TRAILER_LEN);
    entry.extend_from_slice(payload);
    entry.extend_from_slice(key);
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
