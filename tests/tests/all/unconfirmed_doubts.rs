//! A send in doubt (its answer lost) that Graphiti cannot confirm: over MCP on FalkorDB the
//! server's `get_episodes` reads only its default graph, never the plugin's groups. The user
//! chooses with `capture.when_unconfirmed` between a possible duplicate (`send-again`, the
//! default: never lost) and never twice (`keep-aside`: the entry is set aside in the spool,
//! counted in `status`, and sent again only by `spool requeue`); `status` says which holds.

use graphiti_openclaw_tests::{
    copy_dir, example_config, graphiti_shim as shim, hook_context, temp_dir,
};
use graphiti_standin::{Behaviour, EpisodeLookups, Fault, Lasting, Options, StandIn};
use host_shim::{AgentEndEvent, ChatType, Command, Shim, SpoolCommand};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;
use tempfile::TempDir;

fn standin(lookups: EpisodeLookups) -> StandIn {
    let standin = StandIn::start(Options::default()).expect("stand-in starts");
    standin.set_behaviour(Behaviour {
        episode_lookups: lookups,
        ..Behaviour::default()
    });
    standin
}

/// MCP settings where a doubt comes due at the next tick; `capture` adds lines to `capture:`.
fn config(standin: &StandIn, capture: &str) -> TempDir {
    config_over(standin, "mcp", capture)
}

fn config_over(standin: &StandIn, transport: &str, capture: &str) -> TempDir {
    let dir = temp_dir("unconfirmed-config");
    copy_dir(&example_config(), dir.path());
    let url = match transport {
        "mcp" => format!("{}/mcp", standin.url()),
        _ => standin.url(),
    };
    let settings = format!(
        "schema_version: 1\n\
         graphiti:\n  url: {url}\n  transport: {transport}\n\
         recall:\n  timeout_ms: 400\n\
         capture:\n  backoff_initial_ms: 10\n  backoff_max_ms: 40\n  send_timeout_ms: 2000\n  \
         resend_after_doubt_ms: 0\n{capture}"
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

fn turn(shim: &mut Shim, text: &str) {
    let messages = serde_json::json!([{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]);
    let event = AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.to_string(),
        duration_ms: Some(900),
    };
    shim.agent_end(&event, &hook_context("session-doubt", ChatType::Direct));
}

/// One turn whose send Graphiti stores while the connection breaks before its answer: in doubt.
fn send_in_doubt(standin: &StandIn, shim: &mut Shim) {
    // The MCP session first, so that the one broken request is the episode's.
    let status = shim.run_command(&Command::Status);
    assert_eq!(status.exit_code, 0, "{status:?}");
    turn(shim, "Remember that the launch moved to Friday");
    standin
        .set_faults(vec![
            (Fault::AcceptThenReset, Lasting::Requests(1)),
            (Fault::None, Lasting::Forever),
        ])
        .unwrap();
    let report = shim.tick();
    assert_eq!((report.sent, report.in_doubt), (0, 1), "{report:?}");
    assert_eq!(stored(standin), 1, "Graphiti stored it");
}

/// How often Graphiti stored the turn: one send each (over REST a send is two messages).
fn stored(standin: &StandIn) -> usize {
    let sends: BTreeSet<u64> = standin.accepted_sends().iter().map(|s| s.request).collect();
    sends.len()
}

/// Ticks past the back-off a few times.
fn ticks(shim: &mut Shim, n: usize) {
    for _ in 0..n {
        std::thread::sleep(Duration::from_millis(60));
        let _ = shim.tick();
    }
}

fn spool_files(state: &Path, extension: &str) -> usize {
    std::fs::read_dir(state.join("spool")).map_or(0, |listing| {
        listing
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == extension))
            .count()
    })
}

#[test]
fn over_mcp_on_falkordb_keep_aside_stores_a_send_in_doubt_once_and_keeps_it() {
    let standin = standin(EpisodeLookups::FalkorDb);
    let config = config(&standin, "  when_unconfirmed: keep-aside\n");
    let state = temp_dir("unconfirmed-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    send_in_doubt(&standin, &mut shim);
    ticks(&mut shim, 3);
    assert_eq!(stored(&standin), 1, "never twice");
    assert_eq!(
        spool_files(state.path(), "unconfirmed"),
        1,
        "kept, not deleted"
    );
    assert_eq!(
        spool_files(state.path(), "doubt") + spool_files(state.path(), "episode"),
        0
    );

    let status = shim.run_command(&Command::Status).stdout;
    assert!(status.contains("1 kept aside unconfirmed"), "{status}");
    assert!(status.contains("1 set aside"), "{status}");
    assert!(
        status.contains("cannot confirm a send in doubt")
            && status.contains("FalkorDB")
            && status.contains("capture.when_unconfirmed: keep-aside")
            && status.contains("never stored twice"),
        "status says which guarantee holds:\n{status}"
    );
    let listed = shim.run_command(&Command::Spool(SpoolCommand::List)).stdout;
    assert!(
        listed.contains("set aside") && listed.contains("could not confirm"),
        "{listed}"
    );

    // Sent again only when the operator says so.
    let requeued = shim.run_command(&Command::Spool(SpoolCommand::Requeue));
    assert!(
        requeued.stdout.contains("1 set-aside episode(s) put back"),
        "{requeued:?}"
    );
    assert!(
        requeued.stdout.contains("1 of them were sent before with no answer")
            && requeued.stdout.contains("stores them a second time"),
        "the operator is told it may be stored twice: {requeued:?}"
    );
    assert_eq!(shim.tick().sent, 1);
    assert_eq!(stored(&standin), 2, "the operator's choice");
    assert_eq!(spool_files(state.path(), "unconfirmed"), 0);
}

#[test]
fn over_mcp_on_falkordb_the_default_sends_a_send_in_doubt_again_and_says_so() {
    let standin = standin(EpisodeLookups::FalkorDb);
    let config = config(&standin, "");
    let state = temp_dir("unconfirmed-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    send_in_doubt(&standin, &mut shim);
    ticks(&mut shim, 3);
    assert_eq!(stored(&standin), 2, "never lost: sent again, stored twice");
    assert_eq!(spool_files(state.path(), "unconfirmed"), 0);

    let status = shim.run_command(&Command::Status).stdout;
    assert!(status.contains("1 sent again"), "{status}");
    assert!(
        status.contains("cannot confirm a send in doubt")
            && status.contains("capture.when_unconfirmed: send-again")
            && status.contains("never lost, possibly stored twice"),
        "status says which guarantee holds:\n{status}"
    );
}

/// A server that does not name its database (REST) and whose listing showed nothing of the group
/// when a doubt came due (FalkorDB before graphiti-core 0.29.3): `status` says so, until a listing
/// confirms a doubt.
#[test]
fn a_listing_that_shows_nothing_of_the_group_is_said_in_status() {
    let standin = standin(EpisodeLookups::FalkorDbLegacy);
    let config = config_over(&standin, "rest", "  when_unconfirmed: keep-aside\n");
    let state = temp_dir("unconfirmed-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    send_in_doubt(&standin, &mut shim);
    ticks(&mut shim, 3);
    assert_eq!(spool_files(state.path(), "unconfirmed"), 1);
    let status = shim.run_command(&Command::Status).stdout;
    assert!(
        status.contains("cannot confirm a send in doubt")
            && status.contains("showed nothing of group main-dm-user-1")
            && status.contains("capture.when_unconfirmed: keep-aside"),
        "{status}"
    );
}

/// Where the listing sees the group (Neo4j), a doubt is confirmed from it whatever the choice.
#[test]
fn on_neo4j_a_send_in_doubt_is_confirmed_from_the_listing_under_either_choice() {
    for capture in ["", "  when_unconfirmed: keep-aside\n"] {
        let standin = standin(EpisodeLookups::Neo4j);
        let config = config(&standin, capture);
        let state = temp_dir("unconfirmed-state");
        let mut shim = shim(config.path(), state.path(), &standin.url());
        send_in_doubt(&standin, &mut shim);
        ticks(&mut shim, 3);
        assert_eq!(stored(&standin), 1, "{capture:?}");
        assert_eq!(spool_files(state.path(), "unconfirmed"), 0, "{capture:?}");
        let status = shim.run_command(&Command::Status).stdout;
        assert!(status.contains("1 then found stored"), "{status}");
        assert!(
            status.contains("confirmed once Graphiti lists it")
                && !status.contains("cannot confirm"),
            "{status}"
        );
    }
}

/// A value that is not one of the two is refused, naming the setting and both values; the
/// settings in force stay the defaults (never lost).
#[test]
fn a_bad_when_unconfirmed_names_the_setting_and_its_values() {
    let standin = standin(EpisodeLookups::Neo4j);
    let config = config(&standin, "  when_unconfirmed: twice\n");
    let state = temp_dir("unconfirmed-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let checked = shim.run_command(&Command::CheckConfig);
    let said = format!("{}{}", checked.stdout, checked.stderr);
    assert_ne!(checked.exit_code, 0, "{said}");
    assert!(
        said.contains("capture.when_unconfirmed")
            && said.contains("send-again")
            && said.contains("keep-aside"),
        "{said}"
    );
}
