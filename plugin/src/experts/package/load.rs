//! Phase 1 of validation for one package: read the manifest, check it and every component, then check
//! cross-references, and assemble the [`Package`] when nothing was wrong.

use super::ZoneCheck;
use super::components::Components;
use super::files::read_text;
use super::formats::ManifestFile;
use super::manifest::{ManifestCtx, check_identity, check_readme, required_tools};
use super::model::{Delivery, Execution, LoadLimits, MANIFEST_FILE, Package};
use super::policy_settings::check_policy;
use super::runtime::{
    Level, RuntimeDefaults, resolve_delivery, resolve_execution, resolve_learning,
};
use super::triggers::{check_concurrency, check_triggers};
use super::validate;
use crate::experts::findings::{Finding, Rule, finding};
use crate::experts::yaml::{self, FieldPath, Lines};
use std::path::{Path, PathBuf};

/// The outcome of loading one package: the package when phase 1 found no error, and every finding.
#[derive(Clone, Debug)]
pub struct PackageLoad {
    pub dir: PathBuf,
    /// The manifest's name when it has one, else the directory's name.
    pub name: String,
    pub package: Option<Package>,
    pub findings: Vec<Finding>,
}

/// Loads and validates (phase 1) the package in `dir`.
pub fn load_package(dir: &Path, limits: &LoadLimits) -> PackageLoad {
    load_package_checking_zones(dir, limits, None)
}

/// [`load_package`], with cron triggers' time zones checked against the host's (`zones`).
pub fn load_package_checking_zones(
    dir: &Path,
    limits: &LoadLimits,
    zones: Option<&ZoneCheck>,
) -> PackageLoad {
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let mut findings = Vec::new();
    let package = load_inner(dir, limits, zones, &mut findings);
    crate::platform::sorting::sort(&mut findings);
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

fn load_inner(
    dir: &Path,
    limits: &LoadLimits,
    zones: Option<&ZoneCheck>,
    findings: &mut Vec<Finding>,
) -> Option<Package> {
    let (text, manifest) = read_manifest(dir, limits, findings)?;
    let mut m = ManifestCtx {
        lines: Lines::new(&text, 1),
        findings,
    };

    let (spec, version) = check_identity(&mut m, &manifest);
    let name = manifest.name.clone().unwrap_or_default();
    let description = manifest.description.clone().unwrap_or_default();

    let required_tools = required_tools(&mut m, &manifest);
    let concurrency = check_concurrency(&mut m, &manifest);
    let triggers = check_triggers(&mut m, &manifest, &concurrency, &required_tools, zones);
    let defaults = runtime_defaults(&mut m, &manifest);
    let policy = check_policy(&mut m, &manifest);
    let learning = resolve_learning(&mut m, manifest.learning.as_ref());

    // Without `components` nothing else can be checked: every structure and cross-reference
    // finding would only repeat that it is missing.
    let components = manifest.components.as_ref()?;
    let loaded = Components::load(dir, limits, components, &defaults, &mut m);
    check_readme(dir, &mut m);
    validate::cross_references(&manifest, &required_tools, &policy, &loaded, &mut m);
    validate::learnings(dir, limits, &loaded, m.findings);
    validate::process_context_exists(dir, limits, &loaded, m.findings);

    let (Some(orchestrator), Some(spec), Some(version)) = (loaded.orchestrator, spec, version)
    else {
        return None;
    };
    let mut functions = loaded.functions;
    crate::platform::sorting::sort_by(&mut functions, |a, b| {
        a.name.cmp(&b.name).then(a.path.cmp(&b.path))
    });
    let mut processes = loaded.processes;
    crate::platform::sorting::sort_by(&mut processes, |a, b| {
        a.name.cmp(&b.name).then(a.path.cmp(&b.path))
    });
    let mut tools = loaded.tools;
    crate::platform::sorting::sort_by(&mut tools, |a, b| {
        a.name.cmp(&b.name).then(a.path.cmp(&b.path))
    });
    let mut knowledge = loaded.knowledge;
    crate::platform::sorting::sort_by(&mut knowledge, |a, b| {
        a.name.cmp(&b.name).then(a.path.cmp(&b.path))
    });
    let mut state = loaded.state;
    crate::platform::sorting::sort_by(&mut state, |a, b| a.path.cmp(&b.path));
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
        execution: defaults.execution,
        delivery: defaults.delivery,
        policy,
        learning,
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

/// The manifest's `execution` and `delivery`: the spec's defaults with the package's fields laid over.
fn runtime_defaults(m: &mut ManifestCtx, manifest: &ManifestFile) -> RuntimeDefaults {
    let rule = Rule::ManifestValues;
    let execution = resolve_execution(
        m,
        rule,
        &FieldPath::key("execution"),
        manifest.execution.as_ref(),
        &Execution::default(),
    );
    let delivery = resolve_delivery(
        m,
        rule,
        &FieldPath::key("delivery"),
        manifest.delivery.as_ref(),
        &Delivery::default(),
        Level::Package,
    );
    RuntimeDefaults {
        execution,
        delivery,
    }
}

/// `expert.yaml` as text and parsed, or the finding why not (nothing else is checked without it).
fn read_manifest(
    dir: &Path,
    limits: &LoadLimits,
    findings: &mut Vec<Finding>,
) -> Option<(String, ManifestFile)> {
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
    let mut manifest: ManifestFile = match yaml::parse(&text) {
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
    // From the line index every finding is located with: collecting the unknown keys through
    // the manifest's own type would grow the component for a warning.
    manifest.keys = Lines::new(&text, 1).top_level_keys();
    Some((text, manifest))
}
