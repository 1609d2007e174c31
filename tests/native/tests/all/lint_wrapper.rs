//! The test command lints while it builds (`scripts/lint-while-building.sh` as cargo's
//! RUSTC_WORKSPACE_WRAPPER): a file with a clippy lint or a warning fails to compile through it, and
//! a clean one compiles.

use graphiti_openclaw_native_tests::{temp_dir, workspace};
use std::process::{Command, Output};

fn compile_through_the_wrapper(source: &str) -> Output {
    let dir = temp_dir("lint-wrapper");
    let file = dir.path().join("planted.rs");
    std::fs::write(&file, source).unwrap();
    Command::new(workspace().join("scripts/lint-while-building.sh"))
        .arg("rustc")
        .args(["--edition", "2024", "--crate-type", "lib", "--emit", "metadata", "--out-dir"])
        .arg(dir.path())
        .arg(&file)
        .output()
        .expect("the wrapper runs")
}

#[test]
fn a_clippy_lint_or_a_warning_fails_the_build_and_clean_code_passes() {
    let lint = compile_through_the_wrapper("pub fn same(y: u32) -> bool { y == y }\n");
    assert!(!lint.status.success(), "{lint:?}");
    assert!(String::from_utf8_lossy(&lint.stderr).contains("clippy::eq_op"), "{lint:?}");
    let warning = compile_through_the_wrapper("pub fn unused() { let x = 1; }\n");
    assert!(!warning.status.success(), "{warning:?}");
    assert!(String::from_utf8_lossy(&warning.stderr).contains("unused variable"), "{warning:?}");
    let long = format!("pub fn long() -> u32 {{\n{}    0\n}}\n", "    core::hint::spin_loop();\n".repeat(120));
    let too_long = compile_through_the_wrapper(&long);
    assert!(String::from_utf8_lossy(&too_long.stderr).contains("too_many_lines"), "{too_long:?}");
    let clean = compile_through_the_wrapper("pub fn add(a: u32, b: u32) -> u32 { a + b }\n");
    assert!(clean.status.success(), "{clean:?}");
}

#[test]
fn the_test_command_builds_through_the_wrapper() {
    let script = std::fs::read_to_string(workspace().join("scripts/test.sh")).unwrap();
    assert!(
        script.contains("export RUSTC_WORKSPACE_WRAPPER=\"$PWD/scripts/lint-while-building.sh\""),
        "scripts/test.sh no longer lints while it builds"
    );
}
