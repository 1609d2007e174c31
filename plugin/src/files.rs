//! Writing state files so that neither a crash nor a second instance writing at the same moment can
//! leave half a file: write a temporary file of a name no other writer uses, then rename it.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Writes `bytes` to `path` atomically, creating its directory if needed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    // Time and a per-instance counter: distinct across instances and across writes of one instance.
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tmp = path.with_extension(format!(
        "{nanos:x}-{}.tmp",
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    // A failed write (a full disk) or rename leaves no temporary file behind.
    fs::write(&tmp, bytes)
        .and_then(|()| fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
}
