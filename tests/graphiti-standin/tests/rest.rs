//! The REST API: validation, the fragile ingest worker, search and episodes.

mod common;

use common::*;
use graphiti_standin::Options;
use serde_json::json;
use std::thread::sleep;
use std::time::Duration;

fn msg(content: &str, role: Option<&str>) -> serde_json::Value {
    json!({"content": content, "role_type": "user", "role": role, "name": "turn", "source_description": "chat"})
}

#[test]
fn healthcheck() {
    let s = start(Options::default());
    assert_eq!(get(s.port(), "/healthcheck").json(), json!({"status": "healthy"}));
    assert_eq!(get(s.port(), "/nope").status, 404);
}

#[test]
fn messages_are_accepted_and_stored_as_role_episodes() {
    let s = start(Options::default());
    let reply = post_json(
        s.port(),
        "/messages",
        &json!({"group_id": "chat-1", "messages": [msg("I moved to Lisbon", Some("dana")), msg("hello", None)]}),
    );
    assert_eq!(reply.status, 202);
    assert_eq!(reply.json(), json!({"message": "Messages added to processing queue", "success": true}));
    let episodes = s.episodes();
    let bodies: Vec<&str> = episodes.iter().map(|e| e.content.as_str()).collect();
    assert_eq!(bodies, ["dana(user): I moved to Lisbon", "(user): hello"]);
    assert!(
        episodes.iter().all(|e| e.via == "rest" && e.source == "message" && e.name == "turn" && e.group_id == "chat-1")
    );
}

#[test]
fn a_message_without_the_role_key_is_a_422() {
    let s = start(Options::default());
    let reply = post_json(
        s.port(),
        "/messages",
        &json!({"group_id": "g", "messages": [{"content": "hi", "role_type": "user"}]}),
    );
    assert_eq!(reply.status, 422);
    let detail = &reply.json()["detail"][0];
    assert_eq!(detail["loc"], json!(["body", "messages", 0, "role"]));
    assert_eq!((detail["msg"].as_str(), detail["type"].as_str()), (Some("Field required"), Some("missing")));

    let reply =
        post_json(s.port(), "/messages", &json!({"group_id": "g", "messages": [{"role": null, "role_type": "bot"}]}));
    assert_eq!(reply.status, 422);
    let types: Vec<String> =
        reply.json()["detail"].as_array().unwrap().iter().map(|d| d["type"].as_str().unwrap().to_string()).collect();
    assert_eq!(types, ["missing", "literal_error"]);
    assert_eq!(post_json(s.port(), "/messages", &json!({"messages": []})).status, 422);
    assert_eq!(
        request(s.port(), "POST", "/messages", &[JSON], "{oops").unwrap().json()["detail"][0]["type"],
        "json_invalid"
    );
    assert!(s.episodes().is_empty());
}

#[test]
fn a_message_uuid_kills_the_ingest_worker() {
    let s = start(Options::default());
    let mut killer = msg("second", Some("dana"));
    killer["uuid"] = json!("11111111-2222-4333-8444-555555555555");
    let reply = post_json(
        s.port(),
        "/messages",
        &json!({"group_id": "g", "messages": [msg("first", None), killer, msg("third", None)]}),
    );
    assert_eq!(reply.status, 202);
    assert!(s.worker_dead());
    let later = post_json(s.port(), "/messages", &json!({"group_id": "g", "messages": [msg("later", None)]}));
    assert_eq!(later.status, 202, "still accepted");
    let bodies: Vec<String> = s.episodes().into_iter().map(|e| e.content).collect();
    assert_eq!(bodies, ["(user): first"], "nothing from the killing message on");
    assert_eq!(s.failed_ingests().len(), 1);
}

#[test]
fn a_bad_group_id_kills_the_worker_too() {
    let s = start(Options::default());
    assert_eq!(post_json(s.port(), "/messages", &json!({"group_id": "a b", "messages": [msg("x", None)]})).status, 202);
    assert!(s.worker_dead());
    assert!(s.episodes().is_empty());
}

#[test]
fn episodes_need_last_n_and_wait_for_the_delay() {
    let s = start(Options { ingest_delay: Duration::from_millis(1000), ..Options::default() });
    post_json(
        s.port(),
        "/messages",
        &json!({"group_id": "g", "messages": [msg("one", None), msg("two", None), msg("three", None)]}),
    );
    let missing = get(s.port(), "/episodes/g");
    assert_eq!(missing.status, 422);
    assert_eq!(missing.json()["detail"][0]["loc"], json!(["query", "last_n"]));
    assert_eq!(get(s.port(), "/episodes/g?last_n=x").status, 422);
    assert_eq!(get(s.port(), "/episodes/g?last_n=2").json(), json!([]), "not visible yet");
    sleep(Duration::from_millis(1100));
    let listed = get(s.port(), "/episodes/g?last_n=2").json();
    let contents: Vec<&str> = listed.as_array().unwrap().iter().map(|e| e["content"].as_str().unwrap()).collect();
    assert_eq!(contents, ["(user): two", "(user): three"]);
    assert_eq!(listed[0]["source"], "message");
    assert!(listed[0]["created_at"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn search_returns_fact_results_including_invalidated_ones() {
    let s = demo(Options::default());
    let reply = post_json(
        s.port(),
        "/search",
        &json!({"group_ids": ["demo"], "query": "Who is the CTO of Acme Robotics?", "max_facts": 10}),
    );
    assert_eq!(reply.status, 200);
    let facts = reply.json()["facts"].as_array().unwrap().clone();
    assert_eq!(facts[0]["fact"], "Dana Lee is CTO of Acme Robotics");
    let ceo = facts.iter().find(|f| f["name"] == "IS_CEO_OF").expect("superseded fact is returned");
    assert_eq!(ceo["invalid_at"], "2025-05-01T00:00:00+00:00");
    assert_eq!(ceo["expired_at"], "2025-05-02T10:15:00+00:00");
    let mut keys: Vec<&str> = ceo.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "created_at",
            "episodes",
            "expired_at",
            "fact",
            "invalid_at",
            "name",
            "source_node_uuid",
            "target_node_uuid",
            "uuid",
            "valid_at"
        ]
    );

    // null group_ids search every group; max_facts caps; other groups filter out.
    let all = post_json(s.port(), "/search", &json!({"group_ids": null, "query": "Dana", "max_facts": 2})).json();
    assert_eq!(all["facts"].as_array().unwrap().len(), 2);
    let other = post_json(s.port(), "/search", &json!({"group_ids": ["elsewhere"], "query": "Dana"})).json();
    assert_eq!(other["facts"], json!([]));
    assert_eq!(post_json(s.port(), "/search", &json!({"group_ids": "demo", "query": "Dana"})).status, 422);
    assert_eq!(post_json(s.port(), "/search", &json!({"group_ids": ["no spaces"], "query": "Dana"})).status, 500);
}

#[test]
fn get_memory_requires_the_center_node_key() {
    let s = demo(Options::default());
    let no_center =
        post_json(s.port(), "/get-memory", &json!({"group_id": "demo", "messages": [msg("restaurant?", None)]}));
    assert_eq!(no_center.status, 422);
    assert_eq!(no_center.json()["detail"][0]["loc"], json!(["body", "center_node_uuid"]));
    let reply = post_json(
        s.port(),
        "/get-memory",
        &json!({"group_id": "demo", "center_node_uuid": null, "max_facts": 5, "messages": [msg("Where does the team have dinners?", None)]}),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["facts"][0]["name"], "LIKES");
}

#[test]
fn delete_group_and_clear() {
    let s = demo(Options::default());
    post_json(s.port(), "/messages", &json!({"group_id": "demo", "messages": [msg("x", None)]}));
    let deleted = request(s.port(), "DELETE", "/group/demo", &[], "").unwrap();
    assert_eq!(deleted.json(), json!({"message": "Group deleted", "success": true}));
    assert!(s.episodes().is_empty());
    assert_eq!(post_json(s.port(), "/search", &json!({"query": "Dana"})).json()["facts"], json!([]));

    s.seed_json(include_str!("../seed/demo.json")).unwrap();
    assert_eq!(post_json(s.port(), "/clear", &json!({})).json()["message"], "Graph cleared");
    assert_eq!(post_json(s.port(), "/search", &json!({"query": "Dana"})).json()["facts"], json!([]));
}

#[test]
fn episodes_last_n_are_the_most_recent_by_valid_at_oldest_first() {
    // graphiti-core's retrieve_episodes: valid_at <= now, ORDER BY valid_at DESC LIMIT last_n, reversed.
    let s = start(Options::default());
    let at = |content: &str, timestamp: &str| {
        let mut m = msg(content, None);
        m["timestamp"] = json!(timestamp);
        m
    };
    let messages = [
        at("march", "2025-03-01T00:00:00Z"),
        at("january", "2025-01-01T00:00:00+00:00"),
        at("future", "2999-01-01T00:00:00Z"),
        at("february", "2025-02-01T01:00:00+01:00"),
        at("april", "2025-04-01T00:00:00.5Z"),
    ];
    post_json(s.port(), "/messages", &json!({"group_id": "g", "messages": messages}));
    let contents = |n: usize| -> Vec<String> {
        let listed = get(s.port(), &format!("/episodes/g?last_n={n}")).json();
        listed.as_array().unwrap().iter().map(|e| e["content"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(contents(2), ["(user): march", "(user): april"]);
    assert_eq!(contents(10), ["(user): january", "(user): february", "(user): march", "(user): april"]);
    assert_eq!(contents(0), Vec::<String>::new());
}

#[test]
fn a_message_timestamp_must_be_a_datetime() {
    let s = start(Options::default());
    for (bad, kind) in [(json!("yesterday"), "datetime_from_date_parsing"), (json!(null), "datetime_type")] {
        let mut m = msg("hi", None);
        m["timestamp"] = bad.clone();
        let reply = post_json(s.port(), "/messages", &json!({"group_id": "g", "messages": [m]}));
        assert_eq!(reply.status, 422, "timestamp {bad}");
        let detail = &reply.json()["detail"][0];
        assert_eq!(detail["loc"], json!(["body", "messages", 0, "timestamp"]));
        assert_eq!(detail["type"], kind);
    }
    assert!(s.episodes().is_empty());
}
