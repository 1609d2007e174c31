//! The REST server (`graph_service`, FastAPI): pydantic-style `422`s, one fragile ingest worker.

use crate::deletes::Api;
use crate::http::{Request, Response, percent_decode};
use crate::ingest::FALKORDB_DEFAULT_DATABASE;
use crate::store::{check_group_id, new_uuid};
use crate::time::{iso_from_micros, iso_offset, iso_z, now_iso, parse_iso};
use crate::{Episode, EpisodeLookups, Fact, Shared};
use serde_json::{Map, Value, json};
use std::time::{Instant, SystemTime};

/// Request models, `name:type` with `!` = the key is required, `?` = null is allowed.
/// Note `role`: its value may be null but the key must be there.
const MESSAGE: &str =
    "content:str! uuid:str? name:str role_type:role! role:str?! timestamp:datetime source_description:str";
const ADD_MESSAGES: &str = "group_id:str! messages:messages!";
const SEARCH: &str = "group_ids:strs? query:str! max_facts:int";
const GET_MEMORY: &str = "group_id:str! max_facts:int center_node_uuid:str?! messages:messages!";

pub(crate) fn handle(shared: &Shared, req: &Request) -> Response {
    let (method, path) = (req.method.as_str(), req.path.as_str());
    let done = |message: &str| Response::json(200, &json!({"message": message, "success": true}));
    let tail = |prefix: &str| path.strip_prefix(prefix).filter(|t| !t.is_empty() && !t.contains('/'));
    match (method, path) {
        ("GET", "/healthcheck") => Response::json(200, &json!({"status": "healthy"})),
        ("POST", "/messages") => messages(shared, req).unwrap_or_else(|r| r),
        ("POST", "/search") => search(shared, req).unwrap_or_else(|r| r),
        ("POST", "/get-memory") => get_memory(shared, req).unwrap_or_else(|r| r),
        ("POST", "/clear") => {
            shared.lock().clear();
            done("Graph cleared")
        }
        ("GET", _) if tail("/episodes/").is_some() => {
            let group = percent_decode(tail("/episodes/").unwrap_or_default());
            episodes(shared, req, &group).unwrap_or_else(|r| r)
        }
        ("DELETE", _) if tail("/group/").is_some() => {
            shared.lock().delete_groups(&[percent_decode(tail("/group/").unwrap_or_default())]);
            done("Group deleted")
        }
        // A uuid not found raises in the server, unhandled: FastAPI's plain 500.
        ("DELETE", _) if tail("/episode/").is_some() => {
            match shared.lock().delete_episode(Api::Rest, &percent_decode(tail("/episode/").unwrap_or_default())) {
                Ok(()) => done("Episode deleted"),
                Err(_) => Response::text(500, "Internal Server Error"),
            }
        }
        ("DELETE", _) if tail("/entity-edge/").is_some() => {
            match shared.lock().delete_fact(Api::Rest, &percent_decode(tail("/entity-edge/").unwrap_or_default())) {
                Ok(()) => done("Entity Edge deleted"),
                Err(_) => Response::text(500, "Internal Server Error"),
            }
        }
        _ => Response::json(404, &json!({"detail": "Not Found"})),
    }
}

/// The JSON body checked against a model, or FastAPI's 422.
fn parse(req: &Request, model: &str) -> Result<Map<String, Value>, Response> {
    let error = |kind: &str, loc: Value, msg: &str, input: Value| {
        Response::json(422, &json!({"detail": [{"type": kind, "loc": loc, "msg": msg, "input": input}]}))
    };
    let body = match serde_json::from_str::<Value>(&req.body) {
        Ok(Value::Object(o)) => o,
        _ if req.body.trim().is_empty() => {
            return Err(error("missing", json!(["body"]), "Field required", Value::Null));
        }
        Ok(v) => {
            let msg = "Input should be a valid dictionary or object to extract fields from";
            return Err(error("model_attributes_type", json!(["body"]), msg, v));
        }
        Err(e) => return Err(error("json_invalid", json!(["body", e.column()]), "JSON decode error", json!({}))),
    };
    let mut errors = Vec::new();
    validate(&body, model, &[json!("body")], &mut errors);
    if errors.is_empty() { Ok(body) } else { Err(Response::json(422, &json!({"detail": errors}))) }
}

/// Appends pydantic v2 errors (type, loc, msg, input) for `obj` against `model`.
fn validate(obj: &Map<String, Value>, model: &str, loc: &[Value], errors: &mut Vec<Value>) {
    for (key, ty) in model.split_whitespace().filter_map(|p| p.split_once(':')) {
        let (required, nullable) = (ty.ends_with('!'), ty.contains('?'));
        let loc = [loc, &[json!(key)]].concat();
        let v = match obj.get(key) {
            None if required => {
                errors.push(json!({"type": "missing", "loc": loc, "msg": "Field required", "input": obj}));
                continue;
            }
            Some(Value::Null) if nullable => continue,
            None => continue,
            Some(v) => v,
        };
        let int_ok = v.as_i64().is_some() || v.as_str().is_some_and(|s| s.trim().parse::<i64>().is_ok());
        let roles = "'user', 'assistant' or 'system'";
        let (kind, msg) = match ty.trim_end_matches(['!', '?']) {
            "str" if !v.is_string() => ("string_type", "Input should be a valid string".to_string()),
            "int" if !int_ok => ("int_parsing", "Input should be a valid integer".to_string()),
            "strs" if !v.as_array().is_some_and(|a| a.iter().all(Value::is_string)) => {
                ("list_type", "Input should be a valid list".to_string())
            }
            "role" if !["user", "assistant", "system"].contains(&v.as_str().unwrap_or_default()) => {
                ("literal_error", format!("Input should be {roles}"))
            }
            "datetime" if v.is_string() && timestamp_iso(v).is_none() => {
                ("datetime_from_date_parsing", "Input should be a valid datetime or date".to_string())
            }
            "datetime" if !v.is_string() && timestamp_iso(v).is_none() => {
                ("datetime_type", "Input should be a valid datetime".to_string())
            }
            "messages" => match v.as_array() {
                None => ("list_type", "Input should be a valid list".to_string()),
                Some(list) => {
                    for (i, m) in list.iter().enumerate() {
                        let at = [&loc[..], &[json!(i)]].concat();
                        match m.as_object() {
                            Some(m) => validate(m, MESSAGE, &at, errors),
                            None => errors.push(json!({"type": "model_attributes_type", "loc": at, "input": m,
                                "msg": "Input should be a valid dictionary or object to extract fields from"})),
                        }
                    }
                    continue;
                }
            },
            _ => continue,
        };
        errors.push(json!({"type": kind, "loc": loc, "msg": msg, "input": v}));
    }
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn int(v: &Value, key: &str, default: i64) -> i64 {
    let n = v.get(key);
    n.and_then(Value::as_i64).or_else(|| n?.as_str()?.trim().parse().ok()).unwrap_or(default)
}

/// A message timestamp as pydantic reads it: an ISO-8601 string, or Unix seconds (milliseconds
/// above 2e10), rendered in UTC.
fn timestamp_iso(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => parse_iso(s).map(|_| s.clone()),
        Value::Number(n) => {
            let secs = n.as_f64()?;
            let micros = if secs.abs() > 2e10 { secs * 1e3 } else { secs * 1e6 };
            Some(iso_from_micros(micros as i64))
        }
        _ => None,
    }
}

fn messages(shared: &Shared, req: &Request) -> Result<Response, Response> {
    let body = Value::Object(parse(req, ADD_MESSAGES)?);
    let group = text(&body, "group_id");
    let mut st = shared.lock();
    let (request, ingest) = (st.queue.next_request(), st.behaviour.ingest);
    for m in body["messages"].as_array().into_iter().flatten() {
        if st.worker_dead {
            break; // the worker task is gone: the queue grows, nothing runs
        }
        // Any exception ends the worker's loop: a uuid is looked up as an existing episode (and
        // not found); a bad group id fails validation.
        let failure = match (m.get("uuid").filter(|u| !u.is_null()), check_group_id(group)) {
            (Some(u), _) => Some(format!("episode uuid {u} not found")),
            (None, result) => result.err(),
        };
        if let Some(why) = failure {
            st.worker_dead = true;
            st.failed.push(format!("POST /messages: {why}; the ingest worker died"));
            break;
        }
        let now = now_iso();
        let episode = Episode {
            uuid: new_uuid(),
            name: text(m, "name").to_string(),
            group_id: group.to_string(),
            content: format!("{}({}): {}", text(m, "role"), text(m, "role_type"), text(m, "content")),
            source: "message".into(),
            source_description: text(m, "source_description").to_string(),
            valid_at: m.get("timestamp").and_then(timestamp_iso).unwrap_or_else(|| now.clone()),
            created_at: now,
            via: "rest",
        };
        st.queue.accept(episode, request, ingest, shared.options.ingest_delay);
    }
    Ok(Response::json(202, &json!({"message": "Messages added to processing queue", "success": true})))
}

/// Facts for a search; a bad group id raises in graphiti-core, which FastAPI turns into a 500.
fn facts(shared: &Shared, groups: Option<Vec<String>>, query: &str, max: i64) -> Response {
    if groups.iter().flatten().any(|g| check_group_id(g).is_err()) {
        return Response::text(500, "Internal Server Error");
    }
    let groups = groups.filter(|g| !g.is_empty()); // an empty list filters nothing, like null
    let found = shared.lock().search_facts(groups.as_deref(), query, max);
    Response::json(200, &json!({"facts": found.iter().map(fact_json).collect::<Vec<_>>()}))
}

fn search(shared: &Shared, req: &Request) -> Result<Response, Response> {
    let body = Value::Object(parse(req, SEARCH)?);
    let groups =
        body["group_ids"].as_array().map(|a| a.iter().map(|g| g.as_str().unwrap_or_default().into()).collect());
    Ok(facts(shared, groups, text(&body, "query"), int(&body, "max_facts", 10)))
}

fn get_memory(shared: &Shared, req: &Request) -> Result<Response, Response> {
    let body = Value::Object(parse(req, GET_MEMORY)?);
    // The server's query puts role_type first: "{role_type}({role}): {content}\n" per message.
    let query: String = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| format!("{}({}): {}\n", text(m, "role_type"), text(m, "role"), text(m, "content")))
        .collect();
    Ok(facts(shared, Some(vec![text(&body, "group_id").into()]), &query, int(&body, "max_facts", 10)))
}

fn episodes(shared: &Shared, req: &Request, group: &str) -> Result<Response, Response> {
    let mut params = Map::new();
    if let Some(n) = req.query_param("last_n") {
        params.insert("last_n".into(), n.into());
    }
    let mut errors = Vec::new();
    validate(&params, "last_n:int!", &[json!("query")], &mut errors);
    if !errors.is_empty() {
        return Err(Response::json(422, &json!({"detail": errors})));
    }
    let last_n = int(&Value::Object(params), "last_n", 0).max(0) as usize;
    let st = shared.lock();
    // graphiti-core's retrieve_episodes: valid_at <= now, the newest last_n by valid_at, returned
    // oldest first. FalkorDB before graphiti-core 0.29.3 reads only its default graph.
    let graph = match st.behaviour.episode_lookups {
        EpisodeLookups::FalkorDbLegacy => FALKORDB_DEFAULT_DATABASE,
        EpisodeLookups::Neo4j | EpisodeLookups::FalkorDb | EpisodeLookups::FalkorDb029 => group,
    };
    let now = crate::time::micros_at(SystemTime::now());
    let mut mine: Vec<(i64, &Episode)> = st
        .queue
        .visible(Instant::now())
        .filter(|e| e.group_id == group && e.group_id == graph)
        .filter_map(|e| parse_iso(&e.valid_at).map(|at| (at, e)))
        .filter(|(at, _)| *at <= now)
        .collect();
    mine.sort_by_key(|(at, _)| *at); // stable: equal times keep the order of acceptance
    // Serialized by pydantic's JSON mode, so dates end in Z.
    let list: Vec<Value> = mine[mine.len().saturating_sub(last_n)..]
        .iter()
        .map(|(_, e)| {
            json!({
                "uuid": e.uuid, "name": e.name, "group_id": e.group_id, "labels": [],
                "created_at": iso_z(&e.created_at), "source": e.source, "source_description": e.source_description,
                "content": e.content, "valid_at": iso_z(&e.valid_at), "entity_edges": [], "episode_metadata": null,
            })
        })
        .collect();
    Ok(Response::json(200, &Value::Array(list)))
}

/// `FactResult`: a subset of the edge, dates rendered `+00:00`.
fn fact_json(f: &Fact) -> Value {
    let off = |d: &Option<String>| d.as_deref().map(iso_offset);
    json!({
        "uuid": f.uuid, "name": f.name, "fact": f.fact, "valid_at": off(&f.valid_at),
        "invalid_at": off(&f.invalid_at), "created_at": iso_offset(&f.created_at),
        "expired_at": off(&f.expired_at), "source_node_uuid": f.source_node_uuid,
        "target_node_uuid": f.target_node_uuid, "episodes": f.episodes,
    })
}
