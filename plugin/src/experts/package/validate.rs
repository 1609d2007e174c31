//! Cross-reference integrity (spec §14) and the learnings rule, over a package's loaded components.

use super::components::Components;
use super::files::{clean_relative, read_text};
use super::formats::ManifestFile;
use super::frontmatter::frontmatter;
use super::manifest::ManifestCtx;
use super::model::{KnowledgeKind, LoadLimits, split_operation};
use super::values::Report;
use crate::experts::findings::{Finding, Rule, finding};
use crate::experts::policy::Policy;
use crate::experts::yaml::{FieldPath, Lines};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// Learnings files examined at most (the directory is runtime-generated and could grow).
const MAX_LEARNINGS_FILES: usize = 1000;

fn locate(lines: Option<&Lines>, field: &FieldPath) -> Option<u32> {
    lines.and_then(|l| l.line(field))
}

/// Spec §14: every name one part of the package gives another (triggers, processes, functions, tools,
/// knowledge, policy overrides) is declared where it points. A name that a file which failed to load
/// may have declared is not reported again (`Components::unloaded`).
pub(crate) fn cross_references(
    manifest: &ManifestFile,
    required_tools: &[String],
    policy: &Policy,
    c: &Components,
    m: &mut ManifestCtx,
) {
    let required: BTreeSet<&str> = required_tools.iter().map(String::as_str).collect();
    triggers_name_processes(manifest, c, m);
    payload_mappings_name_inputs(manifest, c, m);
    private_context_stays_out_of_main(manifest, c, m);
    processes_name_declared_parts(manifest, c, &required, m);
    functions_name_declared_parts(manifest, c, &required, m);
    overrides_name_declared_operations(policy, c, &required, m);
    required_tools_have_files(manifest, c, &required, m);
}

/// A trigger's `process` is a process in `components.processes`.
fn triggers_name_processes(manifest: &ManifestFile, c: &Components, m: &mut ManifestCtx) {
    let process_names: BTreeSet<&str> = c.processes.iter().map(|p| p.name.as_str()).collect();
    for (i, trigger) in manifest.triggers.iter().flatten().enumerate() {
        let Some(process) = trigger.process.as_deref().filter(|p| !p.trim().is_empty()) else {
            continue;
        };
        if !process_names.contains(process) && !c.unloaded.processes.contains(process) {
            let field = FieldPath::key("triggers").i(i).k("process");
            m.report(
                Rule::XrefTriggerProcess,
                field,
                format!("{process:?} is not the name of a process in components.processes"),
            );
        }
    }
}

/// A trigger's `payload_mapping` maps onto inputs its process declares (when it declares any: a
/// process without `inputs` takes whatever is mapped).
fn payload_mappings_name_inputs(manifest: &ManifestFile, c: &Components, m: &mut ManifestCtx) {
    for (i, trigger) in manifest.triggers.iter().flatten().enumerate() {
        let process = trigger.process.as_deref();
        let Some(process) = c
            .processes
            .iter()
            .find(|p| Some(p.name.as_str()) == process)
        else {
            continue;
        };
        if process.inputs.is_empty() {
            continue;
        }
        let pairs = trigger.payload_mapping.iter().flat_map(|p| p.0.iter());
        for (input, _) in pairs.filter(|(input, _)| !process.inputs.contains(input)) {
            let field = FieldPath::key("triggers")
                .i(i)
                .k("payload_mapping")
                .k(input);
            let declared = process.inputs.join(", ");
            m.report(
                Rule::XrefPayloadMapping,
                field,
                format!(
                    "{input:?} is not an input of process {:?} (it declares: {declared})",
                    process.name
                ),
            );
        }
    }
}

/// Each file a process names in `context` is a readable file of the package: a run preloads it, and
/// one that is missing would otherwise be found only by the run, as "(cannot be read)".
pub(crate) fn process_context_exists(
    dir: &Path,
    limits: &LoadLimits,
    c: &Components,
    findings: &mut Vec<Finding>,
) {
    for p in &c.processes {
        for (j, path) in p.context.iter().enumerate() {
            let Err(e) = read_text(dir, path, limits) else {
                continue;
            };
            let field = FieldPath::key("context").i(j);
            findings.push(finding(
                &p.path,
                locate(c.process_lines.get(&p.path), &field),
                e.rule,
                Some(field.to_string()),
                format!("the context file {}", e.message),
            ));
        }
    }
}

/// Spec §9 keeps private knowledge in the expert's own context: a process whose trigger runs in the
/// main session gets none preloaded, so naming it in `context` is reported.
fn private_context_stays_out_of_main(manifest: &ManifestFile, c: &Components, m: &mut ManifestCtx) {
    let private: BTreeSet<&str> = c
        .knowledge
        .iter()
        .filter(|k| k.kind == KnowledgeKind::Private)
        .map(|k| k.path.as_str())
        .collect();
    for trigger in manifest.triggers.iter().flatten() {
        let (Some(name), Some("main")) = (trigger.name.as_deref(), trigger.session.as_deref())
        else {
            continue;
        };
        let process = trigger.process.as_deref();
        let Some(p) = c
            .processes
            .iter()
            .find(|p| Some(p.name.as_str()) == process)
        else {
            continue;
        };
        let lines = c.process_lines.get(&p.path);
        for (j, path) in p.context.iter().enumerate() {
            if private.contains(path.as_str()) {
                let field = FieldPath::key("context").i(j);
                // The path is not named: private knowledge is named only in the expert's sessions.
                let message = format!(
                    "this is private knowledge and {} runs in the main session (trigger {name}): \
                     it is not preloaded there",
                    p.name
                );
                m.findings.push(finding(
                    &p.path,
                    locate(lines, &field),
                    Rule::XrefPrivateContext,
                    Some(field.to_string()),
                    message,
                ));
            }
        }
    }
}

/// A process's `trigger`, `functions` and `tools` are declared.
fn processes_name_declared_parts(
    manifest: &ManifestFile,
    c: &Components,
    required: &BTreeSet<&str>,
    m: &mut ManifestCtx,
) {
    let function_names: BTreeSet<&str> = c.functions.iter().map(|f| f.name.as_str()).collect();
    let trigger_names: BTreeSet<&str> = manifest
        .triggers
        .iter()
        .flatten()
        .filter_map(|t| t.name.as_deref())
        .collect();
    for p in &c.processes {
        let lines = c.process_lines.get(&p.path);
        if let Some(trigger) = &p.trigger
            && !trigger_names.contains(trigger.as_str())
        {
            let field = FieldPath::key("trigger");
            let message = format!("{trigger:?} is not the name of a trigger in expert.yaml");
            m.findings.push(finding(
                &p.path,
                locate(lines, &field),
                Rule::XrefProcessTrigger,
                Some(field.to_string()),
                message,
            ));
        }
        for (j, function) in p.functions.iter().enumerate() {
            let unloaded = c.unloaded.functions.contains(function);
            if !function_names.contains(function.as_str()) && !unloaded {
                let field = FieldPath::key("functions").i(j);
                let message =
                    format!("{function:?} is not the name of a function in components.functions");
                m.findings.push(finding(
                    &p.path,
                    locate(lines, &field),
                    Rule::XrefProcessFunctions,
                    Some(field.to_string()),
                    message,
                ));
            }
        }
        tools_declared(&p.path, &p.tools, lines, required, m.findings);
    }
}

/// A function's `tools` are in `requires.tools` and its `knowledge` in `components.knowledge`.
fn functions_name_declared_parts(
    manifest: &ManifestFile,
    c: &Components,
    required: &BTreeSet<&str>,
    m: &mut ManifestCtx,
) {
    let mut knowledge_paths = BTreeSet::new();
    knowledge_paths.extend(
        manifest
            .components
            .iter()
            .flat_map(|c| c.knowledge.iter().flatten())
            .filter_map(|p| clean_relative(p).ok()),
    );
    for f in &c.functions {
        let lines = c.function_lines.get(&f.path);
        tools_declared(&f.path, &f.tools, lines, required, m.findings);
        for (j, path) in f.knowledge.iter().enumerate() {
            let listed = clean_relative(path).is_ok_and(|clean| knowledge_paths.contains(&clean));
            if !listed {
                let field = FieldPath::key("knowledge").i(j);
                let message = format!("{path:?} is not a path listed in components.knowledge");
                m.findings.push(finding(
                    &f.path,
                    locate(lines, &field),
                    Rule::XrefFunctionKnowledge,
                    Some(field.to_string()),
                    message,
                ));
            }
        }
    }
}

/// A policy override names `tool.operation` of a required tool whose file declares the operation.
fn overrides_name_declared_operations(
    policy: &Policy,
    c: &Components,
    required: &BTreeSet<&str>,
    m: &mut ManifestCtx,
) {
    for key in policy.overrides.keys() {
        let field = FieldPath::key("policy").k("approval").k("overrides").k(key);
        let Some((tool, operation)) = split_operation(key) else {
            m.report(
                Rule::XrefPolicyOverrides,
                field,
                format!("{key:?} is not of the form tool_name.operation_name"),
            );
            continue;
        };
        if !required.contains(tool) {
            m.report(
                Rule::XrefPolicyOverrides,
                field,
                format!("tool {tool:?} is not in requires.tools"),
            );
            continue;
        }
        match c.tools.iter().find(|t| t.name == tool) {
            None if c.unloaded.tools.contains(tool) => {}
            None => m.report(
                Rule::XrefPolicyOverrides,
                field,
                format!(
                    "no tool file declares {tool:?}, so operation {operation:?} cannot be checked"
                ),
            ),
            Some(t) if !t.declares(operation) => m.report(
                Rule::XrefPolicyOverrides,
                field,
                format!("operation {operation:?} is not declared in {}", t.path),
            ),
            Some(_) => {}
        }
    }
}

/// Every required tool has a tool file (else its operations are unknown).
fn required_tools_have_files(
    manifest: &ManifestFile,
    c: &Components,
    required: &BTreeSet<&str>,
    m: &mut ManifestCtx,
) {
    let listed_tools = manifest.requires.as_ref().and_then(|r| r.tools.as_ref());
    for (i, tool) in listed_tools.iter().flat_map(|t| t.iter()).enumerate() {
        let has_file = c.tools.iter().any(|t| &t.name == tool) || c.unloaded.tools.contains(tool);
        if required.contains(tool.as_str()) && !has_file {
            let field = FieldPath::key("requires").k("tools").i(i);
            let message = format!(
                "no file in components.tools declares tool {tool:?}; its operations are unknown, so every call to it needs approval"
            );
            m.report(Rule::XrefToolFile, field, message);
        }
    }
}

fn tools_declared(
    path: &str,
    tools: &[String],
    lines: Option<&Lines>,
    required: &BTreeSet<&str>,
    findings: &mut Vec<Finding>,
) {
    for (j, tool) in tools.iter().enumerate() {
        if !required.contains(tool.as_str()) {
            let field = FieldPath::key("tools").i(j);
            let message = format!("tool {tool:?} is not declared in requires.tools");
            findings.push(finding(
                path,
                locate(lines, &field),
                Rule::XrefToolsDeclared,
                Some(field.to_string()),
                message,
            ));
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct LearningFront {
    scope: Option<String>,
}

/// Spec §14: a learnings file's `scope` is `package` or a function name (warning). Learnings are
/// runtime-generated, so an unreadable one is a warning too.
pub(crate) fn learnings(
    dir: &Path,
    limits: &LoadLimits,
    c: &Components,
    findings: &mut Vec<Finding>,
) {
    let learnings = dir.join("learnings");
    let is_dir = fs::symlink_metadata(&learnings).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return;
    }
    let Ok(entries) = fs::read_dir(&learnings) else {
        return;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    crate::platform::sorting::sort(&mut names);
    names.truncate(MAX_LEARNINGS_FILES);
    for name in names {
        let path = format!("learnings/{name}");
        let text = match read_text(dir, &path, limits) {
            Ok(text) => text,
            Err(e) => {
                findings.push(finding(&path, None, Rule::LearningScope, None, e.message));
                continue;
            }
        };
        let mut local = Vec::new();
        let parsed =
            frontmatter::<LearningFront>(&path, &text, Rule::LearningScope, false, &mut local);
        findings.extend(local);
        let Some((front, lines)) = parsed else {
            continue;
        };
        if let Some(scope) = front.scope
            && scope != "package"
            && !c.functions.iter().any(|f| f.name == scope)
            && !c.unloaded.functions.contains(&scope)
        {
            let field = FieldPath::key("scope");
            let message =
                format!("scope {scope:?} is neither `package` nor the name of a function");
            findings.push(finding(
                &path,
                lines.line(&field),
                Rule::LearningScope,
                Some("scope".into()),
                message,
            ));
        }
    }
}
