//! The layout's rule that `plugin/src` has no import circles: shared types and helpers live in modules
//! that depend on nothing above them (see `graphiti_openclaw_native_tests::module_graph` for how it is read).

use graphiti_openclaw_native_tests::module_graph::{Circle, circles_in_dir};
use graphiti_openclaw_native_tests::{copy_dir, temp_dir, workspace};

fn listing(found: &[Circle]) -> String {
    found.iter().map(ToString::to_string).collect()
}

#[test]
fn plugin_src_has_no_import_circles() {
    let found = circles_in_dir(&workspace().join("plugin/src")).expect("plugin/src is readable");
    assert!(found.is_empty(), "import circles in plugin/src:\n{}", listing(&found));
}

#[test]
fn a_circle_planted_in_a_copy_of_plugin_src_is_found() {
    let copy = temp_dir("module-graph");
    copy_dir(&workspace().join("plugin/src"), copy.path());
    // The engine uses the text helpers (platform); platform using the engine closes a circle.
    let text = copy.path().join("platform/text.rs");
    let mut source = std::fs::read_to_string(&text).expect("platform/text.rs");
    source.push_str("\npub fn planted() -> usize { std::mem::size_of::<crate::engine::Engine>() }\n");
    std::fs::write(&text, source).expect("write the planted use");

    let found = circles_in_dir(copy.path()).expect("the copy is readable");
    let planted = found
        .iter()
        .find(|c| c.level == "crate" && c.nodes.contains(&"platform".to_string()))
        .unwrap_or_else(|| panic!("the planted circle was not found; found:\n{}", listing(&found)));
    assert!(planted.nodes.contains(&"engine".to_string()), "{planted}");
    assert!(
        planted.witnesses.iter().any(|w| w.starts_with("platform -> engine: platform/text.rs:") && w.contains("crate::engine::Engine")),
        "{planted}"
    );
}

/// `plugin/src` is its concerns' folders and `lib.rs`: a loose file at the root has no concern.
#[test]
fn plugin_src_holds_lib_rs_and_folders_only() {
    let root = workspace().join("plugin/src");
    let loose: Vec<String> = std::fs::read_dir(&root)
        .expect("plugin/src")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_file() && path.file_name().is_some_and(|name| name != "lib.rs"))
        .map(|path| path.display().to_string())
        .collect();
    assert!(loose.is_empty(), "files at the root of plugin/src: {loose:?}");
}

/// No source file of the component, the shim or the adapter is over 600 lines: past that a file
/// holds more than one thing; split it, or move its tests into a `tests.rs` beside it.
#[test]
fn no_source_file_is_over_600_lines() {
    fn walk(dir: &std::path::Path, long: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, long);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "js") {
                let lines = std::fs::read_to_string(&path).expect("a source file").lines().count();
                if lines > 600 {
                    long.push(format!("{} ({lines} lines)", path.display()));
                }
            }
        }
    }
    let mut long = Vec::new();
    for dir in ["plugin/src", "host-shim/src", "plugin/openclaw/src"] {
        walk(&workspace().join(dir), &mut long);
    }
    assert!(long.is_empty(), "files over 600 lines: {long:?}");
}
