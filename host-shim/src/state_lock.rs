//! `host.acquire-lock` and `host.release-lock`: one owner per state directory, across processes and
//! hosts. This comment is the protocol; the OpenClaw adapter (`plugin/openclaw/src/lock.js`)
//! implements the same one, so a CLI and a Gateway on one state directory exclude each other.
//!
//! - **File**: `<state-dir>/locks/<name>.lock` (`locks/` created 0700). A name matches
//!   `[a-z0-9-]{1,32}`, else `failed`. The content is one JSON object: `pid`, `host` (hostname),
//!   `token` (128 random bits in hex, fresh per acquisition), `acquired_ms` (unix ms), `lease_ms`,
//!   `holder` (e.g. `graphiti-openclaw shim 0.1.0`).
//! - **Acquire**: create with `O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600, write the JSON, close,
//!   remember the token for (instance, name). When the file exists, read it (no-follow, non-blocking,
//!   a regular file of at most 4 KiB) and judge it:
//!   - *stale* when `now >= acquired_ms + lease_ms`, or when it was written on this host and its pid
//!     is not alive (`kill(pid, 0)` fails with `ESRCH`; `EPERM` means alive). A file that cannot be
//!     read or parsed is stale only once its mtime is 5 s old (a writer killed between create and
//!     write), busy before that.
//!   - *breaking* a stale lock: rename it to `<name>.lock.stale-<own token>` (`ENOENT`: someone else
//!     broke it, retry); read the moved file: when it is not the one judged stale (another token), a
//!     fresh lock was moved: put it back with `link()` (`EEXIST`: a newcomer's lock stands and the
//!     moved holder finds itself `lost` at its next check), unlink the moved name, retry. Otherwise
//!     unlink it, log "broke the <name> lock left by pid N (dead | lease expired)" at info level and
//!     retry the create.
//!   - *busy*: retry every 10 to 20 ms until `wait-ms` has passed (in the shim, also no later than
//!     the call's deadline), then `busy("held by pid N (<holder>) on <host> since <time>, lease until
//!     <time>")`, times in ISO 8601 UTC with milliseconds.
//! - **Called again** by the instance that holds the lock: only verifies that the file still holds
//!   its token and the lease has not run out; otherwise forgets the lock and returns `lost`. The lease
//!   is never extended.
//! - **Release**: if the file holds the instance's token, unlink it; forget the lock either way. A host
//!   releases every lock of an instance it drops (the shim: a trapped instance, the shim itself, so the
//!   CLI's exit too) and on process exit where it can. A killed process (`kill -9`) leaves its file:
//!   that is what the staleness rules are for (at once on the same host, after the lease elsewhere).
//! - Two instances of one process (the adapter's pool, two shims): the pid is alive and the tokens
//!   differ, so the second is busy.
//! - No state directory mounted: `failed("no state directory")`.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub use crate::bindings::graphiti::openclaw::host::LockError;

/// What this host writes as `holder`.
const HOLDER: &str = concat!("graphiti-openclaw shim ", env!("CARGO_PKG_VERSION"));
/// A lock file larger than this is not one of ours: unreadable.
const MAX_LOCK_FILE: u64 = 4096;
/// An unreadable lock file younger than this may still be being written.
const UNFINISHED_WRITE_GRACE: Duration = Duration::from_secs(5);
const MAX_NAME_LEN: usize = 32;

/// The content of a lock file.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct LockRecord {
    pid: u32,
    host: String,
    token: String,
    acquired_ms: u64,
    lease_ms: u64,
    holder: String,
}

impl LockRecord {
    fn lease_end_ms(&self) -> u64 {
        self.acquired_ms.saturating_add(self.lease_ms)
    }

    /// "pid N (<holder>) on <host> since <time>, lease until <time>".
    fn describe(&self) -> String {
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

/// A lock this instance holds.
struct Held {
    token: String,
    acquired_ms: u64,
    lease_ms: u64,
}

/// What is at a lock's path.
enum Found {
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
    fn same_lock_as(&self, judged: &Found) -> bool {
        match (self, judged) {
            (Found::Record(moved), Found::Record(stale)) => moved.token == stale.token,
            (Found::Unreadable { identity: a, .. }, Found::Unreadable { identity: b, .. }) => {
                a == b
            }
            _ => false,
        }
    }
}

/// The locks one guest instance holds on one state directory. Dropping it releases them all.
pub struct StateLocks {
    state_dir: Option<PathBuf>,
    held: HashMap<String, Held>,
    log: Box<dyn Fn(String) + Send + Sync>,
}

impl StateLocks {
    /// Locks on `state_dir` (none: every acquire fails); `log` gets the info lines (a broken lock).
    pub fn new(state_dir: Option<PathBuf>, log: impl Fn(String) + Send + Sync + 'static) -> Self {
        Self {
            state_dir,
            held: HashMap::new(),
            log: Box::new(log),
        }
    }

    /// Takes lock `name` for `lease`, waiting up to `wait` while another holder has it; when this
    /// instance holds it already, only checks that it still does.
    pub fn acquire(
        &mut self,
        name: &str,
        lease: Duration,
        wait: Duration,
    ) -> Result<(), LockError> {
        check_name(name)?;
        let path = self.lock_path(name)?;
        if self.held.contains_key(name) {
            return self.verify(name, &path);
        }
        let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
        if lease_ms == 0 {
            return Err(LockError::Failed(format!(
                "the {name} lock needs a lease of at least 1 ms"
            )));
        }
        ensure_lock_dir(path.parent().expect("a lock path has a parent"))?;
        let token = random_token().map_err(|err| {
            LockError::Failed(format!("cannot make a lock token (/dev/urandom): {err}"))
        })?;
        let deadline = Instant::now() + wait;
        loop {
            let record = LockRecord {
                pid: std::process::id(),
                host: hostname().to_string(),
                token: token.clone(),
                acquired_ms: now_ms(),
                lease_ms,
                holder: HOLDER.to_string(),
            };
            match create_lock_file(&path, &record) {
                Ok(()) => {
                    let held = Held {
                        token,
                        acquired_ms: record.acquired_ms,
                        lease_ms,
                    };
                    self.held.insert(name.to_string(), held);
                    return Ok(());
                }
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(io_failure("create", &path, &err)),
            }
            let found = read_lock(&path).map_err(|err| io_failure("read", &path, &err))?;
            match staleness(&found) {
                Some(why) => self.break_stale(name, &path, &found, why, &token)?,
                None if matches!(found, Found::Gone) => {}
                None => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(LockError::Busy(busy_text(&found)));
                    }
                    std::thread::sleep(retry_pause().min(deadline - now));
                }
            }
        }
    }

    /// Gives up lock `name` if this instance holds it (the file is removed only while it holds this
    /// instance's token); forgets it either way.
    pub fn release(&mut self, name: &str) {
        let Some(held) = self.held.remove(name) else {
            return;
        };
        let Ok(path) = self.lock_path(name) else {
            return;
        };
        if let Ok(Found::Record(record)) = read_lock(&path)
            && record.token == held.token
        {
            let _ = fs::remove_file(&path);
        }
    }

    /// Releases every lock this instance holds.
    pub fn release_all(&mut self) {
        let names: Vec<String> = self.held.keys().cloned().collect();
        for name in names {
            self.release(&name);
        }
    }

    fn lock_path(&self, name: &str) -> Result<PathBuf, LockError> {
        let dir = self
            .state_dir
            .as_ref()
            .ok_or_else(|| LockError::Failed("no state directory".into()))?;
        Ok(dir.join("locks").join(format!("{name}.lock")))
    }

    fn verify(&mut self, name: &str, path: &Path) -> Result<(), LockError> {
        let held = &self.held[name];
        let found = read_lock(path).map_err(|err| io_failure("read", path, &err))?;
        let lost = match &found {
            Found::Record(record) if record.token == held.token => {
                let lease_end = held.acquired_ms.saturating_add(held.lease_ms);
                if now_ms() < lease_end {
                    return Ok(());
                }
                format!(
                    "the {name} lock's lease of {} ms ran out at {}",
                    held.lease_ms,
                    iso_time(lease_end)
                )
            }
            Found::Record(record) => format!(
                "the {name} lock was broken by another process; it is held by {}",
                record.describe()
            ),
            Found::Gone => format!("the {name} lock was broken by another process"),
            Found::Unreadable { why, .. } => {
                format!("the {name} lock was broken by another process ({why})")
            }
        };
        self.held.remove(name);
        Err(LockError::Lost(lost))
    }

    /// Moves the stale lock `judged` aside and removes it, or puts back a fresh one moved by mistake.
    fn break_stale(
        &self,
        name: &str,
        path: &Path,
        judged: &Found,
        why: &str,
        token: &str,
    ) -> Result<(), LockError> {
        let aside = path.with_file_name(format!("{name}.lock.stale-{token}"));
        match fs::rename(path, &aside) {
            Ok(()) => {}
            // Someone else broke it first.
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(io_failure("move aside", path, &err)),
        }
        let moved = read_lock(&aside).map_err(|err| io_failure("read", &aside, &err))?;
        if !moved.same_lock_as(judged) {
            // A newcomer's fresh lock: back where it was, unless yet another one stands there now.
            match fs::hard_link(&aside, path) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(io_failure("put back", path, &err)),
            }
            return fs::remove_file(&aside).map_err(|err| io_failure("remove", &aside, &err));
        }
        fs::remove_file(&aside).map_err(|err| io_failure("remove", &aside, &err))?;
        let pid = match judged {
            Found::Record(record) => format!("pid {}", record.pid),
            _ => "an unfinished writer".to_string(),
        };
        (self.log)(format!("broke the {name} lock left by {pid} ({why})"));
        Ok(())
    }
}

impl Drop for StateLocks {
    fn drop(&mut self) {
        self.release_all();
    }
}

fn check_name(name: &str) -> Result<(), LockError> {
    let valid = (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(LockError::Failed(format!(
            "invalid lock name {:?}: use 1 to {MAX_NAME_LEN} of a-z, 0-9 and -",
            printable(name)
        )))
    }
}

fn io_failure(action: &str, path: &Path, err: &io::Error) -> LockError {
    LockError::Failed(format!(
        "cannot {action} lock file {}: {err}",
        path.display()
    ))
}

/// Creates `locks/` (0700) unless it is there; anything but a directory there is an error.
fn ensure_lock_dir(dir: &Path) -> Result<(), LockError> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => match fs::symlink_metadata(dir) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(LockError::Failed(format!(
                "{} is not a directory",
                dir.display()
            ))),
            Err(err) => Err(io_failure("inspect", dir, &err)),
        },
        Err(err) => Err(LockError::Failed(format!(
            "cannot create lock directory {}: {err}",
            dir.display()
        ))),
    }
}

/// Creates the lock file exclusively and writes `record`; a half-written file is removed.
fn create_lock_file(path: &Path, record: &LockRecord) -> io::Result<()> {
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
fn read_lock(path: &Path) -> io::Result<Found> {
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
fn read_at_most(file: File, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Why the lock at a path may be broken ("dead", "lease expired"), or None when it stands.
fn staleness(found: &Found) -> Option<&'static str> {
    match found {
        Found::Gone => None,
        Found::Record(record) if now_ms() >= record.lease_end_ms() => Some("lease expired"),
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

fn busy_text(found: &Found) -> String {
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
fn pid_alive(pid: u32) -> bool {
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

fn hostname() -> &'static str {
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

fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// 10 to 20 ms, varied so that waiters do not retry in lockstep.
fn retry_pause() -> Duration {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    Duration::from_millis(10 + u64::from(nanos % 11))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Unix milliseconds as JavaScript's `toISOString` writes them: `2026-11-22T23:06:01.123Z`.
pub(crate) fn iso_time(ms: u64) -> String {
    let days = ms / 86_400_000;
    let in_day = ms % 86_400_000;
    // Days to a civil date (Howard Hinnant's algorithm), for dates from 1970 on.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

/// Text from a lock file, safe for one log line: control characters shown as `\u{..}`.
fn printable(text: &str) -> String {
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
    use super::*;

    /// The race the token check guards against: between judging a lock stale and moving it aside,
    /// another process broke it and took the lock. The fresh lock must end up back in place.
    #[test]
    fn a_fresh_lock_moved_aside_by_mistake_is_put_back() {
        let dir =
            std::env::temp_dir().join(format!("graphiti-openclaw-putback-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("send.lock");
        let record = |token: &str| LockRecord {
            pid: std::process::id(),
            host: hostname().to_string(),
            token: token.into(),
            acquired_ms: now_ms(),
            lease_ms: 60_000,
            holder: HOLDER.into(),
        };
        let judged = Found::Record(LockRecord {
            acquired_ms: 0,
            ..record("0000000000000000000000000000000a")
        });
        create_lock_file(&path, &record("0000000000000000000000000000000b")).unwrap();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = std::sync::Arc::clone(&lines);
        let locks = StateLocks::new(None, move |line| kept.lock().unwrap().push(line));

        locks
            .break_stale(
                "send",
                &path,
                &judged,
                "lease expired",
                "0000000000000000000000000000000c",
            )
            .unwrap();

        let Ok(Found::Record(standing)) = read_lock(&path) else {
            panic!("the fresh lock is gone");
        };
        assert_eq!(standing.token, "0000000000000000000000000000000b");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "nothing left aside");
        assert!(lines.lock().unwrap().is_empty(), "nothing was broken");
        fs::remove_dir_all(&dir).unwrap();
    }

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
