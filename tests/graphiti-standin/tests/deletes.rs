//! Deletes answered as the real servers answer them (see the crate's `deletes` module): what each
//! API removes, that no delete is scoped to a group, and FalkorDB's lookups in one graph only.

mod common;

use common::*;
use graphiti_standin::{Behaviour, EpisodeLookups, GraphitiCore, Options, StandIn};
use serde_json::{Value, json};

fn lookups(mode: EpisodeLookups) -> StandIn {
    let s = start(Options::default());
    s.set_behaviour(Behaviour { episode_lookups: mode, ..Behaviour::default() });
    s
}

/// An episode of `group` stored through MCP, and two facts: one only it created, one it shares.
fn episode_with_facts(s: &StandIn, mcp: &mut Mcp, group: &str) -> String {
    mcp.payload("add_memory", json!({"name": "e1", "episode_body": "Ana moved to Lisbon", "group_id": group}));
    let uuid = s.episodes().into_iter().find(|e| e.group_id == group).unwrap().uuid;
    s.seed_json(&format!(
        r#"{{"group_id": "{group}", "facts": [
            {{"uuid": "{group}-alone", "name": "LIVES_IN", "fact": "Ana lives in Lisbon", "episodes": ["{uuid}"]}},
            {{"uuid": "{group}-shared", "name": "WORKS_AT", "fact": "Ana works at Acme", "episodes": ["{uuid}", "other"]}}]}}"#
    ))
    .unwrap();
    uuid
}

fn fact_uuids(mcp: &mut Mcp, group: &str) -> Vec<String> {
    let found = mcp.payload("search_memory_facts", json!({"query": "Ana Lisbon Acme", "group_ids": [group]}));
    let mut ids: Vec<String> =
        found["facts"].as_array().unwrap().iter().map(|f| f["uuid"].as_str().unwrap().to_string()).collect();
    ids.sort();
    ids
}

fn delete(s: &StandIn, path: &str) -> Reply {
    request(s.port(), "DELETE", path, &[], "").unwrap()
}

fn on(core: GraphitiCore) -> StandIn {
    let s = start(Options::default());
    s.set_behaviour(Behaviour { graphiti_core: core, ..Behaviour::default() });
    s
}

#[test]
fn mcp_delete_episode_removes_the_facts_as_its_release_does() {
    // 0.31.2: only the fact left with no episode; 0.31.1: each fact whose first episode it was.
    for (core, left) in [(GraphitiCore::V0_31_2, vec!["g-shared"]), (GraphitiCore::V0_31_1, vec![])] {
        let s = on(core);
        let mut mcp = Mcp::connect(s.port());
        let uuid = episode_with_facts(&s, &mut mcp, "g");
        let done = mcp.payload("delete_episode", json!({"uuid": uuid}));
        assert_eq!(done["message"], format!("Episode with UUID {uuid} deleted successfully"));
        assert!(s.episodes().is_empty());
        assert_eq!(fact_uuids(&mut mcp, "g"), left, "{core:?}");
        let again = mcp.payload("delete_episode", json!({"uuid": uuid}));
        assert_eq!(again["error"], format!("Error deleting episode: node {uuid} not found"));
    }
}

#[test]
fn rest_delete_episode_leaves_its_facts_and_a_fact_goes_by_itself() {
    let s = start(Options::default());
    let mut mcp = Mcp::connect(s.port());
    let uuid = episode_with_facts(&s, &mut mcp, "g");
    let done = delete(&s, &format!("/episode/{uuid}"));
    assert_eq!(done.status, 200);
    assert_eq!(done.json(), json!({"message": "Episode deleted", "success": true}));
    assert!(s.episodes().is_empty());
    assert_eq!(fact_uuids(&mut mcp, "g"), ["g-alone", "g-shared"]);
    assert_eq!(delete(&s, "/entity-edge/g-alone").json()["message"], "Entity Edge deleted");
    assert_eq!(fact_uuids(&mut mcp, "g"), ["g-shared"]);
    let missing = delete(&s, "/entity-edge/g-alone");
    assert_eq!((missing.status, missing.body.as_str()), (500, "Internal Server Error"));
    let edge = mcp.payload("delete_entity_edge", json!({"uuid": "g-shared"}));
    assert_eq!(edge["message"], "Entity edge with UUID g-shared deleted successfully");
    assert!(fact_uuids(&mut mcp, "g").is_empty());
}

#[test]
fn a_delete_by_uuid_is_not_scoped_to_a_group() {
    let s = start(Options::default());
    let mut mcp = Mcp::connect(s.port());
    episode_with_facts(&s, &mut mcp, "victim");
    // Nothing in the call names a group: any caller who knows the uuid deletes it.
    mcp.payload("delete_entity_edge", json!({"uuid": "victim-alone"}));
    assert_eq!(fact_uuids(&mut mcp, "victim"), ["victim-shared"]);
}

#[test]
fn only_an_mcp_episode_delete_from_0_31_2_on_rewrites_an_entity_summary() {
    let summary = |mcp: &mut Mcp| {
        let nodes = mcp.payload("search_nodes", json!({"query": "Ana", "group_ids": ["g"]}));
        nodes["nodes"].as_array().unwrap().first().map(|n| n["summary"].as_str().unwrap().to_string())
    };
    let seeded = |s: &StandIn, mcp: &mut Mcp| {
        let uuid = episode_with_facts(s, mcp, "g");
        mcp.payload("add_memory", json!({"name": "e2", "episode_body": "Ana runs on Sundays", "group_id": "g"}));
        s.seed_json(r#"{"group_id": "g", "nodes": [{"uuid": "n1", "name": "Ana", "summary": "Ana moved to Lisbon"}]}"#)
            .unwrap();
        uuid
    };
    // 0.31.2: rebuilt from the episodes left that mention Ana.
    let s = on(GraphitiCore::V0_31_2);
    let mut mcp = Mcp::connect(s.port());
    let uuid = seeded(&s, &mut mcp);
    mcp.payload("delete_episode", json!({"uuid": uuid}));
    assert_eq!(summary(&mut mcp).as_deref(), Some("Ana runs on Sundays"));
    // No episode left mentions her: the entity goes.
    let last = s.episodes()[0].uuid.clone();
    mcp.payload("delete_episode", json!({"uuid": last}));
    assert_eq!(summary(&mut mcp), None);
    // 0.31.1, and the REST delete in every release: the summary stays as it was.
    for (core, api) in [(GraphitiCore::V0_31_1, "mcp"), (GraphitiCore::V0_31_2, "rest")] {
        let s = on(core);
        let mut mcp = Mcp::connect(s.port());
        let uuid = seeded(&s, &mut mcp);
        if api == "mcp" {
            mcp.payload("delete_episode", json!({"uuid": uuid}));
        } else {
            assert_eq!(delete(&s, &format!("/episode/{uuid}")).status, 200);
        }
        assert_eq!(summary(&mut mcp).as_deref(), Some("Ana moved to Lisbon"), "{core:?} {api}");
    }
}

#[test]
fn on_falkordb_a_delete_by_uuid_finds_nothing_outside_the_default_graph() {
    let s = lookups(EpisodeLookups::FalkorDb);
    let mut mcp = Mcp::connect(s.port());
    let uuid = episode_with_facts(&s, &mut mcp, "main-dm-ana");
    let failed = mcp.payload("delete_episode", json!({"uuid": uuid}));
    assert_eq!(failed["error"], format!("Error deleting episode: node {uuid} not found"));
    let failed = mcp.payload("delete_entity_edge", json!({"uuid": "main-dm-ana-alone"}));
    assert_eq!(failed["error"], "Error deleting entity edge: edge main-dm-ana-alone not found");
    assert_eq!(delete(&s, &format!("/episode/{uuid}")).status, 500);
    assert_eq!(delete(&s, "/entity-edge/main-dm-ana-alone").status, 500);
    assert_eq!(s.episodes().len(), 1);
    assert_eq!(fact_uuids(&mut mcp, "main-dm-ana").len(), 2);
    // The default graph's items are found.
    let default = episode_with_facts(&s, &mut mcp, "default_db");
    let done = mcp.payload("delete_episode", json!({"uuid": default}));
    assert!(done["message"].as_str().unwrap().ends_with("deleted successfully"), "{done}");
}

#[test]
fn on_falkordb_clearing_a_group_answers_success_and_deletes_nothing() {
    let s = lookups(EpisodeLookups::FalkorDb);
    let mut mcp = Mcp::connect(s.port());
    episode_with_facts(&s, &mut mcp, "main-dm-ana");
    let cleared = mcp.payload("clear_graph", json!({"group_ids": ["main-dm-ana"]}));
    assert_eq!(cleared["message"], "Graph data cleared for group IDs: main-dm-ana");
    assert_eq!(delete(&s, "/group/main-dm-ana").json(), json!({"message": "Group deleted", "success": true}));
    assert_eq!(s.episodes().len(), 1);
    assert_eq!(fact_uuids(&mut mcp, "main-dm-ana").len(), 2);
    // On Neo4j the same calls delete the group.
    let neo4j = start(Options::default());
    let mut mcp = Mcp::connect(neo4j.port());
    episode_with_facts(&neo4j, &mut mcp, "main-dm-ana");
    mcp.payload("clear_graph", json!({"group_ids": ["main-dm-ana"]}));
    assert!(neo4j.episodes().is_empty() && fact_uuids(&mut mcp, "main-dm-ana").is_empty());
}

#[test]
fn falkordb_029_mcp_deletes_in_the_graph_its_driver_was_last_bound_to() {
    let s = lookups(EpisodeLookups::FalkorDb029);
    let mut mcp = Mcp::connect(s.port());
    let a = episode_with_facts(&s, &mut mcp, "a");
    mcp.payload("add_memory", json!({"name": "b1", "episode_body": "b", "group_id": "b"}));
    let failed: Value = mcp.payload("delete_episode", json!({"uuid": a}));
    assert_eq!(failed["error"], format!("Error deleting episode: node {a} not found"), "bound to b's graph now");
    let b = s.episodes().into_iter().find(|e| e.group_id == "b").unwrap().uuid;
    assert!(mcp.payload("delete_episode", json!({"uuid": b}))["message"].is_string());
}
