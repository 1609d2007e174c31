//! The Graphiti client: the MCP server (streamable HTTP, the default) or the REST `graph_service`,
//! chosen by configuration. Every answer is parsed defensively: a malformed one is an error with
//! context, never a panic.

pub mod http;
mod mcp;
mod rest;

use http::{Deadline, Http};
use serde::Deserialize;
use serde_json::Value;

pub use mcp::McpClient;
pub use rest::RestClient;

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Mcp,
    Rest,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Mcp => "mcp",
            Transport::Rest => "rest",
        }
    }
}

/// What went wrong talking to Graphiti, in words an operator can act on.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphitiError {
    pub message: String,
    pub kind: ErrorKind,
}

/// What a failure means for the request that carried it, which decides what delivery does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request failed and was not acted on (not sent, or answered with an error): try again later.
    Failed,
    /// Graphiti refused this request itself (bad input): sending it again cannot succeed.
    Rejected,
    /// The request may have been received and acted on (no answer in time, the connection broke
    /// after sending, an answer that cannot be read): sending it again may store it twice.
    Unknown,
}

impl GraphitiError {
    pub fn permanent(&self) -> bool {
        self.kind == ErrorKind::Rejected
    }

    /// The same failure of a step before the request that matters (e.g. the MCP handshake before a
    /// tool call): that request was not sent.
    pub fn before_sending(self) -> GraphitiError {
        GraphitiError {
            kind: match self.kind {
                ErrorKind::Unknown => ErrorKind::Failed,
                kind => kind,
            },
            ..self
        }
    }
}

impl std::fmt::Display for GraphitiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Result<T> = std::result::Result<T, GraphitiError>;

/// A failure that may pass (network, server trouble, timeouts). Messages quote the server's own text,
/// so they are folded into one printable line before they reach a log, a note or a terminal.
pub fn error(message: impl Into<String>) -> GraphitiError {
    failure(ErrorKind::Failed, message)
}

/// Graphiti rejected the request as such.
pub fn rejected(message: impl Into<String>) -> GraphitiError {
    failure(ErrorKind::Rejected, message)
}

/// The request may have been acted on; its outcome is unknown.
pub fn unknown(message: impl Into<String>) -> GraphitiError {
    failure(ErrorKind::Unknown, message)
}

fn failure(kind: ErrorKind, message: impl Into<String>) -> GraphitiError {
    GraphitiError {
        message: crate::text::one_line(&message.into()),
        kind,
    }
}

/// A failed HTTP exchange: whether the request may have reached Graphiti decides its kind.
pub fn http_failure(what: String, e: &http::HttpError) -> GraphitiError {
    let message = format!("{what}: {e}");
    match e {
        http::HttpError::Timeout | http::HttpError::Transport(_) => unknown(message),
        http::HttpError::Refused(_)
        | http::HttpError::Connect(_)
        | http::HttpError::InvalidRequest(_) => error(message),
    }
}

/// A turn to store, as both APIs need it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, Deserialize)]
pub struct Episode {
    /// Stable for one turn, so a replay can be recognised.
    pub name: String,
    pub group_id: String,
    pub user: String,
    pub assistant: String,
    /// Who spoke (the sender's id or name), when known.
    pub user_name: Option<String>,
    /// ISO-8601, when the turn ended.
    pub reference_time: String,
    pub source_description: String,
    #[serde(default)]
    pub kind: EpisodeKind,
}

/// A conversation turn (user and assistant), or a note: text given to remember (`user` holds it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EpisodeKind {
    #[default]
    Turn,
    Note,
}

impl Episode {
    /// The episode body for MCP's `add_memory` (REST stores each message itself).
    pub fn body(&self) -> String {
        match self.kind {
            EpisodeKind::Turn => format!("user: {}\nassistant: {}", self.user, self.assistant),
            EpisodeKind::Note => self.user.clone(),
        }
    }
}

/// Search results as Graphiti returns them (raw JSON objects), for recall to interpret.
#[derive(Clone, Debug, Default)]
pub struct Found {
    pub nodes: Vec<Value>,
    pub facts: Vec<Value>,
}

pub enum Client {
    Mcp(McpClient),
    Rest(RestClient),
}

impl Client {
    pub fn new(transport: Transport, url: &str) -> Client {
        match transport {
            Transport::Mcp => Client::Mcp(McpClient::new(url)),
            Transport::Rest => Client::Rest(RestClient::new(url)),
        }
    }

    pub fn search_facts(
        &mut self,
        http: &mut dyn Http,
        query: &str,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        match self {
            Client::Mcp(c) => c.search_facts(http, query, group, max, deadline),
            Client::Rest(c) => c.search_facts(http, query, group, max, deadline),
        }
    }

    /// Entity nodes; the REST server has no node search, so it finds none.
    pub fn search_nodes(
        &mut self,
        http: &mut dyn Http,
        query: &str,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        match self {
            Client::Mcp(c) => c.search_nodes(http, query, group, max, deadline),
            Client::Rest(_) => Ok(vec![]),
        }
    }

    pub fn add_episode(
        &mut self,
        http: &mut dyn Http,
        episode: &Episode,
        deadline: Deadline,
    ) -> Result<()> {
        match self {
            Client::Mcp(c) => c.add_episode(http, episode, deadline),
            Client::Rest(c) => c.add_episode(http, episode, deadline),
        }
    }

    /// The names of the group's most recent stored episodes, or None when this server cannot list
    /// them. A just-accepted episode is listed only once ingested.
    pub fn recent_episode_names(
        &mut self,
        http: &mut dyn Http,
        group: &str,
        deadline: Deadline,
    ) -> Result<Option<Vec<String>>> {
        match self {
            Client::Mcp(c) => c.recent_episode_names(http, group, RECENT_EPISODES, deadline),
            Client::Rest(c) => c.recent_episode_names(http, group, RECENT_EPISODES, deadline),
        }
    }

    pub fn health(&mut self, http: &mut dyn Http, deadline: Deadline) -> Result<String> {
        match self {
            Client::Mcp(c) => c.health(http, deadline),
            Client::Rest(c) => c.health(http, deadline),
        }
    }
}

/// Items taken from one answer's list: more than recall ever shows or listing needs.
const MAX_LISTED: usize = 1000;

/// Recent episodes asked for when checking whether a send arrived.
const RECENT_EPISODES: usize = 100;

/// Whether episode `name` is among `names` as either API stores it (REST stores each message of a
/// turn as its own episode, `<episode>:<role>`).
pub fn lists(names: &[String], name: &str) -> bool {
    names.iter().any(|n| {
        n == name
            || n.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(':'))
    })
}

/// The `name` of each episode object.
fn names_of(episodes: &[Value]) -> Vec<String> {
    episodes
        .iter()
        .filter_map(|e| e.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Values (numbers, strings, list items, object fields) kept from one answer at most. Past it, the
/// rest of every list and object is skipped without being built: a huge but legal answer (700,000
/// small facts) costs its bytes, not hundreds of megabytes of parsed values, and never takes the
/// turn's routing down with it. Recall shows a handful of facts; this is far more than it reads.
pub const MAX_ANSWER_VALUES: usize = 50_000;

/// Parses JSON within [`MAX_ANSWER_VALUES`].
pub fn parse_bounded(json: &[u8]) -> serde_json::Result<Value> {
    use serde::de::DeserializeSeed;
    let left = std::cell::Cell::new(MAX_ANSWER_VALUES);
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    let value = bounded::Budget(&left).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

mod bounded {
    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Number, Value};
    use std::cell::Cell;
    use std::fmt;

    /// Builds a `Value` while values are left in the budget; skips the rest.
    #[derive(Clone, Copy)]
    pub struct Budget<'a>(pub &'a Cell<usize>);

    impl Budget<'_> {
        fn take(self) {
            self.0.set(self.0.get().saturating_sub(1));
        }
    }

    impl<'de> DeserializeSeed<'de> for Budget<'_> {
        type Value = Value;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Budget<'_> {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            self.take();
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            self.take();
            Ok(Value::from(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            self.take();
            Ok(Value::from(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            self.take();
            Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            self.take();
            Ok(Value::String(v.to_string()))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            self.take();
            Ok(Value::String(v))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            self.take();
            Ok(Value::Null)
        }
        fn visit_none<E>(self) -> Result<Value, E> {
            self.take();
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            self.take();
            let mut items = Vec::new();
            while self.0.get() > 0 {
                match seq.next_element_seed(self)? {
                    Some(item) => items.push(item),
                    None => return Ok(Value::Array(items)),
                }
            }
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Value::Array(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            self.take();
            let mut fields = Map::new();
            while self.0.get() > 0 {
                let Some(key) = map.next_key::<String>()? else {
                    return Ok(Value::Object(fields));
                };
                let value = map.next_value_seed(self)?;
                fields.insert(key, value);
            }
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Value::Object(fields))
        }
    }
}

/// Parses a JSON body (within [`MAX_ANSWER_VALUES`]), naming the operation when it is not JSON.
fn json_body(what: &str, body: &[u8]) -> Result<Value> {
    parse_bounded(body).map_err(|e| {
        let start: String = String::from_utf8_lossy(body).chars().take(80).collect();
        error(format!("{what}: the answer is not JSON ({e}): {start:?}"))
    })
}

/// The list under `key` of a JSON object, or an error naming what was there instead.
fn list_of(what: &str, value: &Value, key: &str) -> Result<Vec<Value>> {
    match value.get(key) {
        Some(Value::Array(items)) => Ok(items
            .iter()
            .filter(|i| i.is_object())
            .take(MAX_LISTED)
            .cloned()
            .collect()),
        Some(Value::Null) | None => Err(error(format!("{what}: the answer has no \"{key}\" list"))),
        Some(other) => Err(error(format!(
            "{what}: \"{key}\" is not a list but {other}"
        ))),
    }
}

fn timeout_of(what: &str, deadline: Deadline) -> Result<std::time::Duration> {
    deadline
        .remaining()
        .ok_or_else(|| error(format!("{what}: no time left in the budget")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_huge_answer_is_parsed_within_its_budget() {
        let mut body = String::from("{\"message\":\"ok\",\"facts\":[");
        body.push_str(&vec!["{\"fact\":\"f\",\"n\":1}"; 100_000].join(","));
        body.push_str("],\"after\":true}");
        let value = super::parse_bounded(body.as_bytes()).unwrap();
        let facts = value["facts"].as_array().unwrap();
        assert!(
            facts.len() < super::MAX_ANSWER_VALUES && facts.len() > 1000,
            "{}",
            facts.len()
        );
        assert_eq!(value["message"], "ok");
        // Malformed JSON is still an error, even past the budget.
        assert!(super::parse_bounded(&body.as_bytes()[..body.len() - 3]).is_err());
        assert_eq!(
            super::parse_bounded(br#"{"a":[1,2,{"b":null}]}"#).unwrap(),
            serde_json::json!({"a":[1,2,{"b":null}]})
        );
    }

    #[test]
    fn a_servers_text_in_an_error_is_one_printable_line() {
        let e = super::error("POST /messages: HTTP 500: boom\r\n\u{1b}[2Jlast error: none");
        assert_eq!(
            e.message,
            "POST /messages: HTTP 500: boom \\u{1b}[2Jlast error: none"
        );
        assert!(super::rejected("a\nb").message == "a b");
    }
}
