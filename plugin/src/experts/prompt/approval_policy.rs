//! The `Tool Approval Policy` section: every operation under its effective tier, the timeout, and
//! the escalation note.

use super::document::one_line;
use super::limits::PromptLimits;
use crate::experts::gate::effective_tier;
use crate::experts::package::Package;
use crate::experts::policy::{OnTimeout, Tier};

/// Every operation under its tier (past `max_operations`, default-tier operations are left out and
/// counted), the timeout, and the low-confidence escalation.
pub(super) fn policy_section(
    package: &Package,
    limits: &PromptLimits,
    truncations: &mut Vec<String>,
) -> String {
    let policy = &package.policy;
    let (listed, omitted) = listed_operations(package, limits.max_operations);
    let unknown_tier = policy.tier_of_unknown();
    let mut out = String::from("Before calling any tool operation, check the approval tier:\n");
    for (tier, heading, note) in [
        (Tier::Auto, "AUTO (execute immediately):", None),
        (
            Tier::Confirm,
            "CONFIRM (present action, wait for approval):",
            None,
        ),
        (
            Tier::Manual,
            "MANUAL (draft only, never execute):",
            Some("Deliver the completed draft and mark the step done."),
        ),
    ] {
        out.push('\n');
        out.push_str(heading);
        out.push('\n');
        let ops: Vec<&String> = listed
            .iter()
            .filter(|op| effective_tier(package, op) == tier)
            .collect();
        if ops.is_empty() {
            out.push_str("- (none)\n");
        }
        for op in ops {
            out.push_str(&format!("- {}\n", one_line(op, limits.max_entry_chars)));
        }
        if tier == unknown_tier {
            out.push_str("Default for any unlisted operation.\n");
        }
        if tier == Tier::Confirm
            && let Some(timeout) = policy.timeout_display()
        {
            let outcome = match policy.on_timeout {
                OnTimeout::Reject => "rejected",
                OnTimeout::Escalate => "escalated to the user",
            };
            out.push_str(&format!(
                "Approval requests not answered within {timeout} are {outcome}.\n"
            ));
        }
        if let Some(note) = note {
            out.push_str(note);
            out.push('\n');
        }
    }
    if omitted > 0 {
        let total = listed.len() + omitted;
        let tier = policy.default.as_str();
        truncations.push(format!(
            "approval policy: {omitted} of {total} operations not listed (all at the default tier, {tier})"
        ));
        out.push_str(&format!(
            "[… {omitted} more operations at the default tier ({tier}) not listed; their tiers are enforced all the same]\n"
        ));
    }
    if policy.escalate_on_low_confidence {
        out.push_str(
            "\nIf your confidence in a decision is low, escalate to the main agent with your reasoning and recommended action.\n",
        );
    }
    out
}

/// The operations to list, sorted, and how many are left out. Explicit overrides are always listed
/// (they are the author's decisions); operations at the default tier fill the rest of `max`.
fn listed_operations(package: &Package, max: usize) -> (Vec<String>, usize) {
    let (mut listed, defaulted): (Vec<String>, Vec<String>) = package
        .operations()
        .into_iter()
        .partition(|op| package.policy.overrides.contains_key(op));
    let room = max.saturating_sub(listed.len());
    let omitted = defaulted.len().saturating_sub(room);
    listed.extend(defaulted.into_iter().take(room));
    crate::platform::sorting::sort(&mut listed);
    (listed, omitted)
}
