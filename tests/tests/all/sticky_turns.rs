//! Stickiness over real turns through the component, with the session state in a state directory and
//! the guest's wall clock set by the host: a pack is carried onto a short follow-up within the time
//! window, not onto the same follow-up after it, nor past the carried-turn limit; strict mode; and a
//! session state file written before expiry existed.

use graphiti_openclaw_tests::{
    example_config, hook_context, plugin_wasm, prompt, temp_dir, workspace,
};
use host_shim::{ChatType, Command, Injection, Limits, SetClock, Shim, ShimOptions};
use std::path::Path;
use std::time::Duration;
use tempfile::TempDir;

/// 2026-03-01T10:00:00Z
const T0: u64 = 1_772_359_200_000;
const MINUTE: Duration = Duration::from_secs(60);

fn shim(state: &Path, clock: &SetClock, host_settings: Option<&str>) -> Shim {
    let limits = Limits {
        call_timeout: Duration::from_secs(10),
        send_timeout: Duration::from_secs(10),
        memory_bytes: 128 << 20,
    };
    let mut options = ShimOptions::new(plugin_wasm(), example_config(), limits);
    options.cache_dir = Some(workspace().join("target/test-component-cache"));
    options.echo_logs = false;
    options.state_dir = Some(state.to_path_buf());
    options.wall_clock = Some(clock.clone());
    options.host_settings = host_settings.map(str::to_string);
    Shim::new(options).expect("shim starts")
}

fn turn(shim: &mut Shim, session: &str, text: &str) -> Injection {
    shim.before_agent_start(&prompt(text), &hook_context(session, ChatType::Direct))
}

/// What `debug` prints about the session's last turn.
fn debug(shim: &mut Shim, session: &str) -> String {
    let out = shim.run_command(&Command::Debug(Some(session.into())));
    assert_eq!(out.exit_code, 0, "{}", out.stderr);
    out.stdout
}

fn carried(injection: &Injection) -> bool {
    injection.decision.sticky
        && injection.prepend_context.as_deref().is_some_and(|c| {
            c.contains("<pack-context intent=\"content_tweet\"") && c.contains("sticky=\"true\"")
        })
}

/// A session that injected the tweet pack at T0, in its own state directory (removed when dropped).
fn after_a_tweet_turn(label: &str, host_settings: Option<&str>) -> (Shim, SetClock, TempDir) {
    let clock = SetClock::at(T0);
    let state = temp_dir(label);
    let mut shim = shim(state.path(), &clock, host_settings);
    let first = turn(&mut shim, "s", "Write a tweet about our product launch");
    assert_eq!(
        first.decision.intent.as_deref(),
        Some("content_tweet"),
        "{:?}",
        first.decision
    );
    assert!(!first.decision.sticky);
    (shim, clock, state)
}

#[test]
fn a_follow_up_within_the_window_is_carried_and_after_it_is_not() {
    let (mut within, clock, _state) = after_a_tweet_turn("sticky-within", None);
    clock.advance(5 * MINUTE);
    let follow = turn(&mut within, "s", "Make it shorter");
    assert!(carried(&follow), "{:?}", follow.decision);
    let shown = debug(&mut within, "s");
    assert!(
        shown.contains(
            "injected 5 min ago, within the 30 min window; carried turn 1 of at most 3): sticky"
        ),
        "{shown}"
    );

    // The same two turns, the follow-up 47 minutes later: the conversation was resumed.
    let (mut later, clock, _state) = after_a_tweet_turn("sticky-later", None);
    clock.advance(47 * MINUTE);
    let follow = turn(&mut later, "s", "Make it shorter");
    assert!(!follow.decision.sticky, "{:?}", follow.decision);
    assert!(
        follow
            .prepend_context
            .as_deref()
            .is_none_or(|c| !c.contains("<pack-context")),
        "{follow:?}"
    );
    let why = "previous pack content_tweet injected 47 min ago > 30 min window: not carried";
    assert_eq!(
        follow.decision.no_pack_reason.as_deref(),
        Some(format!("no keyword matched; {why}").as_str())
    );
    let shown = debug(&mut later, "s");
    assert!(shown.contains(why), "{shown}");

    // Nothing was carried, so the pack is forgotten: even a quick follow-up now gets none.
    clock.advance(MINUTE);
    let next = turn(&mut later, "s", "Make it shorter");
    assert!(!next.decision.sticky);
    assert_eq!(
        next.decision.no_pack_reason.as_deref(),
        Some("no rule's keywords matched")
    );
}

#[test]
fn the_window_runs_from_the_last_turn_that_carried_the_pack() {
    let (mut shim, clock, _state) = after_a_tweet_turn("sticky-chain", None);
    // Three follow-ups 20 minutes apart: each within 30 minutes of the one before (an hour in all).
    for n in 1..=3 {
        clock.advance(20 * MINUTE);
        let follow = turn(&mut shim, "s", "Make it punchier");
        assert!(carried(&follow), "follow-up {n}: {:?}", follow.decision);
    }
    // The fourth is past max_carried_turns (3).
    clock.advance(MINUTE);
    let fourth = turn(&mut shim, "s", "Make it punchier");
    assert!(!fourth.decision.sticky, "{:?}", fourth.decision);
    let why = "already carried over 3 turns in a row (max_carried_turns 3): not carried";
    assert!(debug(&mut shim, "s").contains(why));
    // A keyword turn starts again, and its follow-up is carried.
    clock.advance(MINUTE);
    let keyword = turn(&mut shim, "s", "Another tweet, about the beta this time");
    assert!(
        !keyword.decision.sticky && keyword.decision.intent.as_deref() == Some("content_tweet")
    );
    clock.advance(MINUTE);
    assert!(carried(&turn(&mut shim, "s", "Make it punchier")));
}

#[test]
fn strict_mode_drops_a_statement_naming_someone_new_and_keeps_a_genuine_follow_up() {
    let strict = r#"{"routing": {"sticky": {"strict_follow_up": true}}}"#;
    let (mut shim, clock, _state) = after_a_tweet_turn("sticky-strict", Some(strict));
    clock.advance(MINUTE);
    let priya = turn(&mut shim, "s", "My sister Priya Shah lives in Portland");
    assert!(!priya.decision.sticky, "{:?}", priya.decision);
    assert!(debug(&mut shim, "s").contains("the prompt names Priya, Shah, Portland"));

    let (mut shim, clock, _state) = after_a_tweet_turn("sticky-strict-kept", Some(strict));
    clock.advance(MINUTE);
    assert!(carried(&turn(&mut shim, "s", "make it shorter")));

    // By default (the PRD's rule) the same statement is a short follow-up.
    let (mut shim, clock, _state) = after_a_tweet_turn("sticky-default", None);
    clock.advance(MINUTE);
    assert!(carried(&turn(
        &mut shim,
        "s",
        "My sister Priya Shah lives in Portland"
    )));
}

#[test]
fn a_session_state_from_before_expiry_has_no_time_and_is_not_carried() {
    let state = temp_dir("sticky-old-state");
    let routing = state.path().join("routing");
    std::fs::create_dir_all(&routing).unwrap();
    let file = graphiti_openclaw::routing::state::file_for(&routing, "s");
    std::fs::write(&file, r#"{"session_key":"s","intent":"content_tweet"}"#).unwrap();
    let clock = SetClock::at(T0);
    let mut shim = shim(state.path(), &clock, None);
    let follow = turn(&mut shim, "s", "Make it shorter");
    assert!(!follow.decision.sticky, "{:?}", follow.decision);
    assert!(
        follow.decision.no_pack_reason.as_deref().unwrap_or_default().contains(
            "previous pack content_tweet was injected at an unknown time (session state from an older version)"
        ),
        "{:?}",
        follow.decision
    );
}
