//! Where guest and host log lines go: the host's stderr if asked, and a bounded buffer the caller
//! drains with [`Shim::take_logs`](crate::Shim::take_logs).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::bindings::graphiti::openclaw::host::LogLevel;

/// Lines kept for [`Shim::take_logs`](crate::Shim::take_logs); older ones are dropped.
const KEPT_LOG_LINES: usize = 10_000;

/// Guest and host log lines: echoed to stderr if asked, and kept for
/// [`Shim::take_logs`](crate::Shim::take_logs).
#[derive(Clone)]
pub(crate) struct LogSink {
    pub(crate) echo: bool,
    pub(crate) kept: Arc<Mutex<VecDeque<(LogLevel, String)>>>,
}

impl LogSink {
    pub(crate) fn push(&self, level: LogLevel, message: String) {
        if self.echo {
            eprintln!("[graphiti-openclaw] {}: {message}", level_name(level));
        }
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if kept.len() == KEPT_LOG_LINES {
            kept.pop_front();
        }
        kept.push_back((level, message));
    }
}

/// "debug", "info", "warn" or "error".
pub fn level_name(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Warn => "warn",
        LogLevel::Error => "error",
    }
}
