//! How answers are printed: command output as the component wrote it, the hooks' answers as text.

use host_shim::{CaptureOutcome, CommandOutput, Injection, TickReport};

pub(crate) fn print_output(output: &CommandOutput) -> u8 {
    print!("{}", output.stdout);
    eprint!("{}", output.stderr);
    output.exit_code
}

pub(crate) fn print_tick(tick: &TickReport) {
    print!(
        "tick: sent {} episode(s) to Graphiti, {} waiting",
        tick.sent, tick.pending
    );
    if tick.in_doubt > 0 {
        print!(" ({} in doubt)", tick.in_doubt);
    }
    match (&tick.error, tick.retry_in_ms) {
        (Some(error), Some(ms)) => {
            println!("; retry in {:.1} s after: {error}", ms as f64 / 1000.0)
        }
        (Some(error), None) => println!("; {error}"),
        _ => println!(),
    }
    for note in &tick.notes {
        println!("note: {note}");
    }
}

pub(crate) fn print_injection(injection: &Injection) {
    println!("before-agent-start:");
    match &injection.prepend_context {
        Some(context) => println!("{context}"),
        None => {
            let reason = injection
                .decision
                .no_pack_reason
                .as_deref()
                .unwrap_or("no reason given");
            println!("no injection: {reason}");
        }
    }
    let decision = &injection.decision;
    match (&decision.intent, &decision.primary_pack) {
        (Some(intent), Some(pack)) => println!("decision: {intent} → pack {pack}"),
        _ => println!(
            "decision: no pack ({})",
            decision
                .no_pack_reason
                .as_deref()
                .unwrap_or("no reason given")
        ),
    }
    for step in &decision.trace {
        println!("  trace: {step}");
    }
    for note in &injection.notes {
        println!("note: {note}");
    }
}

pub(crate) fn print_capture(capture: &CaptureOutcome) {
    match capture {
        CaptureOutcome::Spooled(turn) => {
            println!(
                "agent-end: spooled episode {} for group {}",
                turn.episode, turn.group_id
            );
            println!("user: {}", turn.user);
            println!("assistant: {}", turn.assistant);
        }
        CaptureOutcome::Skipped(reason) => println!("agent-end: nothing to capture: {reason}"),
        CaptureOutcome::Dropped(reason) => println!("agent-end: NOT CAPTURED: {reason}"),
    }
}
