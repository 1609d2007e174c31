//! The component's size budget: its core module (the code and data OpenClaw compiles) may be at most
//! [`RELEASE_GROWTH`] larger than the previous release's, the archive in `tests/openclaw/releases/`
//! (docs/decisions/size-budget.md says why).

use std::io::Read;
use std::path::{Path, PathBuf};

/// How much larger a release's core module may be than the previous release's: 20%, and 22% for
/// 0.2.0 (docs/decisions/size-budget.md says why).
pub const RELEASE_GROWTH: f64 = 0.22;

/// The previous release's package archive (`tests/openclaw/releases/`, exactly one).
pub fn previous_release() -> PathBuf {
    let dir = crate::workspace().join("tests/openclaw/releases");
    let archives: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tgz"))
        .collect();
    assert_eq!(archives.len(), 1, "{} holds {archives:?}", dir.display());
    archives.into_iter().next().unwrap()
}

/// The size of the core module a package archive ships (`package/dist/component/plugin.core.wasm`).
pub fn packaged_core_module_bytes(archive: &Path) -> u64 {
    let file = std::fs::File::open(archive).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for entry in tar.entries().expect("a tar archive") {
        let entry = entry.expect("an archive entry");
        if entry.path().expect("an entry path") == Path::new("package/dist/component/plugin.core.wasm") {
            return entry.header().size().expect("an entry size");
        }
    }
    panic!("{} has no package/dist/component/plugin.core.wasm", archive.display())
}

/// The size of a component's (first) core module: what a package ships as `plugin.core.wasm`.
pub fn core_module_bytes(component: &Path) -> u64 {
    let mut bytes = Vec::new();
    std::fs::File::open(component)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .unwrap_or_else(|e| panic!("{}: {e}", component.display()));
    for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
        if let wasmparser::Payload::ModuleSection { unchecked_range, .. } = payload.expect("a component") {
            return (unchecked_range.end - unchecked_range.start) as u64;
        }
    }
    panic!("{} holds no core module", component.display())
}

/// The budget, in bytes, for a release after one whose core module had `previous` bytes.
pub fn budget_bytes(previous: u64) -> u64 {
    (previous as f64 * (1.0 + RELEASE_GROWTH)) as u64
}
