//! Discovery (loader design §1): packages are the directories under an experts root that hold
//! `expert.yaml`; a single package directory loads the same way. One broken package never stops the
//! others.

use super::bindings::{Bindings, load_bindings};
use super::findings::{Finding, Rule, Severity};
use super::package::{LoadLimits, MANIFEST_FILE, Package, load_package};
use std::fs;
use std::path::{Path, PathBuf};

/// Packages examined under one root at most.
const MAX_PACKAGES: usize = 1000;

#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub limits: LoadLimits,
    /// MCP servers configured in OpenClaw, for `bindings.unknown-server`; `None` skips the check.
    pub known_servers: Option<Vec<String>>,
}

/// A package with both validation phases run.
#[derive(Clone, Debug)]
pub struct LoadedExpert {
    pub dir: PathBuf,
    /// The manifest's name, else the directory's.
    pub name: String,
    /// Present when phase 1 found no error.
    pub package: Option<Package>,
    /// The bindings that passed phase 2 (empty when phase 1 failed).
    pub bindings: Bindings,
    /// Both phases, sorted.
    pub findings: Vec<Finding>,
}

impl LoadedExpert {
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity() == Severity::Error)
            .count()
    }
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity() == Severity::Warning)
            .count()
    }
    /// Loaded, bound and free of errors: the only state in which the main agent is told about it.
    pub fn ready(&self) -> Option<&Package> {
        self.package.as_ref().filter(|_| self.errors() == 0)
    }
}

/// Loads one package directory (both phases).
pub fn load_expert(dir: &Path, options: &LoadOptions) -> LoadedExpert {
    let load = load_package(dir, &options.limits);
    let mut findings = load.findings;
    let mut bindings = Bindings::default();
    if let Some(package) = &load.package {
        let (bound, more) =
            load_bindings(package, options.known_servers.as_deref(), &options.limits);
        bindings = bound;
        findings.extend(more);
        findings.sort();
    }
    LoadedExpert {
        dir: load.dir,
        name: load.name,
        package: load.package,
        bindings,
        findings,
    }
}

/// The package directories under `root` (those holding `expert.yaml`), sorted by directory name.
/// Symbolic links to package directories are followed (a common way to install); only one level deep.
pub fn discover(root: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = fs::read_dir(root)
        .map_err(|e| format!("cannot read the experts directory {}: {e}", root.display()))?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .filter(|p| fs::metadata(p).is_ok_and(|m| m.is_dir()))
        .filter(|p| fs::symlink_metadata(p.join(MANIFEST_FILE)).is_ok())
        .collect();
    dirs.sort();
    dirs.truncate(MAX_PACKAGES);
    Ok(dirs)
}

/// Loads every package under `root`, sorted by name (then directory). Packages sharing a name are all
/// refused: each would claim the same session and workspace.
pub fn load_all(root: &Path, options: &LoadOptions) -> Result<Vec<LoadedExpert>, String> {
    let mut experts: Vec<LoadedExpert> = discover(root)?
        .iter()
        .map(|dir| load_expert(dir, options))
        .collect();
    experts.sort_by(|a, b| a.name.cmp(&b.name).then(a.dir.cmp(&b.dir)));
    let keys: Vec<(String, PathBuf)> = experts
        .iter()
        .map(|e| (e.name.clone(), e.dir.clone()))
        .collect();
    for expert in &mut experts {
        let others: Vec<String> = keys
            .iter()
            .filter(|(n, d)| *n == expert.name && *d != expert.dir)
            .map(|(_, d)| dir_name(d))
            .collect();
        if !others.is_empty() {
            let message = format!(
                "other packages under the experts directory are also named {:?} (directories: {})",
                expert.name,
                others.join(", ")
            );
            let field = Some("name".to_string());
            expert.findings.push(Finding {
                file: MANIFEST_FILE.into(),
                line: None,
                rule: Rule::DiscoveryDuplicateName,
                field,
                message,
            });
            expert.findings.sort();
        }
    }
    Ok(experts)
}

fn dir_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Finds an expert by package name (or directory name) under `root`, or loads `target` as a package
/// path when it is a directory holding `expert.yaml`.
pub fn find_expert(
    root: &Path,
    target: &str,
    options: &LoadOptions,
) -> Result<LoadedExpert, String> {
    let as_path = Path::new(target);
    let looks_like_path = target.contains('/') || target.starts_with('.');
    if looks_like_path {
        if fs::symlink_metadata(as_path.join(MANIFEST_FILE)).is_ok() {
            return Ok(load_expert(as_path, options));
        }
        return Err(format!("{target}: no {MANIFEST_FILE} there"));
    }
    let experts = load_all(root, options)?;
    pick(&experts, target, root).cloned()
}

/// The expert named `target` (package name or directory name) among `experts`, loaded from `root`.
pub fn pick<'a>(
    experts: &'a [LoadedExpert],
    target: &str,
    root: &Path,
) -> Result<&'a LoadedExpert, String> {
    experts
        .iter()
        .find(|e| e.name == target || dir_name(&e.dir) == target)
        .ok_or_else(|| format!("no expert named {target:?} under {}", root.display()))
}
