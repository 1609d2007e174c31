//! Managing installed packages (loader design §8): `install` (a directory or a `.tgz`, validated in a
//! hidden staging directory and renamed into place only when both validation phases pass), `bind`
//! (the package's `bindings.yaml`) and `remove`. The host mounts the experts directory writable for
//! these commands only.

pub mod archive;

use crate::experts::{self, LoadOptions};
use crate::platform::api::InstallSource;
use archive::{MAX_FILES, MAX_UNPACKED_BYTES, PackageFile};
use std::fs;
use std::path::{Path, PathBuf};

/// Where a directory source is mounted (read-only) for `install`.
pub const INSTALL_DIR: &str = "/install";
const MAX_DEPTH: usize = 16;
/// A staging directory older than this was left by an install that was killed.
const STALE_STAGING_MS: u64 = 3_600_000;
/// Hidden, so that discovery passes over staging directories.
const STAGING_PREFIX: &str = ".install-";

fn read_tree(
    root: &Path,
    dir: &Path,
    depth: usize,
    files: &mut Vec<PackageFile>,
    total: &mut usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("it nests directories deeper than {MAX_DEPTH}"));
    }
    let mut entries: Vec<_> = fs::read_dir(dir)
        .map_err(|e| format!("cannot read it: {e}"))?
        .filter_map(Result::ok)
        .collect();
    crate::platform::sorting::sort_by_key(&mut entries, fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let relative = path
            .strip_prefix(root)
            .map_or_else(|_| path.display().to_string(), |p| p.display().to_string());
        let meta = fs::symlink_metadata(&path).map_err(|e| format!("{relative}: {e}"))?;
        if meta.file_type().is_symlink() {
            return Err(format!(
                "{relative} is a symbolic link; packages may hold regular files only"
            ));
        }
        if meta.is_dir() {
            if entry.file_name() == ".git" || entry.file_name() == "node_modules" {
                continue;
            }
            read_tree(root, &path, depth + 1, files, total)?;
        } else if meta.is_file() {
            *total += meta.len() as usize;
            if *total > MAX_UNPACKED_BYTES || files.len() >= MAX_FILES {
                return Err(format!(
                    "it is larger than {} MiB or {MAX_FILES} files",
                    MAX_UNPACKED_BYTES >> 20
                ));
            }
            let bytes = fs::read(&path).map_err(|e| format!("{relative}: {e}"))?;
            files.push(PackageFile {
                path: relative,
                bytes,
            });
        } else {
            return Err(format!(
                "{relative} is a device, FIFO or socket; packages may hold regular files only"
            ));
        }
    }
    Ok(())
}

fn write_files(dir: &Path, files: &[PackageFile]) -> Result<(), String> {
    for file in files {
        let target = dir.join(&file.path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        fs::write(&target, &file.bytes).map_err(|e| format!("cannot write {}: {e}", file.path))?;
    }
    Ok(())
}

/// Installs a package into `root` (the experts directory); the text says what happened.
pub fn install(
    root: &Path,
    source: &InstallSource,
    options: &LoadOptions,
    now_ms: u64,
) -> Result<String, String> {
    let (name, files) = match source {
        InstallSource::Directory(name) => {
            let mut files = Vec::new();
            read_tree(
                Path::new(INSTALL_DIR),
                Path::new(INSTALL_DIR),
                0,
                &mut files,
                &mut 0,
            )
            .map_err(|e| format!("{name} cannot be installed: {e}"))?;
            (name, files)
        }
        InstallSource::Archive(name, bytes) => (
            name,
            archive::unpack_tgz(bytes).map_err(|e| format!("{name} cannot be installed: {e}"))?,
        ),
    };
    install_files(root, name, &files, options, now_ms)
}

/// Installs a package's files (read from its source, named `name` in messages) into `root`.
fn install_files(
    root: &Path,
    name: &str,
    files: &[PackageFile],
    options: &LoadOptions,
    now_ms: u64,
) -> Result<String, String> {
    if !files
        .iter()
        .any(|f| f.path == experts::package::MANIFEST_FILE)
    {
        return Err(format!(
            "{name} cannot be installed: it has no expert.yaml at its top"
        ));
    }
    let swept = sweep_stale_staging(root, now_ms);
    let result = new_staging(root, files, now_ms).and_then(|staging| {
        let result = stage_and_validate(&staging, files, options)
            .and_then(|package| name_is_free(root, &package, options).map(|()| package))
            .and_then(|package| place(root, &staging, &package));
        if staging.exists() {
            let _ = fs::remove_dir_all(&staging);
        }
        result
    });
    let swept = match swept {
        0 => String::new(),
        n => format!(
            "removed {n} staging director{} left by interrupted installs (older than {} minutes)\n",
            if n == 1 { "y" } else { "ies" },
            STALE_STAGING_MS / 60_000
        ),
    };
    match result {
        Ok((package, _)) => Ok(format!(
            "{swept}installed {package} from {name}\nnext: bind its tools (experts bind {package} <tool> <server>), then experts validate {package}\n"
        )),
        Err(e) => Err(format!("{swept}{e}")),
    }
}

/// Creates this install's own staging directory: `.install-{now_ms}-{tag}`, created exclusively, the
/// tag a digest of the files, the time and a per-process count (the component has no randomness),
/// retried with the next count while another install holds the name.
fn new_staging(root: &Path, files: &[PackageFile], now_ms: u64) -> Result<PathBuf, String> {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    fs::create_dir_all(root).map_err(|e| format!("the experts directory is not writable: {e}"))?;
    let mut files_digest = Sha256::new();
    for file in files {
        files_digest.update((file.path.len() as u64).to_le_bytes());
        files_digest.update(file.path.as_bytes());
        files_digest.update((file.bytes.len() as u64).to_le_bytes());
        files_digest.update(&file.bytes);
    }
    let files_digest = files_digest.finalize();
    for _ in 0..100 {
        let count = COUNT.fetch_add(1, Ordering::Relaxed);
        let mut tag = Sha256::new();
        tag.update(files_digest);
        tag.update(now_ms.to_le_bytes());
        tag.update(count.to_le_bytes());
        let tag: String = tag.finalize()[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let staging = root.join(format!("{STAGING_PREFIX}{now_ms}-{tag}"));
        match fs::create_dir(&staging) {
            Ok(()) => return Ok(staging),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("the experts directory is not writable: {e}")),
        }
    }
    Err("no free staging directory name in the experts directory".into())
}

/// Removes the staging directories of installs started more than [`STALE_STAGING_MS`] ago (a killed
/// install leaves its own behind); returns how many.
fn sweep_stale_staging(root: &Path, now_ms: u64) -> usize {
    let Ok(listing) = crate::platform::files::list(root) else {
        return 0;
    };
    listing
        .names
        .iter()
        .filter(|name| {
            let started = name
                .strip_prefix(STAGING_PREFIX)
                .and_then(|rest| rest.split('-').next())
                .and_then(|ms| ms.parse::<u64>().ok());
            started.is_some_and(|ms| now_ms.saturating_sub(ms) > STALE_STAGING_MS)
        })
        .filter(|name| fs::remove_dir_all(root.join(name)).is_ok())
        .count()
}

/// Writes the files into the staging directory and validates them there (phase 1; phase 2's
/// missing bindings are expected before `bind`). Returns the package's name.
fn stage_and_validate(
    staging: &Path,
    files: &[PackageFile],
    options: &LoadOptions,
) -> Result<String, String> {
    write_files(staging, files)?;
    let loaded = experts::load_package(staging, &options.limits);
    let mut findings = loaded.findings;
    // A shipped bindings.yaml must at least read (within the nesting cap); unbound tools are
    // expected until `bind`.
    if let Some(package) = &loaded.package {
        let (_, phase_2) = experts::load_bindings(package, None, &options.limits);
        findings.extend(
            phase_2
                .into_iter()
                .filter(|f| f.rule == experts::Rule::BindingsSyntax),
        );
    }
    let errors: Vec<String> = findings
        .iter()
        .filter(|f| f.severity() == experts::Severity::Error)
        .map(|f| format!("  ✗ {f}"))
        .collect();
    match loaded.package {
        Some(package) if errors.is_empty() => Ok(package.name),
        _ => Err(format!(
            "the package is not valid; nothing was installed:\n{}",
            errors.join("\n")
        )),
    }
}

/// Refuses a name that an installed package's name or directory equals once lower-cased: OpenClaw
/// lower-cases session keys, so the new package would take over the other's sessions. (A directory
/// of exactly this name is [`place`]'s to refuse.)
fn name_is_free(root: &Path, name: &str, options: &LoadOptions) -> Result<(), String> {
    let folded = name.to_lowercase();
    let installed = experts::load_all(root, options)?;
    let clash = installed.iter().find_map(|e| {
        let dir = e.dir.file_name()?.to_string_lossy().into_owned();
        let same = e.name.to_lowercase() == folded || dir.to_lowercase() == folded;
        (same && dir != name).then(|| (e.name.clone(), dir))
    });
    match clash {
        Some((other, dir)) => Err(format!(
            "{name} cannot be installed beside {other} (in {dir}/): names equal once lower-cased \
             are one name, as OpenClaw lower-cases session keys; remove it first (experts remove \
             {dir}) or rename the package"
        )),
        None => Ok(()),
    }
}

fn place(root: &Path, staging: &Path, name: &str) -> Result<(String, PathBuf), String> {
    if !experts::package::is_safe_name(name) {
        return Err(format!(
            "the package's name {name:?} cannot be a directory name"
        ));
    }
    let target = root.join(name);
    if fs::symlink_metadata(&target).is_ok() {
        return Err(format!(
            "{name} is installed already: experts remove {name} first (its bindings.yaml goes with it)"
        ));
    }
    fs::rename(staging, &target).map_err(|e| format!("cannot move the package into place: {e}"))?;
    Ok((name.to_string(), target))
}

/// The installed package directory of `expert` (a direct child of `root`).
fn installed(root: &Path, expert: &str) -> Result<PathBuf, String> {
    let dir = root.join(expert);
    let ok = experts::package::is_safe_name(expert)
        && fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir())
        && dir.join(experts::package::MANIFEST_FILE).is_file();
    ok.then_some(dir)
        .ok_or_else(|| format!("no package {expert:?} is installed (experts list)"))
}

/// Removes an installed package; runtime state, approvals and workspace stay.
pub fn remove(root: &Path, expert: &str) -> Result<String, String> {
    let dir = installed(root, expert)?;
    fs::remove_dir_all(&dir).map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    Ok(format!(
        "removed {expert}; its runtime state and workspace files stay\n"
    ))
}

/// Binds `tool` of `expert` to MCP server `server` in the package's `bindings.yaml`, keeping the
/// other bindings and the tool's operation mapping.
pub fn bind(
    root: &Path,
    expert: &str,
    tool: &str,
    server: &str,
    options: &LoadOptions,
) -> Result<String, String> {
    let dir = installed(root, expert)?;
    let loaded = experts::load_package(&dir, &options.limits);
    let package = loaded
        .package
        .ok_or_else(|| format!("{expert} does not load; see experts validate {expert}"))?;
    if !package.required_tools.iter().any(|t| t == tool) {
        return Err(format!(
            "{expert} requires no tool {tool:?} (requires.tools: {})",
            package.required_tools.join(", ")
        ));
    }
    if server.trim().is_empty() || server.chars().any(char::is_control) {
        return Err("the server name is empty or has control characters".into());
    }
    if let Some(known) = &options.known_servers
        && !known.iter().any(|k| k == server)
    {
        return Err(format!(
            "no MCP server {server:?} is configured (known: {})",
            known.join(", ")
        ));
    }
    let path = dir.join(experts::bindings::BINDINGS_FILE);
    let mut doc = read_bindings_file(&dir, options)?;
    if doc.is_null() {
        doc = serde_norway::Value::Mapping(Default::default());
    }
    let tools = doc
        .as_mapping_mut()
        .ok_or("bindings.yaml is not a mapping")?
        .entry("tools".into())
        .or_insert_with(|| serde_norway::Value::Mapping(Default::default()));
    let entry = tools
        .as_mapping_mut()
        .ok_or("bindings.yaml's tools is not a mapping")?
        .entry(tool.into())
        .or_insert_with(|| serde_norway::Value::Mapping(Default::default()));
    let entry = entry
        .as_mapping_mut()
        .ok_or_else(|| format!("bindings.yaml's tools.{tool} is not a mapping"))?;
    entry.insert("type".into(), "mcp".into());
    entry.insert("server".into(), server.into());
    let text = format!(
        "# Written by `experts bind`: binds abstract tools to MCP servers.\n{}",
        serde_norway::to_string(&doc)
            .map_err(|e| format!("cannot write {}: {e}", experts::bindings::BINDINGS_FILE))?
    );
    crate::platform::files::write_atomically(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(format!(
        "bound {expert}'s {tool} to {server} (its {})\n",
        experts::bindings::BINDINGS_FILE
    ))
}

/// The package's `bindings.yaml` as YAML (null when absent or empty), read with the package files'
/// size and nesting caps.
fn read_bindings_file(dir: &Path, options: &LoadOptions) -> Result<serde_norway::Value, String> {
    let file = experts::bindings::BINDINGS_FILE;
    let text = match experts::package::read_text(dir, file, &options.limits) {
        Ok(text) => text,
        Err(e) if e.rule == experts::Rule::FilesExist => return Ok(serde_norway::Value::Null),
        Err(e) => return Err(format!("{file} cannot be read: {}", e.message)),
    };
    experts::yaml::parse(&text).map_err(|e| {
        let line = e.line.map(|l| format!(":{l}")).unwrap_or_default();
        let field = e.field.map(|f| format!(" {f}:")).unwrap_or_default();
        format!("{file}{line}:{field} {}", e.message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::files::temp_dir;

    /// The files of the test fixture package `plugin/tests/experts/base`.
    fn base_files() -> Vec<PackageFile> {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/experts/base");
        let mut files = Vec::new();
        read_tree(&base, &base, 0, &mut files, &mut 0).unwrap();
        files
    }

    fn deep_yaml() -> String {
        format!("tools: {}{}\n", "[".repeat(5_000), "]".repeat(5_000))
    }

    #[test]
    fn an_install_stages_apart_from_one_started_in_the_same_millisecond() {
        let root_temp = temp_dir("install-same-ms");
        let root = root_temp.path();
        let other = root.join(".install-5000");
        fs::create_dir_all(other.join("knowledge")).unwrap();
        fs::write(other.join("knowledge/foreign.md"), "another archive's file").unwrap();
        let out = install_files(root, "base", &base_files(), &LoadOptions::default(), 5_000);
        assert!(out.is_ok(), "{out:?}");
        assert!(!root.join("fixture-expert/knowledge/foreign.md").exists());
        assert!(
            other.join("knowledge/foreign.md").exists(),
            "the other install's staging"
        );
    }

    #[test]
    fn an_install_removes_staging_left_by_a_killed_one() {
        let root_temp = temp_dir("install-stale");
        let root = root_temp.path();
        let now = 10 * 3_600_000;
        let stale = root.join(format!(".install-{}", now - STALE_STAGING_MS - 1));
        let stale_unique = root.join(format!(".install-{}-0123abcd", now - STALE_STAGING_MS - 1));
        let young = root.join(format!(".install-{}-89abcdef", now - 1_000));
        for dir in [&stale, &stale_unique, &young] {
            fs::create_dir_all(dir).unwrap();
            fs::write(dir.join("expert.yaml"), "name: x").unwrap();
        }
        let out = install_files(root, "base", &base_files(), &LoadOptions::default(), now).unwrap();
        assert!(!stale.exists() && !stale_unique.exists(), "{out}");
        assert!(young.exists(), "an install still running");
        assert!(out.contains("removed 2 staging directories"), "{out}");
    }

    #[test]
    fn bind_refuses_a_deeply_nested_bindings_file_before_parsing_it() {
        let root_temp = temp_dir("install-bind-deep");
        let root = root_temp.path();
        fs::create_dir_all(root).unwrap();
        let options = LoadOptions::default();
        install_files(root, "base", &base_files(), &options, 1_000).unwrap();
        let package = root.join("fixture-expert");
        fs::write(package.join("bindings.yaml"), deep_yaml()).unwrap();
        let err = bind(root, "fixture-expert", "notes", "notes-mcp", &options).unwrap_err();
        assert!(err.contains("bindings.yaml"), "{err}");
        assert!(err.contains("nested deeper than 64 levels"), "{err}");
    }

    #[test]
    fn bind_writes_a_server_name_yaml_gives_a_meaning_to_and_keeps_the_rest() {
        let root_temp = temp_dir("install-bind-names");
        let root = root_temp.path();
        fs::create_dir_all(root).unwrap();
        let options = LoadOptions::default();
        install_files(root, "base", &base_files(), &options, 1_000).unwrap();
        let path = root.join("fixture-expert/bindings.yaml");
        let before: serde_norway::Value =
            serde_norway::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        for server in ["true", "null", "1.5", "- x", "a: b # c", "'q\"", "é ü", "~"] {
            bind(root, "fixture-expert", "notes", server, &options).unwrap();
            let text = fs::read_to_string(&path).unwrap();
            assert!(text.starts_with("# Written by `experts bind`"), "{text}");
            let after: serde_norway::Value = serde_norway::from_str(&text).unwrap();
            assert_eq!(
                after["tools"]["notes"]["server"].as_str(),
                Some(server),
                "{text}"
            );
            assert_eq!(
                after["tools"]["notes"]["operations"], before["tools"]["notes"]["operations"],
                "{text}"
            );
            assert_eq!(after["tools"]["mail"], before["tools"]["mail"], "{text}");
        }
    }

    #[test]
    fn install_refuses_a_package_shipping_a_deeply_nested_bindings_file() {
        let root_temp = temp_dir("install-deep-bindings");
        let root = root_temp.path();
        fs::create_dir_all(root).unwrap();
        let mut files = base_files();
        for file in files.iter_mut().filter(|f| f.path == "bindings.yaml") {
            file.bytes = deep_yaml().into_bytes();
        }
        let err = install_files(root, "base", &files, &LoadOptions::default(), 1_000).unwrap_err();
        assert!(err.contains("bindings.yaml"), "{err}");
        assert!(err.contains("nested deeper than 64 levels"), "{err}");
        assert!(!root.join("fixture-expert").exists());
    }
}
