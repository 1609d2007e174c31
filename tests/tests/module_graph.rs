//! The layout's rule that `plugin/src` has no import circles: shared types and helpers live in modules
//! that depend on nothing above them (see `graphiti_openclaw_tests::module_graph` for how it is read).

use graphiti_openclaw_tests::module_graph::{Circle, circles_in_dir};
use graphiti_openclaw_tests::{copy_dir, temp_dir, workspace};

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
    // The engine uses the text helpers (through capture, recall, ...); text using the engine closes it.
    let text = copy.path().join("text.rs");
    let mut source = std::fs::read_to_string(&text).expect("text.rs");
    source.push_str("\npub fn planted() -> usize { std::mem::size_of::<crate::engine::Engine>() }\n");
    std::fs::write(&text, source).expect("write the planted use");

    let found = circles_in_dir(copy.path()).expect("the copy is readable");
    let planted = found
        .iter()
        .find(|c| c.level == "crate" && c.nodes.contains(&"text".to_string()))
        .unwrap_or_else(|| panic!("the planted circle was not found; found:\n{}", listing(&found)));
    assert!(planted.nodes.contains(&"engine".to_string()), "{planted}");
    assert!(
        planted.witnesses.iter().any(|w| w.starts_with("text -> engine: text.rs:") && w.contains("crate::engine::Engine")),
        "{planted}"
    );
}
