//! Forgetting on FalkorDB without a connection to it: Graphiti's API deletes only in the server's
//! default graph, so for a chat's own graph the proposal warns before it is confirmed, the reply
//! names the backend and the fix for each item, a group that lives in the default graph is judged by
//! what is left, a REST server (which names no database) is learned from its deletes, and `status`
//! counts what confirmed forgets could not remove. Through the real component in the shim, against
//! the stand-in answering as the real servers do on FalkorDB.

use super::memory_forget::{
    confirm, dm, end, fact, forget, forget_all, forget_id, search, seed,
};
use graphiti_openclaw_tests::{
    copy_dir, example_config, graphiti_shim as new_shim, prompt, standin, temp_dir,
};
use graphiti_standin::{Behaviour, EpisodeLookups, StandIn};
use host_shim::{CaptureOutcome, Command, HookContext, MemoryCommand, MemoryQuery, Shim};
use tempfile::TempDir;

fn on_falkordb() -> StandIn {
    let standin = standin();
    standin.set_behaviour(Behaviour { episode_lookups: EpisodeLookups::FalkorDb, ..standin.behaviour() });
    standin
}

/// The example config against the stand-in, over `transport`, with `group_id` lines (YAML under
/// `graphiti:`) when given.
fn falkordb_config(standin: &StandIn, transport: &str, group_id: &str) -> TempDir {
    let dir = temp_dir("forget-falkordb-config");
    copy_dir(&example_config(), dir.path());
    let url = if transport == "mcp" { format!("{}/mcp", standin.url()) } else { standin.url() };
    let settings = format!(
        "schema_version: 1\n\
         graphiti:\n  url: {url}\n  transport: {transport}\n{group_id}\
         recall:\n  min_relevance: 0\n\
         capture:\n  backoff_initial_ms: 10\n  backoff_max_ms: 40\n"
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

#[test]
fn over_mcp_the_proposal_warns_and_the_reply_names_the_backend_and_the_fix() {
    let standin = on_falkordb();
    let config = falkordb_config(&standin, "mcp", "");
    let state = temp_dir("forget-falkordb-state");
    let mut shim = new_shim(config.path(), state.path(), &standin.url());
    let ana = dm("user-1");
    seed(&standin, "main-dm-user-1", &fact("fact-a1", "The user sees a therapist", &[]), "");

    let proposal = forget(&mut shim, "therapist", &[], &ana);
    assert!(proposal.stdout.contains("fact     fact-a1"), "{proposal:?}");
    assert!(
        proposal.stdout.contains(
            "Warning: Graphiti's API cannot delete in this chat's graph main-dm-user-1 (its MCP server names FalkorDB as its database)"
        ) && proposal.stdout.contains("likely to delete nothing Graphiti holds"),
        "warned before it is confirmed: {proposal:?}"
    );
    let done = confirm(&mut shim, &forget_id(&proposal), &ana);
    assert_eq!(done.exit_code, 1, "{done:?}");
    assert!(done.stdout.contains("Could not be removed:\n  fact-a1: "), "{done:?}");
    assert!(
        done.stdout.contains(
            "Graphiti's API cannot delete in this chat's graph main-dm-user-1 (its MCP server names FalkorDB as its database)"
        ) && done.stdout.contains("Delete what stayed in FalkorDB itself: GRAPH.DELETE main-dm-user-1"),
        "the reply names the backend and the fix, not just \"not found\": {done:?}"
    );
    assert!(search(&mut shim, "therapist", &ana).contains("sees a therapist"), "nothing was deleted");

    let all = forget_all(&mut shim, &ana, false);
    assert_eq!(all.exit_code, 1, "{all:?}");
    assert!(all.stdout.contains("Warning: Graphiti's API cannot delete in this chat's graph main-dm-user-1"), "{all:?}");
    assert!(
        all.stdout.contains("group main-dm-user-1: Graphiti answered success, but its listing cannot show the graph gone")
            && all.stdout.contains("Delete what stayed in FalkorDB itself: GRAPH.DELETE main-dm-user-1"),
        "{all:?}"
    );

    let status = shim.run_command(&Command::Status).stdout;
    assert!(
        status.contains("forgets: 2 item(s) of 2 confirmed forget(s) not removed from Graphiti"),
        "status counts what forgets could not remove, not only follow-ups: {status}"
    );
    assert!(
        status.contains("falkordb: Graphiti runs on FalkorDB, where its API cannot delete or list a chat's memories: connect the plugin to that FalkorDB (graphiti.falkordb.url"),
        "status (and so setup) offers the connection: {status}"
    );
}

/// The MCP server's default graph holds a chat whose group id is the graph's name: there the
/// API's deletes work, and the reply says so because the listing shows the group gone.
#[test]
fn a_group_that_lives_in_the_default_graph_is_judged_by_what_is_left() {
    let standin = on_falkordb();
    let config = falkordb_config(&standin, "mcp", "  group_id:\n    direct: default_db\n");
    let state = temp_dir("forget-falkordb-state");
    let mut shim = new_shim(config.path(), state.path(), &standin.url());
    let ana = dm("user-1");
    for said in ["My therapist is Dr. Vera Lima", "I booked a table at Nopa"] {
        shim.before_agent_start(&prompt(said), &ana);
        assert!(matches!(shim.agent_end(&end(said), &ana), CaptureOutcome::Spooled(_)));
    }
    assert_eq!(shim.tick().sent, 2);
    seed(&standin, "default_db", &fact("fact-d1", "The user sees therapist Dr. Vera Lima", &[]), "");

    let proposal = forget(&mut shim, "therapist", &["fact-d1"], &ana);
    assert!(!proposal.stdout.contains("Warning:"), "the listing sees this group: no warning: {proposal:?}");
    let done = confirm(&mut shim, &forget_id(&proposal), &ana);
    assert_eq!(done.exit_code, 0, "{done:?}");
    assert!(!search(&mut shim, "therapist", &ana).contains("Vera Lima"), "the fact went");

    let all = forget_all(&mut shim, &ana, false);
    assert_eq!(all.exit_code, 0, "judged by the listing, not by the backend's name: {all:?}");
    assert!(all.stdout.contains("group(s) default_db"), "{all:?}");
    assert!(!all.stdout.contains("Could not be removed"), "{all:?}");
    assert!(standin.episodes().iter().all(|e| e.group_id != "default_db"), "the group's episodes are gone");
}

/// The REST server names no database: a delete it answers with an error for an item a search
/// still finds teaches the plugin, and the next proposal warns; a delete that works unlearns it.
#[test]
fn over_rest_a_delete_that_misses_is_learned_and_the_next_proposal_warns() {
    let standin = on_falkordb();
    let config = falkordb_config(&standin, "rest", "");
    let state = temp_dir("forget-falkordb-state");
    let mut shim = new_shim(config.path(), state.path(), &standin.url());
    let ana = dm("user-1");
    seed(&standin, "main-dm-user-1", &fact("fact-r1", "The user sees a therapist", &[]), "");

    let first = forget(&mut shim, "therapist", &[], &ana);
    assert!(!first.stdout.contains("Warning:"), "nothing is known yet: {first:?}");
    let done = confirm(&mut shim, &forget_id(&first), &ana);
    assert_eq!(done.exit_code, 1, "{done:?}");
    assert!(done.stdout.contains("  fact-r1: Graphiti answered HTTP 500, and a search still finds it\n"), "{done:?}");
    assert!(
        done.stdout.contains(
            "Graphiti's API cannot delete in this chat's graph main-dm-user-1 (a delete it answered with HTTP 500 missed an item a search of the group still found, as on FalkorDB)"
        ),
        "{done:?}"
    );
    let learned = state.path().join("memory/graphiti-deletes.json");
    assert!(learned.exists(), "what was learned is kept");

    let second = forget(&mut shim, "therapist", &[], &ana);
    assert!(
        second.stdout.contains("Warning: Graphiti's API cannot delete in this chat's graph main-dm-user-1 (a delete it answered with HTTP 500 missed an item"),
        "{second:?}"
    );

    // Another chat's memories live in the default graph, where deletes by id work: unlearned.
    let default_chat = dm("user-2");
    let config = config_default_graph(&standin);
    let mut other = new_shim(config.path(), state.path(), &standin.url());
    seed(&standin, "default_db", &fact("fact-d2", "The user sees a dentist", &[]), "");
    let proposal = forget(&mut other, "dentist", &["fact-d2"], &default_chat);
    let deleted = confirm(&mut other, &forget_id(&proposal), &default_chat);
    assert_eq!(deleted.exit_code, 0, "{deleted:?}");
    assert!(!learned.exists(), "a delete by id that worked unlearns it");
}

fn config_default_graph(standin: &StandIn) -> TempDir {
    falkordb_config(standin, "rest", "  group_id:\n    direct: default_db\n")
}

fn memories(shim: &mut Shim, ctx: &HookContext, export: bool) -> host_shim::CommandOutput {
    let query = MemoryQuery { query: None, ctx: ctx.clone(), operator: true };
    let command = if export { MemoryCommand::Export(query) } else { MemoryCommand::See(query) };
    shim.run_command(&Command::Memory(command))
}

/// The MCP server on FalkorDB lists only its default graph: `memories` says why no episode is
/// listed instead of "0 of the last 10", and `export` marks them incomplete, in a fresh process
/// that has not asked the server's status yet.
#[test]
fn over_mcp_memories_and_export_say_why_no_episode_is_listed() {
    let standin = on_falkordb();
    let config = falkordb_config(&standin, "mcp", "");
    let state = temp_dir("forget-falkordb-state");
    let ana = dm("user-1");
    {
        let mut shim = new_shim(config.path(), state.path(), &standin.url());
        shim.before_agent_start(&prompt("I booked a table at Nopa"), &ana);
        assert!(matches!(shim.agent_end(&end("I booked a table at Nopa"), &ana), CaptureOutcome::Spooled(_)));
        assert_eq!(shim.tick().sent, 1);
    }
    assert_eq!(standin.episodes().len(), 1, "Graphiti holds the episode");
    let mut fresh = new_shim(config.path(), state.path(), &standin.url());
    let seen = memories(&mut fresh, &ana, false);
    assert!(
        seen.stdout.contains("Recent episodes: not listed: the MCP server runs on FalkorDB")
            && !seen.stdout.contains("0 of the last"),
        "{seen:?}"
    );
    let exported = memories(&mut fresh, &ana, true);
    assert_eq!(exported.exit_code, 0, "{exported:?}");
    let doc: serde_json::Value = serde_json::from_str(&exported.stdout).expect("one JSON document");
    assert_eq!(doc["episodes"]["complete"], false, "{doc}");
    assert!(doc["episodes"]["note"].as_str().unwrap_or_default().contains("FalkorDB"), "{doc}");

    // A group that lives in the default graph is listed there, and shown.
    let config = falkordb_config(&standin, "mcp", "  group_id:\n    direct: default_db\n");
    let mut in_default = new_shim(config.path(), state.path(), &standin.url());
    in_default.before_agent_start(&prompt("I booked a table at Saffron"), &ana);
    assert!(matches!(in_default.agent_end(&end("I booked a table at Saffron"), &ana), CaptureOutcome::Spooled(_)));
    assert_eq!(in_default.tick().sent, 1);
    let listed = memories(&mut in_default, &ana, false);
    assert!(listed.stdout.contains("Recent episodes (1 of the last"), "{listed:?}");
}
