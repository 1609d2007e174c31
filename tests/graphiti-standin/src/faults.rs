//! Fault modes and fault scripts ("down for 2 s, then slow for 3 requests, then fine").

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A fault the server shows: until the next [`crate::StandIn::set_fault`], or for as long as a
/// step of a script lasts ([`crate::StandIn::set_faults`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Fault {
    #[default]
    None,
    /// The listening socket is closed (connections refused); leaving `Down` re-binds the same port.
    Down,
    /// Sleep this long, then handle the request (even if the client has given up by then).
    Slow(Duration),
    /// `500 Internal Server Error` on every request.
    ServerError,
    /// `200` with a body that is neither JSON nor SSE.
    Garbage,
    /// One-shot, like a server restart: every existing MCP session id becomes unknown (`404`);
    /// new sessions work. The next step (or `None`) follows at once.
    ExpireSessions,
    /// The MCP server during its start-up: sessions and `tools/list` work, every tool call answers
    /// an error payload with `isError: false` (`add_memory`: "Services not initialized",
    /// `get_status`: status "error", the others: "Graphiti service not initialized") and nothing is
    /// stored. REST answers as usual: the real `graph_service` does not listen at all before it is
    /// initialized (uvicorn runs the lifespan start-up first), which is `Fault::Down`.
    NotInitialized,
    /// The request is handled (an episode stored and queued), the answer comes this much later.
    AcceptThenHang(Duration),
    /// The request is handled (an episode stored and queued), then the connection is closed
    /// without a status line: the client cannot tell whether it was delivered.
    AcceptThenReset,
    /// The request is read and never answered (the connection stays open until the client
    /// closes it or the stand-in is dropped); nothing is stored.
    Hang,
    /// As behind a proxy that rewrites the Host header: the MCP endpoint answers `421 Invalid Host
    /// header` (the MCP SDK's check) to everything, while `GET /health` and REST answer as usual.
    WrongHost,
}

/// How long one step of a fault script lasts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Lasting {
    /// Until another fault is set (only the last step of a script may last forever).
    #[default]
    Forever,
    /// For this many HTTP requests to the Graphiti APIs, whatever they are (an MCP handshake is
    /// two; control requests do not count).
    Requests(u32),
    /// For this long after the step starts.
    For(Duration),
}

struct Step {
    fault: Fault,
    lasting: Lasting,
    requests_left: u32,
    until: Option<Instant>,
}

/// The steps still to run; the front one is in force, and after the last comes `Fault::None`.
#[derive(Default)]
pub(crate) struct FaultScript {
    steps: VecDeque<Step>,
}

impl FaultScript {
    /// Checks a script before anything runs; the first step starts now.
    pub(crate) fn new(steps: Vec<(Fault, Lasting)>, now: Instant) -> Result<FaultScript, String> {
        let count = steps.len();
        for (i, (fault, lasting)) in steps.iter().enumerate() {
            let step = format!("fault step {} ({})", i + 1, name(fault));
            match (fault, lasting) {
                (Fault::ExpireSessions, Lasting::Forever) => {}
                (Fault::ExpireSessions, _) => return Err(format!("{step} is one-shot: it takes no duration")),
                (Fault::Down, Lasting::Requests(_)) => {
                    return Err(format!(
                        "{step}: no request arrives while down, so it cannot last requests; give it a duration"
                    ));
                }
                (_, Lasting::Requests(0)) | (_, Lasting::For(Duration::ZERO)) => {
                    return Err(format!("{step} lasts nothing: give at least 1 request or 1 ms"));
                }
                (_, Lasting::Forever) if i + 1 < count => {
                    return Err(format!("{step} lasts forever, so the steps after it would never run"));
                }
                _ => {}
            }
        }
        let steps = steps
            .into_iter()
            .map(|(fault, lasting)| {
                let requests_left = if let Lasting::Requests(n) = lasting { n } else { 0 };
                Step { fault, lasting, requests_left, until: None }
            })
            .collect();
        let mut script = FaultScript { steps };
        script.start_front(now);
        Ok(script)
    }

    pub(crate) fn current(&self) -> Fault {
        self.steps.front().map_or(Fault::None, |s| s.fault.clone())
    }

    /// When the step in force ends by itself.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.steps.front().and_then(|s| s.until)
    }

    /// Drops the steps that are over. True if an `ExpireSessions` step was passed.
    pub(crate) fn advance(&mut self, now: Instant) -> bool {
        let mut expire = false;
        while let Some(front) = self.steps.front() {
            let over = match front.lasting {
                Lasting::Forever => front.fault == Fault::ExpireSessions,
                Lasting::Requests(_) => front.requests_left == 0,
                Lasting::For(_) => front.until.is_some_and(|t| t <= now),
            };
            if !over {
                break;
            }
            expire |= front.fault == Fault::ExpireSessions;
            // A timed step ends at its deadline, not when someone noticed: the script keeps time.
            let start = front.until.filter(|t| *t <= now).unwrap_or(now);
            self.steps.pop_front();
            self.start_front(start);
        }
        expire
    }

    /// The fault for one arriving request, counted against the step in force.
    pub(crate) fn take_request(&mut self) -> Fault {
        match self.steps.front_mut() {
            Some(step) => {
                step.requests_left = step.requests_left.saturating_sub(1);
                step.fault.clone()
            }
            None => Fault::None,
        }
    }

    fn start_front(&mut self, start: Instant) {
        if let Some(step) = self.steps.front_mut()
            && let Lasting::For(d) = step.lasting
        {
            step.until = Some(start + d);
        }
    }

    /// The steps still to run, in the control endpoint's JSON shape.
    pub(crate) fn to_json(&self, now: Instant) -> Value {
        let steps: Vec<Value> = self
            .steps
            .iter()
            .map(|s| {
                let mut v = json!({"fault": name(&s.fault)});
                if let Some(d) = param(&s.fault) {
                    v["ms"] = json!(d.as_millis() as u64);
                }
                match (s.lasting, s.until) {
                    (Lasting::Requests(_), _) => v["requests"] = json!(s.requests_left),
                    (Lasting::For(_), Some(until)) => {
                        v["for_ms"] = json!(until.saturating_duration_since(now).as_millis() as u64)
                    }
                    (Lasting::For(d), None) => v["for_ms"] = json!(d.as_millis() as u64),
                    (Lasting::Forever, _) => {}
                }
                v
            })
            .collect();
        json!({"fault": name(&self.current()), "steps": steps})
    }
}

/// The fault's name in the control endpoint and the `--fault` flag.
pub(crate) fn name(fault: &Fault) -> &'static str {
    match fault {
        Fault::None => "none",
        Fault::Down => "down",
        Fault::Slow(_) => "slow",
        Fault::ServerError => "server-error",
        Fault::Garbage => "garbage",
        Fault::ExpireSessions => "expire-sessions",
        Fault::NotInitialized => "not-initialized",
        Fault::AcceptThenHang(_) => "accept-then-hang",
        Fault::AcceptThenReset => "accept-then-reset",
        Fault::Hang => "hang",
        Fault::WrongHost => "wrong-host",
    }
}

fn param(fault: &Fault) -> Option<Duration> {
    match fault {
        Fault::Slow(d) | Fault::AcceptThenHang(d) => Some(*d),
        _ => None,
    }
}

/// A script from JSON: one step `{"fault": NAME, "ms": N, "for_ms": N | "requests": N}` or
/// `{"steps": [step, ...]}`. `ms` is the delay of `slow` and `accept-then-hang`.
pub(crate) fn parse_script(value: &Value) -> Result<Vec<(Fault, Lasting)>, String> {
    match value.get("steps") {
        Some(Value::Array(steps)) if !steps.is_empty() => {
            steps.iter().enumerate().map(|(i, s)| parse_step(s).map_err(|e| format!("steps[{i}]: {e}"))).collect()
        }
        Some(_) => Err("\"steps\" must be a non-empty list of steps".into()),
        None => Ok(vec![parse_step(value)?]),
    }
}

fn parse_step(value: &Value) -> Result<(Fault, Lasting), String> {
    let Some(step) = value.as_object() else {
        return Err(format!("a step is an object like {{\"fault\": \"down\", \"for_ms\": 2000}}, not {value}"));
    };
    for key in step.keys() {
        if !["fault", "ms", "for_ms", "requests"].contains(&key.as_str()) {
            return Err(format!("unknown key \"{key}\" (expected fault, ms, for_ms, requests)"));
        }
    }
    let millis = |key: &str| -> Result<Option<u64>, String> {
        match step.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| format!("\"{key}\" must be a whole number, not {v}")),
        }
    };
    let Some(fault_name) = step.get("fault").and_then(Value::as_str) else {
        return Err("\"fault\" (a fault name) is required".into());
    };
    let fault = fault_named(fault_name, millis("ms")?.map(Duration::from_millis))?;
    let lasting = match (millis("for_ms")?, millis("requests")?) {
        (Some(_), Some(_)) => return Err("give \"for_ms\" or \"requests\", not both".into()),
        (Some(ms), None) => Lasting::For(Duration::from_millis(ms)),
        (None, Some(n)) => Lasting::Requests(u32::try_from(n).map_err(|_| format!("\"requests\" is too large: {n}"))?),
        (None, None) => Lasting::Forever,
    };
    Ok((fault, lasting))
}

fn fault_named(text: &str, ms: Option<Duration>) -> Result<Fault, String> {
    let needs_ms = |make: fn(Duration) -> Fault| {
        ms.map(make).ok_or_else(|| format!("fault \"{text}\" needs \"ms\" (how long, in milliseconds)"))
    };
    let fault = match text {
        "slow" => return needs_ms(Fault::Slow),
        "accept-then-hang" => return needs_ms(Fault::AcceptThenHang),
        "none" => Fault::None,
        "down" => Fault::Down,
        "server-error" => Fault::ServerError,
        "garbage" => Fault::Garbage,
        "expire-sessions" => Fault::ExpireSessions,
        "not-initialized" => Fault::NotInitialized,
        "accept-then-reset" => Fault::AcceptThenReset,
        "hang" => Fault::Hang,
        "wrong-host" => Fault::WrongHost,
        other => {
            return Err(format!(
                "unknown fault \"{other}\" (expected none, down, slow, server-error, garbage, expire-sessions, \
                 not-initialized, accept-then-hang, accept-then-reset, hang, wrong-host)"
            ));
        }
    };
    match ms {
        Some(_) => Err(format!("fault \"{text}\" takes no \"ms\"")),
        None => Ok(fault),
    }
}

/// The `--fault` flag: JSON as for the control endpoint, or the shorthand `NAME` / `NAME:MS`
/// (e.g. `hang`, `slow:500`), which lasts forever.
pub fn parse_fault_flag(text: &str) -> Result<Vec<(Fault, Lasting)>, String> {
    if text.trim_start().starts_with('{') {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        return parse_script(&value);
    }
    let (fault_name, ms) = match text.split_once(':') {
        Some((n, ms)) => {
            let ms: u64 = ms.parse().map_err(|_| format!("\"{ms}\" is not a number of milliseconds"))?;
            (n, Some(Duration::from_millis(ms)))
        }
        None => (text, None),
    };
    Ok(vec![(fault_named(fault_name, ms)?, Lasting::Forever)])
}
