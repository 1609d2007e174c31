//! The Graphiti MCP server (v1.0.x on the Python MCP SDK 1.27): streamable HTTP at `/mcp`.
//! Check order follows the SDK: session lookup (404), Content-Type (400), Host (421),
//! Origin (403), Accept (406), JSON (400), session header (400), then the JSON-RPC method.

use crate::deletes::Api;
use crate::http::{Request, Response};
use crate::store::{check_group_id, new_uuid};
use crate::time::{iso_offset, iso_z, now_iso, parse_iso};
use crate::{Episode, EpisodeLookups, FALKORDB_DEFAULT_DATABASE, Fact, Node, Shared};
use serde_json::{Map, Value, json};
use std::time::Instant;

const SUPPORTED_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const LATEST_VERSION: &str = "2025-11-25";
const DEFAULT_GROUP: &str = "main";

pub(crate) fn handle(shared: &Shared, req: &Request) -> Response {
    let sid = req.header("mcp-session-id");
    if let Some(id) = sid
        && !shared.lock().sessions.contains(id)
    {
        return rpc_error(404, -32600, "Session not found");
    }
    if req.method == "POST"
        && !req.header("content-type").is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json"))
    {
        return Response::text(400, "Invalid Content-Type header");
    }
    if !allowed(req.header("host"), &["127.0.0.1:", "localhost:", "[::1]:"]) {
        return Response::text(421, "Invalid Host header");
    }
    if req
        .header("origin")
        .is_some_and(|o| !allowed(Some(o), &["http://127.0.0.1:", "http://localhost:", "http://[::1]:"]))
    {
        return Response::text(403, "Invalid Origin header");
    }
    // The SDK mints a session for any request without one and names it in error answers too;
    // unlike the SDK we only keep sessions that were initialized.
    let own = sid.map_or_else(|| new_uuid().replace('-', ""), String::from);
    let resp = match (req.method.as_str(), sid) {
        ("POST", _) => post(shared, req, sid, &own),
        (_, None) if req.method == "GET" || req.method == "DELETE" => missing_session(),
        ("DELETE", Some(id)) => {
            shared.lock().sessions.remove(id);
            Response::new(200, "application/json", String::new())
        }
        // No server-initiated stream: the spec lets a server answer GET with 405.
        _ => rpc_error(405, -32600, "Method Not Allowed").with_header("allow", "POST, DELETE"),
    };
    resp.with_header("mcp-session-id", &own)
}

fn allowed(value: Option<&str>, prefixes: &[&str]) -> bool {
    value.is_some_and(|v| prefixes.iter().any(|p| v.starts_with(p)))
}

fn rpc_error(status: u16, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": "server-error", "error": {"code": code, "message": message}});
    Response::json(status, &body)
}

fn missing_session() -> Response {
    rpc_error(400, -32600, "Bad Request: Missing session ID")
}

fn post(shared: &Shared, req: &Request, sid: Option<&str>, own: &str) -> Response {
    let accept: Vec<&str> = req.header("accept").unwrap_or("").split(',').map(str::trim).collect();
    let accepts = |t: &str| accept.iter().any(|a| a.starts_with(t));
    if !(accepts("application/json") && accepts("text/event-stream")) {
        let msg = "Not Acceptable: Client must accept both application/json and text/event-stream";
        return rpc_error(406, -32600, msg);
    }
    let msg: Value = match serde_json::from_str(&req.body) {
        Ok(v) => v,
        Err(e) => return rpc_error(400, -32700, &format!("Parse error: {e}")),
    };
    let method = msg.get("method").and_then(Value::as_str).map(String::from);
    let is_message = method.is_some() || msg.get("result").is_some() || msg.get("error").is_some();
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") || !is_message {
        return rpc_error(400, -32602, "Validation error: not a JSON-RPC 2.0 message");
    }
    let id = msg.get("id").cloned();
    let initialize = method.as_deref() == Some("initialize") && id.is_some();
    if !initialize {
        if sid.is_none() {
            return missing_session();
        }
        if let Some(v) = req.header("mcp-protocol-version")
            && !SUPPORTED_VERSIONS.contains(&v)
        {
            let supported = SUPPORTED_VERSIONS.join(", ");
            let msg = format!("Bad Request: Unsupported protocol version: {v}. Supported versions: {supported}");
            return rpc_error(400, -32600, &msg);
        }
    }
    let mut resp = match id {
        // Notifications and client responses: accepted, no body.
        None => Response::new(202, "application/json", String::new()),
        Some(id) => {
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            let (outcome, tool) = dispatch(shared, method.as_deref().unwrap_or(""), &params, own, req.starting);
            let answer = match outcome {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
            };
            // sse-starlette frames events with CRLF; clients must accept it as well as LF.
            let body = format!("event: message\r\ndata: {answer}\r\n\r\n");
            let mut r = Response::new(200, "text/event-stream", body);
            r.headers.push(("cache-control".into(), "no-cache, no-transform".into()));
            r.tool = tool;
            r
        }
    };
    resp.rpc_method = method;
    resp
}

/// Result or JSON-RPC error object of a request, plus the tool name of a `tools/call`.
/// `starting`: the server is still initializing Graphiti (`Fault::NotInitialized`).
fn dispatch(
    shared: &Shared,
    method: &str,
    params: &Value,
    own: &str,
    starting: bool,
) -> (Result<Value, Value>, Option<String>) {
    let legacy = shared.options.legacy_node_search;
    match method {
        "initialize" => {
            shared.lock().sessions.insert(own.to_string());
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = asked.filter(|v| SUPPORTED_VERSIONS.contains(v)).unwrap_or(LATEST_VERSION);
            let result = json!({
                "protocolVersion": version,
                "capabilities": {
                    "experimental": {},
                    "prompts": {"listChanged": false},
                    "resources": {"subscribe": false, "listChanged": false},
                    "tools": {"listChanged": false}
                },
                "serverInfo": {"name": "Graphiti Agent Memory", "version": "1.27.2"},
                "instructions": "Graphiti stand-in: a temporal knowledge graph memory (test double)."
            });
            (Ok(result), None)
        }
        "ping" => (Ok(json!({})), None),
        "tools/list" => (Ok(json!({"tools": tools(legacy).iter().map(describe).collect::<Vec<_>>()})), None),
        "tools/call" => match params.get("name").and_then(Value::as_str) {
            Some(name) => {
                let args = params.get("arguments").cloned().unwrap_or(json!({}));
                (Ok(call_tool(shared, name, &args, starting)), Some(name.to_string()))
            }
            None => (Err(json!({"code": -32602, "message": "Invalid request parameters"})), None),
        },
        _ => (Err(json!({"code": -32601, "message": "Method not found"})), None),
    }
}

/// Tool signatures, `name:type` (`!` = required). Types: `str`, `int`, `bool`, `str?` (or null),
/// `list?` (of strings, or null), `groups` (the v1 servers take one id, a list, or null).
const ADD_MEMORY: &str = "name:str! episode_body:str! group_id:str? source:str source_description:str uuid:str? \
    reference_time:str? excluded_entity_types:list? custom_extraction_instructions:str? \
    previous_episode_uuids:list? update_communities:bool saga:str? saga_previous_episode_uuid:str?";
const SEARCH_NODES: &str = "query:str! group_ids:groups max_nodes:int entity_types:list? center_node_uuid:str?";
const LEGACY_SEARCH_NODES: &str = "query:str! group_ids:list? max_nodes:int center_node_uuid:str? entity:str";
const SEARCH_FACTS: &str = "query:str! group_ids:groups max_facts:int center_node_uuid:str? edge_types:list? \
    valid_at_after:str? valid_at_before:str? invalid_at_after:str? invalid_at_before:str?";

fn tools(legacy: bool) -> [(&'static str, &'static str); 8] {
    let nodes = if legacy { ("search_memory_nodes", LEGACY_SEARCH_NODES) } else { ("search_nodes", SEARCH_NODES) };
    let episodes = ("get_episodes", "group_ids:groups max_episodes:int");
    [
        ("add_memory", ADD_MEMORY),
        nodes,
        ("search_memory_facts", SEARCH_FACTS),
        episodes,
        ("delete_episode", "uuid:str!"),
        ("delete_entity_edge", "uuid:str!"),
        ("clear_graph", "group_ids:list?"),
        ("get_status", ""),
    ]
}

/// `(name, type, required)` for each argument of a signature.
fn params(spec: &str) -> impl Iterator<Item = (&str, &str, bool)> {
    spec.split_whitespace()
        .filter_map(|p| p.split_once(':'))
        .map(|(n, t)| (n, t.trim_end_matches('!'), t.ends_with('!')))
}

fn accepts(ty: &str, v: &Value) -> bool {
    let strings = v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
    match ty {
        "str" => v.is_string(),
        "int" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "bool" => v.is_boolean(),
        "str?" => v.is_string() || v.is_null(),
        "list?" => strings || v.is_null(),
        _ => strings || v.is_string() || v.is_null(),
    }
}

/// The JSON schema pydantic generates for a type.
fn schema(ty: &str) -> Value {
    let s = json!({"type": "string"});
    let list = json!({"type": "array", "items": {"type": "string"}});
    let nul = json!({"type": "null"}); // not `null`: inside json! that is the JSON literal
    match ty {
        "str" => s,
        "int" => json!({"type": "integer"}),
        "bool" => json!({"type": "boolean"}),
        "str?" => json!({"anyOf": [s, nul], "default": null}),
        "list?" => json!({"anyOf": [list, nul], "default": null}),
        _ => json!({"anyOf": [s, list, nul], "default": null}),
    }
}

fn describe(&(name, spec): &(&str, &str)) -> Value {
    let props: Map<String, Value> = params(spec).map(|(n, t, _)| (n.to_string(), schema(t))).collect();
    let required: Vec<&str> = params(spec).filter(|p| p.2).map(|p| p.0).collect();
    let input =
        json!({"type": "object", "properties": props, "required": required, "title": format!("{name}Arguments")});
    json!({"name": name, "description": format!("Graphiti stand-in: {name}"), "inputSchema": input})
}

/// jsonschema's messages, as the SDK reports them (`Input validation error: …`).
fn check(spec: &str, args: &Value) -> Result<(), String> {
    let Some(args) = args.as_object() else {
        return Err(format!("{} is not of type 'object'", py(args)));
    };
    for (name, ty, required) in params(spec) {
        match args.get(name) {
            None if required => return Err(format!("'{name}' is a required property")),
            Some(v) if !accepts(ty, v) => {
                return Err(match schema(ty)["type"].as_str() {
                    Some(t) => format!("{} is not of type '{t}'", py(v)),
                    None => format!("{} is not valid under any of the given schemas", py(v)),
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// Roughly Python's `repr`, as jsonschema prints instances.
fn py(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => (if *b { "True" } else { "False" }).into(),
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

fn call_tool(shared: &Shared, name: &str, args: &Value, starting: bool) -> Value {
    let tool_error = |text: String| json!({"content": [{"type": "text", "text": text}], "isError": true});
    let Some((_, spec)) = tools(shared.options.legacy_node_search).into_iter().find(|t| t.0 == name) else {
        return tool_error(format!("Unknown tool: {name}"));
    };
    if let Err(e) = check(spec, args) {
        return tool_error(format!("Input validation error: {e}"));
    }
    let payload = match name {
        // The tools' own guard before the server's start-up has set its services.
        "add_memory" if starting => json!({"error": "Services not initialized"}),
        "get_status" if starting => json!({"status": "error", "message": "Graphiti service not initialized"}),
        _ if starting => json!({"error": "Graphiti service not initialized"}),
        "add_memory" => add_memory(shared, args),
        "search_nodes" | "search_memory_nodes" => search_nodes(shared, args),
        "search_memory_facts" => search_facts(shared, args),
        "get_episodes" => get_episodes(shared, args),
        "delete_episode" | "delete_entity_edge" | "clear_graph" => delete(shared, name, args),
        _ => {
            let backend = shared.lock().behaviour.episode_lookups.backend();
            json!({"status": "ok", "message": format!("Graphiti MCP server is running and connected to {backend} database")})
        }
    };
    // FastMCP wraps union-typed results as {"result": …}; get_status returns a plain TypedDict.
    let structured = if name == "get_status" { payload.clone() } else { json!({"result": payload}) };
    let text = serde_json::to_string_pretty(&payload).unwrap_or_default();
    json!({"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": false})
}

/// The delete tools' answers (see [`crate::deletes`]).
fn delete(shared: &Shared, tool: &str, args: &Value) -> Value {
    let uuid = arg(args, "uuid").unwrap_or_default();
    let mut st = shared.lock();
    let (done, failed) = match tool {
        "delete_episode" => (st.delete_episode(Api::Mcp, uuid), "episode"),
        "delete_entity_edge" => (st.delete_fact(Api::Mcp, uuid), "entity edge"),
        _ => {
            let groups = groups(args);
            st.delete_groups(&groups);
            return json!({"message": format!("Graph data cleared for group IDs: {}", groups.join(", "))});
        }
    };
    match done {
        Ok(()) => {
            let what = if tool == "delete_episode" { "Episode" } else { "Entity edge" };
            json!({"message": format!("{what} with UUID {uuid} deleted successfully")})
        }
        Err(e) => json!({"error": format!("Error deleting {failed}: {e}")}),
    }
}

fn arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

fn int_arg(args: &Value, name: &str, default: i64) -> i64 {
    args.get(name).and_then(Value::as_f64).map_or(default, |f| f as i64)
}

/// `group_ids` as the server sees it: a blank string counts as omitted, omitted means `main`.
fn groups(args: &Value) -> Vec<String> {
    match args.get("group_ids") {
        Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(String::from).collect(),
        _ => vec![DEFAULT_GROUP.to_string()],
    }
}

fn add_memory(shared: &Shared, args: &Value) -> Value {
    let name = arg(args, "name").unwrap_or_default();
    let group = arg(args, "group_id").filter(|g| !g.is_empty()).unwrap_or(DEFAULT_GROUP);
    let reference_time = arg(args, "reference_time");
    if let Some(t) = reference_time
        && parse_iso(t).is_none()
    {
        return json!({"error": format!("Invalid reference_time: Invalid isoformat string: '{t}'")});
    }
    let source = arg(args, "source").map(str::to_lowercase);
    let source = source.filter(|s| ["text", "json", "message"].contains(&s.as_str())).unwrap_or("text".into());
    let mut st = shared.lock();
    // The real server queues first and fails in the background (only logged): a bad group id,
    // or a `uuid`, which is looked up as an existing episode. Either way nothing is ingested.
    let uuid = arg(args, "uuid").filter(|u| !u.is_empty());
    if let Err(e) = check_group_id(group) {
        st.failed.push(format!("add_memory '{name}': {e}"));
    } else if let Some(u) = uuid {
        st.failed.push(format!("add_memory '{name}': episode uuid {u} not found"));
    } else {
        let now = now_iso();
        let episode = Episode {
            uuid: new_uuid(),
            name: name.to_string(),
            group_id: group.to_string(),
            content: arg(args, "episode_body").unwrap_or_default().to_string(),
            source,
            source_description: arg(args, "source_description").unwrap_or_default().to_string(),
            valid_at: reference_time.map_or_else(|| now.clone(), String::from),
            created_at: now,
            via: "mcp",
        };
        let (request, ingest) = (st.queue.next_request(), st.behaviour.ingest);
        st.queue.accept(episode, request, ingest, shared.options.ingest_delay);
    }
    json!({"message": format!("Episode '{name}' queued for processing in group '{group}'")})
}

/// Search over the effective groups: an explicit empty list searches every group.
fn search_scope(groups: &[String]) -> Option<&[String]> {
    (!groups.is_empty()).then_some(groups)
}

fn search_nodes(shared: &Shared, args: &Value) -> Value {
    let groups = groups(args);
    if let Some(e) = groups.iter().find_map(|g| check_group_id(g).err()) {
        return json!({"error": format!("Error searching nodes: {e}")});
    }
    let mut labels: Vec<String> = args
        .get("entity_types")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    labels.extend(arg(args, "entity").filter(|e| !e.is_empty()).map(String::from));
    let query = arg(args, "query").unwrap_or_default();
    let nodes = shared.lock().search_nodes(search_scope(&groups), query, int_arg(args, "max_nodes", 10), &labels);
    if nodes.is_empty() {
        return json!({"message": "No relevant nodes found", "nodes": []});
    }
    json!({"message": "Nodes retrieved successfully", "nodes": nodes.iter().map(node_json).collect::<Vec<_>>()})
}

fn node_json(n: &Node) -> Value {
    json!({
        "uuid": n.uuid, "name": n.name, "labels": n.labels, "created_at": iso_offset(&n.created_at),
        "summary": n.summary, "group_id": n.group_id, "attributes": n.attributes,
    })
}

fn search_facts(shared: &Shared, args: &Value) -> Value {
    let max = int_arg(args, "max_facts", 10);
    if max <= 0 {
        return json!({"error": "max_facts must be a positive integer"});
    }
    let groups = groups(args);
    if let Some(e) = groups.iter().find_map(|g| check_group_id(g).err()) {
        return json!({"error": format!("Error searching facts: {e}")});
    }
    let facts = shared.lock().search_facts(search_scope(&groups), arg(args, "query").unwrap_or_default(), max);
    if facts.is_empty() {
        return json!({"message": "No relevant facts found", "facts": []});
    }
    json!({"message": "Facts retrieved successfully", "facts": facts.iter().map(fact_json).collect::<Vec<_>>()})
}

/// `EntityEdge.model_dump(mode="json")`: every field, dates with `Z`.
fn fact_json(f: &Fact) -> Value {
    let z = |d: &Option<String>| d.as_deref().map(iso_z);
    json!({
        "uuid": f.uuid, "group_id": f.group_id, "source_node_uuid": f.source_node_uuid,
        "target_node_uuid": f.target_node_uuid, "created_at": iso_z(&f.created_at), "name": f.name,
        "fact": f.fact, "episodes": f.episodes, "expired_at": z(&f.expired_at), "valid_at": z(&f.valid_at),
        "invalid_at": z(&f.invalid_at), "reference_time": z(&f.reference_time), "attributes": f.attributes,
    })
}

fn get_episodes(shared: &Shared, args: &Value) -> Value {
    let groups = groups(args);
    let st = shared.lock();
    let now = Instant::now();
    // On FalkorDB the handler reads whichever graph the shared driver is bound to (#1651).
    let graph = match st.behaviour.episode_lookups {
        EpisodeLookups::Neo4j => None,
        EpisodeLookups::FalkorDb => Some(FALKORDB_DEFAULT_DATABASE),
        EpisodeLookups::FalkorDb029 | EpisodeLookups::FalkorDbLegacy => Some(st.queue.falkordb_bound_graph(now)),
    };
    let mut episodes: Vec<&Episode> = st
        .queue
        .visible(now)
        .filter(|e| groups.contains(&e.group_id) && graph.is_none_or(|g| g == e.group_id))
        .collect();
    // Like the driver's `ORDER BY uuid DESC`: not time order.
    episodes.sort_by(|a, b| b.uuid.cmp(&a.uuid));
    episodes.truncate(int_arg(args, "max_episodes", 10).max(0) as usize);
    if episodes.is_empty() {
        return json!({"message": "No episodes found", "episodes": []});
    }
    let list: Vec<Value> = episodes
        .iter()
        .map(|e| {
            json!({
                "uuid": e.uuid, "name": e.name, "content": e.content, "created_at": iso_offset(&e.created_at),
                "source": e.source, "source_description": e.source_description, "group_id": e.group_id,
            })
        })
        .collect();
    json!({"message": "Episodes retrieved successfully", "episodes": list})
}
