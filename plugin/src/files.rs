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

/// The bytes of regular file `path` (None when it does not exist). A directory, a FIFO or another
/// special file is refused without being opened (reading a FIFO would wait forever), and so is a
/// file of more than `max_bytes`.
pub fn read_regular(path: &Path, max_bytes: u64) -> io::Result<Option<Vec<u8>>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a regular file",
        ));
    }
    if meta.len() > max_bytes {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {max_bytes} bytes"),
        ));
    }
    fs::read(path).map(Some)
}
