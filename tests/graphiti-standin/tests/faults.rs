//! Fault modes, seeding errors and shutdown.

mod common;

use common::*;
use graphiti_standin::{Fault, Lasting, Options};
use serde_json::json;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::thread::sleep;
use std::time::{Duration, Instant};

#[test]
fn down_refuses_connections_then_resumes_on_the_same_port() {
    let s = start(Options::default());
    let port = s.port();
    let mut mcp = Mcp::connect(port);
    s.set_fault(Fault::Down);
    let err = request(port, "GET", "/health", &[], "").err().expect("refused");
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
    s.set_fault(Fault::None);
    assert_eq!(s.port(), port);
    assert_eq!(get(port, "/health").status, 200);
    // Sessions survive an outage (the process did not restart).
    assert_eq!(mcp.call("get_status", json!({}))["isError"], false);
    s.set_fault(Fault::Down);
    s.set_fault(Fault::Down); // idempotent
    s.set_fault(Fault::Slow(Duration::ZERO)); // any other fault re-binds too
    assert_eq!(get(port, "/healthcheck").status, 200);
}

#[test]
fn slow_delays_every_answer() {
    let s = start(Options::default());
    s.set_fault(Fault::Slow(Duration::from_millis(500)));
    let t = Instant::now();
    assert_eq!(get(s.port(), "/healthcheck").status, 200);
    assert!(t.elapsed() >= Duration::from_millis(500));
    s.set_fault(Fault::None);
    let t = Instant::now();
    get(s.port(), "/healthcheck");
    assert!(t.elapsed() < Duration::from_millis(500));
}

#[test]
fn server_error_answers_500_everywhere() {
    let s = start(Options::default());
    s.set_fault(Fault::ServerError);
    assert_eq!(get(s.port(), "/health").status, 500);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    assert_eq!(mcp_post(s.port(), None, &body).status, 500);
    assert_eq!(post_json(s.port(), "/search", &json!({"query": "x"})).status, 500);
    assert!(s.requests().iter().all(|r| r.status == 500));
}

#[test]
fn garbage_is_200_with_neither_json_nor_sse() {
    let s = start(Options::default());
    let mut mcp = Mcp::connect(s.port());
    s.set_fault(Fault::Garbage);
    let reply = mcp.call_raw("get_status", json!({}));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, "<html>oops");
    assert!(serde_json::from_str::<serde_json::Value>(&reply.body).is_err());
    assert_eq!(get(s.port(), "/healthcheck").body, "<html>oops");
}

#[test]
fn seed_json_checks_its_input_and_accepts_lists() {
    let s = start(Options::default());
    assert!(s.seed_json("{").is_err());
    assert!(s.seed_json(r#"{"nodes": []}"#).unwrap_err().contains("group_id"));
    assert!(
        s.seed_json(r#"[{"group_id": "a", "facts": [{"fact": "Bo likes tea"}]}, {"group_id": "b", "facts": "no"}]"#)
            .is_err()
    );
    s.seed_json(r#"[{"group_id": "a", "facts": [{"fact": "Bo likes tea", "name": "LIKES"}]}, {"group_id": "b", "nodes": [{"name": "Bo"}]}]"#).unwrap();
    let facts = post_json(s.port(), "/search", &json!({"query": "tea"})).json()["facts"].clone();
    assert_eq!(facts.as_array().unwrap().len(), 1, "nothing seeded by the failed calls");
    assert_eq!(facts[0]["uuid"].as_str().unwrap().len(), 36, "uuid filled in");
}

#[test]
fn dropping_the_stand_in_closes_the_port() {
    let s = start(Options::default());
    let port = s.port();
    drop(s);
    assert_eq!(request(port, "GET", "/health", &[], "").err().unwrap().kind(), ErrorKind::ConnectionRefused);
}

#[test]
fn not_initialized_answers_tool_calls_like_the_mcp_server_starting_up() {
    let s = start(Options::default());
    s.set_fault(Fault::NotInitialized);
    let mut mcp = Mcp::connect(s.port()); // the transport is up
    let list = mcp_post(s.port(), Some(&mcp.session), &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}));
    assert_eq!(list.sse()["result"]["tools"].as_array().unwrap().len(), 8);
    let added = mcp.payload("add_memory", json!({"name": "t1", "episode_body": "b", "group_id": "g"}));
    assert_eq!(added, json!({"error": "Services not initialized"}));
    let facts = mcp.payload("search_memory_facts", json!({"query": "Dana"}));
    assert_eq!(facts, json!({"error": "Graphiti service not initialized"}));
    let status = mcp.call("get_status", json!({}));
    assert_eq!(status["structuredContent"], json!({"status": "error", "message": "Graphiti service not initialized"}));
    let bad = mcp.call("add_memory", json!({"name": "t1"}));
    assert_eq!(bad["isError"], true, "arguments are still checked first");
    assert!(s.accepted_sends().is_empty() && s.queued() == 0, "nothing stored");
    // REST is left as it is: the real graph_service does not listen before it is ready (Fault::Down).
    assert_eq!(post_json(s.port(), "/messages", &turn("g", "r1")).status, 202);
    s.set_fault(Fault::None);
    assert!(mcp.payload("add_memory", json!({"name": "t1", "episode_body": "b"}))["message"].is_string());
}

#[test]
fn accept_then_hang_stores_the_episode_and_answers_late() {
    let s = start(Options::default());
    s.set_fault(Fault::AcceptThenHang(Duration::from_millis(800)));
    let port = s.port();
    let client = std::thread::spawn(move || timed(|| post_json(port, "/messages", &turn("g", "t1"))));
    assert!(wait_for(Duration::from_millis(500), || s.accepted_sends().len() == 2), "stored on arrival");
    let (reply, took) = client.join().unwrap();
    assert_eq!(reply.status, 202);
    assert!(took >= Duration::from_millis(800), "{took:?}");
    assert_eq!(s.episodes().len(), 2);
}

#[test]
fn accept_then_reset_stores_the_episode_and_answers_nothing() {
    let s = start(Options::default());
    let mcp = Mcp::connect(s.port());
    s.set_fault(Fault::AcceptThenReset);
    let body = turn("g", "t1").to_string();
    let err = request(s.port(), "POST", "/messages", &[JSON], &body).err().expect("no answer");
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "add_memory", "arguments": {"name": "m1", "episode_body": "b", "group_id": "g"}}});
    let headers = [JSON, ACCEPT_BOTH, ("Mcp-Session-Id", mcp.session.as_str())];
    assert!(request(s.port(), "POST", "/mcp", &headers, &call.to_string()).is_err(), "no answer over MCP either");
    let names: Vec<String> = s.accepted_sends().into_iter().map(|a| a.name).collect();
    assert_eq!(names, ["t1:user", "t1:assistant", "m1"]);
    let last = s.requests().pop().unwrap();
    assert_eq!((last.status, last.tool.as_deref()), (0, Some("add_memory")));
}

#[test]
fn hang_reads_the_request_and_never_answers_or_stores() {
    let s = start(Options::default());
    s.set_fault(Fault::Hang);
    let body = turn("g", "t1").to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", s.port())).unwrap();
    let head = format!("POST /messages HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    stream.write_all(head.as_bytes()).unwrap();
    stream.set_read_timeout(Some(Duration::from_millis(600))).unwrap();
    let mut buf = [0u8; 64];
    let err = stream.read(&mut buf).expect_err("no answer");
    assert!(matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut), "{err}");
    assert!(s.accepted_sends().is_empty());
    assert_eq!(s.requests().iter().map(|r| r.status).collect::<Vec<_>>(), [0], "seen, not answered");
    // Dropping the stand-in ends the hung connection.
    stream.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    drop(s);
    assert_eq!(stream.read(&mut buf).unwrap_or(0), 0, "closed");
}

#[test]
fn a_fault_for_the_next_requests_then_fine() {
    let s = start(Options::default());
    s.set_faults(vec![(Fault::ServerError, Lasting::Requests(2))]).unwrap();
    let statuses: Vec<u16> = (0..3).map(|_| get(s.port(), "/healthcheck").status).collect();
    assert_eq!(statuses, [500, 500, 200]);
    assert_eq!(s.fault(), Fault::None);
}

#[test]
fn down_for_a_while_then_slow_for_a_request_then_fine() {
    let s = start(Options::default());
    let port = s.port();
    let t0 = Instant::now();
    s.set_faults(vec![
        (Fault::Down, Lasting::For(Duration::from_millis(700))),
        (Fault::Slow(Duration::from_millis(400)), Lasting::Requests(1)),
    ])
    .unwrap();
    assert_eq!(request(port, "GET", "/healthcheck", &[], "").err().unwrap().kind(), ErrorKind::ConnectionRefused);
    assert_eq!(s.fault(), Fault::Down);
    // Back without any request prodding it.
    assert!(wait_for(Duration::from_secs(3), || TcpStream::connect(("127.0.0.1", port)).is_ok()));
    assert!(t0.elapsed() >= Duration::from_millis(700));
    assert!(matches!(s.fault(), Fault::Slow(_)));
    let (_, slow) = timed(|| get(port, "/healthcheck"));
    let (_, quick) = timed(|| get(port, "/healthcheck"));
    assert!(slow >= Duration::from_millis(400) && quick < Duration::from_millis(400), "{slow:?} {quick:?}");
}

#[test]
fn a_timed_fault_ends_on_time() {
    let s = start(Options::default());
    s.set_faults(vec![(Fault::Garbage, Lasting::For(Duration::from_millis(400)))]).unwrap();
    assert_eq!(get(s.port(), "/healthcheck").body, "<html>oops");
    sleep(Duration::from_millis(500));
    assert_eq!(get(s.port(), "/healthcheck").status, 200);
}

#[test]
fn bad_fault_scripts_are_refused_and_change_nothing() {
    let s = start(Options::default());
    s.set_fault(Fault::Garbage);
    let ms = Duration::from_millis;
    let cases: Vec<(Vec<(Fault, Lasting)>, &str)> = vec![
        (vec![(Fault::Down, Lasting::Requests(3))], "no request arrives while down"),
        (vec![(Fault::Hang, Lasting::Forever), (Fault::None, Lasting::Forever)], "step 1 (hang) lasts forever"),
        (vec![(Fault::ExpireSessions, Lasting::For(ms(5)))], "one-shot"),
        (vec![(Fault::ServerError, Lasting::Requests(0))], "lasts nothing"),
        (vec![(Fault::None, Lasting::Requests(1)), (Fault::Slow(ms(1)), Lasting::For(ms(0)))], "step 2 (slow)"),
    ];
    for (steps, expected) in cases {
        let err = s.set_faults(steps).unwrap_err();
        assert!(err.contains(expected), "{err}");
    }
    assert_eq!(s.fault(), Fault::Garbage);
}

#[test]
fn expire_sessions_in_a_script_is_one_shot() {
    let s = start(Options::default());
    let mut old = Mcp::connect(s.port());
    s.set_faults(vec![
        (Fault::ServerError, Lasting::Requests(1)),
        (Fault::ExpireSessions, Lasting::Forever), // one-shot: the step after it still runs
        (Fault::Garbage, Lasting::Requests(1)),
    ])
    .unwrap();
    assert_eq!(old.call_raw("get_status", json!({})).status, 500);
    assert_eq!(old.call_raw("get_status", json!({})).body, "<html>oops");
    assert_eq!(old.call_raw("get_status", json!({})).status, 404, "the session expired between the two");
    assert_eq!(s.fault(), Fault::None);
}
