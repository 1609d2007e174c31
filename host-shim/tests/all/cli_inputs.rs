//! What the CLI reads and writes on the user's say-so: a file named on the command line is read within
//! a size limit, and a file-size limit (`ulimit -f`, what a full disk looks like to a process) fails
//! the writes it hits instead of killing the CLI.


use std::process::Command;

use crate::support::{cli, temp_dir};

#[test]
fn a_huge_file_named_on_the_command_line_is_refused_not_read() {
    let home = temp_dir("cli-huge-input");
    let huge = home.path().join("recall.json");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len(11 << 20).unwrap(); // sparse: 11 MiB of zeros
    let out = cli(
        &home,
        &[
            "intent-test",
            "Book a table",
            "--recall",
            huge.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("recall file") && stderr.contains("is larger than 10 MiB: not read"),
        "{stderr}"
    );
    let settings = home.path().join("settings.json");
    std::fs::File::create(&settings)
        .unwrap()
        .set_len(11 << 20)
        .unwrap();
    let out = cli(
        &home,
        &["--settings", settings.to_str().unwrap(), "check-config"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("settings file") && stderr.contains("larger than 10 MiB"),
        "{stderr}"
    );
}

#[test]
fn a_file_size_limit_fails_the_write_it_hits_and_the_cli_goes_on() {
    let home = temp_dir("cli-ulimit");
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    // Every write to a file fails (EFBIG): the compiled-component cache entry cannot be written.
    let script = format!(
        "ulimit -f 0; exec {} --wasm {} --config-dir {} check-config",
        env!("CARGO_BIN_EXE_graphiti-openclaw"),
        crate::support::probe_wasm().display(),
        home.path().join("config").display()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .env("HOME", home.path())
        .env_remove("XDG_CACHE_HOME")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(
        out.status.code(),
        None,
        "killed by a signal (SIGXFSZ): {out:?}"
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("cannot write cache file"), "{stderr}");
}

#[test]
fn a_closed_output_pipe_ends_the_cli_quietly_not_with_a_panic() {
    let home = temp_dir("cli-closed-pipe");
    // `graphiti-openclaw intent-test … | true`: whatever reads the output has gone before it is written.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_graphiti-openclaw"))
        .arg("--wasm")
        .arg(crate::support::plugin_wasm())
        .arg("--config-dir")
        .arg(crate::support::example_config())
        .arg("--cache-dir")
        .arg(home.path().join("cache"))
        .args(["intent-test", "Plan a dinner with a founder"])
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "{stderr}");
}

#[test]
fn a_subcommands_help_lists_its_own_options_then_the_global_ones_apart() {
    let home = temp_dir("cli-help");
    let out = cli(&home, &["intent-test", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{help}");
    let global = help
        .find("Global options:")
        .unwrap_or_else(|| panic!("{help}"));
    let own = help.find("--recall").unwrap_or_else(|| panic!("{help}"));
    assert!(own < global, "its own options first: {help}");
    assert!(help[global..].contains("--state-dir"), "{help}");
    assert!(!help[..global].contains("--state-dir"), "{help}");
}
