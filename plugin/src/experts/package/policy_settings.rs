//! The manifest's approval policy (spec §3 `policy`): tiers, overrides, timeout and escalation, each
//! value checked against the spec's choices.

use super::formats::ManifestFile;
use super::manifest::ManifestCtx;
use super::values::{check_duration, check_enum};
use crate::experts::findings::Rule;
use crate::experts::policy::{OnTimeout, Policy, Tier};
use crate::experts::yaml::FieldPath;

const TIERS: [&str; 3] = ["auto", "confirm", "manual"];

pub(super) fn check_policy(m: &mut ManifestCtx, manifest: &ManifestFile) -> Policy {
    let mut policy = Policy::default();
    let Some(spec) = &manifest.policy else {
        return policy;
    };
    if let Some(approval) = &spec.approval {
        let at = |f: &str| FieldPath::key("policy").k("approval").k(f);
        if check_enum(
            m,
            Rule::PolicyValues,
            at("default"),
            approval.default.as_deref(),
            &TIERS,
        ) {
            policy.default = approval
                .default
                .as_deref()
                .and_then(Tier::parse)
                .unwrap_or(Tier::Confirm);
        }
        for (key, value) in approval.overrides.iter().flatten() {
            let field = at("overrides").k(key);
            if check_enum(m, Rule::PolicyValues, field, Some(value), &TIERS) {
                policy
                    .overrides
                    .insert(key.clone(), Tier::parse(value).unwrap_or(Tier::Confirm));
            } else {
                // An unreadable tier must not loosen anything: the package will not load anyway.
                policy.overrides.insert(key.clone(), Tier::Manual);
            }
        }
        policy.timeout_secs = check_duration(
            m,
            Rule::PolicyValues,
            at("timeout"),
            approval.timeout.as_deref(),
        );
        policy.timeout_text = approval
            .timeout
            .as_deref()
            .filter(|_| policy.timeout_secs.is_some())
            .map(|t| t.trim().to_string());
        if check_enum(
            m,
            Rule::PolicyValues,
            at("on_timeout"),
            approval.on_timeout.as_deref(),
            &["reject", "escalate"],
        ) {
            policy.on_timeout = if approval.on_timeout.as_deref() == Some("escalate") {
                OnTimeout::Escalate
            } else {
                OnTimeout::Reject
            };
        }
    }
    if let Some(escalation) = &spec.escalation {
        let at = |f: &str| FieldPath::key("policy").k("escalation").k(f);
        check_enum(
            m,
            Rule::PolicyValues,
            at("channel"),
            escalation.channel.as_deref(),
            &["main"],
        );
        policy.escalate_on_low_confidence = escalation.on_low_confidence.unwrap_or(true);
        policy.notify_on_manual_ready = escalation.on_manual_ready.unwrap_or(true);
    }
    policy
}
