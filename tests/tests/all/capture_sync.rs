//! `capture.sync_to_disk` through the real component in the shim (wasmtime's WASI): a turn and a
//! note are spooled with their files and directories synced, the first of them creating the spool
//! directory. That the syncs happen, and in order, is shown through the adapter's own file calls
//! (plugin/openclaw/test/sync-to-disk.test.js); here, that wasmtime's WASI carries every one of them.

use graphiti_openclaw_tests::{
    copy_dir, example_config, exchange, graphiti_shim, hook_context, temp_dir,
};
use host_shim::{CaptureOutcome, ChatType, Command, IngestRequest, Shim};
use std::path::Path;
use tempfile::TempDir;

const UNREACHABLE: &str = "http://127.0.0.1:9";

/// The example configuration with Graphiti unreachable and `capture` as given; its state directory.
fn shim_with_capture(label: &str, capture: &str) -> (Shim, TempDir, TempDir) {
    let config = temp_dir(&format!("{label}-config"));
    copy_dir(&example_config(), config.path());
    std::fs::write(
        config.path().join("settings.yaml"),
        format!("schema_version: 1\ngraphiti:\n  url: {UNREACHABLE}/mcp\n{capture}"),
    )
    .unwrap();
    let state = temp_dir(&format!("{label}-state"));
    let shim = graphiti_shim(config.path(), state.path(), UNREACHABLE);
    (shim, config, state)
}

fn spooled_texts(state: &Path) -> Vec<String> {
    let mut texts: Vec<String> = std::fs::read_dir(state.join("spool"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "episode"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    texts.sort();
    texts
}

#[test]
fn with_sync_to_disk_a_turn_and_a_note_are_spooled_through_wasmtimes_wasi() {
    let (mut shim, _config, state) =
        shim_with_capture("capture-sync", "capture:\n  sync_to_disk: true\n");
    assert!(
        !state.path().join("spool").exists(),
        "the first capture makes the spool"
    );
    let ctx = hook_context("kettle", ChatType::Direct);
    let turn = exchange(
        "Remember that the blue kettle is on the top shelf",
        "Noted.",
    );
    let outcome = shim.agent_end(&turn, &ctx);
    assert!(matches!(outcome, CaptureOutcome::Spooled(_)), "{outcome:?}");
    let note = shim.run_command(&Command::Ingest(IngestRequest {
        text: "The spare key is under the mat".into(),
        source: None,
        ctx,
    }));
    assert_eq!(note.exit_code, 0, "{}", note.stderr);
    let texts = spooled_texts(state.path());
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("blue kettle")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("spare key")), "{texts:?}");
    let status = shim.run_command(&Command::Status).stdout;
    assert!(
        status.contains(
            "on disk:  each turn is synced to the disk before its hook returns: a killed process \
             or a power cut loses none (capture.sync_to_disk: true)"
        ),
        "{status}"
    );
}

#[test]
fn status_says_what_a_power_cut_may_cost_without_sync_to_disk() {
    let (mut shim, _config, _state) = shim_with_capture("capture-nosync", "");
    let status = shim.run_command(&Command::Status).stdout;
    assert!(
        status.contains(
            "a killed process loses none, a power cut may lose the last seconds \
             (capture.sync_to_disk: false)"
        ),
        "{status}"
    );
}
