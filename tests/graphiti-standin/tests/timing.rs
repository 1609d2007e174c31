//! Timing like the real servers: latency, the ingest queue, slow acceptance with a backlog, slow
//! search while ingesting. Bounds are generous (a shared 2-core machine): lower bounds are what
//! the stand-in promises, upper bounds only catch "far too slow".

mod common;

use common::*;
use graphiti_standin::{Behaviour, BusySearch, Options};
use serde_json::json;
use std::thread::sleep;
use std::time::{Duration, Instant};

const SLACK: Duration = Duration::from_millis(700);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn with(behaviour: Behaviour) -> graphiti_standin::StandIn {
    let s = start(Options::default());
    s.set_behaviour(behaviour);
    s
}

fn sleep_until(t: Instant) {
    sleep(t.saturating_duration_since(Instant::now()));
}

fn add(mcp: &mut Mcp, group: &str, name: &str) {
    let queued = mcp.payload("add_memory", json!({"name": name, "episode_body": "b", "group_id": group}));
    assert!(queued["message"].as_str().unwrap().contains("queued"), "{queued}");
}

fn names(s: &graphiti_standin::StandIn) -> Vec<String> {
    let mut names: Vec<String> = s.episodes().into_iter().map(|e| e.name).collect();
    names.sort();
    names
}

#[test]
fn every_answer_waits_the_latency_but_control_requests_do_not() {
    let s = with(Behaviour { latency: ms(400), ..Behaviour::default() });
    let (reply, took) = timed(|| get(s.port(), "/healthcheck"));
    assert_eq!(reply.status, 200);
    assert!(took >= ms(400) && took < ms(400) + SLACK, "{took:?}");
    let (_, took) = timed(|| Mcp::connect(s.port())); // two requests
    assert!(took >= ms(800), "{took:?}");
    let (status, took) = timed(|| get(s.port(), "/__standin/status"));
    assert_eq!(status.status, 200);
    assert!(took < ms(300), "control requests are not delayed: {took:?}");
}

#[test]
fn mcp_ingests_one_episode_at_a_time_per_group() {
    let s = with(Behaviour { ingest: ms(600), ..Behaviour::default() });
    let mut mcp = Mcp::connect(s.port());
    let t0 = Instant::now();
    for name in ["a1", "a2", "a3"] {
        add(&mut mcp, "a", name);
    }
    add(&mut mcp, "b", "b1");
    assert_eq!(mcp.payload("get_episodes", json!({"group_ids": ["a", "b"]}))["episodes"], json!([]));
    assert_eq!(s.queued(), 4);
    // Ready at about 600 ms (a1, b1: the groups' queues run side by side), 1200 (a2), 1800 (a3).
    sleep_until(t0 + ms(900));
    assert_eq!(names(&s), ["a1", "b1"]);
    let listed = mcp.payload("get_episodes", json!({"group_ids": ["a"]}));
    assert_eq!(listed["episodes"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(s.queued(), 2);
    sleep_until(t0 + ms(1500));
    assert_eq!(names(&s), ["a1", "a2", "b1"]);
    sleep_until(t0 + ms(2100));
    assert_eq!(names(&s), ["a1", "a2", "a3", "b1"]);
    assert_eq!(s.queued(), 0);
}

#[test]
fn rest_ingests_one_episode_at_a_time_whatever_the_group() {
    let s = with(Behaviour { ingest: ms(600), ..Behaviour::default() });
    let t0 = Instant::now();
    assert_eq!(post_json(s.port(), "/messages", &turn("x", "t1")).status, 202);
    assert_eq!(post_json(s.port(), "/messages", &turn("y", "t2")).status, 202);
    let visible = |group: &str| get(s.port(), &format!("/episodes/{group}?last_n=10")).json().as_array().unwrap().len();
    assert_eq!(visible("x"), 0, "not ingested yet");
    sleep_until(t0 + ms(900));
    assert_eq!((visible("x"), visible("y")), (1, 0));
    sleep_until(t0 + ms(1500));
    assert_eq!((visible("x"), visible("y")), (2, 0));
    sleep_until(t0 + ms(2100));
    assert_eq!((visible("x"), visible("y")), (2, 1), "one queue for every group");
    sleep_until(t0 + ms(2700));
    assert_eq!((visible("x"), visible("y")), (2, 2));
}

#[test]
fn the_ingest_delay_is_a_floor_under_the_queue() {
    let s = start(Options { ingest_delay: ms(800), ..Options::default() });
    s.set_behaviour(Behaviour { ingest: ms(100), ..Behaviour::default() });
    let mut mcp = Mcp::connect(s.port());
    let t0 = Instant::now();
    for name in ["n1", "n2", "n3"] {
        add(&mut mcp, "g", name);
    }
    sleep_until(t0 + ms(450));
    assert!(s.episodes().is_empty(), "ingested at 100-300 ms but not visible before 800 ms");
    sleep_until(t0 + ms(1100));
    assert_eq!(names(&s), ["n1", "n2", "n3"]);
}

#[test]
fn accepting_slows_down_with_the_backlog_up_to_the_cap() {
    let behaviour =
        Behaviour { ingest: ms(5000), accept_per_queued: ms(300), accept_max: Some(ms(1000)), ..Behaviour::default() };
    let s = with(behaviour);
    let post = |episode: &str| timed(|| post_json(s.port(), "/messages", &turn("g", episode)).status);
    let (status, idle) = post("t1");
    assert_eq!(status, 202);
    assert!(idle < ms(300), "nothing queued: at once ({idle:?})");
    let (_, two) = post("t2"); // t1's two messages queued
    assert!(two >= ms(600) && two < ms(600) + SLACK, "{two:?}");
    let (_, capped) = post("t3"); // four queued: 1.2 s, capped at 1 s
    assert!(capped >= ms(1000) && capped < ms(1000) + SLACK, "{capped:?}");
    // MCP add_memory is not slowed unless asked to be.
    let mut mcp = Mcp::connect(s.port());
    let (_, quick) = timed(|| add(&mut mcp, "g", "m1"));
    assert!(quick < ms(300), "{quick:?}");
    s.set_behaviour(Behaviour { slow_add_memory: true, ..s.behaviour() });
    let (_, slow) = timed(|| add(&mut mcp, "g", "m2"));
    assert!(slow >= ms(1000), "{slow:?}");
}

#[test]
fn a_client_that_gives_up_has_still_delivered_the_episode() {
    let s = with(Behaviour { ingest: ms(300), accept_per_queued: ms(2000), ..Behaviour::default() });
    post_json(s.port(), "/messages", &turn("g", "first")); // a backlog of two
    let body = turn("g", "given-up").to_string();
    let t0 = Instant::now();
    send_then_close(s.port(), "POST", "/messages", &body, ms(100));
    let names: Vec<String> = s.accepted_sends().into_iter().map(|a| a.name).collect();
    assert_eq!(names, ["first:user", "first:assistant", "given-up:user", "given-up:assistant"]);
    assert!(t0.elapsed() < ms(2000), "stored when it arrived, long before its answer was due");
    assert!(wait_for(ms(3000), || s.episodes().len() == 4), "and ingested: {:?}", s.episodes());
    assert!(s.delivery(&["first", "given-up"]).is_exact());
}

#[test]
fn searches_are_slow_while_episodes_are_queued() {
    let busy = BusySearch { min: ms(200), max: ms(800), seed: 3 };
    let s = demo(Options::default());
    s.set_behaviour(Behaviour { ingest: ms(20_000), busy_search: Some(busy), ..Behaviour::default() });
    let mut mcp = Mcp::connect(s.port());
    let search = json!({"group_ids": ["demo"], "query": "Dana"});
    let (_, idle) = timed(|| post_json(s.port(), "/search", &search));
    assert!(idle < ms(200), "idle: no extra delay ({idle:?})");

    add(&mut mcp, "g", "one"); // one queued: 200..300 ms
    for _ in 0..3 {
        let (reply, took) = timed(|| post_json(s.port(), "/search", &search));
        assert!(!reply.json()["facts"].as_array().unwrap().is_empty(), "slow, not empty");
        assert!(took >= ms(200) && took < ms(300) + SLACK, "{took:?}");
    }
    for n in 2..=6 {
        add(&mut mcp, "g", &format!("e{n}"));
    }
    let mut total = Duration::ZERO;
    for _ in 0..4 {
        let (_, took) = timed(|| mcp.payload("search_memory_facts", json!({"query": "Dana", "group_ids": ["demo"]})));
        assert!(took >= ms(200) && took < ms(800) + SLACK, "{took:?}");
        total += took;
    }
    let (_, nodes) = timed(|| mcp.payload("search_nodes", json!({"query": "Dana", "group_ids": ["demo"]})));
    assert!(nodes >= ms(200), "{nodes:?}");
    let (_, listing) = timed(|| mcp.payload("get_episodes", json!({"group_ids": ["g"]})));
    assert!(listing < ms(200), "only searches are slowed ({listing:?})");
    assert!(total > ms(4 * 200 + 100), "spread over the range, not pinned at the minimum: {total:?}");
}
