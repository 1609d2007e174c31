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
//!   - *stale* when `now >= acquired_ms + lease_ms`; when `acquired_ms` is later than now (a clock
//!     stepped back, a tampered file: no lease lasts longer than its length from now); or when it
//!     was written on this host and its pid is not alive (`kill(pid, 0)` fails with `ESRCH`;
//!     `EPERM` means alive). A file that cannot be read or parsed is stale only once its mtime is
//!     5 s old (a writer killed between create and write), busy before that.
//!   - *breaking* a stale lock: rename it to `<name>.lock.stale-<own token>` (`ENOENT`: someone else
//!     broke it, retry); read the moved file: when it is not the one judged stale (another token), a
//!     fresh lock was moved: put it back with `link()` (`EEXIST`: a newcomer's lock stands and the
//!     moved holder finds itself `lost` at its next check), unlink the moved name, retry. Otherwise
//!     unlink it, log `broke the <name> lock left by pid N (dead | lease expired | dated in the
//!     future)` at info level and retry the create.
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

mod lock_file;

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lock_file::{
    Found, LockRecord, busy_text, create_lock_file, iso_time, now_ms, printable, read_lock,
    staleness,
};

pub use crate::bindings::graphiti::openclaw::host::LockError;
pub(crate) use lock_file::hostname;

/// What this host writes as `holder`.
const HOLDER: &str = concat!("graphiti-openclaw shim ", env!("CARGO_PKG_VERSION"));
const MAX_NAME_LEN: usize = 32;

/// A lock this instance holds.
struct Held {
    token: String,
    acquired_ms: u64,
    lease_ms: u64,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The race the token check guards against: between judging a lock stale and moving it aside,
    /// another process broke it and took the lock. The fresh lock must end up back in place.
    #[test]
    fn a_fresh_lock_moved_aside_by_mistake_is_put_back() {
        let scratch = tempfile::Builder::new()
            .prefix("graphiti-openclaw-putback-")
            .tempdir()
            .expect("a temporary directory");
        let dir = scratch.path();
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
        assert_eq!(fs::read_dir(dir).unwrap().count(), 1, "nothing left aside");
        assert!(lines.lock().unwrap().is_empty(), "nothing was broken");
    }
}
