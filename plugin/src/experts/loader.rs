//! Discovery (loader design §1): packages are the directories under an experts root that hold
//! `expert.yaml`; a single package directory loads the same way. One broken package never stops the
//! others.

use super::bindings::{Bindings, load_bindings};
use super::findings::{Finding, Rule, Severity};
pub use super::package::ZoneCheck;
use super::package::{LoadLimits, MANIFEST_FILE, Package, load_package_checking_zones};
use std::fs;
use std::path::{Path, PathBuf};

/// Packages examined under one root at most.
const MAX_PACKAGES: usize = 1000;
/// Bytes of package files loaded under one root at most, per load. Packages are loaded on the first
/// turn after a configuration load, within that call's time limit (5 s by default), and parsing costs
/// time in proportion to size; without a bound, a large enough experts directory would exceed the
/// limit on every turn. Past it, packages are refused, each with an error, in directory order: they
/// cost only their own sessions.
pub const MAX_ROOT_BYTES: u64 = 8 << 20;
/// How a package refused for [`MAX_ROOT_BYTES`] is told apart.
const OVER_BUDGET: &str = "not loaded";
/// Files and directories looked at per package when sizing it, and how deep.
const MAX_PACKAGE_ENTRIES: usize = 10_000;
const MAX_PACKAGE_DEPTH: usize = 16;

#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub limits: LoadLimits,
    /// MCP servers configured in OpenClaw, for `bindings.unknown-server`; `None` skips the check.
    pub known_servers: Option<Vec<String>>,
    /// The host's time zones, for cron triggers' `tz`; `None` skips the check.
    pub zone_check: Option<ZoneCheck>,
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
    let load = load_package_checking_zones(dir, &options.limits, options.zone_check.as_ref());
    let mut findings = load.findings;
    let mut bindings = Bindings::default();
    if let Some(package) = &load.package {
        let (bound, more) =
            load_bindings(package, options.known_servers.as_deref(), &options.limits);
        bindings = bound;
        findings.extend(more);
        crate::platform::sorting::sort(&mut findings);
    }
    LoadedExpert {
        dir: load.dir,
        name: load.name,
        package: load.package,
        bindings,
        findings,
    }
}

/// The package directories under one root, in the order they load.
#[derive(Debug, Default)]
pub struct Discovered {
    /// The first [`MAX_PACKAGES`], sorted by directory name.
    pub dirs: Vec<PathBuf>,
    /// Those past [`MAX_PACKAGES`], in the same order: not loaded.
    pub left_out: Vec<PathBuf>,
    /// Entries whose name is not UTF-8 (they cannot be loaded, and hide nothing).
    pub not_utf8: usize,
}

impl Discovered {
    /// Why the packages past the limit are not loaded, naming the first of them.
    fn past_limit(&self) -> Option<String> {
        let first = dir_name(self.left_out.first()?);
        let total = self.dirs.len() + self.left_out.len();
        let which = match self.left_out.len() - 1 {
            0 => format!("{first} is"),
            after => format!("{first} and the {after} after it (by directory name) are"),
        };
        Some(format!(
            "{total} packages in the experts directory, more than the {MAX_PACKAGES} loaded: \
             {which} not loaded; remove packages you do not use"
        ))
    }
}

/// The package directories under `root` (those holding `expert.yaml`), sorted by directory name.
/// Symbolic links to package directories are followed (a common way to install); only one level deep.
pub fn discover(root: &Path) -> Result<Discovered, String> {
    let listing = crate::platform::files::list(root)
        .map_err(|e| format!("cannot read the experts directory {}: {e}", root.display()))?;
    let mut dirs: Vec<PathBuf> = listing
        .names
        .iter()
        .filter(|name| !name.starts_with('.'))
        .map(|name| root.join(name))
        .filter(|p| fs::metadata(p).is_ok_and(|m| m.is_dir()))
        .filter(|p| fs::symlink_metadata(p.join(MANIFEST_FILE)).is_ok())
        .collect();
    crate::platform::sorting::sort(&mut dirs);
    let left_out = dirs.split_off(MAX_PACKAGES.min(dirs.len()));
    Ok(Discovered {
        dirs,
        left_out,
        not_utf8: listing.not_utf8,
    })
}

/// Loads every package under `root`, sorted by name (then directory), within [`MAX_ROOT_BYTES`].
/// Packages sharing a name, or names equal once lower-cased, are all refused: each would claim the
/// same session and workspace.
pub fn load_all(root: &Path, options: &LoadOptions) -> Result<Vec<LoadedExpert>, String> {
    Ok(load_discovered(root, &discover(root)?, options))
}

fn load_discovered(root: &Path, found: &Discovered, options: &LoadOptions) -> Vec<LoadedExpert> {
    let mut budget = MAX_ROOT_BYTES;
    let mut experts: Vec<LoadedExpert> = found
        .dirs
        .iter()
        .map(|dir| match package_bytes(dir) {
            Ok(bytes) if bytes <= budget => {
                budget -= bytes;
                load_expert(dir, options)
            }
            Ok(bytes) => refused(
                dir,
                format!(
                    "{OVER_BUDGET}: its files ({} KiB) would take the packages under the experts \
                     directory past {} MiB, the most loaded at once",
                    bytes.div_ceil(1024),
                    MAX_ROOT_BYTES >> 20
                ),
            ),
            Err(why) => refused(dir, format!("not loaded: {why}")),
        })
        .collect();
    experts.extend(not_loaded_entries(root, found));
    crate::platform::sorting::sort_by(&mut experts, |a, b| {
        a.name.cmp(&b.name).then(a.dir.cmp(&b.dir))
    });
    let keys: Vec<(String, PathBuf)> = experts
        .iter()
        .map(|e| (e.name.clone(), e.dir.clone()))
        .collect();
    for expert in &mut experts {
        // OpenClaw lower-cases session keys: names equal once lower-cased are one name.
        let folded = expert.name.to_lowercase();
        let same: Vec<&(String, PathBuf)> = keys
            .iter()
            .filter(|(n, d)| n.to_lowercase() == folded && *d != expert.dir)
            .collect();
        if !same.is_empty() {
            let case_only = same.iter().any(|(n, _)| *n != expert.name);
            let others: Vec<String> = same
                .iter()
                .map(|(n, d)| {
                    if *n == expert.name {
                        dir_name(d)
                    } else {
                        format!("{} (named {n:?})", dir_name(d))
                    }
                })
                .collect();
            let message = format!(
                "other packages under the experts directory are also named {:?}{} (directories: {})",
                expert.name,
                if case_only {
                    " once OpenClaw lower-cases names"
                } else {
                    ""
                },
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
            crate::platform::sorting::sort(&mut expert.findings);
        }
    }
    experts
}

/// What the experts directory holds that is not loaded, listed as entries of their own: names that
/// are not UTF-8, packages past [`MAX_PACKAGES`].
fn not_loaded_entries(root: &Path, found: &Discovered) -> Vec<LoadedExpert> {
    let mut entries = Vec::new();
    let not_utf8 = found.not_utf8;
    if not_utf8 > 0 {
        entries.push(refused(
            &root.join("(names not UTF-8)"),
            format!(
                "{not_utf8} entr{} in the experts directory ha{} a name that is not UTF-8: not \
                 loaded; rename {} (the other packages load as usual)",
                if not_utf8 == 1 { "y" } else { "ies" },
                if not_utf8 == 1 { "s" } else { "ve" },
                if not_utf8 == 1 { "it" } else { "them" },
            ),
        ));
    }
    if let Some(why) = found.past_limit() {
        entries.push(refused(&root.join(past_limit_label()), why));
    }
    entries
}

/// How the packages left out past [`MAX_PACKAGES`] are listed, as one entry.
fn past_limit_label() -> String {
    format!("(packages past {MAX_PACKAGES})")
}

/// Why packages were left out past [`MAX_PACKAGES`], if any were, for the load's notes.
pub fn past_limit_note(experts: &[LoadedExpert]) -> Option<&str> {
    let label = past_limit_label();
    let entry = experts
        .iter()
        .find(|e| e.package.is_none() && e.name == label)?;
    entry.findings.first().map(|f| f.message.as_str())
}

/// A package that was not loaded, with why.
fn refused(dir: &Path, message: String) -> LoadedExpert {
    LoadedExpert {
        dir: dir.to_path_buf(),
        name: dir_name(dir),
        package: None,
        bindings: Bindings::default(),
        findings: vec![Finding {
            file: ".".into(),
            line: None,
            rule: Rule::FilesReadable,
            field: None,
            message,
        }],
    }
}

/// The bytes of the files under a package directory (symbolic links not followed), from metadata only.
fn package_bytes(dir: &Path) -> Result<u64, String> {
    let mut total = 0u64;
    let mut entries = 0usize;
    let mut pending = vec![(dir.to_path_buf(), 0usize)];
    while let Some((path, depth)) = pending.pop() {
        let listing =
            fs::read_dir(&path).map_err(|e| format!("cannot list {}: {e}", path.display()))?;
        for entry in listing.filter_map(Result::ok) {
            entries += 1;
            if entries > MAX_PACKAGE_ENTRIES {
                return Err(format!(
                    "it holds more than {MAX_PACKAGE_ENTRIES} files and directories"
                ));
            }
            let Ok(meta) = fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() && depth < MAX_PACKAGE_DEPTH {
                pending.push((entry.path(), depth + 1));
            } else if meta.is_file() {
                total = total.saturating_add(meta.len());
            }
        }
    }
    Ok(total)
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
    let found = discover(root)?;
    let experts = load_discovered(root, &found, options);
    let left_out = found.left_out.iter().any(|dir| dir_name(dir) == target);
    let expert = match (pick(&experts, target, root), found.past_limit()) {
        (Err(_), Some(why)) if left_out => return Err(format!("{target} is not loaded: {why}")),
        (picked, _) => picked?,
    };
    // A command about one package loads it whatever the others weigh.
    let over_budget = expert.package.is_none()
        && expert
            .findings
            .iter()
            .any(|f| f.file == "." && f.message.starts_with(OVER_BUDGET));
    if over_budget {
        return Ok(load_expert(&expert.dir, options));
    }
    Ok(expert.clone())
}

/// The expert named `target` (package name or directory name) among `experts`, loaded from `root`.
pub fn pick<'a>(
    experts: &'a [LoadedExpert],
    target: &str,
    root: &Path,
) -> Result<&'a LoadedExpert, String> {
    let exact = experts
        .iter()
        .find(|e| e.name == target || dir_name(&e.dir) == target);
    // OpenClaw lower-cases session keys: a label matches a name of any case, when only one does.
    let folded = || {
        let mut same = experts
            .iter()
            .filter(|e| e.name.to_lowercase() == target.to_lowercase());
        same.next().filter(|_| same.next().is_none())
    };
    exact
        .or_else(folded)
        .ok_or_else(|| format!("no expert named {target:?} under {}", root.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(root: &Path, name: &str, filler_bytes: usize) {
        let dir = root.join(name);
        fs::create_dir_all(dir.join("knowledge")).unwrap();
        fs::write(dir.join(MANIFEST_FILE), format!("name: {name}\n")).unwrap();
        fs::write(dir.join("knowledge/filler.md"), vec![b'x'; filler_bytes]).unwrap();
    }

    #[test]
    fn names_that_differ_only_in_case_are_one_duplicate_name() {
        let root_temp = crate::platform::files::temp_dir("graphiti-openclaw-loader-case");
        let root = root_temp.path();
        package(root, "Ops-Expert", 10);
        package(root, "ops-expert", 10);
        package(root, "other", 10);
        let experts = load_all(root, &LoadOptions::default()).unwrap();
        let duplicate = |name: &str| {
            let expert = experts.iter().find(|e| e.name == name).unwrap();
            expert
                .findings
                .iter()
                .find(|f| f.rule == Rule::DiscoveryDuplicateName)
                .map(|f| f.message.clone())
        };
        assert_eq!(
            duplicate("Ops-Expert").as_deref(),
            Some(
                "other packages under the experts directory are also named \"Ops-Expert\" once \
                 OpenClaw lower-cases names (directories: ops-expert (named \"ops-expert\"))"
            )
        );
        assert!(duplicate("ops-expert").is_some());
        assert_eq!(duplicate("other"), None);
    }

    #[test]
    fn packages_past_the_count_limit_are_named_not_dropped_silently() {
        let root_temp = crate::platform::files::temp_dir("graphiti-openclaw-loader-count");
        let root = root_temp.path();
        for n in 0..MAX_PACKAGES + 3 {
            let dir = root.join(format!("pkg-{n:04}"));
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join(MANIFEST_FILE), format!("name: pkg-{n:04}\n")).unwrap();
        }
        let options = LoadOptions::default();
        let listed = crate::experts::commands::experts_list(root, &options).text;
        assert!(
            listed.contains(
                "✗ (packages past 1000) — 1 error; see: experts validate (packages past 1000)\n"
            ),
            "{}",
            listed.lines().take(3).collect::<Vec<_>>().join("\n")
        );
        let why =
            |target: &str| crate::experts::commands::experts_validate(root, target, &options).text;
        let past = why("(packages past 1000)");
        assert!(
            past.contains(
                "1003 packages in the experts directory, more than the 1000 loaded: pkg-1000 and \
                 the 2 after it (by directory name) are not loaded; remove packages you do not use"
            ),
            "{past}"
        );
        assert_eq!(
            why("pkg-1001"),
            "pkg-1001 is not loaded: 1003 packages in the experts directory, more than the 1000 \
             loaded: pkg-1000 and the 2 after it (by directory name) are not loaded; remove \
             packages you do not use\n"
        );
    }

    #[test]
    fn packages_past_the_root_budget_are_refused_each_with_an_error() {
        let root_temp = crate::platform::files::temp_dir("graphiti-openclaw-loader-budget");
        let root = root_temp.path();
        let mib = 1 << 20;
        package(root, "a-small", 2 * mib);
        package(root, "b-large", 5 * mib);
        package(root, "c-over", 2 * mib);
        package(root, "d-tiny", 10);
        let experts = load_all(root, &LoadOptions::default()).unwrap();
        let refusal = |name: &str| {
            let expert = experts.iter().find(|e| e.name == name).unwrap();
            expert
                .findings
                .iter()
                .find(|f| f.message.starts_with("not loaded"))
                .map(|f| f.message.clone())
        };
        assert_eq!(refusal("a-small"), None);
        assert_eq!(refusal("b-large"), None);
        assert_eq!(
            refusal("c-over").as_deref(),
            Some(
                "not loaded: its files (2049 KiB) would take the packages under the experts \
                 directory past 8 MiB, the most loaded at once"
            )
        );
        assert_eq!(
            refusal("d-tiny"),
            None,
            "smaller packages after it still fit"
        );
    }
}
