//! A lock file on disk: its record, reading it safely, judging it stale (the protocol is in the
//! parent module's documentation), and the host facts it needs (pid liveness, hostname, time).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// A lock file larger than this is not one of ours: unreadable.
const MAX_LOCK_FILE: u64 = 4096;

/// An unreadable lock file younger than this may still be being written.
const UNFINISHED_WRITE_GRACE: Duration = Duration::from_secs(5);

/// The content of a lock file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct LockRecord {
    pub pid: u32,
    pub host: String,
    pub token: String,
    pub acquired_ms: u64,
    pub lease_ms: u64,
    pub holder: String,
}

impl LockRecord {
    pub(super) fn lease_end_ms(&self) -> u64 {
        self.acquired_ms.saturating_add(self.lease_ms)
    }

    /// "pid N (<holder>) on <host> since <time>, lease until <time>".
    pub(super) fn describe(&self) -> String {
        format!(
            "pid {} ({}) on {} since {}, lease until {}",
            self.pid,
            printable(&self.holder),
            printable(&self.host),
            iso_time(self.acquired_ms),
            iso_time(self.lease_end_ms())
        )
    }
}

/// What is at a lock's path.
pub(super) enum Found {
    Gone,
    Record(LockRecord),
    /// Not a readable lock record; `identity` tells this file from a newer one at the same path.
    Unreadable {
        why: String,
        age: Duration,
        identity: (u64, u64, Vec<u8>),
    },
}

impl Found {
    /// Whether `self` (read after moving a stale lock aside) is the file that was judged stale.
    pub(super) fn same_lock_as(&self, judged: &Found) -> bool {
        match (self, judged) {
            (Found::Record(moved), Found::Record(stale)) => moved.token == stale.token,
            (Found::Unreadable { identity: a, .. }, Found::Unreadable { identity: b, .. }) => {
                a == b
            }
            _ => false,
        }
    }
}

/// Creates the lock file exclusively and writes `record`; a half-written file is removed.
pub(super) fn create_lock_file(path: &Path, record: &LockRecord) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let json = serde_json::to_vec(record).expect("a lock record serialises");
    if let Err(err) = file.write_all(&json) {
        drop(file);
        let _ = fs::remove_file(path);
        // Not AlreadyExists, whatever it was: the caller must not take it for a busy lock.
        return Err(io::Error::other(err));
    }
    Ok(())
}

/// Reads a lock file without following a symlink or blocking on a FIFO.
pub(super) fn read_lock(path: &Path) -> io::Result<Found> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Found::Gone),
        Err(err) => return Err(err),
    };
    let age = meta
        .modified()
        .ok()
        .and_then(|mtime| SystemTime::now().duration_since(mtime).ok())
        .unwrap_or_default();
    let unreadable = |why: String, bytes: Vec<u8>| Found::Unreadable {
        why,
        age,
        identity: (meta.dev(), meta.ino(), bytes),
    };
    if meta.is_dir() {
        return Err(io::Error::other("a directory is in the lock file's place"));
    }
    if !meta.is_file() {
        return Ok(unreadable("not a regular file".into(), Vec::new()));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Found::Gone),
        Err(err) => return Ok(unreadable(err.to_string(), Vec::new())),
    };
    let bytes = read_at_most(file, MAX_LOCK_FILE)?;
    if bytes.len() as u64 > MAX_LOCK_FILE {
        return Ok(unreadable("larger than 4 KiB".into(), bytes));
    }
    Ok(match serde_json::from_slice::<LockRecord>(&bytes) {
        Ok(record) if record.pid > 0 && record.pid <= i32::MAX as u32 => Found::Record(record),
        Ok(record) => unreadable(format!("pid {} is not a process id", record.pid), bytes),
        Err(err) => unreadable(format!("not a lock record: {err}"), bytes),
    })
}

/// Up to `limit + 1` bytes, so a larger file shows.
pub(super) fn read_at_most(file: File, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Why the lock at a path may be broken ("dead", "lease expired"), or None when it stands.
pub(super) fn staleness(found: &Found) -> Option<&'static str> {
    match found {
        Found::Gone => None,
        Found::Record(record) if now_ms() >= record.lease_end_ms() => Some("lease expired"),
        // A lease never lasts longer than its stated length from now: a clock stepped back or a
        // tampered file must not hold the state directory until some later date.
        Found::Record(record) if record.acquired_ms > now_ms() => Some("dated in the future"),
        Found::Record(record) if record.host == hostname() && !pid_alive(record.pid) => {
            Some("dead")
        }
        Found::Record(_) => None,
        Found::Unreadable { age, .. } if *age >= UNFINISHED_WRITE_GRACE => {
            Some("unreadable for 5 s")
        }
        Found::Unreadable { .. } => None,
    }
}

pub(super) fn busy_text(found: &Found) -> String {
    match found {
        Found::Record(record) => format!("held by {}", record.describe()),
        Found::Unreadable { why, .. } => format!(
            "held by a lock file that is being written or is damaged ({why}); it counts as stale \
             once it is 5 s old"
        ),
        Found::Gone => "released while waiting".into(),
    }
}

/// `kill(pid, 0)`: only ESRCH means there is no such process.
pub(super) fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

pub(crate) fn hostname() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname NUL-terminates when it fits.
        let result = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if result != 0 {
            return String::new();
        }
        let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..len]).into_owned()
    })
}

pub(super) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Unix milliseconds as JavaScript's `toISOString` writes them: `2026-11-22T23:06:01.123Z`.
pub(super) fn iso_time(ms: u64) -> String {
    let at = i64::try_from(ms)
        .ok()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
        .unwrap_or(jiff::Timestamp::MAX);
    format!("{at:.3}")
}

/// Text from a lock file, safe for one log line: control characters shown as `\u{..}`.
pub(super) fn printable(text: &str) -> String {
    text.chars()
        .take(200)
        .map(|c| {
            if c.is_control() {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::iso_time;

    #[test]
    fn iso_times_match_javascript() {
        // new Date(ms).toISOString() for each.
        for (ms, iso) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (1_795_388_761_123, "2026-11-22T23:06:01.123Z"),
            (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
        ] {
            assert_eq!(iso_time(ms), iso, "{ms}");
        }
    }
}
