//! The compiled component, cached on disk.
//!
//! One file per wasm file name (`<stem>.cwasm`), so rebuilding the wasm replaces its entry instead of
//! piling up new ones. Layout: magic, key, checksum (xxh3-128) of the payload, payload
//! (`Component::serialize`).
//! The key is sha256(sha256(wasm) ‖ engine compatibility hash): a new wasm or another wasmtime makes the
//! entry stale. The payload checksum catches corruption before anything is deserialized (a fast
//! non-cryptographic one: whoever could forge an entry could write its checksum too); what keeps
//! other users' code out is [`cache_trust`](crate::cache_trust): only a directory and an entry no one
//! else can write are read.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::bindings::graphiti::openclaw::host::LogLevel;
use crate::cache_trust::{self, CacheDir, DirTrust, EntryError};
use crate::logs::LogSink;

const MAGIC: &[u8; 8] = b"GOCWASM\x02";
const CHECKSUM_LEN: usize = 16;
const HEADER_LEN: usize = MAGIC.len() + 32 + CHECKSUM_LEN;

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
    key: &[u8; 32],
) -> Result<Component, CacheOutcome> {
    let recompiled = |reason: String| CacheOutcome::Recompiled { reason };
    let read = cache.read_entry(name);
    if let Some(tightened) = &cache.tightened {
        return Err(match read {
            Ok(None) => CacheOutcome::Miss,
            _ => recompiled(format!("untrusted: {tightened}")),
        });
    }
    let entry = match read {
        Ok(Some(entry)) => entry,
        Ok(None) => return Err(CacheOutcome::Miss),
        Err(EntryError::Untrusted(reason)) => {
            return Err(recompiled(format!("untrusted: {reason}")));
        }
        Err(EntryError::Unreadable(err)) => return Err(recompiled(format!("unreadable: {err}"))),
    };
    let bytes = payload(&entry, key).map_err(recompiled)?;
    // SAFETY: the entry was read from a file only this user (or root) can have written, and its
    // key and checksum match: these are the bytes this cache wrote from `Component::serialize` on an
    // engine of the same configuration.
    unsafe { Component::deserialize(engine, bytes) }
        .map_err(|err| recompiled(format!("not loadable: {err}")))
}

fn cache_key(engine: &Engine, wasm: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256Hasher(Sha256::new());
    hasher.0.update(Sha256::digest(wasm));
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.finalize().into()
}

/// The serialized component inside a cache entry, or why the entry cannot be used.
fn payload<'a>(entry: &'a [u8], key: &[u8; 32]) -> Result<&'a [u8], String> {
    if entry.starts_with(&MAGIC[..MAGIC.len() - 1]) && !entry.starts_with(MAGIC) {
        return Err("stale: written in another format by another version of the shim".into());
    }
    if entry.len() < HEADER_LEN || !entry.starts_with(MAGIC) {
        return Err("corrupt: not a cache entry".into());
    }
    let (header, payload) = entry.split_at(HEADER_LEN);
    if &header[MAGIC.len()..MAGIC.len() + 32] != key {
        return Err("stale: built from another wasm or by another engine".into());
    }
    if header[MAGIC.len() + 32..] != checksum(payload) {
        return Err("corrupt: checksum mismatch".into());
    }
    Ok(payload)
}

fn checksum(payload: &[u8]) -> [u8; CHECKSUM_LEN] {
    xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes()
}

/// A cache entry: header, then the payload.
fn entry(key: &[u8; 32], payload: &[u8]) -> Vec<u8> {
    let mut entry = Vec::with_capacity(HEADER_LEN + payload.len());
    entry.extend_from_slice(MAGIC);
    entry.extend_from_slice(key);
    entry.extend_from_slice(&checksum(payload));
    entry.extend_from_slice(payload);
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
