//! Fault modes, seeding errors and shutdown.

mod common;

use common::*;
use graphiti_standin::{Fault, Options};
use serde_json::json;
use std::io::ErrorKind;
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
