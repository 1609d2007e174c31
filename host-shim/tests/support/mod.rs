//! Helpers shared by the lock and sending tests: temporary directories, the probe guest, the CLI.
#![allow(dead_code)] // Each test file uses a part.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use host_shim::{Limits, ShimOptions};

pub const LIMITS: Limits = Limits {
    call_timeout: Duration::from_secs(5),
    send_timeout: Duration::from_secs(5),
    memory_bytes: 64 << 20,
};

pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

pub fn probe_wasm() -> PathBuf {
    let path = target_dir().join("wasm32-wasip2/component/probe_guest.wasm");
    assert!(
        path.is_file(),
        "{} is missing; build it with: cargo build -p probe-guest --target wasm32-wasip2 --profile component",
        path.display()
    );
    path
}

/// A directory under the system temp dir, unique to this test, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(label: &str) -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "graphiti-openclaw-locktest-{}-{n}-{label}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The probe with `config` mounted and `state` as its state directory.
pub fn probe_options(config: &TempDir, state: Option<&TempDir>) -> ShimOptions {
    ShimOptions {
        cache_dir: Some(std::env::temp_dir().join("graphiti-openclaw-test-cache")),
        echo_logs: false,
        state_dir: state.map(|dir| dir.path().to_path_buf()),
        ..ShimOptions::new(probe_wasm(), config.path(), LIMITS)
    }
}

/// The CLI with HOME in `home`, running the probe with `home/config` (created here).
pub fn cli_command(home: &TempDir, args: &[&str]) -> Command {
    let config = home.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_graphiti-openclaw"));
    command
        .arg("--wasm")
        .arg(probe_wasm())
        .arg("--config-dir")
        .arg(&config)
        .args(args)
        .env("HOME", home.path())
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("GRAPHITI_OPENCLAW_WASM");
    command
}

pub fn cli(home: &TempDir, args: &[&str]) -> Output {
    cli_command(home, args).output().unwrap()
}

/// Waits up to `limit` for `path` to exist with some content (a lock file written, not just created).
pub fn wait_for_file(path: &Path, limit: Duration) {
    let started = Instant::now();
    while !std::fs::metadata(path).is_ok_and(|meta| meta.len() > 0) {
        assert!(
            started.elapsed() < limit,
            "{} did not appear within {limit:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
