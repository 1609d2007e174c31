//! An expert package as loaded (spec §2–§11) and phase 1 of validation: the manifest, every component
//! file, frontmatter, and the per-file rules. Cross-references are `validate`'s job.

use super::findings::{Finding, Rule};
use super::policy::{OnTimeout, Policy, Tier, parse_duration};
use super::validate;
use super::yaml::{self, FieldPath, Lines};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

pub const MANIFEST_FILE: &str = "expert.yaml";

/// Bounds on what the loader reads, so a huge or hostile package cannot exhaust memory.
#[derive(Clone, Debug)]
pub struct LoadLimits {
    /// Largest file read (expert.yaml, components, bindings, learnings).
    pub max_file_bytes: u64,
}

impl Default for LoadLimits {
    fn default() -> Self {
        LoadLimits {
            max_file_bytes: 1024 * 1024,
        }
    }
}

/// A validated package. Lists are sorted by name (state files by path; persona files keep the
/// manifest's order, which is the author's reading order).
#[derive(Clone, Debug)]
pub struct Package {
    pub dir: PathBuf,
    pub spec: String,
    pub name: String,
    pub version: String,
    pub description: String,
    pub author: Option<String>,
    pub license: Option<String>,
    /// `requires.tools`, sorted and deduplicated.
    pub required_tools: Vec<String>,
    pub triggers: Vec<Trigger>,
    pub concurrency: Concurrency,
    pub policy: Policy,
    pub learning_enabled: bool,
    pub outputs: Vec<String>,
    pub orchestrator: Document,
    pub persona: Vec<Document>,
    pub functions: Vec<Function>,
    pub processes: Vec<Process>,
    pub tools: Vec<Tool>,
    /// All knowledge, private included: callers that show knowledge use [`Package::public_knowledge`].
    pub knowledge: Vec<Knowledge>,
    pub state: Vec<StateFile>,
}

impl Package {
    /// Knowledge that may appear in indexes and summaries (spec §9: never `private`).
    pub fn public_knowledge(&self) -> impl Iterator<Item = &Knowledge> {
        self.knowledge
            .iter()
            .filter(|k| k.kind != KnowledgeKind::Private)
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Every operation the policy applies to, as `tool.operation`, sorted: the operations of the tool
    /// files plus any well-formed override key (an override is explicit even when undeclared).
    pub fn operations(&self) -> Vec<String> {
        let mut ops: Vec<String> = self
            .tools
            .iter()
            .flat_map(|t| {
                t.operations
                    .iter()
                    .map(move |o| format!("{}.{}", t.name, o.name))
            })
            .collect();
        ops.extend(
            self.policy
                .overrides
                .keys()
                .filter(|k| split_operation(k).is_some())
                .cloned(),
        );
        ops.sort();
        ops.dedup();
        ops
    }

    /// The effective tier of `tool.operation`.
    pub fn tier(&self, operation: &str) -> Tier {
        self.policy.tier(operation)
    }

    /// The session label the main agent delegates to (loader design §5).
    pub fn session_label(&self) -> String {
        format!("expert:{}", self.name)
    }
}

/// `tool.operation` split at the first dot; `None` unless both parts are non-empty.
pub fn split_operation(key: &str) -> Option<(&str, &str)> {
    key.split_once('.')
        .filter(|(t, o)| !t.is_empty() && !o.is_empty())
}

/// A markdown file loaded whole (orchestrator, persona).
#[derive(Clone, Debug)]
pub struct Document {
    /// Relative to the package, as written in `components` (without a leading `./`).
    pub path: String,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Function {
    pub path: String,
    pub name: String,
    pub description: String,
    pub tools: Vec<String>,
    pub knowledge: Vec<String>,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Process {
    pub path: String,
    pub name: String,
    pub description: String,
    pub trigger: Option<String>,
    pub functions: Vec<String>,
    pub tools: Vec<String>,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Tool {
    pub path: String,
    pub name: String,
    pub description: Option<String>,
    /// Sorted by name. The files' `approval` fields are documentation only and not read.
    pub operations: Vec<Operation>,
}

#[derive(Clone, Debug)]
pub struct Operation {
    pub name: String,
    pub description: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnowledgeKind {
    Static,
    Dynamic,
    Private,
}

#[derive(Clone, Debug)]
pub struct Knowledge {
    pub path: String,
    pub name: String,
    pub description: Option<String>,
    pub kind: KnowledgeKind,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateScope {
    Session,
    Persistent,
}

impl StateScope {
    pub fn as_str(self) -> &'static str {
        match self {
            StateScope::Session => "session",
            StateScope::Persistent => "persistent",
        }
    }
}

#[derive(Clone, Debug)]
pub struct StateFile {
    pub path: String,
    pub name: String,
    pub description: Option<String>,
    pub scope: StateScope,
    /// The template, written to the workspace on first run (and at each session for `session` scope).
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Trigger {
    pub name: String,
    /// `webhook`, `cron` or `channel`.
    pub kind: String,
    pub process: String,
    pub preset: Option<String>,
    pub requires_tool: Option<String>,
    pub expr: Option<String>,
    pub tz: Option<String>,
    /// The effective mode: the trigger's own, else the package default, else `parallel`.
    pub concurrency: String,
    /// The effective key when the mode is `serial_per_key`.
    pub concurrency_key: Option<String>,
    pub description: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Concurrency {
    pub default: String,
    pub key: Option<String>,
}

// ---- File formats (everything optional: missing fields are findings, not parse failures) ----

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ManifestFile {
    pub spec: Option<serde_norway::Value>,
    pub name: Option<String>,
    pub version: Option<serde_norway::Value>,
    pub description: Option<String>,
    pub author: Option<String>,
    pub license: Option<String>,
    pub requires: Option<RequiresSpec>,
    pub triggers: Option<Vec<TriggerSpec>>,
    pub concurrency: Option<ConcurrencySpec>,
    pub execution: Option<ExecutionSpec>,
    pub delivery: Option<DeliverySpec>,
    pub learning: Option<LearningSpec>,
    pub policy: Option<PolicySpec>,
    pub outputs: Option<Vec<String>>,
    pub components: Option<ComponentsSpec>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct RequiresSpec {
    pub tools: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct TriggerSpec {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub process: Option<String>,
    pub preset: Option<String>,
    pub requires_tool: Option<String>,
    pub expr: Option<String>,
    pub tz: Option<String>,
    pub session: Option<String>,
    pub concurrency: Option<String>,
    pub concurrency_key: Option<String>,
    pub description: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ConcurrencySpec {
    pub default: Option<String>,
    pub key: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ExecutionSpec {
    pub timeout: Option<String>,
    pub on_failure: Option<String>,
    pub retry: Option<RetrySpec>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct RetrySpec {
    pub max_attempts: Option<u64>,
    pub backoff: Option<String>,
    pub delay: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct DeliverySpec {
    pub format: Option<String>,
    pub channel: Option<String>,
    pub sla_breach: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct LearningSpec {
    pub enabled: Option<bool>,
    pub approval: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct PolicySpec {
    pub approval: Option<ApprovalSpec>,
    pub escalation: Option<EscalationSpec>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ApprovalSpec {
    pub default: Option<String>,
    pub overrides: Option<BTreeMap<String, String>>,
    pub timeout: Option<String>,
    pub on_timeout: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct EscalationSpec {
    pub channel: Option<String>,
    pub on_low_confidence: Option<bool>,
    pub on_manual_ready: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ComponentsSpec {
    pub orchestrator: Option<String>,
    pub persona: Option<Vec<String>>,
    pub functions: Option<Vec<String>>,
    pub processes: Option<Vec<String>>,
    pub tools: Option<Vec<String>>,
    pub knowledge: Option<Vec<String>>,
    pub state: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
struct FunctionFront {
    name: Option<String>,
    description: Option<String>,
    tools: Option<Vec<String>>,
    knowledge: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
struct ProcessFront {
    name: Option<String>,
    description: Option<String>,
    trigger: Option<String>,
    functions: Option<Vec<String>>,
    tools: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
struct KnowledgeFront {
    name: Option<String>,
    description: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct StateFront {
    name: Option<String>,
    description: Option<String>,
    scope: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ToolFile {
    name: Option<String>,
    description: Option<String>,
    operations: Option<Vec<OperationSpec>>,
}

#[derive(Debug, Default, Deserialize)]
struct OperationSpec {
    name: Option<String>,
    description: Option<String>,
}

// ---- Reading files ----

/// Why a file could not be read, and under which rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    pub rule: Rule,
    pub message: String,
}

/// Normalises a component path (drops `./`); `Err` when it is absolute or leaves the package.
pub fn clean_relative(path: &str) -> Result<String, String> {
    let trimmed = path.trim();
    if trimmed.is_empty() {
        return Err("the path is empty".into());
    }
    let mut parts = Vec::new();
    for component in Path::new(trimmed).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "{trimmed:?} must be a relative path inside the package (no `..`, not absolute)"
                ));
            }
        }
    }
    if parts.is_empty() {
        return Err(format!("{trimmed:?} names no file"));
    }
    Ok(parts.join("/"))
}

/// Reads `relative` under `dir` as UTF-8 text, refusing symbolic links on the way (a link could leave
/// the package or loop), directories, and files over the size limit.
pub fn read_text(dir: &Path, relative: &str, limits: &LoadLimits) -> Result<String, ReadError> {
    let path_error = |message: String| ReadError {
        rule: Rule::FilesPath,
        message,
    };
    let clean = clean_relative(relative).map_err(path_error)?;
    let mut path = dir.to_path_buf();
    let parts: Vec<&str> = clean.split('/').collect();
    for (n, part) in parts.iter().enumerate() {
        path.push(part);
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReadError {
                    rule: Rule::FilesExist,
                    message: format!("{clean} does not exist"),
                });
            }
            Err(e) => {
                return Err(ReadError {
                    rule: Rule::FilesReadable,
                    message: format!("{clean}: cannot read: {e}"),
                });
            }
        };
        if meta.file_type().is_symlink() {
            let at = parts[..=n].join("/");
            return Err(path_error(format!(
                "{at} is a symbolic link; package files must be regular files inside the package"
            )));
        }
        let last = n + 1 == parts.len();
        if last && !meta.is_file() {
            return Err(path_error(format!("{clean} is not a regular file")));
        }
        if !last && !meta.is_dir() {
            return Err(ReadError {
                rule: Rule::FilesExist,
                message: format!("{clean} does not exist"),
            });
        }
        if last && meta.len() > limits.max_file_bytes {
            return Err(ReadError {
                rule: Rule::FilesReadable,
                message: format!(
                    "{clean} is {} bytes, over the {}-byte limit",
                    meta.len(),
                    limits.max_file_bytes
                ),
            });
        }
    }
    let mut bytes = Vec::new();
    let read = fs::File::open(&path)
        .and_then(|f| f.take(limits.max_file_bytes + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return Err(ReadError {
            rule: Rule::FilesReadable,
            message: format!("{clean}: cannot read: {e}"),
        });
    }
    if bytes.len() as u64 > limits.max_file_bytes {
        return Err(ReadError {
            rule: Rule::FilesReadable,
            message: format!("{clean} is over the {}-byte limit", limits.max_file_bytes),
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| ReadError {
        rule: Rule::FilesReadable,
        message: format!(
            "{clean} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
    })?;
    Ok(text
        .strip_prefix('\u{feff}')
        .map(str::to_string)
        .unwrap_or(text))
}

// ---- Loading ----

/// The outcome of loading one package: the package when phase 1 found no error, and every finding.
#[derive(Clone, Debug)]
pub struct PackageLoad {
    pub dir: PathBuf,
    /// The manifest's name when it has one, else the directory's name.
    pub name: String,
    pub package: Option<Package>,
    pub findings: Vec<Finding>,
}

/// Collects findings about the manifest with the lines of their fields.
pub(crate) struct ManifestCtx<'a> {
    pub lines: Lines,
    pub findings: &'a mut Vec<Finding>,
}

impl ManifestCtx<'_> {
    pub fn report(&mut self, rule: Rule, field: FieldPath, message: impl Into<String>) {
        let line = self.lines.line(&field);
        let field = (!field.0.is_empty()).then(|| field.to_string());
        self.findings.push(Finding {
            file: MANIFEST_FILE.into(),
            line,
            rule,
            field,
            message: message.into(),
        });
    }
}

/// Loads and validates (phase 1) the package in `dir`.
pub fn load_package(dir: &Path, limits: &LoadLimits) -> PackageLoad {
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let mut findings = Vec::new();
    let package = load_inner(dir, limits, &mut findings);
    findings.sort();
    findings.dedup();
    let has_errors = findings.iter().any(Finding::is_error);
    let name = match &package {
        Some(p) if !p.name.is_empty() => p.name.clone(),
        _ => dir_name,
    };
    PackageLoad {
        dir: dir.to_path_buf(),
        name,
        package: package.filter(|_| !has_errors),
        findings,
    }
}

pub(crate) fn finding(
    file: &str,
    line: Option<u32>,
    rule: Rule,
    field: Option<String>,
    message: impl Into<String>,
) -> Finding {
    Finding {
        file: file.into(),
        line,
        rule,
        field,
        message: message.into(),
    }
}

fn load_inner(dir: &Path, limits: &LoadLimits, findings: &mut Vec<Finding>) -> Option<Package> {
    let text = match read_text(dir, MANIFEST_FILE, limits) {
        Ok(text) => text,
        Err(e) => {
            let message = if e.rule == Rule::FilesExist {
                "expert.yaml does not exist".to_string()
            } else {
                e.message
            };
            findings.push(finding(
                MANIFEST_FILE,
                None,
                Rule::ManifestExists,
                None,
                message,
            ));
            return None;
        }
    };
    let manifest: ManifestFile = match yaml::parse(&text) {
        Ok(m) => m,
        Err(e) => {
            findings.push(finding(
                MANIFEST_FILE,
                e.line,
                Rule::ManifestSyntax,
                e.field,
                e.message,
            ));
            return None;
        }
    };
    let mut m = ManifestCtx {
        lines: Lines::new(&text, 1),
        findings,
    };

    let spec = scalar_text(&mut m, "spec", manifest.spec.as_ref());
    let version = scalar_text(&mut m, "version", manifest.version.as_ref());
    let name = manifest.name.clone().unwrap_or_default();
    let description = manifest.description.clone().unwrap_or_default();
    for (field, present) in [
        (
            "spec",
            spec.as_deref().is_some_and(|s| !s.trim().is_empty()),
        ),
        ("name", !name.trim().is_empty()),
        (
            "version",
            version.as_deref().is_some_and(|s| !s.trim().is_empty()),
        ),
        ("description", !description.trim().is_empty()),
        ("components", manifest.components.is_some()),
    ] {
        if !present {
            m.report(
                Rule::ManifestRequiredFields,
                FieldPath::key(field),
                format!("required field `{field}` is missing or empty"),
            );
        }
    }
    if !name.trim().is_empty() && !is_safe_name(&name) {
        m.report(
            Rule::ManifestName,
            FieldPath::key("name"),
            format!("{name:?} must be one path segment of letters, digits, `-`, `_` or `.` (it names the workspace directory and the session)"),
        );
    }
    if let Some(spec) = spec.as_deref().filter(|s| !s.trim().is_empty())
        && !(spec == "1" || spec.starts_with("1."))
    {
        m.report(
            Rule::ManifestSpecVersion,
            FieldPath::key("spec"),
            format!("spec {spec:?} is not a 1.x version; this loader implements spec 1.0"),
        );
    }

    let required_tools = required_tools(&mut m, &manifest);
    let concurrency = check_concurrency(&mut m, &manifest);
    let triggers = check_triggers(&mut m, &manifest, &concurrency);
    check_execution_and_delivery(&mut m, &manifest);
    let policy = check_policy(&mut m, &manifest);
    let learning_enabled = check_learning(&mut m, &manifest);

    let empty = ComponentsSpec::default();
    let components = manifest.components.as_ref().unwrap_or(&empty);
    let loaded = Components::load(dir, limits, components, &mut m);
    check_readme(dir, &mut m);
    validate::cross_references(&manifest, &required_tools, &policy, &loaded, &mut m);
    validate::learnings(dir, limits, &loaded.functions, m.findings);

    let (Some(orchestrator), Some(spec), Some(version)) = (loaded.orchestrator, spec, version)
    else {
        return None;
    };
    let mut functions = loaded.functions;
    functions.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    let mut processes = loaded.processes;
    processes.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    let mut tools = loaded.tools;
    tools.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    let mut knowledge = loaded.knowledge;
    knowledge.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    let mut state = loaded.state;
    state.sort_by(|a, b| a.path.cmp(&b.path));
    let mut outputs = manifest.outputs.clone().unwrap_or_default();
    outputs.retain(|o| !o.trim().is_empty());
    Some(Package {
        dir: dir.to_path_buf(),
        spec,
        name,
        version,
        description,
        author: manifest.author.clone(),
        license: manifest.license.clone(),
        required_tools,
        triggers,
        concurrency,
        policy,
        learning_enabled,
        outputs,
        orchestrator,
        persona: loaded.persona,
        functions,
        processes,
        tools,
        knowledge,
        state,
    })
}

/// A name safe as one path segment and in a session label.
pub fn is_safe_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `spec` and `version` may be written unquoted (`1.0` is a YAML number).
fn scalar_text(
    m: &mut ManifestCtx,
    field: &str,
    value: Option<&serde_norway::Value>,
) -> Option<String> {
    match value? {
        serde_norway::Value::String(s) => Some(s.clone()),
        serde_norway::Value::Number(n) => Some(n.to_string()),
        serde_norway::Value::Null => None,
        _ => {
            m.report(
                Rule::ManifestSyntax,
                FieldPath::key(field),
                format!("`{field}` must be a string such as \"1.0\""),
            );
            None
        }
    }
}

fn required_tools(m: &mut ManifestCtx, manifest: &ManifestFile) -> Vec<String> {
    let listed = manifest
        .requires
        .as_ref()
        .and_then(|r| r.tools.clone())
        .unwrap_or_default();
    let mut tools = Vec::new();
    for (i, tool) in listed.iter().enumerate() {
        let field = FieldPath::key("requires").k("tools").i(i);
        if tool.trim().is_empty() || tool.contains('.') {
            m.report(
                Rule::ManifestValues,
                field,
                format!("{tool:?} is not a tool name (non-empty, without `.`)"),
            );
        } else if tools.contains(tool) {
            m.report(
                Rule::NamesUnique,
                field,
                format!("tool {tool:?} is listed twice"),
            );
        } else {
            tools.push(tool.clone());
        }
    }
    tools.sort();
    tools
}

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

fn check_concurrency(m: &mut ManifestCtx, manifest: &ManifestFile) -> Concurrency {
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

fn check_triggers(
    m: &mut ManifestCtx,
    manifest: &ManifestFile,
    concurrency: &Concurrency,
) -> Vec<Trigger> {
    let mut triggers: Vec<Trigger> = Vec::new();
    for (i, t) in manifest.triggers.iter().flatten().enumerate() {
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
        if t.kind.as_deref() == Some("cron")
            && t.expr.as_deref().is_none_or(|e| e.trim().is_empty())
        {
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
        if !name.is_empty() && triggers.iter().any(|other| other.name == name) {
            m.report(
                Rule::NamesUnique,
                at("name"),
                format!("trigger {name:?} is declared twice"),
            );
            continue;
        }
        triggers.push(Trigger {
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
        });
    }
    triggers.sort_by(|a, b| a.name.cmp(&b.name));
    triggers
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

fn check_execution_and_delivery(m: &mut ManifestCtx, manifest: &ManifestFile) {
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

fn check_policy(m: &mut ManifestCtx, manifest: &ManifestFile) -> Policy {
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

fn check_learning(m: &mut ManifestCtx, manifest: &ManifestFile) -> bool {
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

fn check_readme(dir: &Path, m: &mut ManifestCtx) {
    let present = fs::symlink_metadata(dir.join("README.md")).is_ok_and(|meta| meta.is_file());
    if !present {
        m.findings.push(finding(
            "README.md",
            None,
            Rule::StructureReadme,
            None,
            "README.md is missing (spec §2 lists it as a required component)",
        ));
    }
}

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

fn stem(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".md")
        .or_else(|| file.strip_suffix(".yaml"))
        .or_else(|| file.strip_suffix(".yml"))
        .unwrap_or(file)
        .to_string()
}

/// Frontmatter of a markdown component, parsed into `T`, with its lines; findings under `rule`.
pub(crate) fn frontmatter<T: serde::de::DeserializeOwned + Default>(
    path: &str,
    text: &str,
    rule: Rule,
    required: bool,
    findings: &mut Vec<Finding>,
) -> Option<(T, Lines)> {
    let fm = match yaml::split_frontmatter(text) {
        Ok(fm) => fm,
        Err(why) => {
            findings.push(finding(path, Some(1), rule, None, why));
            return None;
        }
    };
    let Some(yaml_text) = fm.yaml else {
        if required {
            findings.push(finding(
                path,
                Some(1),
                rule,
                None,
                "has no YAML frontmatter (a `---` block with name and description)",
            ));
            return None;
        }
        return Some((T::default(), Lines::new("", 1)));
    };
    match yaml::parse::<T>(yaml_text) {
        Ok(value) => Some((value, Lines::new(yaml_text, fm.first_line))),
        Err(e) => {
            findings.push(finding(
                path,
                e.line.map(|l| l + fm.first_line - 1),
                rule,
                e.field,
                e.message,
            ));
            None
        }
    }
}

/// A function's or process's `name` and `description`, both required (each missing one reported).
fn name_and_description(
    path: &str,
    lines: &Lines,
    rule: Rule,
    name: &Option<String>,
    description: &Option<String>,
    findings: &mut Vec<Finding>,
) -> Option<(String, String)> {
    let name = require_text(path, lines, rule, "name", name, findings);
    let description = require_text(path, lines, rule, "description", description, findings);
    Some((name?, description?))
}

/// Reports `name` when a file read earlier (`earlier`) already declared it; true when it did.
fn declared_twice(
    what: &str,
    name: &str,
    earlier: Option<&str>,
    path: &str,
    lines: &Lines,
    findings: &mut Vec<Finding>,
) -> bool {
    let Some(earlier) = earlier else { return false };
    findings.push(finding(
        path,
        lines.line(&FieldPath::key("name")),
        Rule::NamesUnique,
        Some("name".into()),
        format!("{what} {name:?} is also declared by {earlier}"),
    ));
    true
}

fn require_text(
    path: &str,
    lines: &Lines,
    rule: Rule,
    field: &str,
    value: &Option<String>,
    findings: &mut Vec<Finding>,
) -> Option<String> {
    match value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
        Some(v) => Some(v.to_string()),
        None => {
            let line = lines.line(&FieldPath::key(field));
            findings.push(finding(
                path,
                line.or(Some(1)),
                rule,
                Some(field.into()),
                format!("frontmatter field `{field}` is required"),
            ));
            None
        }
    }
}

impl Components {
    fn load(
        dir: &Path,
        limits: &LoadLimits,
        spec: &ComponentsSpec,
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
        };
        let list = |key: &str| FieldPath::key("components").k(key);

        match spec.orchestrator.as_deref() {
            None => m.report(
                Rule::StructureOrchestrator,
                list("orchestrator"),
                "components.orchestrator is missing",
            ),
            Some(path) => match read_listed(dir, limits, m, list("orchestrator"), path) {
                Some((path, text)) => c.orchestrator = Some(Document { path, text }),
                None => {
                    // Reported once, under the structure rule, whatever the reason.
                    if let Some(last) = m.findings.last_mut()
                        && last.rule == Rule::FilesExist
                    {
                        last.rule = Rule::StructureOrchestrator;
                        last.message = format!("{} (the orchestrator)", last.message);
                    }
                }
            },
        }

        for (i, path) in spec.persona.iter().flatten().enumerate() {
            if let Some((path, text)) = read_listed(dir, limits, m, list("persona").i(i), path) {
                c.persona.push(Document { path, text });
            }
        }
        if c.persona.is_empty() {
            m.report(
                Rule::StructurePersona,
                list("persona"),
                "no persona file exists (at least one is required)",
            );
        }

        let mut function_files = 0;
        for (i, path) in spec.functions.iter().flatten().enumerate() {
            let Some((path, text)) = read_listed(dir, limits, m, list("functions").i(i), path)
            else {
                continue;
            };
            function_files += 1;
            let rule = Rule::FrontmatterFunction;
            let Some((front, lines)) =
                frontmatter::<FunctionFront>(&path, &text, rule, true, m.findings)
            else {
                continue;
            };
            let Some((name, description)) = name_and_description(
                &path,
                &lines,
                rule,
                &front.name,
                &front.description,
                m.findings,
            ) else {
                continue;
            };
            let earlier = c.functions.iter().find(|f| f.name == name);
            if declared_twice(
                "function",
                &name,
                earlier.map(|f| f.path.as_str()),
                &path,
                &lines,
                m.findings,
            ) {
                continue;
            }
            c.function_lines.insert(path.clone(), lines);
            c.functions.push(Function {
                path,
                name,
                description,
                tools: front.tools.unwrap_or_default(),
                knowledge: front.knowledge.unwrap_or_default(),
                text,
            });
        }
        if function_files == 0 {
            m.report(
                Rule::StructureFunctions,
                list("functions"),
                "no function file exists (at least one is required)",
            );
        }

        for (i, path) in spec.processes.iter().flatten().enumerate() {
            let Some((path, text)) = read_listed(dir, limits, m, list("processes").i(i), path)
            else {
                continue;
            };
            let rule = Rule::FrontmatterProcess;
            let Some((front, lines)) =
                frontmatter::<ProcessFront>(&path, &text, rule, true, m.findings)
            else {
                continue;
            };
            let Some((name, description)) = name_and_description(
                &path,
                &lines,
                rule,
                &front.name,
                &front.description,
                m.findings,
            ) else {
                continue;
            };
            let earlier = c.processes.iter().find(|p| p.name == name);
            if declared_twice(
                "process",
                &name,
                earlier.map(|p| p.path.as_str()),
                &path,
                &lines,
                m.findings,
            ) {
                continue;
            }
            c.process_lines.insert(path.clone(), lines);
            c.processes.push(Process {
                path,
                name,
                description,
                trigger: front.trigger,
                functions: front.functions.unwrap_or_default(),
                tools: front.tools.unwrap_or_default(),
                text,
            });
        }

        for (i, path) in spec.tools.iter().flatten().enumerate() {
            let Some((path, text)) = read_listed(dir, limits, m, list("tools").i(i), path) else {
                continue;
            };
            if let Some((tool, lines)) = load_tool(&path, &text, m.findings) {
                let earlier = c.tools.iter().find(|t| t.name == tool.name);
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
                c.tool_lines.insert(path.clone(), lines);
                c.tools.push(tool);
            }
        }

        for (i, path) in spec.knowledge.iter().flatten().enumerate() {
            let Some((path, text)) = read_listed(dir, limits, m, list("knowledge").i(i), path)
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
            c.knowledge.push(Knowledge {
                name,
                description: front.description,
                kind,
                text,
                path,
            });
        }

        for (i, path) in spec.state.iter().flatten().enumerate() {
            let Some((path, text)) = read_listed(dir, limits, m, list("state").i(i), path) else {
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
            if c.state.iter().any(|s| s.path == path) {
                continue;
            }
            let name = front
                .name
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| stem(&path));
            c.state.push(StateFile {
                name,
                description: front.description,
                scope,
                text,
                path,
            });
        }
        c
    }
}

fn load_tool(path: &str, text: &str, findings: &mut Vec<Finding>) -> Option<(Tool, Lines)> {
    let rule = Rule::ToolSyntax;
    let file: ToolFile = match yaml::parse(text) {
        Ok(file) => file,
        Err(e) => {
            findings.push(finding(path, e.line, rule, e.field, e.message));
            return None;
        }
    };
    let lines = Lines::new(text, 1);
    let mut ok = true;
    let name = file.name.clone().unwrap_or_default();
    if name.trim().is_empty() || name.contains('.') {
        let message = if name.trim().is_empty() {
            "`name` is required".to_string()
        } else {
            format!("{name:?} must not contain `.`")
        };
        findings.push(finding(
            path,
            lines.line(&FieldPath::key("name")).or(Some(1)),
            rule,
            Some("name".into()),
            message,
        ));
        ok = false;
    }
    let Some(specs) = &file.operations else {
        findings.push(finding(
            path,
            Some(1),
            rule,
            Some("operations".into()),
            "`operations` is required (a list of operations)",
        ));
        return None;
    };
    let mut operations: Vec<Operation> = Vec::new();
    for (i, op) in specs.iter().enumerate() {
        let field = FieldPath::key("operations").i(i).k("name");
        match op.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
            None => {
                findings.push(finding(
                    path,
                    lines.line(&field),
                    rule,
                    Some(field.to_string()),
                    "every operation needs a `name`",
                ));
                ok = false;
            }
            Some(op_name) if operations.iter().any(|o| o.name == op_name) => {
                let message = format!("operation {op_name:?} is declared twice");
                findings.push(finding(
                    path,
                    lines.line(&field),
                    Rule::NamesUnique,
                    Some(field.to_string()),
                    message,
                ));
            }
            Some(op_name) => operations.push(Operation {
                name: op_name.to_string(),
                description: op.description.clone(),
            }),
        }
    }
    if !ok {
        return None;
    }
    operations.sort_by(|a, b| a.name.cmp(&b.name));
    Some((
        Tool {
            path: path.to_string(),
            name,
            description: file.description,
            operations,
        },
        lines,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_stay_inside() {
        assert_eq!(
            clean_relative("./functions/a.md"),
            Ok("functions/a.md".into())
        );
        assert!(clean_relative("../x.md").is_err());
        assert!(clean_relative("/etc/passwd").is_err());
        assert!(clean_relative("a/../../x").is_err());
        assert!(clean_relative("").is_err());
        assert!(clean_relative(".").is_err());
    }

    #[test]
    fn safe_names() {
        assert!(is_safe_name("trip-planner_2.0"));
        for bad in ["", "../x", "a/b", ".hidden", "a b", "ü"] {
            assert!(!is_safe_name(bad), "{bad}");
        }
    }

    #[test]
    fn numbers_keep_their_spelling() {
        let v: serde_norway::Value = serde_norway::from_str("1.0").unwrap();
        let serde_norway::Value::Number(n) = v else {
            panic!()
        };
        assert_eq!(n.to_string(), "1.0");
    }
}
