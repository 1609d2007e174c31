//! The CLI names a directory that cannot be mounted by the option that gave it (not the wasm file).

use std::path::PathBuf;

fn plugin_wasm() -> PathBuf {
    let wasm = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/wasm32-wasip2/component/graphiti_openclaw.wasm");
    assert!(
        wasm.is_file(),
        "build the component first: scripts/build.sh"
    );
    wasm
}

fn run(args: &[&str]) -> (Option<i32>, String) {
    // One each: the tests run at once, and one's removal must not pull another's HOME away.
    let home = tempfile::Builder::new()
        .prefix("graphiti-openclaw-cli-dirs-")
        .tempdir()
        .expect("a temporary directory");
    let wasm = plugin_wasm();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_graphiti-openclaw"))
        .args(["--quiet", "--wasm", wasm.to_str().unwrap()])
        .args(args)
        .env("HOME", home.path())
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_missing_config_directory_is_named() {
    let (code, stderr) = run(&["--config-dir", "no-such-config", "check-config"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "graphiti-openclaw: --config-dir no-such-config: No such file or directory (os error 2)\n"
    );
}

#[test]
fn a_missing_experts_directory_is_named_not_the_wasm() {
    let config = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../config");
    let (code, stderr) = run(&[
        "--config-dir",
        config.to_str().unwrap(),
        "--experts-dir",
        "no-such-experts",
        "experts",
        "list",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "graphiti-openclaw: --experts-dir no-such-experts: No such file or directory (os error 2)\n"
    );
}
