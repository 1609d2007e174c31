//! The approval gate for tool calls in an expert session (spec §3 `policy`, loader design §5).
//!
//! A call is unwrapped when it goes through Tool Search's `tool_call`, mapped back to its abstract
//! `tool.operation`, its tier resolved (override → default → `confirm`), and then: `auto` runs;
//! `manual` is refused with the instruction to deliver a draft; `confirm` is refused and recorded as
//! a pending request until the user approves that exact call ([`Binding`]: expert, session, tool,
//! operation, whole arguments), which then lets one call run. Arguments that are not strict JSON (a
//! key given twice) are refused whatever the tier.

use super::approval::{ApprovalRequest, ApprovalStore, Binding, Status, TargetCall, display_id};
use super::arguments::{MAX_BOUND_ARGUMENTS_CHARS, canonical, parse_strict, thousands};
use super::bindings::Bindings;
use super::package::{Package, split_operation};
use super::policy::Tier;
use super::tool_search::{
    LOOKUP_TOOLS, TOOL_CALL, is_target_call, target_call_prefix, unwrap_tool_call,
};
use std::path::Path;

/// Tools the policy does not govern: OpenClaw's file tools, which the session uses on its
/// workspace (loader design §5), and the plugin's own `expert_knowledge`, which reads the calling
/// expert's package. They are not operations of the package's tools.
pub const UNGOVERNED_TOOLS: [&str; 7] = [
    "read",
    "write",
    "edit",
    KNOWLEDGE_TOOL,
    // The expert runtime's own tools: they report to the framework (a step done, a proposed learning,
    // an isolated function of the same expert, itself gated), they act on nothing outside it.
    "expert_step",
    "expert_learning",
    "expert_function",
];
/// The tool through which an expert session reads its knowledge (private knowledge included).
pub const KNOWLEDGE_TOOL: &str = "expert_knowledge";
/// Separators between a server name and its tool in qualified tool names (`hubspot-mcp__get_deal`).
const SERVER_SEPARATORS: [&str; 4] = ["__", "/", ":", "."];
/// How long after a `tool_call` used an approval its target call may still pass.
const TARGET_CALL_WINDOW_SECS: u64 = 60;

/// A tool call as the host reports it.
#[derive(Clone, Copy, Debug)]
pub struct CallInput<'a> {
    /// OpenClaw's session key (the session id when there is none); what an approval is bound to.
    pub session: Option<&'a str>,
    pub tool_name: &'a str,
    /// The call's arguments, JSON text (empty for none).
    pub arguments: &'a str,
    /// The host's id of this call (OpenClaw's `toolCallId`).
    pub call_id: Option<&'a str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run the call.
    Allow,
    /// Refused: `manual` tier, the agent delivers a draft instead.
    Draft,
    /// Refused: `confirm` tier, waiting for the user's approval of the pending request.
    AwaitApproval,
    /// Refused: the call itself is malformed or cannot be bound (the message says why).
    Refused,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub verdict: Verdict,
    /// The tool the policy judged: the one called, or the one a `tool_call` names.
    pub tool: String,
    /// The call went through Tool Search's `tool_call`.
    pub via_tool_call: bool,
    /// `tool.operation`, or the tool name when it is not a package operation.
    pub operation: String,
    pub tier: Tier,
    /// The judged tool's canonical arguments (None when they could not be read).
    pub arguments: Option<String>,
    /// What an approval of this call binds (`confirm` calls in a session).
    pub binding: Option<Binding>,
    /// The pending (or used) approval request, for `confirm`.
    pub request_id: Option<String>,
    /// For the agent when refused; a short reason when allowed.
    pub message: String,
}

impl Decision {
    pub fn allowed(&self) -> bool {
        self.verdict == Verdict::Allow
    }

    fn new(verdict: Verdict, tool: &str, tier: Tier, message: String) -> Decision {
        Decision {
            verdict,
            tool: tool.to_string(),
            via_tool_call: false,
            operation: tool.to_string(),
            tier,
            arguments: None,
            binding: None,
            request_id: None,
            message,
        }
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
    crate::platform::sorting::sort(&mut found);
    found
}

/// The tier of a package operation. An operation neither declared in a tool file nor overridden is
/// treated like any unknown call: never looser than `confirm`.
pub fn effective_tier(package: &Package, operation: &str) -> Tier {
    let declared = split_operation(operation)
        .and_then(|(tool, op)| package.tool(tool).map(|t| t.declares(op)))
        .unwrap_or(false);
    if package.policy.overrides.contains_key(operation) || declared {
        package.tier(operation)
    } else {
        package.policy.tier_of_unknown()
    }
}

/// Decides a tool call made in the session of `package`. Mutates `store` (records, uses or expires
/// requests); the caller persists it.
///
/// A tool that is not an operation of the package's tools: [`UNGOVERNED_TOOLS`] and Tool Search's
/// lookups ([`LOOKUP_TOOLS`]) are allowed; anything else is treated as an undeclared operation,
/// `confirm` or stricter (spec: "unknown or undeclared operations always pause for human review").
pub fn decide_tool_call(
    package: &Package,
    bindings: &Bindings,
    call: &CallInput,
    store: &mut ApprovalStore,
    now: u64,
) -> Decision {
    store.expire(now);
    let called = call.tool_name;
    if LOOKUP_TOOLS.contains(&called) {
        let message =
            format!("{called} searches or describes the tool catalog and executes nothing");
        return Decision::new(Verdict::Allow, called, Tier::Auto, message);
    }
    let parsed = match parse_strict(call.arguments) {
        Ok(value) => value,
        Err(why) => {
            let message =
                format!("{called} refused: {why}. Make the call again with each key once.");
            return Decision::new(Verdict::Refused, called, Tier::Confirm, message);
        }
    };
    let (tool, arguments, via_tool_call) = if called == TOOL_CALL {
        match unwrap_tool_call(&parsed) {
            Ok(target) => (target.tool, target.arguments, true),
            Err(why) => return Decision::new(Verdict::Refused, called, Tier::Confirm, why),
        }
    } else {
        (called.to_string(), parsed, false)
    };
    let mut decision = judge(
        package,
        bindings,
        &tool,
        call,
        &canonical(&arguments),
        store,
        now,
    );
    decision.via_tool_call = via_tool_call;
    decision
}

fn judge(
    package: &Package,
    bindings: &Bindings,
    tool: &str,
    call: &CallInput,
    arguments: &str,
    store: &mut ApprovalStore,
    now: u64,
) -> Decision {
    let candidates = resolve_operations(package, bindings, tool);
    // Several operations behind one name: the strictest tier decides.
    let (operation, tier) = match candidates
        .iter()
        .max_by_key(|(op, tier)| (*tier, std::cmp::Reverse(op.clone())))
    {
        Some((op, tier)) => (op.clone(), *tier),
        None if UNGOVERNED_TOOLS.contains(&tool) => {
            let message = format!("{tool} is not governed by the approval policy");
            let mut decision = Decision::new(Verdict::Allow, tool, Tier::Auto, message);
            decision.arguments = Some(arguments.to_string());
            return decision;
        }
        None => (tool.to_string(), package.policy.tier_of_unknown()),
    };
    let mut decision = match tier {
        Tier::Auto => Decision::new(Verdict::Allow, tool, tier, format!("{operation} is AUTO")),
        Tier::Manual => Decision::new(
            Verdict::Draft,
            tool,
            tier,
            format!(
                "{operation} is MANUAL (draft only): do not execute it. Prepare the complete action as a draft \
                 (operation, inputs, and your reasoning), deliver the draft to the user to carry out, and mark the step done."
            ),
        ),
        Tier::Confirm => confirm(package, tool, &operation, call, arguments, store, now),
    };
    decision.operation = operation;
    decision.arguments = Some(arguments.to_string());
    decision
}

fn confirm(
    package: &Package,
    tool: &str,
    operation: &str,
    call: &CallInput,
    arguments: &str,
    store: &mut ApprovalStore,
    now: u64,
) -> Decision {
    let refuse = |message: String| Decision::new(Verdict::Refused, tool, Tier::Confirm, message);
    let Some(session) = call.session.filter(|s| !s.trim().is_empty()) else {
        return refuse(format!(
            "{operation} needs the user's approval (CONFIRM tier), but the call names no session an approval could be bound to; it was not executed"
        ));
    };
    let length = arguments.chars().count();
    if length > MAX_BOUND_ARGUMENTS_CHARS {
        return refuse(format!(
            "{operation} refused: its arguments are {} characters long; an approval can bind at most {} (CONFIRM tier)",
            thousands(length),
            thousands(MAX_BOUND_ARGUMENTS_CHARS)
        ));
    }
    let binding = Binding {
        expert: package.name.clone(),
        session: session.to_string(),
        tool: tool.to_string(),
        operation: operation.to_string(),
        arguments: arguments.to_string(),
    };
    let digest = binding.digest();
    let id = display_id(&digest);
    let mut decision = Decision::new(Verdict::Allow, tool, Tier::Confirm, String::new());
    decision.binding = Some(binding.clone());
    decision.request_id = Some(id.clone());
    let existing = store
        .requests
        .get_mut(&digest)
        .filter(|r| r.binds(&binding));
    if let Some(request) = existing {
        if let Some(how) = use_approval(request, tool, call, now) {
            decision.message = format!("{operation} was approved by the user (request {id}){how}");
            return decision;
        }
        if request.status == Status::Pending {
            decision.verdict = Verdict::AwaitApproval;
            decision.message = waiting_message(package, operation, &id);
            return decision;
        }
    }
    // New, or a finished request for the same call: ask again under the same digest.
    store.requests.insert(
        digest.clone(),
        ApprovalRequest {
            id: id.clone(),
            digest,
            expert: binding.expert,
            session: binding.session,
            tool_name: binding.tool,
            operation: binding.operation,
            arguments: binding.arguments,
            requested_at: now,
            status: Status::Pending,
            decided_at: None,
            timeout_secs: package.policy.timeout_secs,
            on_timeout: package.policy.on_timeout,
            escalated: false,
            target_call: None,
        },
    );
    decision.verdict = Verdict::AwaitApproval;
    decision.message = waiting_message(package, operation, &id);
    decision
}

/// Uses `request` for this call when it allows it: an approval not used yet, or the target call of
/// the `tool_call` that just used it. Returns, when the call may run, how the approval applies.
fn use_approval(
    request: &mut ApprovalRequest,
    tool: &str,
    call: &CallInput,
    now: u64,
) -> Option<&'static str> {
    match request.status {
        Status::Approved => {
            request.status = Status::Used;
            request.decided_at = Some(now);
            request.target_call = (call.tool_name == TOOL_CALL)
                .then_some(call.call_id)
                .flatten()
                .map(|id| TargetCall {
                    prefix: target_call_prefix(id, tool),
                    until: now.saturating_add(TARGET_CALL_WINDOW_SECS),
                });
            Some("; now used")
        }
        Status::Used => {
            let expected = request.target_call.as_ref().is_some_and(|t| {
                now <= t.until
                    && call.tool_name != TOOL_CALL
                    && call.call_id.is_some_and(|id| is_target_call(id, &t.prefix))
            });
            if expected {
                request.target_call = None;
            }
            expected.then_some("; this is the target call of the tool_call that used it")
        }
        _ => None,
    }
}

fn waiting_message(package: &Package, operation: &str, id: &str) -> String {
    let wait = match package.policy.timeout_display() {
        Some(timeout) => format!(" The request expires after {timeout}."),
        None => String::new(),
    };
    format!(
        "{operation} needs the user's approval first (CONFIRM tier); it was not executed. Present the proposed \
         action to the user (operation, inputs and your reasoning) and ask them to approve request {id} \
         (/experts approve {id}). Once approved, make exactly the same call again in this session; it will run once.{wait}"
    )
}

/// [`decide_tool_call`] against the store persisted in `state_dir`, with notes about the store for
/// the log. An unreadable store approves nothing: it is moved aside (kept for the operator) and
/// replaced. When a used approval cannot be recorded, the call is refused rather than leaving the
/// approval usable again.
pub fn check_tool_call(
    state_dir: &Path,
    package: &Package,
    bindings: &Bindings,
    call: &CallInput,
    now: u64,
) -> (Decision, Vec<String>) {
    let mut notes = Vec::new();
    let (mut store, changed_on_load) = match ApprovalStore::load(state_dir) {
        Ok((store, note)) => {
            notes.extend(note.clone());
            (store, note.is_some())
        }
        Err(why) => {
            notes.push(set_aside_unreadable(state_dir, &why));
            (ApprovalStore::default(), true)
        }
    };
    let before = store.clone();
    let mut decision = decide_tool_call(package, bindings, call, &mut store, now);
    if (store != before || changed_on_load)
        && let Err(why) = store.save(state_dir)
    {
        notes.push(format!("cannot record approvals: {why}"));
        if decision.allowed() && decision.tier == Tier::Confirm {
            decision.verdict = Verdict::Refused;
            decision.message = format!(
                "{} cannot run: recording the use of its approval failed ({why})",
                decision.operation
            );
        }
    }
    (decision, notes)
}

/// Moves an unreadable store to `<file>.unreadable`; returns the note saying so.
fn set_aside_unreadable(state_dir: &Path, why: &str) -> String {
    let path = state_dir.join(super::approval::APPROVALS_FILE);
    let aside = path.with_extension("json.unreadable");
    match std::fs::rename(&path, &aside) {
        Ok(()) => format!(
            "the approval store is unreadable ({why}); it was moved to {} and nothing counts as approved",
            aside.display()
        ),
        Err(e) => format!(
            "the approval store is unreadable ({why}) and could not be moved aside ({e}); nothing counts as approved"
        ),
    }
}
