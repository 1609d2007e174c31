//! The CLI: its messages for a missing wasm and unusable directories, its defaults.

use std::path::Path;
use std::time::Duration;

use super::harness::{TempDir, TestServer, probe_wasm, temp_dir};

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
    let home = temp_dir("cli-missing");
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
    let home = temp_dir("cli-usage");
    assert_eq!(cli(&["no-such-command"], &home).status.code(), Some(2));
    assert_eq!(cli(&["turn"], &home).status.code(), Some(2));
}

#[test]
fn cli_runs_commands_and_turns() {
    let home = temp_dir("cli");
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
    let home = temp_dir("cli-dry");
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
