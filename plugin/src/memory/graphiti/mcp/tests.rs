use super::*;
use crate::memory::graphiti::answer::{FACT_FIELDS, NODE_FIELDS};
use crate::memory::graphiti::error::{rejected, unknown};
use crate::memory::graphiti::http::HttpError;
use std::time::Duration;

/// Answers from a script, recording what was sent.
struct Scripted {
    answers: Vec<std::result::Result<Response, HttpError>>,
    sent: Vec<Request>,
}

impl Http for Scripted {
    fn send(&mut self, request: Request) -> std::result::Result<Response, HttpError> {
        self.sent.push(request);
        self.answers.remove(0)
    }
}

fn sse(status: u16, session: Option<&str>, body: &str) -> std::result::Result<Response, HttpError> {
    let mut headers = vec![("content-type".to_string(), "text/event-stream".to_string())];
    if let Some(s) = session {
        headers.push(("mcp-session-id".to_string(), s.to_string()));
    }
    Ok(Response {
        status,
        headers,
        body: format!("event: message\ndata: {body}\n\n").into_bytes(),
    })
}

/// [`rpc_message`] as a `Value` (`id`, `result` and `error` as they came), for comparing.
fn rpc_answer(what: &str, response: &Response, id: u64) -> Result<Value> {
    let mut joined = Vec::new();
    let rpc = rpc_message(what, response, id, &mut joined)?;
    let mut answer = serde_json::Map::new();
    let parts = [
        ("id", rpc.id.clone()),
        ("result", parsed(what, rpc.result)?),
        ("error", parsed(what, rpc.error)?),
    ];
    for (key, value) in parts {
        if let Some(value) = value {
            answer.insert(key.to_string(), value);
        }
    }
    Ok(Value::Object(answer))
}

/// A 200 answer whose event stream is `body` exactly.
fn event_stream(body: &str) -> Response {
    Response {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body: body.as_bytes().to_vec(),
    }
}

fn plain(status: u16) -> std::result::Result<Response, HttpError> {
    Ok(Response {
        status,
        headers: vec![],
        body: vec![],
    })
}

fn deadline() -> Deadline {
    Deadline::after(Duration::from_secs(5))
}

const FACTS: &str = r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"result":{"message":"ok","facts":[{"fact":"Alice works at Acme"}]}},"isError":false}}"#;

#[test]
fn handshake_then_call_with_the_session_header() {
    let mut http = Scripted {
        answers: vec![
            sse(
                200,
                Some("abc"),
                r#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18"}}"#,
            ),
            plain(202),
            sse(200, None, &FACTS.replace("ID", "3")),
        ],
        sent: vec![],
    };
    let mut client = McpClient::new("http://localhost:8000/mcp/");
    let facts = client
        .search_facts(&mut http, &Query::new("alice", &[]), "g1", 5, deadline())
        .unwrap();
    assert_eq!(facts[0]["fact"], "Alice works at Acme");
    assert_eq!(http.sent[0].url, "http://localhost:8000/mcp");
    let session = |r: &Request| {
        r.headers
            .iter()
            .find(|(n, _)| n == "mcp-session-id")
            .map(|(_, v)| v.clone())
    };
    assert_eq!(session(&http.sent[0]), None);
    assert_eq!(session(&http.sent[1]), Some("abc".into()));
    assert_eq!(session(&http.sent[2]), Some("abc".into()));
}

#[test]
fn a_lost_session_is_reinitialized_once() {
    let init = |id: u64, s: &str| {
        sse(
            200,
            Some(s),
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        )
    };
    let mut http = Scripted {
        answers: vec![
            init(2, "a"),
            plain(202),
            plain(404),
            init(4, "b"),
            plain(202),
            sse(200, None, &FACTS.replace("ID", "5")),
        ],
        sent: vec![],
    };
    let mut client = McpClient::new("http://localhost:8000/mcp");
    assert_eq!(
        client
            .search_facts(&mut http, &Query::new("q", &[]), "g", 5, deadline())
            .unwrap()
            .len(),
        1
    );
    assert_eq!(http.sent.len(), 6);
}

/// [`tool_answer`] of a message given as JSON (a plain JSON answer).
fn payload_of(rpc: &Value) -> Result<Value> {
    answer_of("t", rpc)
}

/// [`tool_answer`] for `tool` of a message given as JSON (a plain JSON answer).
fn answer_of(tool: &str, rpc: &Value) -> Result<Value> {
    let response = Response {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: rpc.to_string().into_bytes(),
    };
    tool_answer(tool, &response, 1)
}

#[test]
fn get_status_names_the_database() {
    let named = super::database_named;
    assert_eq!(
        named("Graphiti MCP server is running and connected to falkordb database").as_deref(),
        Some("falkordb")
    );
    assert_eq!(
        named("Graphiti MCP server is running and connected to Neo4j database").as_deref(),
        Some("neo4j")
    );
    assert_eq!(named("Graphiti MCP server is running"), None);
    assert_eq!(
        named("running but database connection failed: connected to nothing"),
        None
    );
}

#[test]
fn tool_errors_are_errors() {
    let rpc = json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"error\": \"bad group\"}"}],"isError":false}});
    assert_eq!(payload_of(&rpc).unwrap_err(), error("t: bad group"));
    let rpc = json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Unknown tool: search_nodes"}],"isError":true}});
    let failed = payload_of(&rpc).unwrap_err();
    assert!(failed.message.contains("isError: Unknown tool"), "{failed}");
    assert_eq!(failed.cause, super::super::error::Cause::ToolError);
    let rpc = json!({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad params"}});
    assert_eq!(
        payload_of(&rpc).unwrap_err(),
        rejected("t: JSON-RPC error: bad params")
    );
}

#[test]
fn a_huge_tool_answer_is_read_within_its_budget() {
    // 300,000 small facts, twice (structured and as text), in one SSE event of megabytes.
    let facts: Vec<Value> = (0..300_000).map(|_| json!({"fact": "f"})).collect();
    let payload = json!({"facts": facts});
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": payload.to_string()}],
        "structuredContent": {"result": payload},
    }});
    let response = event_stream(&format!("event: message\ndata: {rpc}\n\n"));
    let read = tool_answer("search_memory_facts", &response, 1).unwrap();
    let kept = read["facts"].as_array().unwrap().len();
    assert!(
        kept > 1000 && kept <= crate::memory::graphiti::answer::MAX_ANSWER_VALUES / 2,
        "{kept} facts kept"
    );
}

#[test]
fn a_search_keeps_of_its_items_the_fields_recall_reads() {
    use crate::memory::recall::Recall;
    // A fact and an entity with every field Graphiti's MCP server sends.
    let fact = json!({"uuid": "f1", "group_id": "g", "source_node_uuid": "n1",
        "target_node_uuid": "n2", "created_at": "2026-01-01T00:00:00Z", "name": "WORKS_AT",
        "fact": "Dana Lee is CTO of Acme", "episodes": ["e1", "e2"], "expired_at": null,
        "valid_at": "2025-01-01T00:00:00Z", "invalid_at": "2026-02-01T00:00:00Z",
        "reference_time": "2025-01-01T00:00:00Z", "attributes": {"since": [2025, {"q": 1}]}});
    let node = json!({"uuid": "n1", "name": "Dana Lee", "labels": ["Entity", "Person"],
        "created_at": "2026-01-01T00:00:00+00:00", "summary": "CTO of Acme Robotics",
        "group_id": "g", "attributes": {"role": "CTO"}});
    let cases = [
        ("search_memory_facts", "facts", &fact, FACT_FIELDS),
        ("search_nodes", "nodes", &node, NODE_FIELDS),
    ];
    for (tool, list, item, fields) in cases {
        let payload = json!({"message": "ok", list: [item, item], "extra": {"kept": true}});
        let structured = json!({"id": 1, "result": {"structuredContent": {"result": payload}}});
        let text = json!({"id": 1, "result": {"content": [{"type": "text", "text": payload.to_string()}]}});
        for rpc in [structured, text] {
            let read = answer_of(tool, &rpc).unwrap();
            // Only the listed fields of each item; the payload's own fields stay whole.
            assert_eq!(read["extra"], json!({"kept": true}), "{tool}");
            for kept in read[list].as_array().unwrap() {
                let names: Vec<&String> = kept.as_object().unwrap().keys().collect();
                assert!(
                    names.iter().all(|n| fields.contains(&n.as_str())),
                    "{tool}: {names:?}"
                );
            }
            // What recall reads of the kept items is what it reads of the whole ones.
            let items = |v: &Value| v[list].as_array().unwrap().clone();
            let (kept, whole) = (items(&read), items(&payload));
            let recall = |items: Vec<Value>| match list {
                "facts" => Recall::from_lists(vec![], items),
                _ => Recall::from_lists(items, vec![]),
            };
            let (kept, whole) = (recall(kept), recall(whole));
            assert_eq!(kept, whole, "{tool}");
            assert!(!kept.facts.is_empty() || !kept.nodes.is_empty(), "{tool}");
        }
    }
    // Other tools' answers are kept whole.
    let episodes = json!({"episodes": [{"uuid": "e1", "content": "c", "created_at": "t"}]});
    let rpc = json!({"id": 1, "result": {"structuredContent": {"result": episodes}}});
    assert_eq!(answer_of("get_episodes", &rpc).unwrap(), episodes);
}

#[test]
fn the_payload_is_the_structured_content_else_the_text() {
    let both = json!({"id":1,"result":{"content":[{"type":"text","text":"{\"facts\":[\"from text\"]}"}],"structuredContent":{"result":{"facts":["structured"]}}}});
    assert_eq!(payload_of(&both).unwrap(), json!({"facts": ["structured"]}));
    let text_only =
        json!({"id":1,"result":{"content":[{"type":"text","text":"{\"facts\":[\"from text\"]}"}]}});
    assert_eq!(
        payload_of(&text_only).unwrap(),
        json!({"facts": ["from text"]})
    );
    let neither = json!({"id":1,"result":{"content":[]}});
    assert!(
        payload_of(&neither)
            .unwrap_err()
            .message
            .contains("neither structuredContent nor text")
    );
    let not_an_object = json!({"id":1,"result":"done"});
    let e = payload_of(&not_an_object).unwrap_err();
    assert!(
        e.message
            .contains("t: the answer is not the JSON-RPC answer expected (invalid type"),
        "{e:?}"
    );
    assert_eq!(
        e.kind,
        unknown("").kind,
        "answered with success: it may have acted"
    );
    let no_result = json!({"id":1});
    assert_eq!(
        payload_of(&no_result).unwrap_err(),
        unknown("t: the answer has no result")
    );
}

#[test]
fn sse_events_split_on_any_line_end() {
    let body = "event: message\r\ndata: {\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n\
                data: {\"id\":2}\r\rdata: {\"id\":3,\"result\":1}\n";
    let response = event_stream(body);
    assert_eq!(
        rpc_answer("search", &response, 1).unwrap(),
        json!({"id": 1, "result": {}})
    );
    assert_eq!(
        rpc_answer("search", &response, 2).unwrap(),
        json!({"id": 2})
    );
    assert_eq!(
        rpc_answer("search", &response, 3).unwrap(),
        json!({"id": 3, "result": 1})
    );
}

#[test]
fn the_answer_is_read_once_found_and_other_events_may_be_anything() {
    let body = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"x\":[1]}}\n\n\
                data: {\"id\":\"a string id\",\"result\":{}}\n\n\
                data: {\"id\":7,\n\
                data: \"result\":{\"ok\":true}}\n\n\
                data: <html>after the answer\n\n";
    let response = event_stream(body);
    assert_eq!(
        rpc_answer("search", &response, 7).unwrap(),
        json!({"id": 7, "result": {"ok": true}})
    );
    let e = rpc_answer("search", &response, 8).unwrap_err();
    assert!(
        e.message.contains("search: an SSE event is not JSON"),
        "{e:?}"
    );
}

#[test]
fn garbage_is_an_error_with_context() {
    let response = event_stream("<html>oops");
    assert!(
        rpc_answer("search", &response, 1)
            .unwrap_err()
            .message
            .contains("no JSON-RPC answer")
    );
    let response = Response {
        status: 200,
        headers: vec![],
        body: b"<html>oops".to_vec(),
    };
    assert!(
        rpc_answer("search", &response, 1)
            .unwrap_err()
            .message
            .contains("not JSON")
    );
}
