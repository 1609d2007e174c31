//! The compiled component, cached on disk.
//!
//! One file per wasm file name (`<stem>.cwasm`), so rebuilding the wasm replaces its entry instead of
//! piling up new ones. Layout: magic, key, sha256 of the payload, payload (`Component::serialize`).
//! The key is sha256(sha256(wasm) ‖ engine compatibility hash): a new wasm or another wasmtime makes the
//! entry stale. The payload checksum catches corruption before anything is deserialized.

use std::fs;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::LogSink;
use crate::bindings::graphiti::openclaw::host::LogLevel;

const MAGIC: &[u8; 8] = b"GOCWASM\x01";
const HEADER_LEN: usize = MAGIC.len() + 32 + 32;

/// What the on-disk cache did when the shim was built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// A valid entry was loaded; nothing was compiled.
    Hit,
    /// There was no entry: compiled (and written, unless the cache directory was unusable).
    Miss,
    /// An entry existed but was stale or corrupt: compiled and rewritten.
    Recompiled { reason: String },
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
    /// None when there is no cache directory.
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
    let Some(dir) = dir else {
        logs.push(
            LogLevel::Warn,
            "no cache directory (neither XDG_CACHE_HOME nor HOME is set)".into(),
        );
        let component = Component::new(engine, wasm)?;
        return Ok(Loaded {
            component,
            outcome: CacheOutcome::Miss,
            file: None,
        });
    };
    let stem = wasm_path
        .file_stem()
        .map_or("plugin".into(), |s| s.to_string_lossy());
    let file = dir.join(format!("{stem}.cwasm"));
    let key = cache_key(engine, wasm);

    let outcome = match fs::read(&file) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => CacheOutcome::Miss,
        Err(err) => CacheOutcome::Recompiled {
            reason: format!("unreadable: {err}"),
        },
        Ok(entry) => match payload(&entry, &key) {
            Err(reason) => CacheOutcome::Recompiled { reason },
            // SAFETY: the checksum proves these are the bytes this cache wrote from
            // `Component::serialize`, and the key proves an engine of the same configuration did.
            Ok(bytes) => match unsafe { Component::deserialize(engine, bytes) } {
                Ok(component) => {
                    return Ok(Loaded {
                        component,
                        outcome: CacheOutcome::Hit,
                        file: Some(file),
                    });
                }
                Err(err) => CacheOutcome::Recompiled {
                    reason: format!("not loadable: {err}"),
                },
            },
        },
    };
    if let CacheOutcome::Recompiled { reason } = &outcome {
        logs.push(
            LogLevel::Info,
            format!("recompiling {}: cache entry {reason}", wasm_path.display()),
        );
    }

    let component = Component::new(engine, wasm)?;
    if let Err(err) = component
        .serialize()
        .map_err(io::Error::other)
        .and_then(|bytes| write_entry(&file, &key, &bytes))
    {
        logs.push(
            LogLevel::Warn,
            format!("cannot write cache file {}: {err}", file.display()),
        );
    }
    Ok(Loaded {
        component,
        outcome,
        file: Some(file),
    })
}

fn cache_key(engine: &Engine, wasm: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256Hasher(Sha256::new());
    hasher.0.update(Sha256::digest(wasm));
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.finalize().into()
}

/// The serialized component inside a cache entry, or why the entry cannot be used.
fn payload<'a>(entry: &'a [u8], key: &[u8; 32]) -> Result<&'a [u8], String> {
    if entry.len() < HEADER_LEN || !entry.starts_with(MAGIC) {
        return Err("corrupt: not a cache entry".into());
    }
    let (header, payload) = entry.split_at(HEADER_LEN);
    if &header[MAGIC.len()..MAGIC.len() + 32] != key {
        return Err("stale: built from another wasm or by another engine".into());
    }
    if header[MAGIC.len() + 32..] != Sha256::digest(payload)[..] {
        return Err("corrupt: checksum mismatch".into());
    }
    Ok(payload)
}

/// Writes a temporary file and renames it over the entry, so readers never see half an entry.
fn write_entry(file: &Path, key: &[u8; 32], payload: &[u8]) -> io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    // Unique per process and per write: two shims may be compiling the same wasm at once.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let serial = WRITES.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{name}.{}-{serial}.tmp", std::process::id()));
    let mut entry = Vec::with_capacity(HEADER_LEN + payload.len());
    entry.extend_from_slice(MAGIC);
    entry.extend_from_slice(key);
    entry.extend_from_slice(&Sha256::digest(payload));
    entry.extend_from_slice(payload);
    let written = fs::write(&temp, &entry).and_then(|()| fs::rename(&temp, file));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
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
