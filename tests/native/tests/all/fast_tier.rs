//! The fast tier (`scripts/test-fast.sh`) builds no wasmtime: the packages it tests, with their
//! normal, dev and build dependencies, as `cargo tree` resolves them from the lockfile.

use graphiti_openclaw_native_tests::workspace;
use std::process::Command;

/// The packages `scripts/test-fast.sh` names with `-p`.
fn fast_tier_packages() -> Vec<String> {
    let script = std::fs::read_to_string(workspace().join("scripts/test-fast.sh")).unwrap();
    let words: Vec<&str> = script
        .lines()
        .filter(|l| l.trim_start().starts_with("cargo test"))
        .flat_map(str::split_whitespace)
        .collect();
    words
        .windows(2)
        .filter(|pair| pair[0] == "-p")
        .map(|pair| pair[1].to_string())
        .collect()
}

/// The names of every crate `packages` build, tests included.
fn crates_built_for(packages: &[String]) -> Vec<String> {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(workspace())
        .args(["tree", "--locked", "--prefix", "none", "--edges", "normal,dev,build"])
        .args(["--format", "{p}"]);
    for package in packages {
        command.args(["-p", package]);
    }
    let out = command.output().expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_fast_tier_builds_no_wasmtime() {
    let packages = fast_tier_packages();
    assert!(
        packages.iter().any(|p| p == "graphiti-openclaw-native-tests"),
        "scripts/test-fast.sh tests {packages:?}"
    );
    let wasmtime: Vec<String> = crates_built_for(&packages)
        .into_iter()
        .filter(|c| c.starts_with("wasmtime") || c.starts_with("cranelift"))
        .collect();
    assert!(wasmtime.is_empty(), "the fast tier ({packages:?}) builds {wasmtime:?}");
}

#[test]
fn the_check_finds_wasmtime_where_it_is_built() {
    let host_shim = crates_built_for(&["graphiti-openclaw-host-shim".to_string()]);
    assert!(host_shim.iter().any(|c| c == "wasmtime"), "{host_shim:?}");
}
