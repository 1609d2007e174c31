//! How processes run and deliver (spec §3 `execution`, `delivery`, `learning`; §7 the process-level
//! overrides): the package's defaults from the manifest, and each process's effective settings, its
//! frontmatter laid over the defaults field by field ("only specified fields are overridden").

use super::formats::{DeliverySpec, ExecutionSpec, LearningSpec, RetrySpec};
use super::model::{
    Backoff, Delivery, DeliveryFormat, Execution, Learning, OnFailure, Retry, SlaBreach,
};
use super::values::{Report, check_choice, check_duration, check_enum};
use crate::experts::findings::Rule;
use crate::experts::policy::Tier;
use crate::experts::yaml::FieldPath;

/// The package's execution and delivery defaults, which processes override.
pub(super) struct RuntimeDefaults {
    pub execution: Execution,
    pub delivery: Delivery,
}

/// Which level a block is at: the manifest's defaults or a process's overrides.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    Package,
    Process,
}

/// `base` with the fields `spec` sets (each checked; a bad one keeps the base value), findings at
/// `at` (`execution`) under `rule`. A conflict between resumption and idempotence is reported where
/// one of the two is set.
pub(super) fn resolve_execution(
    r: &mut impl Report,
    rule: Rule,
    at: &FieldPath,
    spec: Option<&ExecutionSpec>,
    base: &Execution,
) -> Execution {
    let mut e = base.clone();
    let Some(spec) = spec else {
        return e;
    };
    let field = |k: &str| at.clone().k(k);
    if let Some(secs) = check_duration(r, rule, field("timeout"), spec.timeout.as_deref()) {
        e.timeout_secs = Some(secs);
    }
    e.idempotent = spec.idempotent.unwrap_or(e.idempotent);
    e.resume_from_execution_log = spec
        .resume_from_execution_log
        .unwrap_or(e.resume_from_execution_log);
    let on_failure = [
        ("escalate", OnFailure::Escalate),
        ("abandon", OnFailure::Abandon),
        ("dead_letter", OnFailure::DeadLetter),
    ];
    let value = spec.on_failure.as_deref();
    if let Some(choice) = check_choice(r, rule, field("on_failure"), value, &on_failure) {
        e.on_failure = choice;
    }
    if let Some(retry) = &spec.retry {
        resolve_retry(r, rule, &field("retry"), retry, &mut e.retry);
    }
    // Reported at the field this block sets (a conflict inherited whole is the package's finding).
    let set_here = if spec.resume_from_execution_log.is_some() {
        Some("resume_from_execution_log")
    } else {
        spec.idempotent.map(|_| "idempotent")
    };
    if let Some(set_here) = set_here
        && e.idempotent
        && e.resume_from_execution_log
    {
        r.report(
            rule,
            field(set_here),
            "resume_from_execution_log requires idempotent: false (spec §3): an idempotent process is re-run from its first step instead",
        );
    }
    e
}

fn resolve_retry(
    r: &mut impl Report,
    rule: Rule,
    at: &FieldPath,
    spec: &RetrySpec,
    retry: &mut Retry,
) {
    let field = |k: &str| at.clone().k(k);
    match spec.max_attempts.map(u32::try_from) {
        None => {}
        Some(Ok(n)) if n >= 1 => retry.max_attempts = n,
        Some(_) => r.report(
            rule,
            field("max_attempts"),
            "max_attempts counts the first attempt and must be between 1 and 4294967295",
        ),
    }
    let backoffs = [
        ("fixed", Backoff::Fixed),
        ("exponential", Backoff::Exponential),
    ];
    let value = spec.backoff.as_deref();
    if let Some(backoff) = check_choice(r, rule, field("backoff"), value, &backoffs) {
        retry.backoff = backoff;
    }
    if let Some(secs) = check_duration(r, rule, field("delay"), spec.delay.as_deref()) {
        retry.delay_secs = secs;
    }
}

/// `base` with the fields `spec` sets. The channel must be `main` (spec §3: an unknown channel is a
/// load-time error); `sla` belongs to processes only.
pub(super) fn resolve_delivery(
    r: &mut impl Report,
    rule: Rule,
    at: &FieldPath,
    spec: Option<&DeliverySpec>,
    base: &Delivery,
    level: Level,
) -> Delivery {
    let mut d = base.clone();
    let Some(spec) = spec else {
        return d;
    };
    let field = |k: &str| at.clone().k(k);
    let formats = [
        ("narrative", DeliveryFormat::Narrative),
        ("structured", DeliveryFormat::Structured),
        ("both", DeliveryFormat::Both),
    ];
    let value = spec.format.as_deref();
    if let Some(format) = check_choice(r, rule, field("format"), value, &formats) {
        d.format = format;
    }
    let channel = spec.channel.as_deref();
    if check_enum(r, rule, field("channel"), channel, &["main"]) {
        d.channel = channel.unwrap_or(&d.channel).to_string();
    }
    match level {
        Level::Process => {
            let sla = check_duration(r, rule, field("sla"), spec.sla.as_deref());
            d.sla_secs = sla.or(d.sla_secs);
        }
        Level::Package if spec.sla.is_some() => r.report(
            rule,
            field("sla"),
            "`sla` is set per process, in its frontmatter's `delivery` (spec §7), not in the package defaults",
        ),
        Level::Package => {}
    }
    let breaches = [("warn", SlaBreach::Warn), ("escalate", SlaBreach::Escalate)];
    let value = spec.sla_breach.as_deref();
    if let Some(breach) = check_choice(r, rule, field("sla_breach"), value, &breaches) {
        d.sla_breach = breach;
    }
    d
}

/// `learning` with the spec's defaults for what it leaves out.
pub(super) fn resolve_learning(r: &mut impl Report, spec: Option<&LearningSpec>) -> Learning {
    let mut learning = Learning::default();
    let Some(spec) = spec else {
        return learning;
    };
    let field = |k: &str| FieldPath::key("learning").k(k);
    learning.enabled = spec.enabled.unwrap_or(false);
    let tiers = [
        ("auto", Tier::Auto),
        ("confirm", Tier::Confirm),
        ("manual", Tier::Manual),
    ];
    let value = spec.approval.as_deref();
    if let Some(tier) = check_choice(r, Rule::LearningApproval, field("approval"), value, &tiers) {
        learning.approval = tier;
    }
    match spec.max_entries_per_file.map(u32::try_from) {
        None => {}
        Some(Ok(n)) if n >= 1 => learning.max_entries_per_file = n,
        Some(_) => r.report(
            Rule::ManifestValues,
            field("max_entries_per_file"),
            "max_entries_per_file must be between 1 and 4294967295",
        ),
    }
    learning
}
