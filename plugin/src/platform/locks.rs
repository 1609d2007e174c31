//! Cross-process locks on the state directory, provided by the host (`acquire-lock`/`release-lock` in
//! the WIT; every host implements one lock-file protocol), behind a trait so the logic that takes them
//! runs natively in tests.

use std::time::Duration;

/// The lock held while sending the spool: one sender per state directory.
pub const SEND: &str = "send";
/// The lock held while merging counters into the state directory's file.
pub const STATS: &str = "stats";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockError {
    /// Another process or instance holds it.
    Busy(String),
    /// This instance held it and no longer does: stop what it guarded.
    Lost(String),
    /// It could not be taken or checked.
    Failed(String),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Busy(why) => write!(f, "busy: {why}"),
            LockError::Lost(why) => write!(f, "lost: {why}"),
            LockError::Failed(why) => write!(f, "failed: {why}"),
        }
    }
}

pub trait Locks {
    /// Takes lock `name` for at most `lease`, waiting up to `wait` while it is busy; called again
    /// while held, only checks it is still held.
    fn acquire(&mut self, name: &str, lease: Duration, wait: Duration) -> Result<(), LockError>;
    fn release(&mut self, name: &str);
    /// The process this component runs in, when its host reports it: a component cannot see its
    /// own pid, and without it a holder in this process would be called another process.
    fn this_process(&self) -> Option<ThisProcess> {
        None
    }
}

/// A process as lock files name their holders: its pid on a host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThisProcess {
    pub pid: u32,
    pub host: String,
}

/// The WASI environment variables through which a host reports [`ThisProcess`].
pub const PID_VARIABLE: &str = "GRAPHITI_OPENCLAW_PID";
pub const HOST_VARIABLE: &str = "GRAPHITI_OPENCLAW_HOSTNAME";

impl ThisProcess {
    /// From the environment the host gives the component (`None` when it gives none).
    pub fn from_environment() -> Option<ThisProcess> {
        let pid = std::env::var(PID_VARIABLE).ok()?.parse().ok()?;
        let host = std::env::var(HOST_VARIABLE).ok()?;
        Some(ThisProcess { pid, host })
    }

    /// Whether a busy lock's text (every host's "held by pid N (holder) on HOST since …") names
    /// this process: then another instance in it holds the lock.
    pub fn holds(&self, busy: &str) -> bool {
        let Some(rest) = busy.strip_prefix("held by pid ") else {
            return false;
        };
        let Some((holder, _)) = rest.split_once(" since ") else {
            return false;
        };
        let pid = holder
            .split(' ')
            .next()
            .and_then(|pid| pid.parse::<u32>().ok());
        let host = holder.rsplit_once(") on ").map(|(_, host)| host);
        pid == Some(self.pid) && host == Some(self.host.as_str())
    }
}

/// For a single process that owns its state directory alone (native tests, benchmarks): every lock
/// is granted at once.
pub struct Unshared;

impl Locks for Unshared {
    fn acquire(&mut self, _: &str, _: Duration, _: Duration) -> Result<(), LockError> {
        Ok(())
    }

    fn release(&mut self, _: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_is_this_process_only_with_its_pid_on_its_host() {
        let me = ThisProcess {
            pid: 4242,
            host: "gateway".into(),
        };
        let busy = |pid: u32, host: &str| {
            format!(
                "held by pid {pid} (graphiti-openclaw adapter 0.1.0) on {host} since \
                 2026-01-01T00:00:00.000Z, lease until 2026-01-01T00:10:00.000Z"
            )
        };
        assert!(me.holds(&busy(4242, "gateway")));
        assert!(!me.holds(&busy(4243, "gateway")));
        assert!(!me.holds(&busy(4242, "elsewhere")));
        assert!(!me.holds(&busy(42, "gateway")));
        assert!(!me.holds(
            "held by a lock file that is being written or is damaged (empty); it counts as stale \
             once it is 5 s old"
        ));
    }
}
