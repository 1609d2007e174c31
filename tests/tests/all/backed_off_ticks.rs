//! Ticks while Graphiti is down: once a pass has listed the spool and backs off, the next ticks take
//! the depth that pass kept instead of listing a backlog of thousands again, and still say how many
//! wait and why; a turn spooled meanwhile changes the spool, and the next tick counts it.

use graphiti_openclaw_tests::{
    copy_dir, example_config, exchange, graphiti_shim, hook_context, temp_dir,
};
use host_shim::{CaptureOutcome, ChatType};

const UNREACHABLE: &str = "http://127.0.0.1:9";

#[test]
fn a_backed_off_tick_says_the_kept_depth_and_counts_a_turn_spooled_since() {
    let config = temp_dir("backed-off-config");
    copy_dir(&example_config(), config.path());
    std::fs::write(
        config.path().join("settings.yaml"),
        format!(
            "schema_version: 1\ngraphiti:\n  url: {UNREACHABLE}/mcp\n\
             capture:\n  backoff_initial_ms: 600000\n  backoff_max_ms: 600000\n"
        ),
    )
    .unwrap();
    let state = temp_dir("backed-off-state");
    let mut shim = graphiti_shim(config.path(), state.path(), UNREACHABLE);
    let ctx = hook_context("backed-off", ChatType::Direct);
    let turn = |shim: &mut host_shim::Shim, n: usize| {
        let said = exchange(&format!("Remember that crate number {n} is blue"), "Noted.");
        let outcome = shim.agent_end(&said, &ctx);
        assert!(matches!(outcome, CaptureOutcome::Spooled(_)), "{outcome:?}");
    };
    for n in 0..3 {
        turn(&mut shim, n);
    }
    let first = shim.tick();
    assert_eq!(first.pending, 3, "{first:?}");
    let why = first.error.clone().expect("Graphiti is unreachable");
    for _ in 0..2 {
        let again = shim.tick();
        assert_eq!(
            (again.pending, again.in_doubt, again.error.as_deref()),
            (3, 0, Some(why.as_str())),
            "{again:?}"
        );
        assert!(again.retry_in_ms.is_some_and(|ms| ms > 0), "{again:?}");
    }
    turn(&mut shim, 3);
    assert_eq!(shim.tick().pending, 4, "a turn spooled since is counted");
    // Another process (a fresh shim) backing off the same spool reads the same.
    drop(shim);
    let mut other = graphiti_shim(config.path(), state.path(), UNREACHABLE);
    let seen = other.tick();
    assert_eq!(
        (seen.pending, seen.error.as_deref()),
        (4, Some(why.as_str())),
        "{seen:?}"
    );
}
