//! Limits: a failing guest (endless loop, unbounded allocation, panic) never takes the shim down.

use std::time::{Duration, Instant};

use host_shim::{
    AgentEndEvent, CaptureOutcome, Command, EvalCommand, IntentTestRequest, Limits, Shim,
    ShimError, ShimOptions,
};

use super::harness::{LIMITS, answer, assert_fallback, ctx, error_logs, options, prompt, temp_dir};

#[test]
fn endless_loop_hits_the_deadline_then_the_next_call_works() {
    let config = temp_dir("loop");
    let limits = Limits {
        call_timeout: Duration::from_millis(500),
        ..LIMITS
    };
    let mut shim = Shim::new(ShimOptions {
        limits,
        ..options(&config)
    })
    .unwrap();

    let started = Instant::now();
    let reason = assert_fallback(&prompt(&mut shim, "loop"), "exceeded its 500 ms deadline");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        reason,
        "plugin call before-agent-start exceeded its 500 ms deadline"
    );
    assert!(error_logs(&shim).contains(&reason));

    assert_eq!(answer(&mut shim, "hello"), "echo: hello");
}

#[test]
fn unbounded_allocation_hits_the_memory_limit_then_the_next_call_works() {
    let config = temp_dir("alloc");
    let mut shim = Shim::new(options(&config)).unwrap();

    let reason = assert_fallback(
        &prompt(&mut shim, "alloc"),
        "exceeded its memory limit of 64 MiB",
    );
    assert!(error_logs(&shim).contains(&reason));

    assert_eq!(answer(&mut shim, "hello"), "echo: hello");
}

#[test]
fn panic_traps_then_the_next_call_works() {
    let config = temp_dir("panic");
    let mut shim = Shim::new(options(&config)).unwrap();

    assert_fallback(
        &prompt(&mut shim, "panic"),
        "plugin call before-agent-start trapped: ",
    );
    assert_eq!(answer(&mut shim, "hello"), "echo: hello");
}

#[test]
fn every_export_has_a_fallback() {
    let config = temp_dir("exports");
    let mut shim = Shim::new(options(&config)).unwrap();

    let end = |messages: &str| AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.into(),
        duration_ms: None,
    };
    match shim.agent_end(&end("panic"), &ctx()) {
        CaptureOutcome::Dropped(reason) => {
            assert!(
                reason.starts_with("plugin call agent-end trapped: "),
                "{reason}"
            )
        }
        other => panic!("expected dropped, got {other:?}"),
    }

    let request = |prompt: &str| IntentTestRequest {
        prompt: prompt.into(),
        recall_json: None,
        group_chat: false,
        previous_pack: None,
        now_ms: None,
        previous_at_ms: None,
        carried_turns: None,
        previous_prompt: None,
    };
    let err = shim.dry_run(&request("panic")).unwrap_err();
    assert!(err.starts_with("plugin call dry-run trapped: "), "{err}");
    assert_eq!(
        shim.dry_run(&request("hi"))
            .unwrap()
            .prepend_context
            .as_deref(),
        Some("echo: hi")
    );

    let output = shim.run_command(&Command::Eval(EvalCommand {
        cases_json: "panic".into(),
        threshold: 0.9,
    }));
    assert_eq!(output.exit_code, host_shim::GUEST_FAILURE_EXIT_CODE);
    assert!(
        output
            .stderr
            .starts_with("plugin call run-command trapped: "),
        "{}",
        output.stderr
    );
    let output = shim.run_command(&Command::CheckConfig);
    assert_eq!((output.exit_code, output.stdout.as_str()), (0, "probe\n"));
}

#[test]
fn limits_must_be_usable() {
    let config = temp_dir("limits");
    let zero = Limits {
        call_timeout: Duration::ZERO,
        ..LIMITS
    };
    let err = Shim::new(ShimOptions {
        limits: zero,
        ..options(&config)
    })
    .err()
    .expect("an error");
    assert!(matches!(err, ShimError::InvalidLimits(_)), "{err}");
}
