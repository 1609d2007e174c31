//! The CLI across processes: one owner of the state directory at a time, a killed owner's lock
//! broken at once, and the `flush` and `spool` commands with their time limits. The probe guest
//! (`tests/probe-guest`) stands in for the component: its prompt is what it does
//! ("lock send 60000 0; sleep 3000" takes the lock and holds it for 3 s).


use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Child, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::{TempDir, cli, cli_command, temp_dir, wait_for_file};

/// Who the shim says holds a lock it took: its name and version.
const SHIM: &str = concat!("graphiti-openclaw shim ", env!("CARGO_PKG_VERSION"));

fn state_args(state: &TempDir) -> Vec<String> {
    vec!["--state-dir".into(), state.path().display().to_string()]
}

/// `turn <prompt> --json` in a child process, logs echoed on stderr.
fn spawn_turn(home: &TempDir, state: &TempDir, prompt: &str) -> Child {
    let mut args = state_args(state);
    args.extend(["--call-timeout-ms", "20000", "turn", prompt, "--json"].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cli_command(home, &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The probe's answer to the prompt of a finished `turn --json`.
fn turn_answer(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    json["before-agent-start"]["prepend_context"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_second_process_finds_the_lock_busy_and_a_killed_holders_lock_is_broken_at_once() {
    let (home, state) = (temp_dir("cli-kill"), temp_dir("cli-kill-state"));
    let lock = state.path().join("locks/send.lock");
    let mut holder = spawn_turn(&home, &state, "lock send 60000 0; sleep 30000");
    wait_for_file(&lock, Duration::from_secs(20));

    let second = spawn_turn(&home, &state, "lock send 60000 0")
        .wait_with_output()
        .unwrap();
    let expected = format!(
        "Err(LockError::Busy(\"held by pid {} ({SHIM}) on ",
        holder.id()
    );
    assert!(turn_answer(&second).starts_with(&expected), "{second:?}");

    holder.kill().unwrap(); // SIGKILL: no chance to release.
    holder.wait().unwrap();
    assert!(lock.exists(), "a killed process leaves its lock file");
    let started = Instant::now();
    let third = spawn_turn(&home, &state, "lock send 60000 0")
        .wait_with_output()
        .unwrap();
    assert_eq!(turn_answer(&third), "Ok(())");
    let stderr = String::from_utf8_lossy(&third.stderr);
    let broke = format!(
        "info: broke the send lock left by pid {} (dead)",
        holder.id()
    );
    assert!(stderr.contains(&broke), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The third process released its lock when it exited.
    assert!(!lock.exists());
}

/// A Graphiti stand-in for the probe: every request is answered 200 after `delay`.
fn slow_origin(delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                thread::sleep(delay);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            });
        }
    });
    origin
}

fn flush_args(state: &TempDir, origin: &str, extra: &[&str]) -> Vec<String> {
    let mut args = state_args(state);
    args.extend(["--quiet", "--allow-origin", origin].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

#[test]
fn two_flushes_at_once_send_once() {
    let (home, state) = (temp_dir("cli-flush2"), temp_dir("cli-flush2-state"));
    let origin = slow_origin(Duration::from_millis(1500));
    let script = format!("lock send 60000 0\nhttp {origin}/episodes 10000\n");
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(home.path().join("config/send-script"), script).unwrap();
    let args = flush_args(&state, &origin, &["flush"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    let mut first = cli_command(&home, &args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(
        &state.path().join("locks/send.lock"),
        Duration::from_secs(20),
    );
    let second = cli(&home, &args);
    let mut first_out = String::new();
    first
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut first_out)
        .unwrap();
    first.wait().unwrap();

    let second_out = String::from_utf8_lossy(&second.stdout);
    let mut lines = second_out.lines();
    let busy = format!("Err(LockError::Busy(\"held by pid {} ", first.id());
    assert!(lines.next().unwrap().starts_with(&busy), "{second_out}");
    // The probe sends whatever the lock said; the component stops. Here: the first one sent.
    assert_eq!(
        first_out.lines().collect::<Vec<_>>(),
        [
            "Ok(())",
            "Ok(Response { status: 200, headers: [(\"content-length\", \"0\"), (\"connection\", \"close\")], body: [] })"
        ]
    );
}

#[test]
fn flush_has_the_send_timeout_and_spool_is_wired() {
    let (home, state) = (temp_dir("cli-flush"), temp_dir("cli-flush-state"));
    let origin = slow_origin(Duration::from_millis(800));
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    std::fs::write(
        home.path().join("config/send-script"),
        format!("http {origin}/episodes 10000\n"),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let args = flush_args(&state, &origin, extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cli(&home, &args)
    };

    let output = run(&[
        "--call-timeout-ms",
        "300",
        "--send-timeout-ms",
        "5000",
        "flush",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("Ok(Response { status: 200"));

    let output = run(&[
        "--call-timeout-ms",
        "300",
        "--send-timeout-ms",
        "400",
        "flush",
    ]);
    let said = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
    assert!(
        said.starts_with("Err(HttpError::Timeout)")
            || said.contains("plugin call run-command exceeded its 400 ms deadline"),
        "{said}"
    );

    for (args, expected) in [
        (&["spool"][..], "spool list\n"),
        (&["spool", "list"], "spool list\n"),
        (&["spool", "requeue"], "spool requeue\n"),
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), expected);
    }
    assert_eq!(run(&["spool", "nonsense"]).status.code(), Some(2));
}
