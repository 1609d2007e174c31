//! The manifest's settings (spec §3–§8): concurrency, triggers, execution, delivery, the approval
//! policy and learning, each value checked against the spec's choices.

use super::formats::{ManifestFile, TriggerSpec};
use super::manifest::ManifestCtx;
use super::model::{Concurrency, Trigger};
use crate::experts::findings::Rule;
use crate::experts::policy::{OnTimeout, Policy, Tier, parse_duration};
use crate::experts::yaml::FieldPath;

const CONCURRENCY_MODES: [&str; 3] = ["parallel", "serial", "serial_per_key"];

fn check_enum(
    m: &mut ManifestCtx,
    rule: Rule,
    field: FieldPath,
    value: Option<&str>,
    allowed: &[&str],
) -> bool {
    match value {
        Some(v) if !allowed.contains(&v) => {
            let list = allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ");
            m.report(rule, field, format!("{v:?} is not one of {list}"));
            false
        }
        _ => true,
    }
}

pub(super) fn check_concurrency(m: &mut ManifestCtx, manifest: &ManifestFile) -> Concurrency {
    let spec = manifest.concurrency.as_ref();
    let default = spec.and_then(|c| c.default.clone());
    let field = FieldPath::key("concurrency").k("default");
    let ok = check_enum(
        m,
        Rule::ManifestValues,
        field,
        default.as_deref(),
        &CONCURRENCY_MODES,
    );
    Concurrency {
        default: default.filter(|_| ok).unwrap_or_else(|| "parallel".into()),
        key: spec.and_then(|c| c.key.clone()),
    }
}

pub(super) fn check_triggers(
    m: &mut ManifestCtx,
    manifest: &ManifestFile,
    concurrency: &Concurrency,
) -> Vec<Trigger> {
    let mut triggers: Vec<Trigger> = Vec::new();
    for (i, t) in manifest.triggers.iter().flatten().enumerate() {
        let trigger = check_trigger(m, i, t, concurrency);
        let name = &trigger.name;
        if !name.is_empty() && triggers.iter().any(|other| &other.name == name) {
            m.report(
                Rule::NamesUnique,
                FieldPath::key("triggers").i(i).k("name"),
                format!("trigger {name:?} is declared twice"),
            );
            continue;
        }
        triggers.push(trigger);
    }
    triggers.sort_by(|a, b| a.name.cmp(&b.name));
    triggers
}

/// One trigger's fields and values, with its effective concurrency mode and key.
fn check_trigger(
    m: &mut ManifestCtx,
    i: usize,
    t: &TriggerSpec,
    concurrency: &Concurrency,
) -> Trigger {
    let at = |field: &str| FieldPath::key("triggers").i(i).k(field);
    for (field, value) in [
        ("name", &t.name),
        ("type", &t.kind),
        ("process", &t.process),
    ] {
        if value.as_deref().is_none_or(|v| v.trim().is_empty()) {
            m.report(
                Rule::ManifestValues,
                at(field),
                format!("trigger field `{field}` is required"),
            );
        }
    }
    check_enum(
        m,
        Rule::ManifestValues,
        at("type"),
        t.kind.as_deref(),
        &["webhook", "cron", "channel"],
    );
    check_enum(
        m,
        Rule::ManifestValues,
        at("session"),
        t.session.as_deref(),
        &["isolated", "main"],
    );
    let mode_ok = check_enum(
        m,
        Rule::ManifestValues,
        at("concurrency"),
        t.concurrency.as_deref(),
        &CONCURRENCY_MODES,
    );
    if t.kind.as_deref() == Some("cron") && t.expr.as_deref().is_none_or(|e| e.trim().is_empty()) {
        m.report(
            Rule::ManifestValues,
            at("expr"),
            "a cron trigger needs `expr`",
        );
    }
    let mode = t
        .concurrency
        .clone()
        .filter(|_| mode_ok)
        .unwrap_or_else(|| concurrency.default.clone());
    let key = t
        .concurrency_key
        .clone()
        .or_else(|| concurrency.key.clone());
    if mode == "serial_per_key" && key.is_none() {
        m.report(
            Rule::ManifestValues,
            at("concurrency_key"),
            "serial_per_key needs `concurrency_key` here or `concurrency.key` in the package",
        );
    }
    let name = t.name.clone().unwrap_or_default();
    Trigger {
        name,
        kind: t.kind.clone().unwrap_or_default(),
        process: t.process.clone().unwrap_or_default(),
        preset: t.preset.clone(),
        requires_tool: t.requires_tool.clone(),
        expr: t.expr.clone(),
        tz: t.tz.clone(),
        concurrency_key: key.filter(|_| mode == "serial_per_key"),
        concurrency: mode,
        description: t.description.clone(),
    }
}

fn check_duration(
    m: &mut ManifestCtx,
    rule: Rule,
    field: FieldPath,
    value: Option<&str>,
) -> Option<u64> {
    let value = value?;
    match parse_duration(value) {
        Ok(secs) => Some(secs),
        Err(why) => {
            m.report(rule, field, why);
            None
        }
    }
}

pub(super) fn check_execution_and_delivery(m: &mut ManifestCtx, manifest: &ManifestFile) {
    if let Some(exec) = &manifest.execution {
        let at = |f: &str| FieldPath::key("execution").k(f);
        check_duration(
            m,
            Rule::ManifestValues,
            at("timeout"),
            exec.timeout.as_deref(),
        );
        check_enum(
            m,
            Rule::ManifestValues,
            at("on_failure"),
            exec.on_failure.as_deref(),
            &["escalate", "abandon", "dead_letter"],
        );
        if let Some(retry) = &exec.retry {
            let at = |f: &str| FieldPath::key("execution").k("retry").k(f);
            check_enum(
                m,
                Rule::ManifestValues,
                at("backoff"),
                retry.backoff.as_deref(),
                &["fixed", "exponential"],
            );
            check_duration(m, Rule::ManifestValues, at("delay"), retry.delay.as_deref());
            if retry.max_attempts == Some(0) {
                m.report(
                    Rule::ManifestValues,
                    at("max_attempts"),
                    "max_attempts counts the first attempt and must be at least 1",
                );
            }
        }
    }
    if let Some(delivery) = &manifest.delivery {
        let at = |f: &str| FieldPath::key("delivery").k(f);
        check_enum(
            m,
            Rule::ManifestValues,
            at("format"),
            delivery.format.as_deref(),
            &["narrative", "structured", "both"],
        );
        // Spec §3: unrecognised channels are a load-time error.
        check_enum(
            m,
            Rule::ManifestValues,
            at("channel"),
            delivery.channel.as_deref(),
            &["main"],
        );
        check_enum(
            m,
            Rule::ManifestValues,
            at("sla_breach"),
            delivery.sla_breach.as_deref(),
            &["warn", "escalate"],
        );
    }
}

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

pub(super) fn check_learning(m: &mut ManifestCtx, manifest: &ManifestFile) -> bool {
    let Some(learning) = &manifest.learning else {
        return false;
    };
    let field = FieldPath::key("learning").k("approval");
    check_enum(
        m,
        Rule::LearningApproval,
        field,
        learning.approval.as_deref(),
        &TIERS,
    );
    learning.enabled.unwrap_or(false)
}
