//! The approval gate in a dry run's session (openexperts §7 "Dry Run Mode"): `auto` operations run;
//! every other call is refused without asking anyone or using an approval, and what the policy would
//! have done with it is recorded for the run's planned-execution report.

use super::tool_check::{HELD_ARGUMENTS_CHARS, ToolCheck};
use crate::experts::runs::store::PlannedCall;
use crate::experts::{self, ApprovalStore, Bindings, CallInput, Package, Tier, Verdict};

/// Tools the policy lets run that act outside the dry run: an isolated function runs in a session of
/// its own (not a dry run's), and a proposed learning reaches the user or the package.
const RUNS_ELSEWHERE: [&str; 2] = ["expert_function", "expert_learning"];

/// The check of `call` in a dry run of `package`'s expert.
pub fn check(package: &Package, bindings: &Bindings, call: &CallInput, now_secs: u64) -> ToolCheck {
    // A store of its own, dropped after: nothing is asked, and no user's approval is used.
    let decision = experts::decide_tool_call(
        package,
        bindings,
        call,
        &mut ApprovalStore::default(),
        now_secs,
    );
    let elsewhere = RUNS_ELSEWHERE.contains(&decision.tool.as_str());
    if decision.allowed() && decision.tier == Tier::Auto && !elsewhere {
        return ToolCheck::allow();
    }
    let would = match decision.verdict {
        _ if elsewhere => format!("run {}", decision.tool),
        Verdict::AwaitApproval => "ask the user's approval, then run it once".to_string(),
        Verdict::Draft => "deliver it as a draft for the user to carry out".to_string(),
        Verdict::Allow | Verdict::Refused => format!("refuse it: {}", decision.message),
    };
    let tier = crate::experts::approval_text::tier_word(decision.tier).to_string();
    let arguments: String =
        crate::platform::text::one_line(decision.arguments.as_deref().unwrap_or("{}"))
            .chars()
            .take(HELD_ARGUMENTS_CHARS)
            .collect();
    let message = format!(
        "Dry run: {} ({tier}) was not executed; it is recorded for the planned-execution report \
         (a real run would {would}). Describe what it would do and the outcome you expect, then go \
         on as if it had succeeded.",
        decision.operation
    );
    let mut check = ToolCheck::block(message);
    check.planned = Some(PlannedCall {
        operation: decision.operation,
        tier,
        arguments,
        would,
    });
    check
}
