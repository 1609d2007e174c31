//! The component files listed in the manifest (spec §4–§11): orchestrator, persona, functions,
//! processes, tools, knowledge and state, each read and checked on its own (a process's runtime fields
//! in `process`, a tool file's contents in `tool_file`).

use super::files::{clean_relative, read_text};
use super::formats::{ComponentsSpec, FunctionFront, KnowledgeFront, ProcessFront, StateFront};
use super::frontmatter::{NamedDocument, declared_twice, frontmatter, named_document};
use super::manifest::ManifestCtx;
use super::model::{
    Document, Function, Knowledge, KnowledgeKind, LoadLimits, Process, StateFile, StateScope, Tool,
};
use super::process::process_fields;
use super::runtime::RuntimeDefaults;
use super::tool_file::load_tool;
use super::unloaded::{Unloaded, possible_names};
use super::values::{FrontmatterCtx, Report, check_choice};
use crate::experts::findings::{Finding, Rule, finding};
use crate::experts::yaml::{FieldPath, Lines};
use std::collections::BTreeMap;
use std::path::Path;

/// The component files as read, before sorting.
pub(crate) struct Components {
    pub orchestrator: Option<Document>,
    pub persona: Vec<Document>,
    pub functions: Vec<Function>,
    pub processes: Vec<Process>,
    pub tools: Vec<Tool>,
    pub knowledge: Vec<Knowledge>,
    pub state: Vec<StateFile>,
    /// Each function's frontmatter lines and its `tools`/`knowledge` fields, for cross-reference findings.
    pub function_lines: BTreeMap<String, Lines>,
    pub process_lines: BTreeMap<String, Lines>,
    pub tool_lines: BTreeMap<String, Lines>,
    /// What listed function, process and tool files that failed to load may have declared.
    pub unloaded: Unloaded,
}

/// Where a component list is in the manifest: `components.<key>`.
fn component_field(key: &str) -> FieldPath {
    FieldPath::key("components").k(key)
}

/// A component file read for a list entry, or the finding why not.
fn read_listed(
    dir: &Path,
    limits: &LoadLimits,
    m: &mut ManifestCtx,
    field: FieldPath,
    path: &str,
) -> Option<(String, String)> {
    let clean = match clean_relative(path) {
        Ok(clean) => clean,
        Err(why) => {
            m.report(Rule::FilesPath, field, why);
            return None;
        }
    };
    match read_text(dir, &clean, limits) {
        Ok(text) => Some((clean, text)),
        Err(e) => {
            m.report(e.rule, field, e.message);
            None
        }
    }
}

/// Longest description taken from a knowledge file's first line, in characters.
const MAX_DERIVED_DESCRIPTION_CHARS: usize = 120;

/// A knowledge file without a `description`: the first line of its body (a heading without its
/// `#`s), so the index still says what the file is about.
fn first_line(text: &str) -> Option<String> {
    let body = match text.strip_prefix("---\n") {
        Some(rest) => rest.split_once("\n---\n").map_or(rest, |(_, body)| body),
        None => text,
    };
    body.lines()
        .map(|line| line.trim().trim_start_matches('#').trim())
        .find(|line| !line.is_empty())
        .map(|line| crate::platform::text::truncate_chars(line, MAX_DERIVED_DESCRIPTION_CHARS))
}

fn stem(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".md")
        .or_else(|| file.strip_suffix(".yaml"))
        .or_else(|| file.strip_suffix(".yml"))
        .unwrap_or(file)
        .to_string()
}

impl Components {
    pub(super) fn load(
        dir: &Path,
        limits: &LoadLimits,
        spec: &ComponentsSpec,
        defaults: &RuntimeDefaults,
        m: &mut ManifestCtx,
    ) -> Components {
        let mut c = Components {
            orchestrator: None,
            persona: Vec::new(),
            functions: Vec::new(),
            processes: Vec::new(),
            tools: Vec::new(),
            knowledge: Vec::new(),
            state: Vec::new(),
            function_lines: BTreeMap::new(),
            process_lines: BTreeMap::new(),
            tool_lines: BTreeMap::new(),
            unloaded: Unloaded::default(),
        };
        c.load_orchestrator(dir, limits, spec, m);
        c.load_persona(dir, limits, spec, m);
        c.load_functions(dir, limits, spec, m);
        c.load_processes(dir, limits, spec, defaults, m);
        c.load_tools(dir, limits, spec, m);
        c.load_knowledge(dir, limits, spec, m);
        c.load_state(dir, limits, spec, m);
        c
    }

    /// The orchestrator (required): reported under the structure rule when it cannot be read.
    fn load_orchestrator(
        &mut self,
        dir: &Path,
        limits: &LoadLimits,
        spec: &ComponentsSpec,
        m: &mut ManifestCtx,
    ) {
        match spec.orchestrator.as_deref() {
            None => m.report(
                Rule::StructureOrchestrator,
                component_field("orchestrator"),
                "components.orchestrator is missing",
            ),
            Some(path) => {
                match read_listed(dir, limits, m, component_field("orchestrator"), path) {
                    Some((path, text)) => self.orchestrator = Some(Document { path, text }),
                    None => {
                        // Reported once, under the structure rule, whatever the reason.
                        if let Some(last) = m.findings.last_mut()
                            && last.rule == Rule::FilesExist
                        {
                            last.rule = Rule::StructureOrchestrator;
                            last.message = format!("{} (the orchestrator)", last.message);
                        }
                    }
                }
            }
        }
    }

    /// Persona files, at least one readable.
    fn load_persona(
        &mut self,
        dir: &Path,
        limits: &LoadLimits,
        spec: &ComponentsSpec,
        m: &mut ManifestCtx,
    ) {
        for (i, path) in spec.persona.iter().flatten().enumerate() {
            if let Some((path, text)) =
                read_listed(dir, limits, m, component_field("persona").i(i), path)
            {
                self.persona.push(Document { path, text });
            }
        }
        if self.persona.is_empty() {
            m.report(
                Rule::StructurePersona,
                component_field("persona"),
                "no persona file exists (at least one is required)",
            );
        }
    }

    /// Function files: frontmatter with a unique name and a description; at least one file.
    fn load_functions(
        &mut self,
        dir: &Path,
        limits: &LoadLimits,
        spec: &ComponentsSpec,
        m: &mut ManifestCtx,
    ) {
        let mut function_files = 0;
        for (i, path) in spec.functions.iter().flatten().enumerate() {
            let Some((path, text)) =
                read_listed(dir, limits, m, component_field("functions").i(i), path)
            else {
                self.unloaded.functions.extend(possible_names(path, None));
                continue;
            };
            function_files += 1;
            let functions = &self.functions;
            let Some(NamedDocument {
                front,
                lines,
                name,
                description,
            }) = named_document::<FunctionFront>(
                &path,
                &text,
                Rule::FrontmatterFunction,
                "function",
                |f| (&f.name, &f.description),
                |name| {
                    functions
                        .iter()
                        .find(|f| f.name == name)
                        .map(|f| f.path.as_str())
                },
                m.findings,
            )
            else {
                self.unloaded
                    .functions
                    .extend(possible_names(&path, Some(&text)));
                continue;
            };
            let session = front.session.as_deref();
            let Some(isolated) = function_session(&path, &lines, session, m.findings) else {
                self.unloaded.functions.insert(name);
                continue;
            };
            self.function_lines.insert(path.clone(), lines);
            self.functions.push(Function {
                path,
                name,
                description,
                tools: front.tools.unwrap_or_default(),
                knowledge: front.knowledge.unwrap_or_default(),
                isolated,
                text,
            });
        }
        if function_files == 0 {
            m.report(
                Rule::StructureFunctions,
                component_field("functions"),
                "no function file exists (at least one is required)",
            );
        }
    }

    /// Process files: frontmatter with a unique name and a description, and the runtime fields.
    fn load_processes(
        &mut self,
        dir: &Path,
        limits: &LoadLimits,
        spec: &ComponentsSpec,
        defaults: &RuntimeDefaults,
        m: &mut ManifestCtx,
    ) {
        for (i, path) in spec.processes.iter().flatten().enumerate() {
            let Some((path, text)) =
                read_listed(dir, limits, m, component_field("processes").i(i), path)
            else {
                self.unloaded.processes.extend(possible_names(path, None));
                continue;
            };
            let processes = &self.processes;
            let Some(NamedDocument {
                front,
                lines,
                name,
                description,
            }) = named_document::<ProcessFront>(
                &path,
                &text,
                Rule::FrontmatterProcess,
                "process",
                |p| (&p.name, &p.description),
                |name| {
                    processes
                        .iter()
                        .find(|p| p.name == name)
                        .map(|p| p.path.as_str())
                },
                m.findings,
            )
            else {
                self.unloaded
                    .processes
                    .extend(possible_names(&path, Some(&text)));
                continue;
            };
            let fields = process_fields(&path, &lines, &front, defaults, m.findings);
            self.process_lines.insert(path.clone(), lines);
            self.processes.push(Process {
                path,
                name,
                description,
                trigger: front.trigger,
                functions: front.functions.unwrap_or_default(),
                tools: front.tools.unwrap_or_default(),
                execution: fields.execution,
                delivery: fields.delivery,
                inputs: fields.inputs,
                outputs: fields.outputs,
                context: fields.context,
                scratchpad: fields.scratchpad,
                text,
            });
        }
    }

    /// Tool files (YAML), each declaring a unique tool.
    fn load_tools(
        &mut self,
        dir: &Path,
        limits: &LoadLimits,
        spec: &ComponentsSpec,
        m: &mut ManifestCtx,
    ) {
        for (i, path) in spec.tools.iter().flatten().enumerate() {
            let Some((path, text)) =
                read_listed(dir, limits, m, component_field("tools").i(i), path)
            else {
                self.unloaded.tools.extend(possible_names(path, None));
                continue;
            };
            let loaded = load_tool(&path, &text, m.findings);
            if loaded.is_none() {
                self.unloaded
                    .tools
                    .extend(possible_names(&path, Some(&text)));
            }
            if let Some((tool, lines)) = loaded {
                let earlier = self.tools.iter().find(|t| t.name == tool.name);
                if declared_twice(
                    "tool",
                    &tool.name,
                    earlier.map(|t| t.path.as_str()),
                    &path,
                    &lines,
                    m.findings,
                ) {
                    continue;
                }
                self.tool_lines.insert(path.clone(), lines);
                self.tools.push(tool);
            }
        }
    }

    /// Knowledge files: optional frontmatter, a known `type` (unknown could mean private).
    fn load_knowledge(
        &mut self,
        dir: &Path,
        limits: &LoadLimits,
        spec: &ComponentsSpec,
        m: &mut ManifestCtx,
    ) {
        for (i, path) in spec.knowledge.iter().flatten().enumerate() {
            let Some((path, text)) =
                read_listed(dir, limits, m, component_field("knowledge").i(i), path)
            else {
                continue;
            };
            let rule = Rule::FrontmatterKnowledge;
            let Some((front, lines)) =
                frontmatter::<KnowledgeFront>(&path, &text, rule, false, m.findings)
            else {
                continue;
            };
            let kind = match front.kind.as_deref() {
                None | Some("static") => KnowledgeKind::Static,
                Some("dynamic") => KnowledgeKind::Dynamic,
                Some("private") => KnowledgeKind::Private,
                Some(other) => {
                    // Unknown could mean private: refusing the package is the only safe reading.
                    let line = lines.line(&FieldPath::key("type"));
                    let message =
                        format!("type {other:?} is not one of `static`, `dynamic`, `private`");
                    m.findings
                        .push(finding(&path, line, rule, Some("type".into()), message));
                    continue;
                }
            };
            let name = front
                .name
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| stem(&path));
            // A private file's first line may be the secret itself: it is never a description.
            let description = front.description.or_else(|| {
                (kind != KnowledgeKind::Private)
                    .then(|| first_line(&text))
                    .flatten()
            });
            self.knowledge.push(Knowledge {
                name,
                description,
                kind,
                text,
                path,
            });
        }
    }

    /// State templates: optional frontmatter, a known `scope`, each path once.
    fn load_state(
        &mut self,
        dir: &Path,
        limits: &LoadLimits,
        spec: &ComponentsSpec,
        m: &mut ManifestCtx,
    ) {
        for (i, path) in spec.state.iter().flatten().enumerate() {
            let Some((path, text)) =
                read_listed(dir, limits, m, component_field("state").i(i), path)
            else {
                continue;
            };
            let rule = Rule::FrontmatterState;
            let Some((front, lines)) =
                frontmatter::<StateFront>(&path, &text, rule, false, m.findings)
            else {
                continue;
            };
            let scope = match front.scope.as_deref() {
                None | Some("persistent") => StateScope::Persistent,
                Some("session") => StateScope::Session,
                Some(other) => {
                    let line = lines.line(&FieldPath::key("scope"));
                    let message = format!("scope {other:?} is not one of `session`, `persistent`");
                    m.findings
                        .push(finding(&path, line, rule, Some("scope".into()), message));
                    continue;
                }
            };
            if self.state.iter().any(|s| s.path == path) {
                continue;
            }
            let name = front
                .name
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| stem(&path));
            self.state.push(StateFile {
                name,
                description: front.description,
                scope,
                text,
                path,
            });
        }
    }
}

/// A function's `session`: `isolated` runs it in a child session, `inline` (the default) in the
/// caller's; `None` (reported) for anything else.
fn function_session(
    path: &str,
    lines: &Lines,
    session: Option<&str>,
    findings: &mut Vec<Finding>,
) -> Option<bool> {
    let mut r = FrontmatterCtx {
        path,
        lines,
        findings,
    };
    let sessions = [("inline", false), ("isolated", true)];
    let field = FieldPath::key("session");
    match session {
        None => Some(false),
        Some(_) => check_choice(&mut r, Rule::FrontmatterFunction, field, session, &sessions),
    }
}
