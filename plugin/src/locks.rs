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
