//! Re-sent episodes are stored again (no idempotency on either API), counted against what a
//! client meant to deliver; FalkorDB's episode look-ups.

mod common;

use common::*;
use graphiti_standin::{Behaviour, EpisodeLookups, Options, StandIn};
use serde_json::json;
use std::collections::HashSet;

fn lookups(mode: EpisodeLookups) -> StandIn {
    let s = start(Options::default());
    s.set_behaviour(Behaviour { episode_lookups: mode, ..Behaviour::default() });
    s
}

fn listed(mcp: &mut Mcp, group: &str) -> Vec<String> {
    let payload = mcp.payload("get_episodes", json!({"group_ids": [group]}));
    payload["episodes"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_string()).collect()
}

fn rest_listed(s: &StandIn, group: &str) -> Vec<String> {
    let list = get(s.port(), &format!("/episodes/{group}?last_n=100")).json();
    list.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_resent_turn_is_stored_again_with_new_uuids() {
    let s = start(Options::default());
    for _ in 0..2 {
        assert_eq!(post_json(s.port(), "/messages", &turn("g", "t1")).status, 202);
    }
    let mut mcp = Mcp::connect(s.port());
    for _ in 0..2 {
        mcp.payload("add_memory", json!({"name": "m1", "episode_body": "same", "group_id": "g"}));
    }
    let episodes = s.episodes();
    assert_eq!(episodes.len(), 6, "2 × (user + assistant) + 2");
    let uuids: HashSet<&str> = episodes.iter().map(|e| e.uuid.as_str()).collect();
    assert_eq!(uuids.len(), 6, "every send a new episode");
    assert_eq!(get(s.port(), "/episodes/g?last_n=10").json().as_array().unwrap().len(), 6);
    assert_eq!(mcp.payload("get_episodes", json!({"group_ids": "g"}))["episodes"].as_array().unwrap().len(), 6);

    let sends = s.accepted_sends();
    let summary: Vec<(&str, &str, u64)> = sends.iter().map(|a| (a.name.as_str(), a.via, a.request)).collect();
    assert_eq!(
        summary,
        [
            ("t1:user", "rest", 1),
            ("t1:assistant", "rest", 1),
            ("t1:user", "rest", 2),
            ("t1:assistant", "rest", 2),
            ("m1", "mcp", 3),
            ("m1", "mcp", 4)
        ]
    );
    assert!(sends.iter().all(|a| a.group_id == "g"));
    assert!(sends.windows(2).all(|w| w[0].at <= w[1].at));
    assert_eq!(sends[0].episode_uuid, episodes[0].uuid);
}

#[test]
fn delivery_counts_each_episode_once_per_send() {
    let s = start(Options::default());
    let mut note = turn("g", "note-1");
    note["messages"].as_array_mut().unwrap().pop(); // a note: only the user message
    for body in [turn("g", "t1"), turn("g", "t2"), turn("g", "t2"), turn("g", "t2"), note, turn("g", "stray")] {
        post_json(s.port(), "/messages", &body);
    }
    let mut mcp = Mcp::connect(s.port());
    mcp.payload("add_memory", json!({"name": "m1", "episode_body": "b"}));
    mcp.payload("add_memory", json!({"name": "m1", "episode_body": "b"}));
    // Sent but never queued: not an accepted send.
    mcp.payload("add_memory", json!({"name": "m2", "episode_body": "b", "group_id": "bad group"}));

    let d = s.delivery(&["t1", "t2", "note-1", "m1", "m2", "t3"]);
    assert_eq!(d.once, 2, "t1 and note-1");
    assert_eq!(d.lost, ["m2", "t3"]);
    assert_eq!(d.duplicated, [("t2".to_string(), 3), ("m1".to_string(), 2)]);
    assert_eq!(d.unexpected, ["stray"]);
    assert!(!d.is_exact());
    assert!(s.delivery(&["t1"; 0]).unexpected.len() == 5);
}

#[test]
fn a_dead_rest_worker_loses_what_it_still_answers_202_for() {
    let s = start(Options::default());
    let mut killer = turn("g", "t1");
    killer["messages"][0]["uuid"] = json!("11111111-2222-4333-8444-555555555555");
    assert_eq!(post_json(s.port(), "/messages", &killer).status, 202);
    assert_eq!(post_json(s.port(), "/messages", &turn("g", "t2")).status, 202);
    assert_eq!(s.delivery(&["t1", "t2"]).lost, ["t1", "t2"]);
}

#[test]
fn neo4j_lookups_see_every_group() {
    let s = lookups(EpisodeLookups::Neo4j);
    let mut mcp = Mcp::connect(s.port());
    mcp.payload("add_memory", json!({"name": "a1", "episode_body": "b", "group_id": "a"}));
    mcp.payload("add_memory", json!({"name": "b1", "episode_body": "b", "group_id": "b"}));
    assert_eq!((listed(&mut mcp, "a"), listed(&mut mcp, "b")), (vec!["a1".to_string()], vec!["b1".to_string()]));
}

/// graphiti-core 0.30 and later: the shared driver stays on the default graph, whatever was
/// ingested, so MCP `get_episodes` never lists another group; REST is routed to the group.
#[test]
fn falkordb_mcp_get_episodes_never_lists_a_group_but_the_default_graph() {
    let s = lookups(EpisodeLookups::FalkorDb);
    let mut mcp = Mcp::connect(s.port());
    mcp.payload("add_memory", json!({"name": "a1", "episode_body": "b", "group_id": "a"}));
    mcp.payload("add_memory", json!({"name": "d1", "episode_body": "b", "group_id": "default_db"}));
    assert_eq!(listed(&mut mcp, "a"), Vec::<String>::new(), "not even right after its ingest");
    assert_eq!(listed(&mut mcp, "default_db"), ["d1"]);
    post_json(s.port(), "/messages", &turn("a", "r1"));
    assert_eq!(rest_listed(&s, "a"), ["a1", "r1:user", "r1:assistant"]);
    // get_status names the database (unwrapped: no "result").
    let status = mcp.call("get_status", json!({}));
    assert_eq!(
        status["structuredContent"]["message"],
        "Graphiti MCP server is running and connected to falkordb database"
    );
    let neo4j = lookups(EpisodeLookups::Neo4j);
    let status = Mcp::connect(neo4j.port()).call("get_status", json!({}));
    assert_eq!(
        status["structuredContent"]["message"],
        "Graphiti MCP server is running and connected to neo4j database"
    );
}

#[test]
fn falkordb_029_mcp_get_episodes_reads_the_graph_of_the_last_ingested_group() {
    let s = lookups(EpisodeLookups::FalkorDb029);
    let mut mcp = Mcp::connect(s.port());
    mcp.payload("add_memory", json!({"name": "a1", "episode_body": "b", "group_id": "a"}));
    assert_eq!(listed(&mut mcp, "a"), ["a1"], "bound to a's graph by its ingest");
    mcp.payload("add_memory", json!({"name": "b1", "episode_body": "b", "group_id": "b"}));
    assert_eq!(listed(&mut mcp, "a"), Vec::<String>::new(), "a's episodes are in a graph it no longer reads");
    assert_eq!(listed(&mut mcp, "b"), ["b1"]);
    let both = mcp.payload("get_episodes", json!({"group_ids": ["a", "b"]}));
    assert_eq!(both["episodes"].as_array().unwrap().len(), 1);
    // REST is routed to the group's graph (graphiti-core 0.29.3 and later); the truth is intact.
    post_json(s.port(), "/messages", &turn("a", "r1"));
    assert_eq!(rest_listed(&s, "a"), ["a1", "r1:user", "r1:assistant"]);
    assert_eq!(listed(&mut mcp, "b"), ["b1"], "REST ingests use their own client: MCP stays on b");
    assert_eq!(s.episodes().len(), 4);
}

#[test]
fn falkordb_legacy_rest_episodes_read_only_the_default_graph() {
    let s = lookups(EpisodeLookups::FalkorDbLegacy);
    post_json(s.port(), "/messages", &turn("chat", "t1"));
    post_json(s.port(), "/messages", &turn("default_db", "t2"));
    assert_eq!(rest_listed(&s, "chat"), Vec::<String>::new());
    assert_eq!(rest_listed(&s, "default_db"), ["t2:user", "t2:assistant"]);
    let mut mcp = Mcp::connect(s.port());
    assert_eq!(listed(&mut mcp, "chat"), Vec::<String>::new(), "no MCP ingest yet: MCP reads default_db");
    assert_eq!(s.delivery(&["t1", "t2"]).once, 2, "stored all the same");
}
