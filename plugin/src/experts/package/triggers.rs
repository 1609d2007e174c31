//! The manifest's `concurrency` and `triggers` (spec §3): each trigger's type, session, concurrency,
//! cron schedule, webhook source, dedupe key and payload mapping, checked and resolved against the
//! package defaults.

use super::ZoneCheck;
use super::formats::{ManifestFile, TriggerSpec};
use super::manifest::ManifestCtx;
use super::model::{Concurrency, SessionMode, Trigger};
use super::values::{Report, check_enum, check_payload_path, looks_like_time_zone};
use crate::experts::cron;
use crate::experts::findings::Rule;
use crate::experts::yaml::FieldPath;

const CONCURRENCY_MODES: [&str; 3] = ["parallel", "serial", "serial_per_key"];

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
    let key = spec.and_then(|c| c.key.clone());
    if let Some(key) = &key {
        let field = FieldPath::key("concurrency").k("key");
        check_payload_path(m, Rule::ManifestValues, field, key);
    }
    Concurrency {
        default: default.filter(|_| ok).unwrap_or_else(|| "parallel".into()),
        key,
    }
}

/// The triggers, sorted by name; `required_tools` is `requires.tools` (for `requires_tool`).
pub(super) fn check_triggers(
    m: &mut ManifestCtx,
    manifest: &ManifestFile,
    concurrency: &Concurrency,
    required_tools: &[String],
    zones: Option<&ZoneCheck>,
) -> Vec<Trigger> {
    let mut triggers: Vec<Trigger> = Vec::new();
    for (i, t) in manifest.triggers.iter().flatten().enumerate() {
        let at = |field: &str| FieldPath::key("triggers").i(i).k(field);
        check_required_fields(m, t, at);
        let bad_zone = check_schedule(m, t, at, zones);
        let undeclared_tool = check_source(m, t, at, required_tools);
        check_payload_fields(m, t, at);
        let mut trigger = resolve_trigger(m, t, at, concurrency);
        trigger.inactive_because = undeclared_tool.or(bad_zone);
        let name = &trigger.name;
        if !name.is_empty() && triggers.iter().any(|other| &other.name == name) {
            m.report(
                Rule::NamesUnique,
                at("name"),
                format!("trigger {name:?} is declared twice"),
            );
            continue;
        }
        triggers.push(trigger);
    }
    crate::platform::sorting::sort_by(&mut triggers, |a, b| a.name.cmp(&b.name));
    triggers
}

/// `name`, `type` and `process` present, and `type` one of the spec's three.
fn check_required_fields(m: &mut ManifestCtx, t: &TriggerSpec, at: impl Fn(&str) -> FieldPath) {
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
}

/// A cron trigger's `expr` present and parsable; `tz` shaped like an IANA name, and one the host
/// knows when `zones` can say. A `tz` that is neither makes the trigger inactive (spec §3): why.
fn check_schedule(
    m: &mut ManifestCtx,
    t: &TriggerSpec,
    at: impl Fn(&str) -> FieldPath,
    zones: Option<&ZoneCheck>,
) -> Option<String> {
    let expr = t.expr.as_deref().filter(|e| !e.trim().is_empty());
    match expr {
        None if t.kind.as_deref() == Some("cron") => {
            m.report(
                Rule::ManifestValues,
                at("expr"),
                "a cron trigger needs `expr`",
            );
        }
        Some(expr) => match cron::parse(expr) {
            Err(why) => m.report(
                Rule::ManifestValues,
                at("expr"),
                format!("{expr:?} is not a cron expression: {why}"),
            ),
            Ok(_) => {
                if let Some(note) = cron::seconds_field(expr) {
                    m.report(Rule::TriggerSeconds, at("expr"), note);
                }
            }
        },
        None => {}
    }
    let tz = t.tz.as_ref()?;
    let why = if looks_like_time_zone(tz) {
        zones.and_then(|zones| zones.check(tz).err())?
    } else {
        format!("{tz:?} is not an IANA time zone name such as UTC or Europe/Berlin")
    };
    let name = t.name.as_deref().unwrap_or_default();
    m.report(
        Rule::TriggerInactive,
        at("tz"),
        format!("trigger {name:?} stays inactive: {why}"),
    );
    Some(format!("time zone {tz:?} is unknown"))
}

/// Where a webhook comes from: a `preset` (presets are the framework's, spec §3; this runtime
/// provides none, so the trigger stays inactive and the package still loads), `requires_tool` a
/// required tool (one the package does not declare makes the trigger inactive: why).
fn check_source(
    m: &mut ManifestCtx,
    t: &TriggerSpec,
    at: impl Fn(&str) -> FieldPath,
    required_tools: &[String],
) -> Option<String> {
    if let Some(preset) = &t.preset {
        let name = t.name.as_deref().unwrap_or_default();
        let without = match t.kind.as_deref() {
            Some("cron") => "to run it on its own schedule",
            Some("channel") => "to fire it on its channel's messages",
            _ => "to make it a plain webhook",
        };
        m.report(
            Rule::TriggerPreset,
            at("preset"),
            format!(
                "preset {preset:?} is not one this runtime provides (it provides none): trigger \
                 {name} stays inactive; remove `preset` {without}"
            ),
        );
    }
    let tool = t.requires_tool.as_ref()?;
    if required_tools.contains(tool) {
        return None;
    }
    let name = t.name.as_deref().unwrap_or_default();
    m.report(
        Rule::TriggerInactive,
        at("requires_tool"),
        format!(
            "tool {tool:?} is not declared in requires.tools: trigger {name:?} stays inactive; \
             declare the tool to make it fire"
        ),
    );
    Some(format!(
        "its required tool {tool:?} is not declared in requires.tools"
    ))
}

/// `dedupe_key`, `concurrency_key` and the `payload_mapping` values are payload paths; no input is
/// mapped twice.
fn check_payload_fields(m: &mut ManifestCtx, t: &TriggerSpec, at: impl Fn(&str) -> FieldPath) {
    for (field, value) in [
        ("dedupe_key", &t.dedupe_key),
        ("concurrency_key", &t.concurrency_key),
    ] {
        if let Some(value) = value {
            check_payload_path(m, Rule::ManifestValues, at(field), value);
        }
    }
    let pairs = t.payload_mapping.as_ref().map(|p| p.0.as_slice());
    for (n, (input, path)) in pairs.unwrap_or_default().iter().enumerate() {
        let field = at("payload_mapping").k(input);
        if pairs.unwrap_or_default()[..n]
            .iter()
            .any(|(k, _)| k == input)
        {
            m.report(
                Rule::ManifestValues,
                field,
                format!("input {input:?} is mapped twice"),
            );
            continue;
        }
        check_payload_path(m, Rule::ManifestValues, field, path);
    }
}

/// The trigger with its effective session, concurrency mode and key.
fn resolve_trigger(
    m: &mut ManifestCtx,
    t: &TriggerSpec,
    at: impl Fn(&str) -> FieldPath,
    concurrency: &Concurrency,
) -> Trigger {
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
    Trigger {
        name: t.name.clone().unwrap_or_default(),
        kind: t.kind.clone().unwrap_or_default(),
        process: t.process.clone().unwrap_or_default(),
        preset: t.preset.clone(),
        requires_tool: t.requires_tool.clone(),
        expr: t.expr.clone(),
        tz: t.tz.clone(),
        concurrency_key: key.filter(|_| mode == "serial_per_key"),
        concurrency: mode,
        session: match t.session.as_deref() {
            Some("main") => SessionMode::Main,
            _ => SessionMode::Isolated,
        },
        dedupe_key: t.dedupe_key.clone(),
        payload_mapping: t
            .payload_mapping
            .as_ref()
            .map(|p| p.0.clone())
            .unwrap_or_default(),
        description: t.description.clone(),
        inactive_because: None,
    }
}
