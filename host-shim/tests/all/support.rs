//! Helpers shared by the shim's integration tests: where the built wasm files are (they need
//! `scripts/build.sh`), temporary directories, the probe's options and limits, a turn's context,
//! the CLI, and the file-mode and special-file helpers of the trust tests.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use host_shim::{ChatType, HookContext, Limits, Shim, ShimOptions};

pub const LIMITS: Limits = Limits {
    call_timeout: Duration::from_secs(5),
    send_timeout: Duration::from_secs(5),
    memory_bytes: 64 << 20,
};

/// The uid tests give files and directories to play "another user" (nobody).
pub const OTHER_UID: u32 = 65534;

pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

fn built_wasm(file: &str) -> PathBuf {
    let path = target_dir().join("wasm32-wasip2/component").join(file);
    assert!(
        path.is_file(),
        "{} is missing; build it with scripts/build.sh",
        path.display()
    );
    path
}

/// The misbehaving probe guest (`tests/probe-guest`).
pub fn probe_wasm() -> PathBuf {
    built_wasm("probe_guest.wasm")
}

/// The real component.
pub fn plugin_wasm() -> PathBuf {
    built_wasm("graphiti_openclaw.wasm")
}

/// The repository's example configuration.
pub fn example_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

pub use tempfile::TempDir;

/// A directory under the system temp dir, named after `label`, removed when dropped.
pub fn temp_dir(label: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("graphiti-openclaw-test-{label}-"))
        .tempdir()
        .expect("a temporary directory")
}

/// A shim for `wasm` with an empty config directory and the given cache directory.
pub fn shim_with_cache(wasm: &Path, config: &Path, cache: &Path) -> Shim {
    Shim::new(ShimOptions {
        cache_dir: Some(cache.into()),
        echo_logs: false,
        ..ShimOptions::new(wasm, config, LIMITS)
    })
    .expect("the shim starts")
}

pub fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

pub fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether the tests run as root: only root can give a file to another user or make a device node.
/// Cases that need it are skipped otherwise, saying so.
pub fn as_root(case: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = std::env::temp_dir().join(format!(".uid-probe-{}", std::process::id()));
    let _ = std::fs::write(&probe, b"");
    let root = std::fs::metadata(&probe).is_ok_and(|m| m.uid() == 0);
    let _ = std::fs::remove_file(&probe);
    if !root {
        eprintln!("SKIPPED (needs root): {case}");
    }
    root
}

/// Gives `path` to [`OTHER_UID`] (the tests run as root, which may do that).
pub fn give_to_another_user(path: &Path) {
    std::os::unix::fs::lchown(path, Some(OTHER_UID), Some(OTHER_UID)).unwrap_or_else(|err| {
        panic!(
            "chown {} to uid {OTHER_UID}: {err} (these tests must run as root)",
            path.display()
        )
    });
}

/// Makes a FIFO at `path`.
pub fn make_fifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Makes a character device like /dev/zero (1, 5) at `path` (needs root).
pub fn make_zero_device(path: &Path) {
    let status = Command::new("mknod")
        .arg(path)
        .args(["c", "1", "5"])
        .status()
        .unwrap();
    assert!(status.success(), "mknod {} (needs root)", path.display());
}

/// Unblocks whoever is stuck opening the FIFO at `path` (a read-write open of a FIFO never blocks on
/// Linux and counts as both a reader and a writer), so a failed test does not leave a thread hung.
pub fn release_fifo(path: &Path) {
    let _ = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path);
}

/// The CLI's output, or None when it had not finished after `limit` (it is killed then).
pub fn run_cli_with_watchdog(args: &[&str], home: &Path, limit: Duration) -> Option<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_graphiti-openclaw"))
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("GRAPHITI_OPENCLAW_WASM")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drained while it runs, so a chatty child never blocks on a full pipe.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Some(Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    })
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

/// A user's turn in session `test`.
pub fn ctx() -> HookContext {
    HookContext {
        session_key: Some("test".into()),
        session_id: None,
        agent_id: None,
        sender_id: None,
        sender_name: None,
        chat_id: None,
        channel: None,
        chat_type: ChatType::Direct,
        trigger: Some("user".into()),
        run_id: None,
        input_provenance: None,
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
