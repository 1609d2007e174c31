//! `/__standin/...`: scripting faults and counting episodes from another process (shell or Node
//! tests driving the binary). Never subject to faults or latency; not in the request log.

use crate::faults::{self, FaultScript};
use crate::http::{Request, Response};
use crate::time::iso_at;
use crate::{Fault, Lasting, Shared, ingest};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

const PREFIX: &str = "/__standin/";
const ENDPOINTS: &str =
    "GET fault, POST fault, GET episodes, GET sends, GET requests, POST delivery, GET status";

/// The answer to a control request, or `None` when the path is not under `/__standin/`.
/// `on_control_port`: the request came through `StandIn::listen_control`'s port.
pub(crate) fn handle(shared: &Arc<Shared>, req: &Request, on_control_port: bool) -> Option<Response> {
    let endpoint = req.path.strip_prefix(PREFIX)?;
    let now = Instant::now();
    Some(match (req.method.as_str(), endpoint) {
        ("GET", "fault") => {
            let _ = shared.sync_listening();
            Response::json(200, &shared.lock().faults.to_json(now))
        }
        ("POST", "fault") => set_fault(shared, req, on_control_port).unwrap_or_else(|e| error(400, &e)),
        ("GET", "episodes") => {
            let st = shared.lock();
            Response::json(200, &st.queue.visible(now).map(episode_json).collect::<Value>())
        }
        ("GET", "sends") => Response::json(200, &shared.lock().queue.sends().iter().map(send_json).collect::<Value>()),
        ("GET", "requests") => Response::json(
            200,
            &shared
                .lock()
                .requests
                .iter()
                .map(|r| json!({"method": r.method, "path": r.path, "tool": r.tool, "body": r.body}))
                .collect::<Value>(),
        ),
        ("POST", "delivery") => delivery(shared, req).unwrap_or_else(|e| error(400, &e)),
        ("GET", "status") => {
            let _ = shared.sync_listening();
            let st = shared.lock();
            Response::json(
                200,
                &json!({
                    "fault": faults::name(&st.faults.current()),
                    "queued": st.queue.queued(now),
                    "episodes": st.queue.visible(now).count(),
                    "sends": st.queue.sends().len(),
                    "requests": st.requests.len(),
                }),
            )
        }
        _ => error(404, &format!("no control endpoint {} {}; there are: {ENDPOINTS}", req.method, req.path)),
    })
}

fn error(status: u16, message: &str) -> Response {
    Response::json(status, &json!({"error": message}))
}

fn body(req: &Request) -> Result<Value, String> {
    serde_json::from_str(&req.body).map_err(|e| format!("the body is not JSON: {e}"))
}

fn set_fault(shared: &Arc<Shared>, req: &Request, on_control_port: bool) -> Result<Response, String> {
    let steps = faults::parse_script(&body(req)?)?;
    // Checked as a script first, so a bad script is reported as such.
    FaultScript::new(steps.clone(), Instant::now())?;
    if !on_control_port && steps.last() == Some(&(Fault::Down, Lasting::Forever)) {
        return Err("\"down\" for good through the port it closes: nothing could bring it back; \
                    give it \"for_ms\", or send it to the control port (--control-port)"
            .into());
    }
    shared.set_faults(steps)?;
    Ok(Response::json(200, &shared.lock().faults.to_json(Instant::now())))
}

fn delivery(shared: &Shared, req: &Request) -> Result<Response, String> {
    let body = body(req)?;
    let expected: Vec<&str> = match body.get("expected").and_then(Value::as_array) {
        Some(names) => names
            .iter()
            .map(|n| n.as_str().ok_or_else(|| format!("\"expected\" holds episode names (strings), not {n}")))
            .collect::<Result<_, _>>()?,
        None => return Err("the body needs \"expected\": a list of episode names".into()),
    };
    let d = ingest::count_delivery(shared.lock().queue.sends(), &expected);
    let duplicated: serde_json::Map<String, Value> = d.duplicated.iter().map(|(n, c)| (n.clone(), json!(c))).collect();
    Ok(Response::json(
        200,
        &json!({"exact": d.is_exact(), "once": d.once, "lost": d.lost, "duplicated": duplicated, "unexpected": d.unexpected}),
    ))
}

fn episode_json(e: &crate::Episode) -> Value {
    json!({
        "uuid": e.uuid, "name": e.name, "group_id": e.group_id, "content": e.content, "source": e.source,
        "source_description": e.source_description, "created_at": e.created_at, "valid_at": e.valid_at, "via": e.via,
    })
}

fn send_json(s: &crate::AcceptedSend) -> Value {
    json!({
        "name": s.name, "group_id": s.group_id, "via": s.via, "at": iso_at(s.at), "request": s.request,
        "episode_uuid": s.episode_uuid,
    })
}
