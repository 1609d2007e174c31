//! Approval enforcement for tool calls in an expert session (spec §3 `policy`, loader design §5).
//!
//! A call is mapped back to its abstract `tool.operation`, its tier resolved (override → default →
//! `confirm`), and then: `auto` runs; `manual` is refused with the instruction to deliver a draft;
//! `confirm` is refused and recorded as a pending request until the user approves that exact proposed
//! action (operation and arguments). An approval is used by the one call it was given for.
//! `policy.approval.timeout` bounds both how long a request waits (then `on_timeout` applies) and how
//! long an approval stays usable. No clock is read: `now` is given, in epoch seconds.

use super::bindings::Bindings;
use super::package::{Package, split_operation};
use super::policy::{OnTimeout, Tier};
use crate::files::write_atomically;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const APPROVALS_FILE: &str = "experts-approvals.json";
/// OpenClaw's own file tools, which the expert session uses on its workspace (loader design §5); they
/// are not operations of the package's tools, so the policy does not govern them.
pub const WORKSPACE_TOOLS: [&str; 3] = ["read", "write", "edit"];
/// Finished requests are kept this long (for `experts approvals` history), then dropped.
const KEEP_FINISHED_SECS: u64 = 7 * 86_400;
/// Requests kept at most; the oldest finished ones go first, then the oldest pending.
const MAX_REQUESTS: usize = 500;
const MAX_ARGUMENTS_CHARS: usize = 2000;
/// Separators between a server name and its tool in qualified tool names (`hubspot-mcp__get_deal`).
const SERVER_SEPARATORS: [&str; 4] = ["__", "/", ":", "."];

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

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// Short and stable: the same proposed action gets the same id.
    pub id: String,
    pub expert: String,
    /// `tool.operation`, or the raw tool name for a call that is not a declared operation.
    pub operation: String,
    /// The tool name as called.
    pub tool_name: String,
    /// The call's arguments, canonical JSON when they were JSON (cut to a bounded length).
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
}

/// Every approval request, by id; persisted as JSON in a state directory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalStore {
    pub requests: BTreeMap<String, ApprovalRequest>,
}

impl ApprovalStore {
    /// Reads the store from `state_dir`; a missing file is an empty store.
    pub fn load(state_dir: &Path) -> Result<ApprovalStore, String> {
        let path = state_dir.join(APPROVALS_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ApprovalStore::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    pub fn save(&self, state_dir: &Path) -> Result<(), String> {
        let path = state_dir.join(APPROVALS_FILE);
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())? + "\n";
        write_atomically(&path, json.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Applies timeouts as of `now` and drops old finished requests.
    pub fn expire(&mut self, now: u64) {
        for request in self.requests.values_mut() {
            let Some(timeout) = request.timeout_secs else {
                continue;
            };
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
                Status::Approved
                    if now
                        >= request
                            .decided_at
                            .unwrap_or(request.requested_at)
                            .saturating_add(timeout) =>
                {
                    request.status = Status::Expired;
                }
                _ => {}
            }
        }
        let finished =
            |r: &ApprovalRequest| !matches!(r.status, Status::Pending | Status::Approved);
        self.requests.retain(|_, r| {
            !(finished(r)
                && now
                    >= r.decided_at
                        .unwrap_or(r.requested_at)
                        .saturating_add(KEEP_FINISHED_SECS))
        });
        if self.requests.len() > MAX_REQUESTS {
            let mut by_age: Vec<(bool, u64, String)> = self
                .requests
                .values()
                .map(|r| (!finished(r), r.requested_at, r.id.clone()))
                .collect();
            by_age.sort();
            for (_, _, id) in by_age.into_iter().take(self.requests.len() - MAX_REQUESTS) {
                self.requests.remove(&id);
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
        pending.sort_by(|a, b| (a.requested_at, &a.id).cmp(&(b.requested_at, &b.id)));
        pending
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
        let id = id.trim();
        let request = self
            .requests
            .get_mut(id)
            .ok_or_else(|| format!("no approval request {id:?}"))?;
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
                status_word(request.status)
            )),
        }
    }
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Pending => "pending",
        Status::Approved => "approved",
        Status::Used => "used",
        Status::Rejected => "rejected",
        Status::Expired => "expired",
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run the call.
    Allow,
    /// Refused: `manual` tier, the agent delivers a draft instead.
    Draft,
    /// Refused: `confirm` tier, waiting for the user's approval of the pending request.
    AwaitApproval,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub verdict: Verdict,
    /// `tool.operation`, or the tool name as called when it is not a package operation.
    pub operation: String,
    pub tier: Tier,
    /// The pending (or used) approval request, for `confirm`.
    pub request_id: Option<String>,
    /// For the agent when refused; a short reason when allowed.
    pub message: String,
}

impl Decision {
    pub fn allowed(&self) -> bool {
        self.verdict == Verdict::Allow
    }
}

/// The abstract operations a tool name can stand for, with their tiers: `tool.operation` itself, or
/// the MCP tool name a binding maps an operation to (the operation's own name when unmapped), bare or
/// qualified by the bound server's name.
pub fn resolve_operations(
    package: &Package,
    bindings: &Bindings,
    tool_name: &str,
) -> Vec<(String, Tier)> {
    let mut found: Vec<(String, Tier)> = Vec::new();
    let operations = package.operations();
    if operations.iter().any(|op| op == tool_name) {
        found.push((tool_name.to_string(), effective_tier(package, tool_name)));
    }
    for op in &operations {
        let Some((tool, operation)) = split_operation(op) else {
            continue;
        };
        let binding = bindings.tools.get(tool);
        let mcp = binding.map(|b| b.mcp_tool(operation)).unwrap_or(operation);
        let qualified = binding.is_some_and(|b| {
            SERVER_SEPARATORS.iter().any(|sep| {
                tool_name
                    .strip_prefix(b.server.as_str())
                    .and_then(|r| r.strip_prefix(sep))
                    == Some(mcp)
            })
        });
        if (tool_name == mcp || qualified) && !found.iter().any(|(o, _)| o == op) {
            found.push((op.clone(), effective_tier(package, op)));
        }
    }
    found.sort();
    found
}

/// The tier of a package operation. An operation neither declared in a tool file nor overridden is
/// treated like any unknown call: never looser than `confirm`.
pub fn effective_tier(package: &Package, operation: &str) -> Tier {
    let declared = split_operation(operation)
        .and_then(|(tool, op)| {
            package
                .tool(tool)
                .map(|t| t.operations.iter().any(|o| o.name == op))
        })
        .unwrap_or(false);
    if package.policy.overrides.contains_key(operation) || declared {
        package.tier(operation)
    } else {
        package.policy.tier_of_unknown()
    }
}

/// Canonical form of the call's arguments: JSON re-serialised with sorted keys, else the trimmed text.
fn canonical_arguments(arguments: &str) -> String {
    let text = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(value) => value.to_string(),
        Err(_) => arguments.trim().to_string(),
    };
    crate::text::truncate_chars(&text, MAX_ARGUMENTS_CHARS)
}

/// FNV-1a, 64 bits: stable across platforms and versions (std's hasher is not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// An id for a proposed action, free in `store` (or already that action's).
fn request_id(store: &ApprovalStore, expert: &str, operation: &str, arguments: &str) -> String {
    let key = format!("{expert}\u{0}{operation}\u{0}{arguments}");
    (0u32..)
        .map(|salt| {
            format!(
                "{:08x}",
                fnv1a(format!("{key}\u{0}{salt}").as_bytes()) as u32
            )
        })
        .find(|id| {
            store.requests.get(id).is_none_or(|r| {
                r.expert == expert && r.operation == operation && r.arguments == arguments
            })
        })
        .expect("a free id among 2^32 salts")
}

/// Decides a tool call made in the session of `package`. `arguments` is the call's input (JSON text,
/// may be empty). Mutates `store` (records, uses or expires requests); the caller persists it.
///
/// A tool that is not an operation of the package's tools: OpenClaw's workspace tools
/// ([`WORKSPACE_TOOLS`]) are allowed, since the session needs them to read functions and keep state;
/// anything else is treated as an undeclared operation, `confirm` or stricter (spec: "unknown or
/// undeclared operations always pause for human review").
pub fn decide_tool_call(
    package: &Package,
    bindings: &Bindings,
    tool_name: &str,
    arguments: &str,
    store: &mut ApprovalStore,
    now: u64,
) -> Decision {
    store.expire(now);
    let candidates = resolve_operations(package, bindings, tool_name);
    // Several operations behind one name: the strictest tier decides.
    let (operation, tier) = match candidates
        .iter()
        .max_by_key(|(op, tier)| (*tier, std::cmp::Reverse(op.clone())))
    {
        Some((op, tier)) => (op.clone(), *tier),
        None if WORKSPACE_TOOLS.contains(&tool_name) => {
            let message =
                format!("{tool_name} is a workspace tool, not governed by the approval policy");
            return Decision {
                verdict: Verdict::Allow,
                operation: tool_name.to_string(),
                tier: Tier::Auto,
                request_id: None,
                message,
            };
        }
        None => (tool_name.to_string(), package.policy.tier_of_unknown()),
    };
    match tier {
        Tier::Auto => Decision {
            verdict: Verdict::Allow,
            message: format!("{operation} is AUTO"),
            operation,
            tier,
            request_id: None,
        },
        Tier::Manual => {
            let message = format!(
                "{operation} is MANUAL (draft only): do not execute it. Prepare the complete action as a draft \
                 (operation, inputs, and your reasoning), deliver the draft to the user to carry out, and mark the step done."
            );
            Decision {
                verdict: Verdict::Draft,
                operation,
                tier,
                request_id: None,
                message,
            }
        }
        Tier::Confirm => confirm(
            package,
            tool_name,
            &operation,
            &canonical_arguments(arguments),
            store,
            now,
        ),
    }
}

fn confirm(
    package: &Package,
    tool_name: &str,
    operation: &str,
    arguments: &str,
    store: &mut ApprovalStore,
    now: u64,
) -> Decision {
    let id = request_id(store, &package.name, operation, arguments);
    let existing = store.requests.get(&id).map(|r| r.status);
    if existing == Some(Status::Approved) {
        let request = store.requests.get_mut(&id).expect("present");
        request.status = Status::Used;
        request.decided_at = Some(now);
        return Decision {
            verdict: Verdict::Allow,
            operation: operation.to_string(),
            tier: Tier::Confirm,
            request_id: Some(id.clone()),
            message: format!("{operation} was approved by the user (request {id})"),
        };
    }
    if existing != Some(Status::Pending) {
        // New, or a finished request for the same action: ask again under the same id.
        let policy = &package.policy;
        store.requests.insert(
            id.clone(),
            ApprovalRequest {
                id: id.clone(),
                expert: package.name.clone(),
                operation: operation.to_string(),
                tool_name: tool_name.to_string(),
                arguments: arguments.to_string(),
                requested_at: now,
                status: Status::Pending,
                decided_at: None,
                timeout_secs: policy.timeout_secs,
                on_timeout: policy.on_timeout,
                escalated: false,
            },
        );
    }
    let wait = match package.policy.timeout_display() {
        Some(timeout) => format!(" The request expires after {timeout}."),
        None => String::new(),
    };
    let message = format!(
        "{operation} needs the user's approval first (CONFIRM tier); it was not executed. Present the proposed \
         action to the user (operation, inputs and your reasoning) and ask them to approve request {id}. Once \
         approved, make exactly the same call again; it will run once.{wait}"
    );
    Decision {
        verdict: Verdict::AwaitApproval,
        operation: operation.to_string(),
        tier: Tier::Confirm,
        request_id: Some(id),
        message,
    }
}

/// [`decide_tool_call`] against the store persisted in `state_dir`. An unreadable store is replaced by
/// an empty one (nothing approved: the safe reading). When a used approval cannot be recorded, the call
/// is refused rather than leaving the approval usable again.
pub fn check_tool_call(
    state_dir: &Path,
    package: &Package,
    bindings: &Bindings,
    tool_name: &str,
    arguments: &str,
    now: u64,
) -> Decision {
    let mut store = ApprovalStore::load(state_dir).unwrap_or_default();
    let before = store.clone();
    let mut decision = decide_tool_call(package, bindings, tool_name, arguments, &mut store, now);
    if store != before
        && let Err(why) = store.save(state_dir)
        && decision.allowed()
        && decision.tier != Tier::Auto
    {
        decision.verdict = Verdict::AwaitApproval;
        decision.message = format!(
            "{} cannot run: recording the use of its approval failed ({why})",
            decision.operation
        );
    }
    decision
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_stable_and_short() {
        // Pinned: ids are persisted and shown to users, so the hash must not change between builds.
        let store = ApprovalStore::default();
        assert_eq!(
            request_id(&store, "trip-planner-expert", "travel.hold_booking", "{}"),
            "99af6673"
        );
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn arguments_are_canonical() {
        assert_eq!(
            canonical_arguments(r#"{ "b": 1, "a": [1, 2] }"#),
            r#"{"a":[1,2],"b":1}"#
        );
        assert_eq!(canonical_arguments("  not json "), "not json");
    }
}
