//! The approval store of one expert (spec §3 `policy`, loader design §5): the `confirm` calls waiting
//! for the user, the user's answers, and which approvals were used. What a request binds is a
//! [`Binding`]: the expert, the session, the tool as called, the operation and the whole canonical
//! arguments; it is keyed by the SHA-256 of all of them and shown by the digest's first 16 hex digits.
//!
//! `policy.approval.timeout` bounds both how long a request waits (then `on_timeout` applies) and how
//! long an approval stays usable. No clock is read: `now` is given, in epoch seconds. The decisions
//! themselves are in [`super::gate`].

use super::policy::OnTimeout;
use crate::platform::files::write_atomically;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

pub const APPROVALS_FILE: &str = "experts-approvals.json";
/// The store's format: 2 binds session, tool and full arguments. Files without it (format 1, which
/// bound only expert, operation and the arguments' first 2,000 characters) are dropped on load.
pub const STORE_FORMAT: u32 = 2;
/// Hex digits of the digest shown to the user as the request id (64 bits: no accidental collision).
pub const ID_HEX_DIGITS: usize = 16;
/// Finished requests are kept this long (for the history), then dropped.
const KEEP_FINISHED_SECS: u64 = 7 * 86_400;
/// Requests kept at most; the oldest finished ones go first, then the oldest pending.
const MAX_REQUESTS: usize = 500;
/// Domain separation of the digest, versioned with the store format.
const DIGEST_DOMAIN: &str = "graphiti-openclaw approval v2";

/// Exactly what an approval allows: one call of `tool` with `arguments`, as `operation`, in `session`
/// of `expert`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pub expert: String,
    /// OpenClaw's session key (the session id when there is no key).
    pub session: String,
    /// The tool as called (for a `tool_call`, the tool it names).
    pub tool: String,
    pub operation: String,
    /// The whole canonical arguments.
    pub arguments: String,
}

impl Binding {
    /// SHA-256, hex, over every field (as a JSON array, so no two bindings share an input).
    pub fn digest(&self) -> String {
        let fields = [
            DIGEST_DOMAIN,
            &self.expert,
            &self.session,
            &self.tool,
            &self.operation,
            &self.arguments,
        ];
        let input = serde_json::to_string(&fields).expect("strings serialise");
        Sha256::digest(input.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// The id shown for a digest.
pub fn display_id(digest: &str) -> String {
    digest.chars().take(ID_HEX_DIGITS).collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Approved,
    /// The approval was used by the call it was given for.
    Used,
    Rejected,
    /// Waited longer than the timeout (unanswered, or approved but not used).
    Expired,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Used => "used",
            Status::Rejected => "rejected",
            Status::Expired => "expired",
        }
    }
}

/// After an approval was used by a `tool_call`: the one target call OpenClaw then makes through its
/// hook again (its call id starts with `prefix`) may pass, until `until`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetCall {
    pub prefix: String,
    pub until: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The first [`ID_HEX_DIGITS`] of `digest`: what the user types.
    pub id: String,
    /// SHA-256 of the [`Binding`]: the store's key.
    pub digest: String,
    pub expert: String,
    pub session: String,
    /// The tool as called (for a `tool_call`, the tool it names).
    pub tool_name: String,
    /// `tool.operation`, or the tool name for a call that is not a declared operation.
    pub operation: String,
    /// The whole canonical arguments.
    pub arguments: String,
    pub requested_at: u64,
    pub status: Status,
    /// When the user approved or rejected, or when the approval was used.
    pub decided_at: Option<u64>,
    /// The package's `policy.approval.timeout` when the request was made.
    pub timeout_secs: Option<u64>,
    pub on_timeout: OnTimeout,
    /// A request past its timeout under `on_timeout: escalate`: still open, flagged for the user.
    #[serde(default)]
    pub escalated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_call: Option<TargetCall>,
}

impl ApprovalRequest {
    pub fn binding(&self) -> Binding {
        Binding {
            expert: self.expert.clone(),
            session: self.session.clone(),
            tool: self.tool_name.clone(),
            operation: self.operation.clone(),
            arguments: self.arguments.clone(),
        }
    }

    /// Whether this request is for exactly `binding`: every field compared in full, not only the
    /// digest.
    pub fn binds(&self, binding: &Binding) -> bool {
        self.binding() == *binding
    }
}

/// Every approval request, by digest; persisted as JSON in a state directory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalStore {
    pub requests: BTreeMap<String, ApprovalRequest>,
}

#[derive(Serialize, Deserialize)]
struct StoreFile {
    format: u32,
    requests: BTreeMap<String, ApprovalRequest>,
}

impl ApprovalStore {
    /// Reads the store from `state_dir`; a missing file is an empty store. A file of an older format
    /// loads as an empty store with a note saying how many requests were dropped (they bound too
    /// little to be honoured); the caller saves to replace it.
    pub fn load(state_dir: &Path) -> Result<(ApprovalStore, Option<String>), String> {
        let path = state_dir.join(APPROVALS_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((ApprovalStore::default(), None));
            }
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let value: serde_json::Value = serde_json::from_slice(text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if value.get("format").and_then(|f| f.as_u64()) != Some(u64::from(STORE_FORMAT)) {
            let dropped = value
                .get("requests")
                .and_then(|r| r.as_object())
                .map_or(0, |r| r.len());
            let note = format!(
                "{dropped} approval request(s) of an older graphiti-openclaw were dropped: they bound neither the \
                 session nor the whole arguments; the expert has to ask again"
            );
            return Ok((ApprovalStore::default(), Some(note)));
        }
        let file: StoreFile =
            serde_json::from_value(value).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok((
            ApprovalStore {
                requests: file.requests,
            },
            None,
        ))
    }

    pub fn save(&self, state_dir: &Path) -> Result<(), String> {
        let path = state_dir.join(APPROVALS_FILE);
        let file = StoreFile {
            format: STORE_FORMAT,
            requests: self.requests.clone(),
        };
        let json = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())? + "\n";
        std::fs::create_dir_all(state_dir).map_err(|e| format!("{}: {e}", state_dir.display()))?;
        write_atomically(&path, json.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Applies timeouts as of `now` and drops old finished requests.
    pub fn expire(&mut self, now: u64) {
        for request in self.requests.values_mut() {
            let Some(timeout) = request.timeout_secs else {
                continue;
            };
            let since = request.decided_at.unwrap_or(request.requested_at);
            match request.status {
                Status::Pending if now >= request.requested_at.saturating_add(timeout) => {
                    match request.on_timeout {
                        OnTimeout::Reject => {
                            request.status = Status::Expired;
                            request.decided_at = Some(request.requested_at.saturating_add(timeout));
                        }
                        OnTimeout::Escalate => request.escalated = true,
                    }
                }
                Status::Approved if now >= since.saturating_add(timeout) => {
                    request.status = Status::Expired;
                }
                _ => {}
            }
        }
        let finished =
            |r: &ApprovalRequest| !matches!(r.status, Status::Pending | Status::Approved);
        self.requests.retain(|_, r| {
            let since = r.decided_at.unwrap_or(r.requested_at);
            !(finished(r) && now >= since.saturating_add(KEEP_FINISHED_SECS))
        });
        if self.requests.len() > MAX_REQUESTS {
            let mut by_age: Vec<(bool, u64, String)> = self
                .requests
                .iter()
                .map(|(digest, r)| (!finished(r), r.requested_at, digest.clone()))
                .collect();
            crate::platform::sorting::sort(&mut by_age);
            for (_, _, digest) in by_age.into_iter().take(self.requests.len() - MAX_REQUESTS) {
                self.requests.remove(&digest);
            }
        }
    }

    /// Requests waiting for the user as of `now`, oldest first.
    pub fn pending(&mut self, now: u64) -> Vec<ApprovalRequest> {
        self.expire(now);
        let mut pending: Vec<ApprovalRequest> = self
            .requests
            .values()
            .filter(|r| r.status == Status::Pending)
            .cloned()
            .collect();
        crate::platform::sorting::sort_by(&mut pending, |a, b| {
            (a.requested_at, &a.id).cmp(&(b.requested_at, &b.id))
        });
        pending
    }

    /// The digest of the request the user means by `id`: its shown id or its whole digest. None when
    /// there is no such request; an error when several share the id.
    pub fn find(&self, id: &str) -> Result<Option<String>, String> {
        let id = id.trim().to_ascii_lowercase();
        let matches: Vec<&ApprovalRequest> = self
            .requests
            .values()
            .filter(|r| r.id == id || r.digest == id)
            .collect();
        match matches.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.digest.clone())),
            several => Err(format!(
                "{} requests share the id {id}; approve one by its whole digest: {}",
                several.len(),
                several
                    .iter()
                    .map(|r| r.digest.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// Records the user's approval of request `id`; returns what was approved.
    pub fn approve(&mut self, id: &str, now: u64) -> Result<ApprovalRequest, String> {
        self.decide(id, now, Status::Approved)
    }

    /// Records the user's rejection of request `id`.
    pub fn reject(&mut self, id: &str, now: u64) -> Result<ApprovalRequest, String> {
        self.decide(id, now, Status::Rejected)
    }

    fn decide(&mut self, id: &str, now: u64, to: Status) -> Result<ApprovalRequest, String> {
        self.expire(now);
        let digest = self
            .find(id)?
            .ok_or_else(|| format!("no approval request {:?}", id.trim()))?;
        let request = self.requests.get_mut(&digest).expect("found");
        let id = request.id.clone();
        match request.status {
            Status::Pending => {
                request.status = to;
                request.decided_at = Some(now);
                request.escalated = false;
                Ok(request.clone())
            }
            status if status == to => Ok(request.clone()),
            Status::Expired => Err(format!(
                "request {id} ({}) timed out; the expert has to ask again",
                request.operation
            )),
            Status::Used => Err(format!(
                "request {id} ({}) was already approved and used",
                request.operation
            )),
            Status::Approved | Status::Rejected => Err(format!(
                "request {id} ({}) was already {}",
                request.operation,
                request.status.word()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding() -> Binding {
        Binding {
            expert: "trip-planner-expert".into(),
            session: "agent:main:expert:trip-planner-expert".into(),
            tool: "hold_booking".into(),
            operation: "travel.hold_booking".into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn the_digest_is_pinned_and_covers_every_field() {
        // Pinned: digests are persisted and their prefix shown to users; they must not change
        // between builds. Computed independently: sha256 of the compact JSON array of the fields
        // (Python: hashlib.sha256(json.dumps(fields, separators=(",", ":")).encode())).
        let digest = binding().digest();
        assert_eq!(
            digest,
            "08656e1f44f81b07f4b367bea708fdbefe243ba0c76ab1076e3927abb7770e70"
        );
        assert_eq!(display_id(&digest), &digest[..16]);
        let variants = [
            Binding {
                expert: "other".into(),
                ..binding()
            },
            Binding {
                session: "agent:main:expert:other".into(),
                ..binding()
            },
            Binding {
                tool: "travel-booking-mcp__hold_booking".into(),
                ..binding()
            },
            Binding {
                operation: "travel.other".into(),
                ..binding()
            },
            Binding {
                arguments: "{\"a\":1}".into(),
                ..binding()
            },
            // Moving text between fields changes the digest too.
            Binding {
                expert: "trip-planner-expert\",\"agent:main".into(),
                session: ":expert:trip-planner-expert".into(),
                ..binding()
            },
        ];
        for other in variants {
            assert_ne!(other.digest(), digest, "{other:?}");
        }
    }
}
