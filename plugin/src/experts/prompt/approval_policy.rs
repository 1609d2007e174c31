//! The `Tool Approval Policy` section: every operation under its effective tier, the timeout, and
//! the escalation note.

use super::document::one_line;
use super::limits::PromptLimits;
use crate::experts::gate::effective_tier;
use crate::experts::package::Package;
use crate::experts::policy::{OnTimeout, Tier};
use crate::text::escape_text;

/// Every operation under its tier (cut at `max_operations`, with a marker), the timeout, and the
/// low-confidence escalation.
pub(super) fn policy_section(
    package: &Package,
    limits: &PromptLimits,
    truncations: &mut Vec<String>,
) -> String {
    let policy = &package.policy;
    let operations = package.operations();
    let total = operations.len();
    let listed = &operations[..total.min(limits.max_operations)];
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
                "Approval requests not answered within {} are {outcome}.\n",
                escape_text(&timeout)
            ));
        }
        if let Some(note) = note {
            out.push_str(note);
            out.push('\n');
        }
    }
    if total > listed.len() {
        let more = total - listed.len();
        truncations.push(format!(
            "approval policy: {more} of {total} operations not listed"
        ));
        out.push_str(&format!(
            "[… {more} more operations not listed; their tiers are enforced all the same]\n"
        ));
    }
    if policy.escalate_on_low_confidence {
        out.push_str(
            "\nIf your confidence in a decision is low, escalate to the main agent with your reasoning and recommended action.\n",
        );
    }
    out
}
