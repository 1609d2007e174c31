//! What the guest imports from the host: the data of its store ([`GuestState`]) and the functions
//! of the `graphiti:openclaw/host` interface (logs, HTTP, locks, mounts).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::graphiti::openclaw::host::{
    self as wit_host, HttpError, LogLevel, Mount, RedisError, RedisValue, Request as HttpRequest,
    Response as HttpResponse,
};
use crate::database::DatabaseGate;
use crate::http::HttpGate;
use crate::limits::MemoryLimiter;
use crate::logs::LogSink;
use crate::state_lock::{LockError, StateLocks};

/// The data of one guest instance's store.
pub(crate) struct GuestState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) memory: MemoryLimiter,
    pub(crate) http: Arc<HttpGate>,
    pub(crate) database: Arc<DatabaseGate>,
    pub(crate) logs: LogSink,
    /// The cross-process locks this instance holds; released when the instance is dropped.
    pub(crate) locks: StateLocks,
    /// The mounted directories as the user gave them, for the guest's messages.
    pub(crate) mounts: Vec<Mount>,
    /// When the current export call must be over; host calls are cut short to fit.
    pub(crate) call_deadline: Instant,
    /// The largest regular file the guest opened in the current call, with its size: a call that
    /// runs out of memory is reported with it, a file too big for the limit being the usual cause.
    pub(crate) largest_file_opened: Option<(PathBuf, u64)>,
}

impl WasiView for GuestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl wit_host::Host for GuestState {
    fn log(&mut self, level: LogLevel, message: String) {
        self.logs.push(level, message);
    }

    fn http_request(&mut self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let budget = self.call_deadline.saturating_duration_since(Instant::now());
        self.http.send(request, budget)
    }

    fn http_batch(&mut self, requests: Vec<HttpRequest>) -> Vec<Result<HttpResponse, HttpError>> {
        let budget = self.call_deadline.saturating_duration_since(Instant::now());
        self.http.send_all(requests, budget)
    }

    fn redis_command(
        &mut self,
        origin: String,
        command: Vec<Vec<u8>>,
        timeout_ms: u32,
    ) -> Result<Vec<RedisValue>, RedisError> {
        let budget = self.call_deadline.saturating_duration_since(Instant::now());
        let timeout = Duration::from_millis(timeout_ms.into()).min(budget);
        self.database.command(&origin, &command, timeout)
    }

    fn acquire_lock(&mut self, name: String, lease_ms: u32, wait_ms: u32) -> Result<(), LockError> {
        // Waiting past the call's deadline would only end in the guest being stopped.
        let budget = self.call_deadline.saturating_duration_since(Instant::now());
        let wait = Duration::from_millis(wait_ms.into()).min(budget);
        self.locks
            .acquire(&name, Duration::from_millis(lease_ms.into()), wait)
    }

    fn release_lock(&mut self, name: String) {
        self.locks.release(&name);
    }

    fn mounts(&mut self) -> Vec<Mount> {
        self.mounts.clone()
    }

    fn utc_offset(&mut self, zone: String, at_ms: u64) -> Result<i32, String> {
        utc_offset_minutes(&zone, at_ms)
    }
}

/// Minutes east of UTC of IANA zone `zone` at `at_ms`, from the system's time-zone database (the
/// bundled copy where there is none).
pub fn utc_offset_minutes(zone: &str, at_ms: u64) -> Result<i32, String> {
    let tz = jiff::tz::TimeZone::get(zone)
        .map_err(|_| format!("unknown time zone {zone:?} (an IANA name such as Europe/Berlin)"))?;
    let at = i64::try_from(at_ms)
        .ok()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
        .ok_or_else(|| format!("{at_ms} ms is not a representable moment"))?;
    Ok(tz.to_offset(at).seconds() / 60)
}
