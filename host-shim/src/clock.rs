//! A wall clock the host sets, for the guest's `wasi:clocks/wall-clock`: tests and replays run turns
//! at chosen moments (the component reads the time once per hook and routes with it as an input).
//! The monotonic clock stays real, so deadlines and timeouts keep working.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use wasmtime_wasi::HostWallClock;

/// Unix milliseconds, shared: every clone (and every instance of a shim given one) reads the same.
#[derive(Clone, Debug)]
pub struct SetClock(Arc<AtomicU64>);

impl SetClock {
    /// A clock that reads `unix_ms` until set again.
    pub fn at(unix_ms: u64) -> SetClock {
        SetClock(Arc::new(AtomicU64::new(unix_ms)))
    }

    pub fn set(&self, unix_ms: u64) {
        self.0.store(unix_ms, Ordering::SeqCst);
    }

    pub fn advance(&self, by: Duration) {
        self.0.fetch_add(by.as_millis() as u64, Ordering::SeqCst);
    }

    pub fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl HostWallClock for SetClock {
    fn resolution(&self) -> Duration {
        Duration::from_millis(1)
    }

    fn now(&self) -> Duration {
        Duration::from_millis(self.now_ms())
    }
}
