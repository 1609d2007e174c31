//! Phase 2 of validation (loader design §3): the user's `bindings.yaml`, which binds each abstract tool
//! of a package to an MCP server and optionally maps operation names to the server's tool names.

use super::findings::{Finding, Rule, finding};
use super::package::{LoadLimits, Package, read_text};
use super::yaml::{self, FieldPath, Lines};
use serde::Deserialize;
use std::collections::BTreeMap;

/// User-created, in the package directory beside `expert.yaml` (loader design §3); not part of the
/// package itself.
pub const BINDINGS_FILE: &str = "bindings.yaml";

/// The bindings that passed validation, by abstract tool name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bindings {
    pub tools: BTreeMap<String, ToolBinding>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolBinding {
    /// The MCP server configured in OpenClaw.
    pub server: String,
    /// Operation name → the server's tool name, where they differ.
    pub operations: BTreeMap<String, String>,
}

impl ToolBinding {
    /// The server's tool name for `operation` (the operation's own name unless mapped).
    pub fn mcp_tool<'a>(&'a self, operation: &'a str) -> &'a str {
        self.operations
            .get(operation)
            .map(String::as_str)
            .unwrap_or(operation)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BindingsFile {
    tools: Option<BTreeMap<String, BindingSpec>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BindingSpec {
    #[serde(rename = "type")]
    kind: Option<String>,
    server: Option<String>,
    operations: Option<BTreeMap<String, String>>,
    /// Read only to refuse it by name: see [`refuse_skill`].
    skill: Option<String>,
}

/// Reads and checks `bindings.yaml` for `package`. `known_servers` is the list of MCP servers configured
/// in OpenClaw; `None` skips that check (the caller does not know them).
pub fn load_bindings(
    package: &Package,
    known_servers: Option<&[String]>,
    limits: &LoadLimits,
) -> (Bindings, Vec<Finding>) {
    let mut findings = Vec::new();
    let bindings = check(package, known_servers, limits, &mut findings);
    crate::platform::sorting::sort(&mut findings);
    (bindings, findings)
}

fn check(
    package: &Package,
    known_servers: Option<&[String]>,
    limits: &LoadLimits,
    findings: &mut Vec<Finding>,
) -> Bindings {
    let mut bindings = Bindings::default();
    let Some((text, file)) = read_bindings(package, limits, findings) else {
        return bindings;
    };
    let lines = Lines::new(&text, 1);
    let mut report = |rule: Rule, field: FieldPath, message: String| {
        findings.push(finding(
            BINDINGS_FILE,
            lines.line(&field),
            rule,
            Some(field.to_string()),
            message,
        ));
    };
    let specs = file.tools.unwrap_or_default();
    for (tool, spec) in &specs {
        let at = FieldPath::key("tools").k(tool);
        if !package.required_tools.contains(tool) {
            report(
                Rule::BindingsUnknownTool,
                at.clone(),
                format!("tool {tool:?} is not in the package's requires.tools"),
            );
            continue;
        }
        if let Some(binding) = check_binding(package, known_servers, tool, spec, &at, &mut report) {
            bindings.tools.insert(tool.clone(), binding);
        }
    }
    for tool in &package.required_tools {
        if !specs.contains_key(tool) {
            report(
                Rule::BindingsUnbound,
                FieldPath::key("tools"),
                format!("tool {tool:?} is not bound to an MCP server"),
            );
        }
    }
    bindings
}

/// `bindings.yaml` as text and parsed, or the findings why not (every tool unbound when it is absent).
fn read_bindings(
    package: &Package,
    limits: &LoadLimits,
    findings: &mut Vec<Finding>,
) -> Option<(String, BindingsFile)> {
    let text = match read_text(&package.dir, BINDINGS_FILE, limits) {
        Ok(text) => text,
        Err(e) if e.rule == Rule::FilesExist => {
            for tool in &package.required_tools {
                let message = format!("tool {tool:?} is not bound: {BINDINGS_FILE} does not exist");
                findings.push(finding(
                    BINDINGS_FILE,
                    None,
                    Rule::BindingsUnbound,
                    None,
                    message,
                ));
            }
            return None;
        }
        Err(e) => {
            findings.push(finding(
                BINDINGS_FILE,
                None,
                Rule::BindingsSyntax,
                None,
                e.message,
            ));
            return None;
        }
    };
    let file: BindingsFile = match yaml::parse(&text) {
        Ok(file) => file,
        Err(e) => {
            findings.push(finding(
                BINDINGS_FILE,
                e.line,
                Rule::BindingsSyntax,
                e.field,
                e.message,
            ));
            return None;
        }
    };
    Some((text, file))
}

/// One required tool's binding: type, server (configured, when known) and operation names; `None`
/// when any of them is wrong.
fn check_binding(
    package: &Package,
    known_servers: Option<&[String]>,
    tool: &str,
    spec: &BindingSpec,
    at: &FieldPath,
    report: &mut impl FnMut(Rule, FieldPath, String),
) -> Option<ToolBinding> {
    if spec.kind.as_deref() == Some("skill") || spec.skill.is_some() {
        refuse_skill(tool, spec, at, report);
        return None;
    }
    let mut ok = true;
    if let Some(kind) = spec.kind.as_deref().filter(|k| *k != "mcp") {
        report(
            Rule::BindingsSyntax,
            at.clone().k("type"),
            format!("type {kind:?} is not supported (only `mcp`)"),
        );
        ok = false;
    }
    let server = spec.server.as_deref().map(str::trim).unwrap_or("");
    if server.is_empty() {
        report(
            Rule::BindingsSyntax,
            at.clone().k("server"),
            "`server` (the MCP server's name) is required".into(),
        );
        ok = false;
    } else if let Some(known) = known_servers
        && !known.iter().any(|k| k == server)
    {
        let mut sorted: Vec<&str> = known.iter().map(String::as_str).collect();
        crate::platform::sorting::sort(&mut sorted);
        let list = if sorted.is_empty() {
            "none are configured".to_string()
        } else {
            format!("configured: {}", sorted.join(", "))
        };
        report(
            Rule::BindingsUnknownServer,
            at.clone().k("server"),
            format!("MCP server {server:?} is not configured ({list})"),
        );
        ok = false;
    }
    let operations = check_operations(package, tool, spec, at, report, &mut ok);
    ok.then(|| ToolBinding {
        server: server.to_string(),
        operations,
    })
}

/// A tool bound to an OpenClaw skill: refused, since a skill has no typed operations for the
/// approval gate, which judges each tool call by its operation, to hold back.
fn refuse_skill(
    tool: &str,
    spec: &BindingSpec,
    at: &FieldPath,
    report: &mut impl FnMut(Rule, FieldPath, String),
) {
    let (field, what) = match &spec.skill {
        Some(skill) => (
            at.clone().k("skill"),
            format!("the OpenClaw skill {skill:?}"),
        ),
        None => (at.clone().k("type"), "an OpenClaw skill".to_string()),
    };
    report(
        Rule::BindingsSkill,
        field,
        format!(
            "tool {tool:?} is bound to {what}, and skill bindings are not supported: a skill exposes \
             no typed operations, so the package's approval policy, which is applied to each tool \
             call by its operation, could not hold for it. Bind the tool to an MCP server \
             (`type: mcp`, `server: <name>`)"
        ),
    );
}

/// The operation → MCP tool name map: no empty names (clears `ok`), operations the tool file declares.
fn check_operations(
    package: &Package,
    tool: &str,
    spec: &BindingSpec,
    at: &FieldPath,
    report: &mut impl FnMut(Rule, FieldPath, String),
    ok: &mut bool,
) -> BTreeMap<String, String> {
    let mut operations = BTreeMap::new();
    for (operation, mcp_name) in spec.operations.iter().flatten() {
        let field = at.clone().k("operations").k(operation);
        if mcp_name.trim().is_empty() {
            report(
                Rule::BindingsSyntax,
                field,
                format!("operation {operation:?} is mapped to an empty tool name"),
            );
            *ok = false;
            continue;
        }
        if let Some(declared) = package.tool(tool)
            && !declared.declares(operation)
        {
            report(
                Rule::BindingsUnknownOperation,
                field,
                format!(
                    "operation {operation:?} is not declared in {}",
                    declared.path
                ),
            );
        }
        operations.insert(operation.clone(), mcp_name.trim().to_string());
    }
    operations
}
