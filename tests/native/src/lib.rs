//! The tests that need no component, so the fast tier (`scripts/test-fast.sh`) builds no wasmtime:
//! the routing case tables (`tests/cases/*.yaml`) run natively, the import graph of `plugin/src`,
//! and the checks that read the repository's sources and documentation. Shared with the tests that
//! run the component (`tests/`), which re-export these.

pub mod cases;
pub mod module_graph;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("workspace root")
        .to_path_buf()
}

/// The files git tracks that match `pathspecs` (all of them when none), relative to the workspace.
pub fn tracked_files(pathspecs: &[&str]) -> Vec<PathBuf> {
    let out = Command::new("git")
        .args(["ls-files", "-z", "--"])
        .args(pathspecs)
        .current_dir(workspace())
        .output()
        .expect("git ls-files: git is needed to list the repository's files");
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .collect()
}

/// The example configuration (`config/`).
pub fn example_config() -> PathBuf {
    workspace().join("config")
}

/// A fresh, empty directory under the system temp dir, named after `label`; removed when dropped,
/// the test passed or failed: keep it for as long as something uses its path.
pub fn temp_dir(label: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("graphiti-openclaw-test-{label}-"))
        .tempdir()
        .expect("a temporary directory")
}

/// Replaces every `from` (one must be there) with `to` in the file at `path`: a fixture broken or
/// renamed in place.
pub fn replace_in_file(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(text.contains(from), "{} has no {from:?}", path.display());
    std::fs::write(path, text.replace(from, to)).unwrap();
}

/// Copies a directory tree (for tests that edit a configuration).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

