//! The probe's harness: where its wasm is, temporary directories, the shim's options and limits,
//! the calls and assertions every group of tests uses, and a one-connection HTTP server.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use host_shim::{
    ChatType, HookContext, Injection, Limits, LogLevel, PromptEvent, Shim, ShimOptions,
};

pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

pub(crate) fn probe_wasm() -> PathBuf {
    let path = target_dir().join("wasm32-wasip2/component/probe_guest.wasm");
    assert!(
        path.is_file(),
        "{} is missing; build it with: cargo build -p probe-guest --target wasm32-wasip2 --profile component",
        path.display()
    );
    path
}

/// A directory under the system temp dir, unique to this test, removed when dropped.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(label: &str) -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "graphiti-openclaw-test-{}-{n}-{label}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) const LIMITS: Limits = Limits {
    call_timeout: Duration::from_secs(5),
    send_timeout: Duration::from_secs(5),
    memory_bytes: 64 << 20,
};

/// Options for the probe with its own config dir; the compiled probe is shared through one cache
/// directory that outlives the run (the cache's own tests use their own).
pub(crate) fn options(config: &TempDir) -> ShimOptions {
    ShimOptions {
        cache_dir: Some(std::env::temp_dir().join("graphiti-openclaw-test-cache")),
        echo_logs: false,
        ..ShimOptions::new(probe_wasm(), config.path(), LIMITS)
    }
}

pub(crate) fn ctx() -> HookContext {
    HookContext {
        session_key: Some("test".into()),
        session_id: None,
        agent_id: None,
        sender_id: None,
        chat_id: None,
        channel: None,
        chat_type: ChatType::Direct,
        trigger: Some("user".into()),
        run_id: None,
    }
}

pub(crate) fn prompt(shim: &mut Shim, text: &str) -> Injection {
    shim.before_agent_start(
        &PromptEvent {
            prompt: text.into(),
            messages_json: "[]".into(),
        },
        &ctx(),
    )
}

/// The probe's answer to a prompt; panics when there is no injection.
pub(crate) fn answer(shim: &mut Shim, text: &str) -> String {
    let injection = prompt(shim, text);
    injection
        .prepend_context
        .unwrap_or_else(|| panic!("no injection for {text:?}: {:?}", injection.notes))
}

/// Asserts the fallback for a failed `before-agent-start`, returning its reason.
pub(crate) fn assert_fallback(injection: &Injection, expected: &str) -> String {
    assert_eq!(injection.prepend_context, None);
    let reason = injection
        .decision
        .no_pack_reason
        .clone()
        .expect("a no-pack reason");
    assert!(
        reason.contains(expected),
        "{reason:?} should mention {expected:?}"
    );
    assert_eq!(injection.notes, vec![reason.clone()]);
    reason
}

pub(crate) fn error_logs(shim: &Shim) -> Vec<String> {
    shim.take_logs()
        .into_iter()
        .filter(|(level, _)| matches!(level, LogLevel::Error))
        .map(|(_, line)| line)
        .collect()
}

/// A one-connection HTTP server on 127.0.0.1 that answers `response` (or never answers when None)
/// and reports the request it received.
pub(crate) struct TestServer {
    pub(crate) port: u16,
    pub(crate) requests: mpsc::Receiver<String>,
}

impl TestServer {
    pub(crate) fn start(response: Option<&'static str>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (sender, requests) = mpsc::channel();
        thread::spawn(move || {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let request = read_head(&mut stream);
            let _ = sender.send(request);
            match response {
                Some(response) => {
                    let _ = stream.write_all(response.as_bytes());
                }
                // Hold the connection open without a word until the client gives up.
                None => {
                    let _ = stream.read(&mut [0; 1]);
                }
            }
        });
        TestServer { port, requests }
    }

    pub(crate) fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

pub(crate) fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}
