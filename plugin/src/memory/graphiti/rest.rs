//! Graphiti's REST server (`graph_service`): `/search`, `/messages`, `/healthcheck`.

use super::answer::{FACT_FIELDS, json_body, json_body_keeping, list_of, timeout_of};
use super::episode::{Episode, EpisodeKind};
use super::error::{Cause, Result, error, http_failure, rejected};
use super::http::{Deadline, Http, Request, Response};
use super::server::Server;
use crate::memory::redaction::Query;
use serde_json::{Value, json};

pub struct RestClient {
    base: String,
}

impl RestClient {
    pub fn new(url: &str) -> RestClient {
        RestClient {
            base: url.trim_end_matches('/').to_string(),
        }
    }

    fn send(
        &self,
        http: &mut dyn Http,
        method: &'static str,
        path: &str,
        body: Option<Value>,
        deadline: Deadline,
    ) -> Result<Response> {
        let what = format!("{method} {path}");
        let mut headers = vec![("accept".to_string(), "application/json".to_string())];
        if body.is_some() {
            headers.push(("content-type".to_string(), "application/json".to_string()));
        }
        let request = Request {
            method,
            url: format!("{}{path}", self.base),
            headers,
            body: body
                .map(|b| serde_json::to_vec(&b).unwrap_or_default())
                .unwrap_or_default(),
            timeout: timeout_of(&what, deadline)?,
        };
        http.send(request)
            .map_err(|e| http_failure(format!("{what} ({})", self.base), &e))
    }
}

impl Server for RestClient {
    fn search_facts(
        &mut self,
        http: &mut dyn Http,
        query: &Query,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        let body = json!({"group_ids": [group], "query": query.as_str(), "max_facts": max});
        let response = self.send(http, "POST", "/search", Some(body), deadline)?;
        expect(&response, "POST /search", &[200])?;
        let found = json_body_keeping("POST /search", &response.body, Some(FACT_FIELDS))?;
        list_of("POST /search", found, "facts")
    }

    /// The user and assistant messages of a turn. `uuid` is never set: the server would look it up as
    /// an existing episode, fail, and stop ingesting altogether.
    fn add_episode(
        &mut self,
        http: &mut dyn Http,
        episode: &Episode,
        deadline: Deadline,
    ) -> Result<()> {
        let message = |role_type: &str, role: &str, content: &str| {
            json!({
                "content": content,
                "role_type": role_type,
                "role": role,
                "name": format!("{}:{role_type}", episode.name),
                "timestamp": episode.reference_time,
                "source_description": episode.source_description,
            })
        };
        let speaker = episode.speaker();
        let user = speaker.as_str();
        let body = json!({
            "group_id": episode.group_id,
            "messages": match episode.kind {
                EpisodeKind::Turn => vec![message("user", user, &episode.user), message("assistant", "assistant", &episode.assistant)],
                EpisodeKind::Note => vec![message("user", user, &episode.user)],
            },
        });
        let response = self.send(http, "POST", "/messages", Some(body), deadline)?;
        expect(&response, "POST /messages", &[200, 202])
    }

    /// The names of the group's most recent stored episodes (`GET /episodes/{group}`). The server
    /// stores each message of a turn as its own episode, named `<episode>:<role>`.
    fn recent_episodes(
        &mut self,
        http: &mut dyn Http,
        group: &str,
        max: usize,
        deadline: Deadline,
    ) -> Result<Option<Vec<Value>>> {
        let path = format!("/episodes/{group}?last_n={max}");
        let what = format!("GET /episodes/{group}");
        let response = self.send(http, "GET", &path, None, deadline)?;
        if response.status == 404 {
            return Ok(None);
        }
        expect(&response, &what, &[200])?;
        match json_body(&what, &response.body)? {
            Value::Array(episodes) => Ok(Some(episodes)),
            other => Err(error(format!("{what}: not a list but {other}"))),
        }
    }

    /// Deletes one item by uuid: `DELETE /entity-edge/{uuid}` (`fact`) or `/episode/{uuid}`
    /// (the episode alone: its facts stay). The uuid must already be checked as path-safe.
    fn delete_item(
        &mut self,
        http: &mut dyn Http,
        item: super::item::Item,
        uuid: &str,
        deadline: Deadline,
    ) -> Result<()> {
        let path = match item {
            super::item::Item::Fact => format!("/entity-edge/{uuid}"),
            super::item::Item::Episode => format!("/episode/{uuid}"),
        };
        let response = self.send(http, "DELETE", &path, None, deadline)?;
        expect(&response, &format!("DELETE {path}"), &[200])
    }

    /// `DELETE /group/{group}`: every episode, fact and entity of the group (on FalkorDB the
    /// server answers success without deleting).
    fn delete_group(&mut self, http: &mut dyn Http, group: &str, deadline: Deadline) -> Result<()> {
        let path = format!("/group/{group}");
        let response = self.send(http, "DELETE", &path, None, deadline)?;
        expect(&response, &format!("DELETE {path}"), &[200])
    }

    fn health(&mut self, http: &mut dyn Http, deadline: Deadline) -> Result<String> {
        let response = self.send(http, "GET", "/healthcheck", None, deadline)?;
        expect(&response, "GET /healthcheck", &[200])?;
        let status = json_body("GET /healthcheck", &response.body)?;
        Ok(status
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string())
    }
}

fn expect(response: &Response, what: &str, ok: &[u16]) -> Result<()> {
    if ok.contains(&response.status) {
        return Ok(());
    }
    let start: String = response.text().chars().take(160).collect();
    let message = format!("{what}: HTTP {}: {start}", response.status);
    // 400/422: the request itself is wrong; 404, 408, 429 and 5xx may pass.
    let failed = if matches!(response.status, 400 | 413 | 422) {
        rejected(message)
    } else {
        error(message)
    };
    Err(failed.because(Cause::Status(response.status)))
}
