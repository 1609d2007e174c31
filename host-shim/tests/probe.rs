//! The shim's guarantees, proven with the misbehaving probe guest (`tests/probe-guest`).
//! These tests build nothing: they need the probe's wasm, built with
//! `cargo build -p probe-guest --target wasm32-wasip2 --profile component`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use host_shim::{
    AgentEndEvent, CacheOutcome, CaptureOutcome, ChatType, Command, HookContext, Injection,
    IntentTestRequest, Limits, LogLevel, PromptEvent, ReloadError, Shim, ShimError, ShimOptions,
};

// ---- helpers ----

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

fn probe_wasm() -> PathBuf {
    let path = target_dir().join("wasm32-wasip2/component/probe_guest.wasm");
    assert!(
        path.is_file(),
        "{} is missing; build it with: cargo build -p probe-guest --target wasm32-wasip2 --profile component",
        path.display()
    );
    path
}

/// A directory under the system temp dir, unique to this test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
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

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const LIMITS: Limits = Limits {
    call_timeout: Duration::from_secs(5),
    send_timeout: Duration::from_secs(5),
    memory_bytes: 64 << 20,
};

/// Options for the probe with its own config dir; the compiled probe is shared through one cache
/// directory that outlives the run (the cache's own tests use their own).
fn options(config: &TempDir) -> ShimOptions {
    ShimOptions {
        cache_dir: Some(std::env::temp_dir().join("graphiti-openclaw-test-cache")),
        echo_logs: false,
        ..ShimOptions::new(probe_wasm(), config.path(), LIMITS)
    }
}

fn ctx() -> HookContext {
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

fn prompt(shim: &mut Shim, text: &str) -> Injection {
    shim.before_agent_start(
        &PromptEvent {
            prompt: text.into(),
            messages_json: "[]".into(),
        },
        &ctx(),
    )
}

/// The probe's answer to a prompt; panics when there is no injection.
fn answer(shim: &mut Shim, text: &str) -> String {
    let injection = prompt(shim, text);
    injection
        .prepend_context
        .unwrap_or_else(|| panic!("no injection for {text:?}: {:?}", injection.notes))
}

/// Asserts the fallback for a failed `before-agent-start`, returning its reason.
fn assert_fallback(injection: &Injection, expected: &str) -> String {
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

fn error_logs(shim: &Shim) -> Vec<String> {
    shim.take_logs()
        .into_iter()
        .filter(|(level, _)| matches!(level, LogLevel::Error))
        .map(|(_, line)| line)
        .collect()
}

// ---- limits: a failing guest never takes the shim down ----

#[test]
fn endless_loop_hits_the_deadline_then_the_next_call_works() {
    let config = TempDir::new("loop");
    let limits = Limits {
        call_timeout: Duration::from_millis(500),
        ..LIMITS
    };
    let mut shim = Shim::new(ShimOptions {
        limits,
        ..options(&config)
    })
    .unwrap();

    let started = Instant::now();
    let reason = assert_fallback(&prompt(&mut shim, "loop"), "exceeded its 500 ms deadline");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        reason,
        "plugin call before-agent-start exceeded its 500 ms deadline"
    );
    assert!(error_logs(&shim).contains(&reason));

    assert_eq!(answer(&mut shim, "hello"), "echo: hello");
}

#[test]
fn unbounded_allocation_hits_the_memory_limit_then_the_next_call_works() {
    let config = TempDir::new("alloc");
    let mut shim = Shim::new(options(&config)).unwrap();

    let reason = assert_fallback(
        &prompt(&mut shim, "alloc"),
        "exceeded its memory limit of 64 MiB",
    );
    assert!(error_logs(&shim).contains(&reason));

    assert_eq!(answer(&mut shim, "hello"), "echo: hello");
}

#[test]
fn panic_traps_then_the_next_call_works() {
    let config = TempDir::new("panic");
    let mut shim = Shim::new(options(&config)).unwrap();

    assert_fallback(
        &prompt(&mut shim, "panic"),
        "plugin call before-agent-start trapped: ",
    );
    assert_eq!(answer(&mut shim, "hello"), "echo: hello");
}

#[test]
fn every_export_has_a_fallback() {
    let config = TempDir::new("exports");
    let mut shim = Shim::new(options(&config)).unwrap();

    let end = |messages: &str| AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.into(),
        duration_ms: None,
    };
    match shim.agent_end(&end("panic"), &ctx()) {
        CaptureOutcome::Dropped(reason) => {
            assert!(
                reason.starts_with("plugin call agent-end trapped: "),
                "{reason}"
            )
        }
        other => panic!("expected dropped, got {other:?}"),
    }

    let request = |prompt: &str| IntentTestRequest {
        prompt: prompt.into(),
        recall_json: None,
        group_chat: false,
        previous_pack: None,
    };
    let err = shim.dry_run(&request("panic")).unwrap_err();
    assert!(err.starts_with("plugin call dry-run trapped: "), "{err}");
    assert_eq!(
        shim.dry_run(&request("hi"))
            .unwrap()
            .prepend_context
            .as_deref(),
        Some("echo: hi")
    );

    let output = shim.run_command(&Command::Eval(("panic".into(), 0.9)));
    assert_eq!(output.exit_code, host_shim::GUEST_FAILURE_EXIT_CODE);
    assert!(
        output
            .stderr
            .starts_with("plugin call run-command trapped: "),
        "{}",
        output.stderr
    );
    let output = shim.run_command(&Command::CheckConfig);
    assert_eq!((output.exit_code, output.stdout.as_str()), (0, "probe\n"));
}

#[test]
fn limits_must_be_usable() {
    let config = TempDir::new("limits");
    let zero = Limits {
        call_timeout: Duration::ZERO,
        ..LIMITS
    };
    let err = Shim::new(ShimOptions {
        limits: zero,
        ..options(&config)
    })
    .err()
    .expect("an error");
    assert!(matches!(err, ShimError::InvalidLimits(_)), "{err}");
}

// ---- logs and configuration errors ----

#[test]
fn guest_logs_are_kept() {
    let config = TempDir::new("logs");
    let mut shim = Shim::new(options(&config)).unwrap();
    shim.take_logs();

    assert_eq!(
        answer(&mut shim, "log hello from the guest"),
        "logged: hello from the guest"
    );
    let logs = shim.take_logs();
    assert!(
        matches!(&logs[..], [(LogLevel::Info, line)] if line == "hello from the guest"),
        "{logs:?}"
    );
}

#[test]
fn configuration_errors_are_logged_and_the_shim_keeps_going() {
    let config = TempDir::new("bad-config");
    std::fs::write(config.path().join("bad"), "").unwrap();
    let mut shim = Shim::new(options(&config)).unwrap();
    assert_eq!(
        error_logs(&shim),
        vec!["bad:3: keywords: probe rejects this file".to_string()]
    );

    assert!(matches!(shim.reload_config(), Err(ReloadError::Invalid(errors)) if errors.len() == 1));
    std::fs::remove_file(config.path().join("bad")).unwrap();
    assert!(shim.reload_config().is_ok());
}

// ---- files: only the preopens, with their permissions ----

#[test]
fn config_and_overlay_are_read_only() {
    let config = TempDir::new("ro-config");
    let overlay = TempDir::new("ro-overlay");
    std::fs::write(config.path().join("rules.yaml"), "rules: []\n").unwrap();
    std::fs::write(overlay.path().join("extra.yaml"), "x").unwrap();
    let mut shim = Shim::new(ShimOptions {
        overlay_dir: Some(overlay.path().into()),
        ..options(&config)
    })
    .unwrap();

    assert_eq!(
        answer(&mut shim, "read /config/rules.yaml"),
        "read ok: 10 bytes"
    );
    assert_eq!(
        answer(&mut shim, "read /overlay/extra.yaml"),
        "read ok: 1 bytes"
    );
    for path in ["/config/new.txt", "/config/rules.yaml", "/overlay/new.txt"] {
        let text = answer(&mut shim, &format!("write {path}"));
        assert!(text.starts_with("write err"), "{path}: {text}");
    }
    assert!(!config.path().join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(config.path().join("rules.yaml")).unwrap(),
        "rules: []\n"
    );
}

#[test]
fn host_files_outside_the_preopens_are_invisible() {
    let config = TempDir::new("invisible");
    let elsewhere = TempDir::new("elsewhere");
    let secret = elsewhere.path().join("secret.txt");
    std::fs::write(&secret, "secret").unwrap();
    let mut shim = Shim::new(options(&config)).unwrap();

    let text = answer(&mut shim, &format!("read {}", secret.display()));
    assert!(text.starts_with("read err"), "{text}");
    let text = answer(&mut shim, "read /config/../../../../etc/passwd");
    assert!(text.starts_with("read err"), "{text}");
    // No state directory given: nothing to write to.
    let text = answer(&mut shim, "write /state/x");
    assert!(text.starts_with("write err"), "{text}");
}

#[test]
fn state_dir_is_writable() {
    let config = TempDir::new("state-config");
    let state = TempDir::new("state");
    let mut shim = Shim::new(ShimOptions {
        state_dir: Some(state.path().into()),
        ..options(&config)
    })
    .unwrap();

    assert_eq!(answer(&mut shim, "write /state/probe.txt"), "write ok");
    assert_eq!(
        std::fs::read_to_string(state.path().join("probe.txt")).unwrap(),
        "probe"
    );
}

// ---- HTTP: only allowed origins, statuses as they are, bounded by the timeout ----

/// A one-connection HTTP server on 127.0.0.1 that answers `response` (or never answers when None)
/// and reports the request it received.
struct TestServer {
    port: u16,
    requests: mpsc::Receiver<String>,
}

impl TestServer {
    fn start(response: Option<&'static str>) -> TestServer {
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

    fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

#[test]
fn http_reaches_an_allowed_origin_and_returns_any_status() {
    let server = TestServer::start(Some(
        "HTTP/1.1 418 I'm a teapot\r\nContent-Length: 5\r\nX-Test: Yes\r\nConnection: close\r\n\r\nhello",
    ));
    let config = TempDir::new("http-ok");
    // Upper case and a trailing slash: origins are normalised before they are compared.
    let allowed = format!("HTTP://127.0.0.1:{}/", server.port);
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![allowed],
        ..options(&config)
    })
    .unwrap();

    let text = answer(&mut shim, &format!("http {}/probe?x=1", server.origin()));
    assert!(text.starts_with("Ok(Response { status: 418"), "{text}");
    assert!(text.contains(r#"("x-test", "Yes")"#), "{text}");
    assert!(text.contains("body: [104, 101, 108, 108, 111]"), "{text}");
    let request = server
        .requests
        .recv_timeout(Duration::from_secs(5))
        .unwrap();
    assert!(
        request.starts_with("GET /probe?x=1 HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(
        request.to_ascii_lowercase().contains("x-probe: 1\r\n"),
        "{request}"
    );
}

#[test]
fn http_redirects_are_returned_not_followed() {
    let server = TestServer::start(Some(
        "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n",
    ));
    let config = TempDir::new("http-redirect");
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![server.origin()],
        ..options(&config)
    })
    .unwrap();

    let text = answer(&mut shim, &format!("http {}/", server.origin()));
    assert!(text.starts_with("Ok(Response { status: 302"), "{text}");
}

#[test]
fn http_to_another_origin_is_refused_and_sends_nothing() {
    let server = TestServer::start(Some("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
    let other = TestServer::start(None);
    let config = TempDir::new("http-refused");
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![other.origin()],
        ..options(&config)
    })
    .unwrap();

    let text = answer(&mut shim, &format!("http {}/secret", server.origin()));
    assert_eq!(
        text,
        format!(
            r#"Err(HttpError::Refused("{} is not an allowed origin"))"#,
            server.origin()
        )
    );
    assert!(
        server
            .requests
            .recv_timeout(Duration::from_millis(200))
            .is_err(),
        "the server was contacted"
    );
}

#[test]
fn http_that_never_answers_times_out() {
    let server = TestServer::start(None);
    let config = TempDir::new("http-timeout");
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![server.origin()],
        ..options(&config)
    })
    .unwrap();

    // The probe asks for a 1000 ms timeout.
    let started = Instant::now();
    let text = answer(&mut shim, &format!("http {}/slow", server.origin()));
    let elapsed = started.elapsed();
    assert_eq!(text, "Err(HttpError::Timeout)");
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_millis(2500),
        "{elapsed:?}"
    );
}

#[test]
fn http_is_cut_short_by_the_call_deadline() {
    let server = TestServer::start(None);
    let config = TempDir::new("http-deadline");
    let limits = Limits {
        call_timeout: Duration::from_millis(300),
        ..LIMITS
    };
    let options = ShimOptions {
        allowed_origins: vec![server.origin()],
        limits,
        ..options(&config)
    };
    let mut shim = Shim::new(options).unwrap();

    // The probe asks for 1000 ms, but the whole call has only 300: the request times out at the
    // call's deadline, and the guest either answers at once or is stopped by the deadline.
    let started = Instant::now();
    let injection = prompt(&mut shim, &format!("http {}/slow", server.origin()));
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    match injection.prepend_context.as_deref() {
        Some(text) => assert_eq!(text, "Err(HttpError::Timeout)"),
        None => _ = assert_fallback(&injection, "exceeded its 300 ms deadline"),
    }
}

#[test]
fn https_origins_are_rejected_up_front() {
    let config = TempDir::new("https");
    let options = ShimOptions {
        allowed_origins: vec!["https://graphiti.example".into()],
        ..options(&config)
    };
    assert!(matches!(
        Shim::new(options),
        Err(ShimError::InvalidOrigin { .. })
    ));
}

// ---- the compiled-component cache ----

fn cached_shim(wasm: &Path, config: &TempDir, cache: &TempDir) -> Shim {
    Shim::new(ShimOptions {
        cache_dir: Some(cache.path().into()),
        ..ShimOptions::new(wasm, config.path(), LIMITS)
    })
    .unwrap()
}

#[test]
fn cache_misses_then_hits_and_recompiles_a_corrupt_entry() {
    let (config, cache) = (TempDir::new("cache-config"), TempDir::new("cache"));
    let wasm = probe_wasm();

    assert_eq!(
        cached_shim(&wasm, &config, &cache).cache_outcome(),
        &CacheOutcome::Miss
    );
    let mut shim = cached_shim(&wasm, &config, &cache);
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Hit);
    assert_eq!(answer(&mut shim, "hi"), "echo: hi");

    let file = shim.cache_file().unwrap().to_path_buf();
    let mut bytes = std::fs::read(&file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let outcome = cached_shim(&wasm, &config, &cache).cache_outcome().clone();
    assert_eq!(
        outcome,
        CacheOutcome::Recompiled {
            reason: "corrupt: checksum mismatch".into()
        }
    );

    std::fs::write(&file, b"junk").unwrap();
    let outcome = cached_shim(&wasm, &config, &cache).cache_outcome().clone();
    assert_eq!(
        outcome,
        CacheOutcome::Recompiled {
            reason: "corrupt: not a cache entry".into()
        }
    );

    let mut shim = cached_shim(&wasm, &config, &cache);
    assert_eq!(shim.cache_outcome(), &CacheOutcome::Hit);
    assert_eq!(answer(&mut shim, "hi"), "echo: hi");
}

#[test]
fn cache_entry_of_another_build_is_stale() {
    let (config, cache) = (TempDir::new("stale-config"), TempDir::new("stale-cache"));
    let (old, new) = (TempDir::new("stale-old"), TempDir::new("stale-new"));
    let bytes = std::fs::read(probe_wasm()).unwrap();
    // Same file name, different bytes: the probe with a custom section appended (id 0, size,
    // name "rebuilt", no payload), as a rebuild would give.
    let mut rebuilt = bytes.clone();
    rebuilt.extend_from_slice(&[0, 8, 7]);
    rebuilt.extend_from_slice(b"rebuilt");
    std::fs::write(old.path().join("plugin.wasm"), &bytes).unwrap();
    std::fs::write(new.path().join("plugin.wasm"), &rebuilt).unwrap();

    let old_shim = cached_shim(&old.path().join("plugin.wasm"), &config, &cache);
    assert_eq!(old_shim.cache_outcome(), &CacheOutcome::Miss);
    let mut new_shim = cached_shim(&new.path().join("plugin.wasm"), &config, &cache);
    assert_eq!(old_shim.cache_file(), new_shim.cache_file());
    assert!(
        matches!(new_shim.cache_outcome(), CacheOutcome::Recompiled { reason } if reason.starts_with("stale")),
        "{:?}",
        new_shim.cache_outcome()
    );
    assert_eq!(answer(&mut new_shim, "hi"), "echo: hi");
    let again = cached_shim(&new.path().join("plugin.wasm"), &config, &cache);
    assert_eq!(again.cache_outcome(), &CacheOutcome::Hit);
}

// ---- the CLI ----

/// Runs the CLI with HOME in a temp dir, so its default state and cache directories land there.
fn cli(args: &[&str], home: &TempDir) -> std::process::Output {
    cli_with_wasm_env(args, home, None)
}

fn cli_with_wasm_env(args: &[&str], home: &TempDir, wasm: Option<&Path>) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_graphiti-openclaw"));
    command
        .args(args)
        .env("HOME", home.path())
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME");
    match wasm {
        Some(path) => command.env("GRAPHITI_OPENCLAW_WASM", path),
        None => command.env_remove("GRAPHITI_OPENCLAW_WASM"),
    };
    command.output().unwrap()
}

#[test]
fn cli_names_a_missing_wasm() {
    let home = TempDir::new("cli-missing");
    let missing = home.path().join("nope.wasm");
    let output = cli(
        &["--wasm", missing.to_str().unwrap(), "check-config"],
        &home,
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = format!(
        "graphiti-openclaw: cannot read wasm file {}: ",
        missing.display()
    );
    assert!(stderr.starts_with(&expected), "{stderr}");

    // A default location that is missing gets a hint.
    let output = cli_with_wasm_env(&["lint-rules"], &home, Some(&missing));
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&expected)
            && stderr.trim_end().ends_with("; run scripts/build.sh first"),
        "{stderr}"
    );
}

#[test]
fn cli_usage_errors_exit_2() {
    let home = TempDir::new("cli-usage");
    assert_eq!(cli(&["no-such-command"], &home).status.code(), Some(2));
    assert_eq!(cli(&["turn"], &home).status.code(), Some(2));
}

#[test]
fn cli_runs_commands_and_turns() {
    let home = TempDir::new("cli");
    let config = home.path().join("config");
    std::fs::create_dir(&config).unwrap();
    let wasm = probe_wasm();
    let base = [
        "--quiet",
        "--wasm",
        wasm.to_str().unwrap(),
        "--config-dir",
        config.to_str().unwrap(),
    ];

    let output = cli(&[&base[..], &["check-config"]].concat(), &home);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "probe\n");
    // Operator checks keep no state; the cache lives under HOME.
    assert!(!home.path().join(".local/state/graphiti-openclaw").exists());
    assert!(
        home.path()
            .join(".cache/graphiti-openclaw/probe_guest.cwasm")
            .is_file()
    );

    let output = cli(
        &[
            &base[..],
            &["turn", "hello", "--reply", "hi there", "--json"],
        ]
        .concat(),
        &home,
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // A turn keeps state: the default state directory lives under HOME.
    assert!(home.path().join(".local/state/graphiti-openclaw").is_dir());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["before-agent-start"]["prepend_context"], "echo: hello");
    // The probe echoes agent-end's message list: the injected context comes before the prompt.
    let messages = json["agent-end"]["Skipped"].as_str().unwrap();
    let expected = r#"[{"content":"echo: hello\n\nhello","role":"user"},{"content":"hi there","role":"assistant"}]"#;
    assert_eq!(messages, format!("echo: {expected}"));
}

#[test]
fn cli_intent_test_mounts_no_state_and_allows_no_origin() {
    let server = TestServer::start(Some("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
    let home = TempDir::new("cli-dry");
    let (config, state) = (home.path().join("config"), home.path().join("state"));
    std::fs::create_dir(&config).unwrap();
    let wasm = probe_wasm();
    let origin = server.origin();
    let base = [
        "--quiet",
        "--wasm",
        wasm.to_str().unwrap(),
        "--config-dir",
        config.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
        "--allow-origin",
        &origin,
    ];
    let stdout = |prompt: &str| {
        let output = cli(&[&base[..], &["intent-test", prompt]].concat(), &home);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };

    assert!(stdout("write /state/x").starts_with("write err"));
    assert!(!state.exists(), "a dry run created the state directory");
    let url = format!("{origin}/");
    assert!(stdout(&format!("http {url}")).starts_with("Err(HttpError::Refused("));
    assert!(
        server
            .requests
            .recv_timeout(Duration::from_millis(200))
            .is_err(),
        "a dry run sent a request"
    );
}
