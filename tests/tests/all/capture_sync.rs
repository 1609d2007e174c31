//! `capture.sync_to_disk` through the real component in the shim (wasmtime's WASI): a turn and a
//! note are spooled with their files and directories synced, the first of them creating the spool
//! directory. That the syncs happen, and in order, is shown through the adapter's own file calls
//! (plugin/openclaw/test/sync-to-disk.test.js); here, that wasmtime's WASI carries every one of them.

use graphiti_openclaw_tests::{copy_dir, example_config, graphiti_shim, hook_context, temp_dir};
use host_shim::{AgentEndEvent, CaptureOutcome, ChatType, Command, IngestRequest};
use std::path::Path;

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
    let config = temp_dir("capture-sync-config");
    copy_dir(&example_config(), config.path());
    std::fs::write(
        config.path().join("settings.yaml"),
        "schema_version: 1\ngraphiti:\n  url: http://127.0.0.1:9/mcp\ncapture:\n  sync_to_disk: true\n",
    )
    .unwrap();
    let state = temp_dir("capture-sync-state");
    assert!(
        !state.path().join("spool").exists(),
        "the first capture makes the spool"
    );
    let mut shim = graphiti_shim(config.path(), state.path(), "http://127.0.0.1:9");
    let ctx = hook_context("kettle", ChatType::Direct);
    let messages = serde_json::json!([
        {"role": "user", "content": "Remember that the blue kettle is on the top shelf"},
        {"role": "assistant", "content": "Noted."},
    ]);
    let event = AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.to_string(),
        duration_ms: None,
    };
    let outcome = shim.agent_end(&event, &ctx);
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
    let config = temp_dir("capture-nosync-config");
    copy_dir(&example_config(), config.path());
    std::fs::write(
        config.path().join("settings.yaml"),
        "schema_version: 1\ngraphiti:\n  url: http://127.0.0.1:9/mcp\n",
    )
    .unwrap();
    let state = temp_dir("capture-nosync-state");
    let mut shim = graphiti_shim(config.path(), state.path(), "http://127.0.0.1:9");
    let status = shim.run_command(&Command::Status).stdout;
    assert!(
        status.contains("a killed process loses none, a power cut may lose the last seconds (capture.sync_to_disk: false)"),
        "{status}"
    );
}
