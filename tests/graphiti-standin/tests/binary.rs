//! The `graphiti-standin` binary: its flags, and the control endpoint other processes use.

mod common;

use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, ErrorKind};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_graphiti-standin");

/// A running binary, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    control: Option<u16>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(args: &[&str]) -> Server {
    let mut child =
        Command::new(BINARY).args(["--port", "0"]).args(args).stdout(Stdio::piped()).spawn().expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next().expect("a line").unwrap();
    let port = line.rsplit_once(':').and_then(|(_, p)| p.parse().ok()).unwrap_or_else(|| panic!("{line}"));
    assert_eq!(line, format!("graphiti-standin listening on http://127.0.0.1:{port}"));
    let control = args.contains(&"--control-port").then(|| {
        let line = lines.next().expect("control line").unwrap();
        let port = line.split_whitespace().nth(4).and_then(|p| p.parse().ok());
        port.unwrap_or_else(|| panic!("{line}"))
    });
    Server { child, port, control }
}

fn fails_with(args: &[&str], expected: &str) {
    let out = Command::new(BINARY).args(["--port", "0"]).args(args).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
}

fn set_fault(port: u16, body: Value) -> Reply {
    post_json(port, "/__standin/fault", &body)
}

#[test]
fn flags_set_the_behaviour_and_a_starting_fault() {
    let server = spawn(&[
        "--latency-ms",
        "200",
        "--ingest-ms",
        "5000",
        "--accept-ms-per-queued",
        "300",
        "--accept-max-ms",
        "400",
        "--fault",
        r#"{"fault": "server-error", "requests": 1}"#,
        "--seed",
        concat!(env!("CARGO_MANIFEST_DIR"), "/seed/demo.json"),
    ]);
    let port = server.port;
    assert_eq!(get(port, "/healthcheck").status, 500, "the starting fault, for one request");
    let (reply, took) = timed(|| post_json(port, "/messages", &turn("g", "t1")));
    assert_eq!(reply.status, 202);
    assert!(took >= Duration::from_millis(200) && took < Duration::from_millis(900), "latency only: {took:?}");
    let (_, took) = timed(|| post_json(port, "/messages", &turn("g", "t2")));
    assert!(took >= Duration::from_millis(600), "latency + capped acceptance delay: {took:?}");
    let status = get(port, "/__standin/status").json();
    assert_eq!((status["queued"].as_u64(), status["sends"].as_u64()), (Some(4), Some(4)), "{status}");
    let facts = post_json(port, "/search", &json!({"group_ids": ["demo"], "query": "Dana"})).json();
    assert!(!facts["facts"].as_array().unwrap().is_empty(), "seeded");
}

#[test]
fn busy_search_and_lookups_flags() {
    let server = spawn(&["--ingest-ms", "20000", "--busy-search-ms", "300..400", "--busy-search-seed", "9"]);
    let port = server.port;
    post_json(port, "/messages", &turn("chat", "t1"));
    let (_, took) = timed(|| post_json(port, "/search", &json!({"query": "x"})));
    assert!(took >= Duration::from_millis(300), "{took:?}");
    let server = spawn(&["--episode-lookups", "falkordb-legacy"]);
    post_json(server.port, "/messages", &turn("chat", "t1"));
    assert_eq!(get(server.port, "/episodes/chat?last_n=5").json(), json!([]));
    assert_eq!(get(server.port, "/__standin/episodes").json().as_array().unwrap().len(), 2);
}

#[test]
fn bad_flags_say_what_is_wrong() {
    fails_with(&["--latency-ms", "soon"], "--latency-ms: \"soon\" is not a number of ms");
    fails_with(&["--busy-search-ms", "500"], "not MIN..MAX");
    fails_with(&["--busy-search-ms", "5..1"], "MIN is above MAX");
    fails_with(&["--busy-search-seed", "4"], "--busy-search-seed needs --busy-search-ms");
    fails_with(
        &["--episode-lookups", "neptune"],
        "\"neptune\" is not neo4j, falkordb, falkordb-0.29 or falkordb-legacy",
    );
    fails_with(&["--fault", "flaky"], "unknown fault \"flaky\"");
    fails_with(&["--fault", "slow"], "fault \"slow\" needs \"ms\"");
    fails_with(&["--fault", r#"{"steps": [{"fault": "down", "requests": 2}]}"#], "cannot last requests");
    fails_with(&["--ingest-ms"], "--ingest-ms needs a value");
    let help = Command::new(BINARY).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("--busy-search-ms MIN..MAX"));
}

#[test]
fn the_control_endpoint_scripts_faults() {
    let server = spawn(&[]);
    let port = server.port;
    let set = set_fault(
        port,
        json!({"steps": [
        {"fault": "slow", "ms": 300, "requests": 1},
        {"fault": "accept-then-hang", "ms": 50, "for_ms": 60000}]}),
    );
    assert_eq!(set.status, 200, "{}", set.body);
    assert_eq!(set.json()["steps"][0], json!({"fault": "slow", "ms": 300, "requests": 1}));
    let (_, took) = timed(|| get(port, "/healthcheck"));
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert_eq!(get(port, "/__standin/fault").json()["fault"], "accept-then-hang");
    assert_eq!(set_fault(port, json!({"fault": "none"})).json()["fault"], "none");

    // Down through the main port needs a time limit: nothing could bring it back otherwise.
    let refused = set_fault(port, json!({"fault": "down"}));
    assert_eq!(refused.status, 400);
    assert!(refused.json()["error"].as_str().unwrap().contains("give it \"for_ms\""), "{}", refused.body);
    assert_eq!(set_fault(port, json!({"fault": "down", "for_ms": 600})).status, 200);
    let err = request(port, "GET", "/healthcheck", &[], "").err().expect("down");
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
    let t0 = Instant::now();
    assert!(wait_for(Duration::from_secs(3), || request(port, "GET", "/healthcheck", &[], "").is_ok()));
    assert!(t0.elapsed() < Duration::from_millis(1500), "back after about 600 ms");

    for (body, expected) in [
        (json!({"fault": "slow"}), "needs \"ms\""),
        (json!({"fault": "hang", "for_ms": "5"}), "\"for_ms\" must be a whole number"),
        (json!({"fault": "hang", "for_ms": 5, "requests": 1}), "not both"),
        (json!({"steps": [{"fault": "hang"}, {"fault": "none"}]}), "lasts forever"),
        (json!({"steps": []}), "non-empty list"),
        (json!({"fault": "none", "when": 1}), "unknown key \"when\""),
    ] {
        let reply = set_fault(port, body.clone());
        assert_eq!(reply.status, 400, "{body}");
        assert!(reply.json()["error"].as_str().unwrap().contains(expected), "{body}: {}", reply.body);
    }
    let bad = request(port, "POST", "/__standin/fault", &[JSON], "{oops").unwrap();
    assert!(bad.json()["error"].as_str().unwrap().starts_with("the body is not JSON"));
    let unknown = get(port, "/__standin/nope");
    assert_eq!(unknown.status, 404);
    assert!(unknown.json()["error"].as_str().unwrap().contains("POST delivery"));
}

#[test]
fn the_control_port_stays_up_while_the_main_port_is_down() {
    let server = spawn(&["--control-port", "0"]);
    let (port, control) = (server.port, server.control.unwrap());
    assert_eq!(set_fault(control, json!({"fault": "down"})).status, 200, "for good: the control port can undo it");
    assert_eq!(request(port, "GET", "/healthcheck", &[], "").err().unwrap().kind(), ErrorKind::ConnectionRefused);
    assert_eq!(get(control, "/__standin/status").json()["fault"], "down");
    assert_eq!(get(control, "/healthcheck").status, 404, "the control port serves only the control endpoint");
    set_fault(control, json!({"fault": "none"}));
    assert_eq!(get(port, "/healthcheck").status, 200);
}

#[test]
fn the_control_endpoint_counts_episodes_and_sends() {
    let server = spawn(&[]);
    let port = server.port;
    for body in [turn("g", "t1"), turn("g", "t1"), turn("g", "t2")] {
        post_json(port, "/messages", &body);
    }
    let sends = get(port, "/__standin/sends").json();
    assert_eq!(sends.as_array().unwrap().len(), 6);
    assert_eq!(sends[2]["name"], "t1:user");
    assert_eq!((sends[2]["request"].as_u64(), sends[2]["via"].as_str()), (Some(2), Some("rest")));
    assert!(sends[2]["at"].as_str().unwrap().ends_with("+00:00"));
    let episodes = get(port, "/__standin/episodes").json();
    assert_eq!(episodes[0]["content"], "user(user): hello");
    assert_eq!(episodes[0]["uuid"], sends[0]["episode_uuid"]);
    let count = post_json(port, "/__standin/delivery", &json!({"expected": ["t1", "t2", "t3"]})).json();
    assert_eq!(count, json!({"exact": false, "once": 1, "lost": ["t3"], "duplicated": {"t1": 2}, "unexpected": []}));
    let bad = post_json(port, "/__standin/delivery", &json!({"expected": "t1"}));
    assert_eq!(bad.status, 400);
    assert!(bad.json()["error"].as_str().unwrap().contains("\"expected\""));
    assert!(get(port, "/__standin/status").json()["requests"] == 3, "control requests are not logged");
}
