//! The MCP API's handshake, transport traps and tool result shapes.

mod common;

use common::*;
use graphiti_standin::{Fault, Options};
use serde_json::{Value, json};
use std::thread::sleep;
use std::time::Duration;

#[test]
fn initialize_answers_sse_with_a_session_header() {
    let s = start(Options::default());
    let (reply, session) = initialize(s.port());
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert_eq!(session.len(), 32);
    assert!(session.chars().all(|c| c.is_ascii_hexdigit()));
    // sse-starlette's framing: CRLF line ends, a blank line after the event.
    assert!(reply.body.starts_with("event: message\r\ndata: {"), "{:?}", reply.body);
    assert!(reply.body.ends_with("}\r\n\r\n"));
    let msg = reply.sse();
    assert_eq!(msg["jsonrpc"], "2.0");
    assert_eq!(msg["id"], 1);
    assert_eq!(msg["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(msg["result"]["serverInfo"]["name"], "Graphiti Agent Memory");
    assert!(msg["result"]["capabilities"]["tools"].is_object());
}

#[test]
fn protocol_versions_are_negotiated() {
    let s = start(Options::default());
    let init = |v: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": v}});
        mcp_post(s.port(), None, &body).sse()["result"]["protocolVersion"].clone()
    };
    assert_eq!(init("2025-03-26"), "2025-03-26");
    assert_eq!(init("1999-01-01"), "2025-11-25");
    let mut mcp = Mcp::connect(s.port());
    let headers = [JSON, ACCEPT_BOTH, ("Mcp-Session-Id", mcp.session.as_str()), ("MCP-Protocol-Version", "1999-01-01")];
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).to_string();
    let reply = request(s.port(), "POST", "/mcp", &headers, &body).unwrap();
    assert_eq!(reply.status, 400);
    assert!(reply.json()["error"]["message"].as_str().unwrap().contains("Unsupported protocol version"));
    assert_eq!(mcp.payload("get_episodes", json!({}))["episodes"], json!([]));
}

#[test]
fn notifications_get_202_and_an_empty_body() {
    let s = start(Options::default());
    let (_, session) = initialize(s.port());
    let reply = mcp_post(s.port(), Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(reply.status, 202);
    assert_eq!(reply.body, "");
    assert_eq!(reply.header("mcp-session-id"), Some(session.as_str()));
}

#[test]
fn accept_must_name_json_and_event_stream() {
    let s = start(Options::default());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string();
    for accept in [None, Some("application/json"), Some("text/event-stream"), Some("*/*")] {
        let mut headers = vec![JSON];
        headers.extend(accept.map(|a| ("Accept", a)));
        let reply = request(s.port(), "POST", "/mcp", &headers, &body).unwrap();
        assert_eq!(reply.status, 406, "Accept {accept:?}");
        assert_eq!(reply.json()["error"]["code"], -32600);
    }
}

#[test]
fn content_type_must_be_json() {
    let s = start(Options::default());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string();
    for headers in [vec![ACCEPT_BOTH], vec![ACCEPT_BOTH, ("Content-Type", "text/plain")]] {
        let reply = request(s.port(), "POST", "/mcp", &headers, &body).unwrap();
        assert_eq!((reply.status, reply.body.as_str()), (400, "Invalid Content-Type header"));
    }
    let charset = [ACCEPT_BOTH, ("Content-Type", "application/json; charset=utf-8")];
    assert_eq!(request(s.port(), "POST", "/mcp", &charset, &body).unwrap().status, 200);
}

#[test]
fn trailing_slash_redirects() {
    let s = start(Options::default());
    let reply = request(s.port(), "POST", "/mcp/", &[JSON, ACCEPT_BOTH], "{}").unwrap();
    assert_eq!(reply.status, 307);
    assert_eq!(reply.header("location"), Some(format!("http://127.0.0.1:{}/mcp", s.port()).as_str()));
}

#[test]
fn host_header_must_be_loopback_with_a_port() {
    let s = start(Options::default());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string();
    let post = |host: &str| request(s.port(), "POST", "/mcp", &[JSON, ACCEPT_BOTH, ("Host", host)], &body).unwrap();
    for bad in ["graphiti.example.com:8000", "127.0.0.1", "10.0.0.5:8000"] {
        let reply = post(bad);
        assert_eq!((reply.status, reply.body.as_str()), (421, "Invalid Host header"), "{bad}");
    }
    for good in ["localhost:8000", "[::1]:1", "127.0.0.1:9"] {
        assert_eq!(post(good).status, 200, "{good}");
    }
    // /health is not behind the transport's checks.
    let health = request(s.port(), "GET", "/health", &[("Host", "graphiti.example.com")], "").unwrap();
    assert_eq!(health.json(), json!({"status": "healthy", "service": "graphiti-mcp"}));
}

#[test]
fn sessions_missing_unknown_and_ended() {
    let s = start(Options::default());
    let call =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "get_status", "arguments": {}}});
    let missing = mcp_post(s.port(), None, &call);
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["error"]["message"], "Bad Request: Missing session ID");

    let unknown = mcp_post(s.port(), Some("0123456789abcdef0123456789abcdef"), &call);
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["error"]["message"], "Session not found");

    let mcp = Mcp::connect(s.port());
    assert_eq!(mcp_post(s.port(), Some(&mcp.session), &call).status, 200);
    let end = request(s.port(), "DELETE", "/mcp", &[("Mcp-Session-Id", mcp.session.as_str())], "").unwrap();
    assert_eq!(end.status, 200);
    assert_eq!(mcp_post(s.port(), Some(&mcp.session), &call).status, 404);
    assert_eq!(request(s.port(), "DELETE", "/mcp", &[], "").unwrap().status, 400);
}

#[test]
fn expired_sessions_answer_404_until_reinitialized() {
    let s = start(Options::default());
    let mut a = Mcp::connect(s.port());
    let mut b = Mcp::connect(s.port());
    s.set_fault(Fault::ExpireSessions);
    assert_eq!(a.call_raw("get_status", json!({})).status, 404);
    assert_eq!(b.call_raw("get_status", json!({})).status, 404);
    let mut fresh = Mcp::connect(s.port());
    assert_eq!(fresh.call("get_status", json!({}))["isError"], false);
    assert_eq!(a.call_raw("get_status", json!({})).status, 404, "an expired id stays unknown");
}

#[test]
fn tool_results_have_text_and_structured_content() {
    let s = start(Options::default());
    let mut mcp = Mcp::connect(s.port());
    let queued = mcp.payload("add_memory", json!({"name": "turn-1", "episode_body": "hello", "group_id": "g1"}));
    assert_eq!(queued, json!({"message": "Episode 'turn-1' queued for processing in group 'g1'"}));
    let default_group = mcp.payload("add_memory", json!({"name": "turn-2", "episode_body": "hi"}));
    assert_eq!(default_group["message"], "Episode 'turn-2' queued for processing in group 'main'");

    // get_status alone is not wrapped in {"result": …}.
    let status = mcp.call("get_status", json!({}));
    assert_eq!(status["structuredContent"]["status"], "ok");
    let text: Value = serde_json::from_str(status["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, status["structuredContent"]);

    let list =
        mcp_post(s.port(), Some(&mcp.session), &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})).sse();
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "add_memory",
            "search_nodes",
            "search_memory_facts",
            "get_episodes",
            "delete_episode",
            "delete_entity_edge",
            "clear_graph",
            "get_status"
        ]
    );
}

#[test]
fn tool_failures_are_payloads_but_bad_calls_are_is_error() {
    let s = demo(Options::default());
    let mut mcp = Mcp::connect(s.port());
    // A tool-level failure: isError false, {"error": …} payload.
    let bad_group = mcp.payload("search_memory_facts", json!({"query": "Dana", "group_ids": "no spaces allowed"}));
    let error = bad_group["error"].as_str().unwrap();
    assert!(error.starts_with("Error searching facts: group_id \"no spaces allowed\" must contain only"), "{error}");
    let zero = mcp.payload("search_memory_facts", json!({"query": "Dana", "max_facts": 0}));
    assert_eq!(zero, json!({"error": "max_facts must be a positive integer"}));

    // Unknown tool and bad arguments: isError true, plain text, no structuredContent.
    let unknown = mcp.call("search_memory_nodes", json!({"query": "Dana"}));
    assert_eq!(unknown["isError"], true);
    assert_eq!(unknown["content"][0]["text"], "Unknown tool: search_memory_nodes");
    assert!(unknown.get("structuredContent").is_none());
    let missing = mcp.call("search_nodes", json!({"group_ids": ["demo"]}));
    assert_eq!(missing["isError"], true);
    assert_eq!(missing["content"][0]["text"], "Input validation error: 'query' is a required property");
    let typed = mcp.call("search_memory_facts", json!({"query": "x", "max_facts": "ten"}));
    assert_eq!(typed["content"][0]["text"], "Input validation error: 'ten' is not of type 'integer'");

    // An unknown JSON-RPC method is a JSON-RPC error inside the SSE answer.
    let nope = mcp_post(s.port(), Some(&mcp.session), &json!({"jsonrpc": "2.0", "id": 3, "method": "resources/nope"}));
    assert_eq!(nope.sse()["error"]["code"], -32601);
}

#[test]
fn add_memory_with_uuid_or_bad_group_is_queued_but_never_ingested() {
    let s = start(Options::default());
    let mut mcp = Mcp::connect(s.port());
    let with_uuid = mcp.payload(
        "add_memory",
        json!({"name": "t", "episode_body": "b", "group_id": "g",
        "uuid": "11111111-2222-4333-8444-555555555555"}),
    );
    assert_eq!(with_uuid["message"], "Episode 't' queued for processing in group 'g'");
    let bad_group = mcp.payload("add_memory", json!({"name": "u", "episode_body": "b", "group_id": "a/b"}));
    assert!(bad_group["message"].as_str().unwrap().starts_with("Episode 'u' queued"));
    assert!(s.episodes().is_empty());
    assert_eq!(s.failed_ingests().len(), 2);
    // The MCP queue survives failures (unlike the REST worker).
    mcp.payload("add_memory", json!({"name": "v", "episode_body": "fine", "group_id": "g", "source": "message"}));
    assert_eq!(s.episodes().len(), 1);
    assert!(!s.worker_dead());
    let bad_time = mcp.payload("add_memory", json!({"name": "w", "episode_body": "b", "reference_time": "yesterday"}));
    assert!(bad_time["error"].as_str().unwrap().starts_with("Invalid reference_time"));
}

#[test]
fn legacy_servers_only_know_search_memory_nodes() {
    let s = demo(Options { legacy_node_search: true, ..Options::default() });
    let mut mcp = Mcp::connect(s.port());
    let new_name = mcp.call("search_nodes", json!({"query": "Dana", "group_ids": ["demo"]}));
    assert_eq!(new_name["isError"], true);
    assert_eq!(new_name["content"][0]["text"], "Unknown tool: search_nodes");
    let nodes = mcp.payload("search_memory_nodes", json!({"query": "Dana", "group_ids": ["demo"]}));
    assert_eq!(nodes["nodes"][0]["name"], "Dana Lee");
}

#[test]
fn episodes_become_visible_after_the_ingest_delay() {
    let s = start(Options { ingest_delay: Duration::from_millis(1000), ..Options::default() });
    let mut mcp = Mcp::connect(s.port());
    mcp.payload(
        "add_memory",
        json!({"name": "n", "episode_body": "Dana likes tea", "group_id": "d",
        "source_description": "chat", "reference_time": "2025-06-01T12:00:00Z"}),
    );
    assert!(s.episodes().is_empty());
    assert_eq!(mcp.payload("get_episodes", json!({"group_ids": "d"}))["message"], "No episodes found");
    sleep(Duration::from_millis(1100));
    let listed = mcp.payload("get_episodes", json!({"group_ids": ["d"], "max_episodes": 5}));
    let e = &listed["episodes"][0];
    assert_eq!((e["name"].as_str(), e["content"].as_str()), (Some("n"), Some("Dana likes tea")));
    assert_eq!((e["source"].as_str(), e["source_description"].as_str()), (Some("text"), Some("chat")));
    assert!(e["created_at"].as_str().unwrap().ends_with("+00:00"));
    let episodes = s.episodes();
    assert_eq!((episodes.len(), episodes[0].via, episodes[0].valid_at.as_str()), (1, "mcp", "2025-06-01T12:00:00Z"));
    // Omitted group_ids mean the default group, not every group.
    assert_eq!(mcp.payload("get_episodes", json!({}))["episodes"], json!([]));
}

#[test]
fn search_over_seeded_data_returns_superseded_facts_too() {
    let s = demo(Options::default());
    let mut mcp = Mcp::connect(s.port());
    let found = mcp.payload("search_memory_facts", json!({"query": "Dana Lee CEO", "group_ids": ["demo"]}));
    assert_eq!(found["message"], "Facts retrieved successfully");
    let facts = found["facts"].as_array().unwrap();
    assert_eq!(facts[0]["fact"], "Dana Lee is CEO of Acme Robotics", "most matching words first");
    assert_eq!(facts[0]["invalid_at"], "2025-05-01T00:00:00Z", "pydantic's JSON mode renders UTC as Z");
    assert_eq!(facts[0]["expired_at"], "2025-05-02T10:15:00Z");
    let cto = facts.iter().find(|f| f["name"] == "IS_CTO_OF").expect("the current fact as well");
    assert!(cto["invalid_at"].is_null() && cto["expired_at"].is_null());
    for key in [
        "uuid",
        "group_id",
        "source_node_uuid",
        "target_node_uuid",
        "created_at",
        "episodes",
        "valid_at",
        "reference_time",
        "attributes",
    ] {
        assert!(cto.get(key).is_some(), "{key}");
    }
    // Group filtering: a string is one group; the default group has nothing.
    assert_eq!(
        mcp.payload("search_memory_facts", json!({"query": "Dana", "group_ids": "demo", "max_facts": 2}))["facts"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(mcp.payload("search_memory_facts", json!({"query": "Dana"}))["message"], "No relevant facts found");

    let nodes = mcp.payload("search_nodes", json!({"query": "founder", "group_ids": ["demo"]}));
    assert_eq!(nodes["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(nodes["nodes"][0]["labels"], json!(["Entity", "Person"]));
    assert_eq!(nodes["nodes"][0]["created_at"], "2025-01-10T09:00:00+00:00");
    let restaurants =
        mcp.payload("search_nodes", json!({"query": "Dana", "group_ids": ["demo"], "entity_types": ["Restaurant"]}));
    assert_eq!(restaurants["nodes"][0]["name"], "Saffron Lantern");
    assert_eq!(restaurants["nodes"].as_array().unwrap().len(), 1);
}

#[test]
fn requests_are_recorded_with_rpc_method_and_tool() {
    let s = start(Options::default());
    let mut mcp = Mcp::connect(s.port());
    mcp.call("get_status", json!({}));
    let log = s.requests();
    let summary: Vec<(u16, Option<&str>, Option<&str>)> =
        log.iter().map(|r| (r.status, r.rpc_method.as_deref(), r.tool.as_deref())).collect();
    assert_eq!(
        summary,
        [
            (200, Some("initialize"), None),
            (202, Some("notifications/initialized"), None),
            (200, Some("tools/call"), Some("get_status"))
        ]
    );
    assert!(log.iter().all(|r| r.method == "POST" && r.path == "/mcp"));
    assert!(log[2].body.contains("get_status"));
}

#[test]
fn a_reference_time_that_is_no_date_is_refused_before_queuing() {
    let s = start(Options::default());
    let mut mcp = Mcp::connect(s.port());
    for bad in ["2025-13-01T00:00:00Z", "2025-02-30", "2025-01-01T10:00:00+25:00", "2025-01-01 noon"] {
        let answer = mcp.payload("add_memory", json!({"name": "t", "episode_body": "b", "reference_time": bad}));
        assert_eq!(answer["error"], format!("Invalid reference_time: Invalid isoformat string: '{bad}'"));
    }
    assert!(s.accepted_sends().is_empty());
    let fine =
        mcp.payload("add_memory", json!({"name": "t", "episode_body": "b", "reference_time": "2025-01-01 10:00"}));
    assert!(fine["message"].as_str().unwrap().contains("queued"), "{fine}");
}
