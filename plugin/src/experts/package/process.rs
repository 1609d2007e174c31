//! A process file's runtime fields (spec §7): the names of its declared inputs and outputs, the files
//! to preload, the scratchpad, and its execution and delivery overrides laid over the package defaults.

use super::files::clean_relative;
use super::formats::ProcessFront;
use super::model::{Delivery, Execution};
use super::runtime::{Level, RuntimeDefaults, resolve_delivery, resolve_execution};
use super::values::{FrontmatterCtx, Report};
use crate::experts::findings::{Finding, Rule};
use crate::experts::yaml::{FieldPath, Lines};
use serde_norway::Value;

const RULE: Rule = Rule::FrontmatterProcess;

/// What a process declares for the runtime, checked.
pub(super) struct ProcessFields {
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub context: Vec<String>,
    pub scratchpad: Option<String>,
    pub execution: Execution,
    pub delivery: Delivery,
}

/// The runtime fields of the process file `path`, findings under `frontmatter.process`.
pub(super) fn process_fields(
    path: &str,
    lines: &Lines,
    front: &ProcessFront,
    defaults: &RuntimeDefaults,
    findings: &mut Vec<Finding>,
) -> ProcessFields {
    let mut r = FrontmatterCtx {
        path,
        lines,
        findings,
    };
    let inputs = declared_names(&mut r, "inputs", front.inputs.as_deref());
    let outputs = declared_names(&mut r, "outputs", front.outputs.as_deref());
    let mut context = Vec::new();
    for (i, file) in front.context.iter().flatten().enumerate() {
        match clean_relative(file) {
            Ok(clean) => context.push(clean),
            Err(why) => r.report(RULE, FieldPath::key("context").i(i), why),
        }
    }
    let scratchpad = front.scratchpad.as_deref().map(str::trim);
    if let Some(Err(why)) = scratchpad.map(clean_relative) {
        r.report(RULE, FieldPath::key("scratchpad"), why);
    }
    let execution = resolve_execution(
        &mut r,
        RULE,
        &FieldPath::key("execution"),
        front.execution.as_ref(),
        &defaults.execution,
    );
    let delivery = resolve_delivery(
        &mut r,
        RULE,
        &FieldPath::key("delivery"),
        front.delivery.as_ref(),
        &defaults.delivery,
        Level::Process,
    );
    ProcessFields {
        inputs,
        outputs,
        context,
        scratchpad: scratchpad.map(str::to_string),
        execution,
        delivery,
    }
}

/// The names in an `inputs` or `outputs` list: each entry a name, or a mapping with a `name` (and a
/// `type`, a `description`, which the runtime does not need).
fn declared_names(r: &mut impl Report, key: &str, entries: Option<&[Value]>) -> Vec<String> {
    let mut names = Vec::new();
    for (i, entry) in entries.unwrap_or_default().iter().enumerate() {
        let name = match entry {
            Value::String(name) => Some(name.as_str()),
            Value::Mapping(map) => map.get("name").and_then(Value::as_str),
            _ => None,
        };
        match name.map(str::trim).filter(|n| !n.is_empty()) {
            Some(name) => names.push(name.to_string()),
            None => r.report(
                RULE,
                FieldPath::key(key).i(i),
                format!("each of `{key}` is a name or a mapping with a `name`"),
            ),
        }
    }
    names
}
