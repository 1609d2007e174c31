//! The text of the `experts` commands (`list`, `validate`, `prompt`, `registry`), rendered here so every
//! host prints the same. Each returns whether it succeeded, for the exit code.

use super::findings::{Finding, Rule};
use super::loader::{LoadOptions, LoadedExpert, find_expert, load_all};
use super::package::StateScope;
use super::prompt::{PromptLimits, assemble_prompt, one_line};
use super::registry::{RegistryLimits, experts_md};
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandText {
    pub text: String,
    /// False when the command failed (a package with errors, an unknown name, an unreadable root).
    pub ok: bool,
}

fn failed(text: String) -> CommandText {
    CommandText {
        text: text + "\n",
        ok: false,
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `experts list`: one line per package under the root, sorted by name.
pub fn experts_list(root: &Path, options: &LoadOptions) -> CommandText {
    match load_all(root, options) {
        Ok(experts) => render_list(&experts),
        Err(why) => failed(why),
    }
}

pub fn render_list(experts: &[LoadedExpert]) -> CommandText {
    let ready = experts.iter().filter(|e| e.ready().is_some()).count();
    let mut out = format!(
        "{}: {ready} ready, {} with errors\n",
        plural(experts.len(), "expert"),
        experts.len() - ready
    );
    for e in experts {
        let warnings = match e.warnings() {
            0 => String::new(),
            n => format!(" ({})", plural(n, "warning")),
        };
        match e.ready() {
            Some(p) => {
                out.push_str(&format!(
                    "✓ {} {} — {}{warnings}\n",
                    p.name,
                    one_line(&p.version, 40),
                    one_line(&p.description, 100)
                ));
            }
            None => out.push_str(&format!(
                "✗ {} — {}{warnings}; see: experts validate {}\n",
                one_line(&e.name, 100),
                plural(e.errors(), "error"),
                one_line(&e.name, 100)
            )),
        }
    }
    CommandText {
        text: out,
        ok: true,
    }
}

/// `experts validate <name|path>`.
pub fn experts_validate(root: &Path, target: &str, options: &LoadOptions) -> CommandText {
    match find_expert(root, target, options) {
        Ok(expert) => render_validate(&expert, options.known_servers.is_some()),
        Err(why) => failed(why),
    }
}

/// Which check line a rule belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    Structure,
    Settings,
    CrossReferences,
    Bindings,
    Servers,
    State,
}

fn check_of(rule: Rule) -> Check {
    use Rule::*;
    match rule {
        ManifestValues | TriggerPreset | TriggerSeconds | PolicyValues | LearningApproval => {
            Check::Settings
        }
        XrefTriggerProcess
        | XrefProcessTrigger
        | XrefProcessFunctions
        | XrefToolsDeclared
        | XrefFunctionKnowledge
        | XrefPolicyOverrides
        | XrefToolFile
        | XrefPayloadMapping
        | XrefPrivateContext
        | LearningScope => Check::CrossReferences,
        BindingsSyntax | BindingsUnbound | BindingsUnknownOperation | BindingsUnknownTool => {
            Check::Bindings
        }
        BindingsUnknownServer => Check::Servers,
        FrontmatterState => Check::State,
        _ => Check::Structure,
    }
}

/// ✓ clean, ⚠ warnings only, ✗ errors.
fn mark(findings: &[&Finding]) -> &'static str {
    if findings.iter().any(|f| f.is_error()) {
        "✗"
    } else if findings.is_empty() {
        "✓"
    } else {
        "⚠"
    }
}

/// `✓`/`⚠`/`✗` per check (loader design §9), then every finding, then the verdict.
pub fn render_validate(expert: &LoadedExpert, servers_checked: bool) -> CommandText {
    let package = expert.package.as_ref();
    let mut out = format!("Validating {}\n", one_line(&expert.name, 100));
    out.push_str(&structure_line(expert));
    out.push_str(&check_line(
        expert,
        Check::Settings,
        "Manifest settings",
        "valid (triggers, execution, delivery, policy, learning)",
    ));
    out.push_str(&check_line(
        expert,
        Check::CrossReferences,
        "Cross-references",
        "intact (triggers → processes → functions, tools, knowledge, policy)",
    ));
    out.push_str(&binding_lines(expert, servers_checked));
    out.push_str(&state_line(expert));
    if let Some(p) = package.filter(|p| !p.triggers.is_empty()) {
        let triggers: Vec<String> = p
            .triggers
            .iter()
            .map(|t| match t.inactive() {
                Some(why) => format!("{}: {}, inactive: {why}", t.name, t.kind),
                None => format!("{}: {}", t.name, t.kind),
            })
            .collect();
        out.push_str(&format!(
            "✓ Triggers declared ({})\n",
            one_line(&triggers.join(", "), 300)
        ));
    }

    if !expert.findings.is_empty() {
        out.push('\n');
        for f in &expert.findings {
            out.push_str(&format!("{f}\n"));
        }
    }
    let errors = expert.errors();
    out.push('\n');
    out.push_str(&verdict(expert));
    out.push('\n');
    CommandText {
        text: out,
        ok: errors == 0,
    }
}

/// The findings of one check.
fn findings_of(expert: &LoadedExpert, check: Check) -> Vec<&Finding> {
    expert
        .findings
        .iter()
        .filter(|f| check_of(f.rule) == check)
        .collect::<Vec<_>>()
}

fn structure_line(expert: &LoadedExpert) -> String {
    let structure = findings_of(expert, Check::Structure);
    let spec = expert
        .package
        .as_ref()
        .map(|p| format!(" (spec {})", one_line(&p.spec, 20)))
        .unwrap_or_default();
    format!("{} Package structure valid{spec}\n", mark(&structure))
}

/// A check's line, or "not checked" when the manifest could not be read.
fn check_line(expert: &LoadedExpert, check: Check, what: &str, verdict: &str) -> String {
    // Without a readable manifest nothing else was checked; a ✓ would claim otherwise.
    let manifest_read = !expert
        .findings
        .iter()
        .any(|f| matches!(f.rule, Rule::ManifestExists | Rule::ManifestSyntax));
    if manifest_read {
        format!("{} {what} {verdict}\n", mark(&findings_of(expert, check)))
    } else {
        format!("– {what} not checked\n")
    }
}

/// The bindings and MCP servers lines (phase 2, only when the package loaded).
fn binding_lines(expert: &LoadedExpert, servers_checked: bool) -> String {
    let mut out = String::new();
    match expert.package.as_ref() {
        None => {
            out.push_str("– Tool bindings not checked (the package did not load)\n");
            out.push_str("– MCP servers not checked\n");
        }
        Some(p) => {
            let bound = if p.required_tools.is_empty() {
                " (the package requires no tools)".to_string()
            } else {
                let pairs: Vec<String> = p
                    .required_tools
                    .iter()
                    .map(|t| match expert.bindings.tools.get(t) {
                        Some(b) => format!("{t} → {}", b.server),
                        None => format!("{t} → ?"),
                    })
                    .collect();
                format!(" ({})", one_line(&pairs.join(", "), 300))
            };
            out.push_str(&format!(
                "{} All required tools bound{bound}\n",
                mark(&findings_of(expert, Check::Bindings))
            ));
            if servers_checked {
                out.push_str(&format!(
                    "{} MCP servers configured\n",
                    mark(&findings_of(expert, Check::Servers))
                ));
            } else {
                out.push_str("– MCP servers not checked (no server list given)\n");
            }
        }
    }
    out
}

fn state_line(expert: &LoadedExpert) -> String {
    let counts = expert
        .package
        .as_ref()
        .map(|p| {
            let session = p
                .state
                .iter()
                .filter(|s| s.scope == StateScope::Session)
                .count();
            format!(
                " ({} persistent, {session} session)",
                p.state.len() - session
            )
        })
        .unwrap_or_default();
    check_line(
        expert,
        Check::State,
        "State templates",
        &format!("valid{counts}"),
    )
}

/// The last line: valid, valid with warnings, or why the expert is not available.
fn verdict(expert: &LoadedExpert) -> String {
    let package = expert.package.as_ref();
    let errors = expert.errors();
    let warnings = expert.warnings();
    match (errors, warnings) {
        (0, 0) => "Valid.".to_string(),
        (0, w) => format!("Valid, with {}.", plural(w, "warning")),
        (e, w) if package.is_some() => format!(
            "{}, {}: the expert is not available (fix {}).",
            plural(e, "error"),
            plural(w, "warning"),
            if e == 1 { "it" } else { "them" }
        ),
        (e, w) => format!(
            "{}, {}: the package is not loaded.",
            plural(e, "error"),
            plural(w, "warning")
        ),
    }
}

/// `experts prompt <name>`: the assembled system prompt, for a package that passed phase 1 (bindings
/// are not needed to see the prompt).
pub fn experts_prompt(
    root: &Path,
    target: &str,
    workspace: &str,
    options: &LoadOptions,
    limits: &PromptLimits,
) -> CommandText {
    match find_expert(root, target, options) {
        Ok(expert) => render_prompt(&expert, workspace, limits),
        Err(why) => failed(why),
    }
}

pub fn render_prompt(expert: &LoadedExpert, workspace: &str, limits: &PromptLimits) -> CommandText {
    match &expert.package {
        Some(package) => CommandText {
            text: assemble_prompt(package, workspace, None, limits).text,
            ok: true,
        },
        None => {
            let mut out = format!("{} cannot be loaded:\n", one_line(&expert.name, 100));
            for f in expert.findings.iter().filter(|f| f.is_error()) {
                out.push_str(&format!("{f}\n"));
            }
            CommandText {
                text: out,
                ok: false,
            }
        }
    }
}

/// `experts registry`: the full EXPERTS.md.
pub fn experts_registry(
    root: &Path,
    options: &LoadOptions,
    limits: &RegistryLimits,
) -> CommandText {
    match load_all(root, options) {
        Ok(experts) => CommandText {
            text: experts_md(&experts, limits),
            ok: true,
        },
        Err(why) => failed(why),
    }
}
