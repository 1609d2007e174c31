//! Webhook and channel triggers: the request is checked (path, bearer token, size, JSON, mapped
//! fields, dedupe key) before anything is queued, and refused with a status and a message naming
//! what was wrong. A 202 is answered only once the invocation is in the saved record.

use super::accept::{Accepted, Refused};
use super::{Runtime, payload};
use crate::platform::api::{ChannelMessage, RuntimeWork, WebhookAnswer, WebhookRequest};
use serde_json::{Value, json};

fn answer(status: u16, body: Value) -> WebhookAnswer {
    WebhookAnswer {
        status,
        body: body.to_string(),
        work: RuntimeWork::default(),
    }
}

fn refusal(r: &Refused) -> WebhookAnswer {
    answer(r.status, json!({ "error": r.message }))
}

/// Compares without an early exit, so the time taken does not reveal how much of a token matched.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    let mut diff = given.len() ^ expected.len();
    for (n, b) in expected.iter().enumerate() {
        diff |= usize::from(given.get(n).copied().unwrap_or(0) ^ b);
    }
    diff == 0
}

impl Runtime<'_> {
    fn check_request(&self, request: &WebhookRequest) -> Result<(String, String, Value), Refused> {
        let Some(token) = self
            .settings
            .webhook_token
            .as_deref()
            .filter(|t| !t.is_empty())
        else {
            return Err(Refused::new(
                503,
                "webhook triggers are off: no experts.webhook_token is configured",
            ));
        };
        // Header names and the authentication scheme are case-insensitive (RFC 9110).
        let given = request
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
            .and_then(|(_, value)| {
                let (scheme, credentials) = value.trim_start().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then_some(credentials)
            })
            .unwrap_or_default();
        if !same_secret(given.trim().as_bytes(), token.as_bytes()) {
            return Err(Refused::new(
                401,
                "missing or wrong bearer token (Authorization: Bearer <experts.webhook_token>)",
            ));
        }
        let path = request.path.trim_matches('/');
        let Some((expert, trigger)) = path
            .split_once('/')
            .filter(|(e, t)| !e.is_empty() && !t.is_empty() && !t.contains('/'))
        else {
            return Err(Refused::new(
                404,
                format!("the path {path:?} is not <expert>/<trigger>"),
            ));
        };
        if request.body.len() > self.settings.webhook_max_bytes {
            return Err(Refused::new(
                413,
                format!(
                    "the body has {} bytes; at most {} are accepted (experts.webhook_max_bytes)",
                    request.body.len(),
                    self.settings.webhook_max_bytes
                ),
            ));
        }
        // A byte order mark is not JSON, but some senders put one first.
        let body = request
            .body
            .strip_prefix(b"\xef\xbb\xbf")
            .unwrap_or(&request.body);
        let payload: Value = serde_json::from_slice(body)
            .map_err(|e| Refused::new(400, format!("the body is not JSON: {e}")))?;
        let package = self.package(expert).map_err(|e| Refused::new(404, e))?;
        let found = super::accept::trigger(package, trigger)?;
        if found.kind != "webhook" {
            return Err(Refused::new(
                404,
                format!(
                    "trigger {trigger} of {expert} is a {} trigger, not a webhook",
                    found.kind
                ),
            ));
        }
        Ok((expert.to_string(), trigger.to_string(), payload))
    }

    /// A webhook request (see [`WebhookAnswer`] for the statuses).
    pub fn webhook(&mut self, request: &WebhookRequest, now_ms: u64) -> WebhookAnswer {
        let (expert, trigger, payload) = match self.check_request(request) {
            Ok(checked) => checked,
            Err(refused) => return refusal(&refused),
        };
        let result = self.with_record(now_ms, |rt, runs, _| {
            let accepted = rt.accept(runs, &expert, &trigger, &payload, "webhook".into(), now_ms);
            let changed = accepted.is_ok();
            Ok((accepted, changed))
        });
        match result {
            Ok((
                Ok(Accepted::Queued {
                    invocation,
                    warning,
                }),
                notes,
            )) => {
                let mut a = answer(202, json!({ "invocation": invocation }));
                a.work.notes = notes;
                a.work
                    .notes
                    .extend(warning.map(|w| format!("experts: {expert}: {w}")));
                a.work.notes.push(format!(
                    "experts: {expert}/{trigger}: webhook accepted as {invocation}"
                ));
                a.work.tick_in_ms = Some(1);
                a
            }
            Ok((Ok(Accepted::Duplicate { key, first_ms }), _)) => answer(
                200,
                json!({ "duplicate": key, "first_seen": crate::platform::time::iso8601(first_ms) }),
            ),
            Ok((Err(refused), _)) => refusal(&refused),
            Err(why) => refusal(&Refused::new(503, why)),
        }
    }

    /// An inbound channel message: one invocation per channel trigger bound to its channel
    /// (`experts.channels`).
    pub fn channel_message(&mut self, message: &ChannelMessage, now_ms: u64) -> RuntimeWork {
        let mut work = RuntimeWork::default();
        let bound: Vec<(String, String)> = self
            .settings
            .channels
            .iter()
            .filter(|(_, channels)| {
                channels
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case(&message.channel_name))
            })
            .filter_map(|(key, _)| {
                key.split_once('/')
                    .map(|(e, t)| (e.to_string(), t.to_string()))
            })
            .collect();
        if bound.is_empty() {
            return work;
        }
        // Channel messages are stored as a webhook's body is, and bounded alike.
        if message.message_text.len() > self.settings.webhook_max_bytes {
            work.notes.push(format!(
                "experts: a {} message of {} bytes was not queued: at most {} are accepted \
                 (experts.webhook_max_bytes)",
                message.channel_name,
                message.message_text.len(),
                self.settings.webhook_max_bytes
            ));
            return work;
        }
        let payload = payload::channel_payload(message);
        let source = format!("channel {}", message.channel_name);
        let result = self.with_record(now_ms, |rt, runs, notes| {
            let mut changed = false;
            for (expert, trigger) in &bound {
                match rt.accept(runs, expert, trigger, &payload, source.clone(), now_ms) {
                    Ok(Accepted::Queued {
                        invocation,
                        warning,
                    }) => {
                        changed = true;
                        notes.extend(warning);
                        notes.push(format!(
                            "experts: {expert}/{trigger}: message accepted as {invocation}"
                        ));
                    }
                    Ok(Accepted::Duplicate { key, .. }) => notes.push(format!(
                        "experts: {expert}/{trigger}: duplicate message {key} skipped"
                    )),
                    Err(refused) => notes.push(format!(
                        "experts: {expert}/{trigger}: message refused: {}",
                        refused.message
                    )),
                }
            }
            Ok((changed, changed))
        });
        match result {
            Ok((changed, notes)) => {
                work.notes = notes;
                work.tick_in_ms = changed.then_some(1);
            }
            Err(why) => work
                .notes
                .push(format!("experts: a channel message was not queued: {why}")),
        }
        work
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn secrets_compare_whole() {
        use super::same_secret;
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"abcd", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"", b"abc"));
    }
}
