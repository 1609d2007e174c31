//! Who holds the send lock, as a tick's note names it: another instance of this very process (a
//! second registration or pooled instance in one Gateway) is not "another process".

use graphiti_openclaw_tests::{example_config, graphiti_shim, temp_dir};
use host_shim::StateLocks;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(600);

#[test]
fn a_send_lock_held_in_this_process_is_named_as_this_process() {
    let state = temp_dir("send-lock-here");
    // What another instance in this process (same pid, same host) takes through `acquire-lock`.
    let mut other_instance = StateLocks::new(Some(state.path().to_path_buf()), |_| {});
    other_instance
        .acquire("send", LONG, Duration::ZERO)
        .expect("free");
    let mut shim = graphiti_shim(&example_config(), state.path(), "http://127.0.0.1:9");
    let report = shim.tick();
    let note = report
        .notes
        .iter()
        .find(|n| n.contains("is sending the spool"))
        .unwrap_or_else(|| panic!("{report:?}"));
    let pid = std::process::id();
    assert!(
        note.starts_with(&format!(
            "another instance in this process (pid {pid}) is sending the spool (held by pid {pid} "
        )),
        "{note}"
    );
    assert!(!note.contains("another process"), "{note}");
}

#[test]
fn a_send_lock_held_on_another_host_is_another_process_even_with_this_pid() {
    let state = temp_dir("send-lock-elsewhere");
    std::fs::create_dir_all(state.path().join("locks")).unwrap();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let pid = std::process::id();
    let record = serde_json::json!({
        "pid": pid, "host": "elsewhere", "token": "0123456789abcdef0123456789abcdef",
        "acquired_ms": now_ms as u64, "lease_ms": 600_000, "holder": "graphiti-openclaw adapter 0.1.0",
    });
    std::fs::write(state.path().join("locks/send.lock"), record.to_string()).unwrap();
    let mut shim = graphiti_shim(&example_config(), state.path(), "http://127.0.0.1:9");
    let report = shim.tick();
    let note = report
        .notes
        .iter()
        .find(|n| n.contains("is sending the spool"))
        .unwrap_or_else(|| panic!("{report:?}"));
    assert!(
        note.starts_with(&format!(
            "another process is sending the spool (held by pid {pid} (graphiti-openclaw adapter \
             0.1.0) on elsewhere since "
        )),
        "{note}"
    );
}
