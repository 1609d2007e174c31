//! The checks on the runtime fields: each bad value is a finding naming its file and field, and an
//! error keeps the package from loading.

use super::support::{TempPackage, assert_finding, assert_refused, findings_text};
use graphiti_openclaw::experts::{Rule, Severity};

const MANIFEST: &str = "expert.yaml";
const REVIEW: &str = "processes/daily-review.md";

#[test]
fn resuming_from_the_execution_log_requires_a_non_idempotent_process() {
    let temp = TempPackage::base("resume-idempotent");
    temp.manifest_before_components(
        "execution:\n  idempotent: true\n  resume_from_execution_log: true\n",
    );
    let expert = temp.load();
    let says = "resume_from_execution_log requires idempotent: false";
    assert_finding(
        &expert,
        Rule::ManifestValues,
        MANIFEST,
        "execution.resume_from_execution_log",
        says,
    );
    assert_refused(&expert);

    // The package resumes; a process that declares itself idempotent contradicts it (after overrides).
    let temp = TempPackage::base("resume-idempotent-process");
    temp.manifest_before_components("execution:\n  resume_from_execution_log: true\n");
    temp.edit(
        REVIEW,
        "trigger: daily\n",
        "trigger: daily\nexecution:\n  idempotent: true\n",
    );
    let expert = temp.load();
    assert_finding(
        &expert,
        Rule::FrontmatterProcess,
        REVIEW,
        "execution.idempotent",
        says,
    );
    assert_eq!(
        expert.findings.len(),
        1,
        "{}",
        findings_text(&expert.findings)
    );
    assert_refused(&expert);
}

#[test]
fn process_level_execution_and_delivery_get_the_package_level_checks() {
    let temp = TempPackage::base("process-values");
    let overrides = "execution:\n  timeout: soon\n  on_failure: retry_forever\n  retry:\n    max_attempts: 0\n    backoff: linear\n    delay: 0s\ndelivery:\n  format: html\n  channel: slack\n  sla: 0m\n  sla_breach: panic\n";
    temp.edit(
        REVIEW,
        "trigger: daily\n",
        &format!("trigger: daily\n{overrides}"),
    );
    let expert = temp.load();
    for (field, says) in [
        ("execution.timeout", "\"soon\" is not a duration"),
        (
            "execution.on_failure",
            "\"retry_forever\" is not one of `escalate`, `abandon`, `dead_letter`",
        ),
        ("execution.retry.max_attempts", "must be between 1 and"),
        (
            "execution.retry.backoff",
            "\"linear\" is not one of `fixed`, `exponential`",
        ),
        ("execution.retry.delay", "\"0s\" must be longer than zero"),
        (
            "delivery.format",
            "\"html\" is not one of `narrative`, `structured`, `both`",
        ),
        ("delivery.channel", "\"slack\" is not one of `main`"),
        ("delivery.sla", "\"0m\" must be longer than zero"),
        (
            "delivery.sla_breach",
            "\"panic\" is not one of `warn`, `escalate`",
        ),
    ] {
        assert_finding(&expert, Rule::FrontmatterProcess, REVIEW, field, says);
    }
    assert_eq!(
        expert.findings.len(),
        9,
        "{}",
        findings_text(&expert.findings)
    );
    assert_refused(&expert);
}

#[test]
fn durations_are_positive_and_sla_is_per_process() {
    let temp = TempPackage::base("durations");
    temp.manifest_before_components("execution:\n  timeout: 0m\ndelivery:\n  sla: 5m\n");
    temp.edit(MANIFEST, "timeout: 30m", "timeout: -1h");
    let expert = temp.load();
    assert_finding(
        &expert,
        Rule::ManifestValues,
        MANIFEST,
        "execution.timeout",
        "\"0m\" must be longer than zero",
    );
    assert_finding(
        &expert,
        Rule::ManifestValues,
        MANIFEST,
        "delivery.sla",
        "`sla` is set per process",
    );
    assert_finding(
        &expert,
        Rule::PolicyValues,
        MANIFEST,
        "policy.approval.timeout",
        "\"-1h\" is not a duration",
    );
    assert_refused(&expert);
}

const BAD_TRIGGERS: &str = "  - name: no_expr
    type: cron
    process: daily-review
  - name: bad_expr
    type: cron
    expr: \"0 25 * * *\"
    tz: Berlin time
    process: daily-review
  - name: mail_in
    type: webhook
    preset: gmail
    requires_tool: crm
    session: shared
    dedupe_key: a..b
    concurrency: serial_per_key
    concurrency_key: folder name
    payload_mapping:
      day: messages[x]
    process: daily-review
";

#[test]
fn trigger_fields_are_checked() {
    let temp = TempPackage::base("triggers");
    temp.edit(
        MANIFEST,
        "learning:\n",
        &format!("{BAD_TRIGGERS}learning:\n"),
    );
    let expert = temp.load();
    let values = Rule::ManifestValues;
    for (rule, field, says) in [
        (values, "triggers[1].expr", "a cron trigger needs `expr`"),
        (
            values,
            "triggers[2].expr",
            "\"0 25 * * *\" is not a cron expression: hour field \"25\": 25 is outside 0-23",
        ),
        (
            Rule::TriggerInactive,
            "triggers[2].tz",
            "\"Berlin time\" is not an IANA time zone name",
        ),
        (
            Rule::TriggerPreset,
            "triggers[3].preset",
            "preset \"gmail\" is not one this runtime provides",
        ),
        (
            Rule::TriggerInactive,
            "triggers[3].requires_tool",
            "tool \"crm\" is not declared in requires.tools: trigger \"",
        ),
        (
            values,
            "triggers[3].session",
            "\"shared\" is not one of `isolated`, `main`",
        ),
        (
            values,
            "triggers[3].dedupe_key",
            "\"a..b\" is not a payload path",
        ),
        (
            values,
            "triggers[3].concurrency_key",
            "\"folder name\" is not a payload path",
        ),
        (
            values,
            "triggers[3].payload_mapping.day",
            "\"messages[x]\" is not a payload path",
        ),
    ] {
        assert_finding(&expert, rule, MANIFEST, field, says);
    }
    assert_eq!(
        expert.findings.len(),
        9,
        "{}",
        findings_text(&expert.findings)
    );
    assert_refused(&expert);
}

#[test]
fn an_unknown_preset_leaves_its_trigger_inactive_with_a_warning() {
    let temp = TempPackage::base("preset");
    temp.edit(
        MANIFEST,
        "    type: cron\n    expr: \"0 9 * * *\"\n",
        "    type: webhook\n    preset: gmail\n",
    );
    let expert = temp.load();
    let f = &expert.findings[0];
    assert_eq!(
        expert.findings.len(),
        1,
        "{}",
        findings_text(&expert.findings)
    );
    assert_eq!(f.severity(), Severity::Warning);
    assert!(
        f.message.contains("stays inactive") && f.message.contains("plain webhook"),
        "{f}"
    );
    let package = expert.ready().expect("the package loads");
    let why = package.triggers[0].inactive();
    assert_eq!(
        why.as_deref(),
        Some("preset \"gmail\" is not one this runtime provides")
    );
}

#[test]
fn a_trigger_naming_no_process_is_an_error() {
    let temp = TempPackage::base("trigger-process");
    temp.edit(
        MANIFEST,
        "    process: daily-review\n",
        "    process: nightly\n",
    );
    let expert = temp.load();
    assert_finding(
        &expert,
        Rule::XrefTriggerProcess,
        MANIFEST,
        "triggers[0].process",
        "\"nightly\"",
    );
    assert_eq!(Rule::XrefTriggerProcess.severity(), Severity::Error);
    assert_refused(&expert);
}

#[test]
fn learning_function_and_process_fields_are_checked() {
    let temp = TempPackage::base("component-fields");
    temp.edit(
        MANIFEST,
        "  approval: confirm\n",
        "  approval: confirm\n  max_entries_per_file: 0\n",
    );
    temp.edit(
        "functions/reply.md",
        "tools:\n",
        "session: forked\ntools:\n",
    );
    let fields = "inputs:\n  - 1\ncontext:\n  - ../../etc/passwd\nscratchpad: /tmp/x.md\n";
    temp.edit(
        REVIEW,
        "trigger: daily\n",
        &format!("trigger: daily\n{fields}"),
    );
    let expert = temp.load();
    assert_finding(
        &expert,
        Rule::ManifestValues,
        MANIFEST,
        "learning.max_entries_per_file",
        "between 1 and",
    );
    assert_finding(
        &expert,
        Rule::FrontmatterFunction,
        "functions/reply.md",
        "session",
        "\"forked\" is not one of `inline`, `isolated`",
    );
    assert_finding(
        &expert,
        Rule::FrontmatterProcess,
        REVIEW,
        "inputs[0]",
        "a name or a mapping with a `name`",
    );
    assert_finding(
        &expert,
        Rule::FrontmatterProcess,
        REVIEW,
        "context[0]",
        "must be a relative path inside the package",
    );
    assert_finding(
        &expert,
        Rule::FrontmatterProcess,
        REVIEW,
        "scratchpad",
        "must be a relative path inside the package",
    );
    assert_eq!(
        expert.findings.len(),
        5,
        "{}",
        findings_text(&expert.findings)
    );
    assert_refused(&expert);
}
