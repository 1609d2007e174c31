//! Per-call limits: an epoch deadline (time) and a resource limiter (memory).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use wasmtime::{Engine, ResourceLimiter};

/// One epoch tick: the granularity of call deadlines.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Limits applied to every call into the guest.
///
/// Deliberately has no `Default`: a shim cannot be built without choosing them.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Wall-clock budget of one export call, host calls (HTTP, waiting for a lock) included.
    pub call_timeout: Duration,
    /// The budget of the calls that send the capture spool to Graphiti (`tick`, the `flush`
    /// command): sending a backlog may take longer than a recall may.
    pub send_timeout: Duration,
    /// Largest size the guest's linear memory may grow to.
    pub memory_bytes: usize,
}

impl Limits {
    /// Epoch ticks until a deadline `timeout` away; one extra because the next tick may come at once.
    pub(crate) fn deadline_ticks(timeout: Duration) -> u64 {
        let ticks = timeout.as_nanos().div_ceil(EPOCH_TICK.as_nanos());
        u64::try_from(ticks).unwrap_or(u64::MAX - 1) + 1
    }

    /// "256 MiB", or the byte count when it is not a whole number of MiB.
    pub(crate) fn memory_text(&self) -> String {
        const MIB: usize = 1 << 20;
        if self.memory_bytes.is_multiple_of(MIB) {
            format!("{} MiB", self.memory_bytes / MIB)
        } else {
            format!("{} bytes", self.memory_bytes)
        }
    }
}

/// Caps linear memory (and tables, by the same byte budget) and remembers whether the cap was hit,
/// so a trap that follows can be reported as "exceeded its memory limit".
pub(crate) struct MemoryLimiter {
    max_bytes: usize,
    pub(crate) exceeded: bool,
}

impl MemoryLimiter {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            exceeded: false,
        }
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Refuse rather than trap: `memory.grow` returns -1 and the guest's allocator fails its own way.
        let allowed = desired <= self.max_bytes;
        self.exceeded |= !allowed;
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // A table element costs the host a pointer.
        let allowed = desired.saturating_mul(size_of::<usize>()) <= self.max_bytes;
        self.exceeded |= !allowed;
        Ok(allowed)
    }
}

/// A background thread advancing the engine's epoch, stopped when dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    pub(crate) fn start(engine: &Engine) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = thread::Builder::new()
            .name("graphiti-openclaw-epoch".into())
            .spawn({
                let engine = engine.clone();
                let stop = Arc::clone(&stop);
                // Parked, not asleep: dropping the ticker wakes it, so a CLI process does not wait
                // out the rest of a tick before it can exit.
                move || {
                    let mut next = Instant::now() + EPOCH_TICK;
                    while !stop.load(Ordering::Acquire) {
                        let now = Instant::now();
                        if now < next {
                            thread::park_timeout(next - now);
                            continue;
                        }
                        engine.increment_epoch();
                        next = now + EPOCH_TICK;
                    }
                }
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
