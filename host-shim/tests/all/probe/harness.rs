//! The probe's harness: where its wasm is, temporary directories, the shim's options and limits,
//! the calls and assertions every group of tests uses, and a one-connection HTTP server.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;

use host_shim::{Injection, LogLevel, PromptEvent, Shim, ShimOptions};

pub(crate) use crate::support::{LIMITS, TempDir, ctx, probe_wasm, temp_dir};

/// Options for the probe with its own config dir and no state directory; the compiled probe is
/// shared through one cache directory that outlives the run (the cache's own tests use their own).
pub(crate) fn options(config: &TempDir) -> ShimOptions {
    crate::support::probe_options(config, None)
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
