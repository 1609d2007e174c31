//! Memory control through the FalkorDB behind Graphiti: a real FalkorDB whose data graphiti-core
//! itself wrote (a graph per group), a Graphiti MCP test server on graphiti-core over it, and the
//! real component in the shim with `graphiti.falkordb.url` set. Every delete test asserts the state
//! by query first and the exact state after.

use super::memory_forget::{confirm, dm, end, forget, forget_all, forget_id, search};
use graphiti_openclaw_tests::falkordb::{GraphitiCore, graphiti_core};
use graphiti_openclaw_tests::{copy_dir, example_config, prompt, temp_dir, workspace};
use host_shim::{
    CaptureOutcome, Command, HookContext, Limits, MemoryCommand, MemoryQuery, Shim, ShimOptions,
};
use tempfile::TempDir;

/// The example config against the graphiti-core server, connected to its FalkorDB.
fn connected_config(core: &GraphitiCore) -> TempDir {
    let dir = temp_dir("falkordb-connection-config");
    copy_dir(&example_config(), dir.path());
    let settings = format!(
        "schema_version: 1\n\
         graphiti:\n  url: {}\n  transport: mcp\n  falkordb:\n    url: {}\n\
         recall:\n  min_relevance: 0\n\
         capture:\n  backoff_initial_ms: 10\n  backoff_max_ms: 40\n",
        core.mcp_url(),
        core.falkordb_url()
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

fn connected_shim(core: &GraphitiCore, config: &TempDir, state: &TempDir) -> Shim {
    let limits = Limits {
        call_timeout: std::time::Duration::from_secs(60),
        send_timeout: std::time::Duration::from_secs(60),
        memory_bytes: 256 << 20,
    };
    let mut options = ShimOptions::new(
        graphiti_openclaw_tests::plugin_wasm(),
        config.path(),
        limits,
    );
    options.cache_dir = Some(workspace().join("target/test-component-cache"));
    options.state_dir = Some(state.path().to_path_buf());
    options.allowed_origins = vec![core.mcp_url(), core.falkordb_url()];
    options.echo_logs = false;
    Shim::new(options).expect("shim starts")
}

/// The user's turns, each answered "Noted.", captured and sent, and stored by graphiti-core.
fn capture(shim: &mut Shim, core: &GraphitiCore, ctx: &HookContext, turns: &[&str]) {
    for said in turns {
        shim.before_agent_start(&prompt(said), ctx);
        assert!(matches!(
            shim.agent_end(&end(said), ctx),
            CaptureOutcome::Spooled(_)
        ));
    }
    assert_eq!(shim.tick().sent as usize, turns.len());
    core.wait_idle();
}

/// Each row of `cypher` over `graph`, sorted, its cells joined by " | ".
fn rows(core: &GraphitiCore, graph: &str, cypher: &str) -> Vec<String> {
    let mut rows: Vec<String> = core
        .query(graph, cypher)
        .into_iter()
        .map(|r| r.join(" | "))
        .collect();
    rows.sort();
    rows
}

fn facts(core: &GraphitiCore, group: &str) -> Vec<String> {
    rows(
        core,
        group,
        "MATCH ()-[r:RELATES_TO]->() RETURN r.fact, size(r.episodes)",
    )
}

fn entities(core: &GraphitiCore, group: &str) -> Vec<String> {
    rows(core, group, "MATCH (n:Entity) RETURN n.name")
}

fn episodes(core: &GraphitiCore, group: &str) -> Vec<String> {
    rows(core, group, "MATCH (e:Episodic) RETURN e.name")
}

/// Two episodes by graphiti-core, and the state they leave, asserted by query.
fn seed_two_episodes(core: &GraphitiCore, group: &str) {
    core.add_episode(
        group,
        "ep-1",
        "user(user): Ana likes green tea. Ana lives in Lisbon.",
    );
    core.add_episode(
        group,
        "ep-2",
        "user(user): Ana likes green tea. Ana works at Acme.",
    );
    assert_eq!(episodes(core, group), ["ep-1", "ep-2"]);
    assert_eq!(
        facts(core, group),
        [
            "Ana likes green tea | 2",
            "Ana lives in Lisbon | 1",
            "Ana works at Acme | 1"
        ],
        "graphiti-core wrote one fact supported by both episodes"
    );
    assert_eq!(
        entities(core, group),
        ["Acme", "Ana", "Lisbon", "green tea"]
    );
    assert!(
        core.graphs().iter().any(|g| g == group),
        "a graph of the group's own"
    );
}

#[test]
fn a_forget_deletes_in_the_chats_own_graph_by_graphitis_own_rule() {
    let core = graphiti_core();
    let group = "main-dm-fk-rule";
    seed_two_episodes(core, group);

    let (config, state) = (
        connected_config(core),
        temp_dir("falkordb-connection-state"),
    );
    let mut shim = connected_shim(core, &config, &state);
    let ana = dm("fk-rule");
    let see = shim.run_command(&Command::Memory(MemoryCommand::See(MemoryQuery {
        query: None,
        ctx: ana.clone(),
        operator: false,
    })));
    assert!(
        see.stdout.contains("Recent episodes (2 of")
            && see.stdout.contains("Ana lives in Lisbon")
            && see.stdout.contains("Ana works at Acme"),
        "the episodes Graphiti's MCP listing misses on FalkorDB are listed: {see:?}"
    );

    let status = shim.run_command(&Command::Status).stdout;
    assert!(
        status.contains(&format!("falkordb: {}: answers", core.falkordb_url())),
        "{status}"
    );
    assert!(!status.contains("connect the plugin"), "{status}");

    let proposal = forget(&mut shim, "Lisbon", &[], &ana);
    assert!(
        !proposal.stdout.contains("Warning:"),
        "connected, the plugin can delete: {proposal:?}"
    );
    assert!(
        proposal.stdout.contains("Ana lives in Lisbon"),
        "{proposal:?}"
    );
    let done = confirm(&mut shim, &forget_id(&proposal), &ana);
    assert_eq!(done.exit_code, 0, "{done:?}");
    assert!(
        done.stdout.contains("deleted from Graphiti's FalkorDB"),
        "{done:?}"
    );

    assert_eq!(
        episodes(core, group),
        ["ep-2"],
        "the episode that said it went"
    );
    assert_eq!(
        facts(core, group),
        ["Ana likes green tea | 1", "Ana works at Acme | 1"],
        "the fact only ep-1 supported went; the one ep-2 supports too stayed, ep-1 off its list"
    );
    assert_eq!(
        entities(core, group),
        ["Acme", "Ana", "green tea"],
        "Lisbon, only ep-1's, went"
    );
    let recall = search(&mut shim, "Lisbon", &ana);
    assert!(
        !recall.contains("- Ana lives in Lisbon"),
        "recall no longer has the fact: {recall}"
    );
    assert!(
        done.stdout
            .contains("Still said in a summary, which stays as it was")
            && done.stdout.contains("  Entity Ana: "),
        "Ana's summary, which graphiti-core would rebuild with its LLM, is named: {done:?}"
    );
}

#[test]
fn forget_all_deletes_the_chats_graph_and_the_next_turn_is_remembered() {
    let core = graphiti_core();
    let group = "main-dm-fk-all";
    core.add_episode(group, "ep-1", "user(user): Bea sees Dr Lima.");
    assert_eq!(episodes(core, group), ["ep-1"]);
    let (config, state) = (
        connected_config(core),
        temp_dir("falkordb-connection-state"),
    );
    let mut shim = connected_shim(core, &config, &state);
    let bea = dm("fk-all");

    let all = forget_all(&mut shim, &bea, false);
    assert_eq!(all.exit_code, 0, "{all:?}");
    assert!(
        !core.graphs().iter().any(|g| g == group),
        "the chat's graph is gone"
    );
    assert!(
        core.graphs().iter().any(|g| g == "default_db"),
        "the server's default graph stays"
    );

    capture(&mut shim, core, &bea, &["Bea likes sailing."]);
    assert_eq!(
        facts(core, group),
        ["Bea likes sailing | 1"],
        "captured into a new graph"
    );
    assert!(
        search(&mut shim, "sailing", &bea).contains("Bea likes sailing"),
        "and recalled"
    );
}

/// The parameter header the plugin writes reads back, through the real FalkorDB, as exactly the
/// value given: quotes, backslashes, newlines, a would-be query, and a large value.
#[test]
fn every_parameter_reads_back_through_falkordb_as_itself() {
    use graphiti_openclaw::memory::falkordb::cypher::{Param, header};
    let core = graphiti_core();
    let mut values: Vec<String> = [
        "it's",
        "say \"hi\"",
        "back\\slash",
        "\\\"",
        "line\nbreak\r\ttab",
        "\" RETURN 1 //",
        "\\\" MATCH (n) DETACH DELETE n //",
        "$group",
        "{x: 1}",
        "é 😀 ∑",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Strings over the characters that matter, from a fixed seed: the same each run.
    let palette: Vec<char> = "\"'\\\n\r\t $`{}()[];,:/*-aZ09é😀".chars().collect();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..200 {
        let len = (seed % 24) as usize;
        let text: String = (0..len)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                palette[(seed >> 33) as usize % palette.len()]
            })
            .collect();
        values.push(text);
    }
    values.push("x\"\\".repeat(40_000));
    for value in values {
        let written = header(&[("s", Param::Text(value.clone()))]).unwrap();
        let read = core.query("default_db", &format!("{written}RETURN $s"));
        assert_eq!(read, [[value.clone()]], "{value:?} came back changed");
    }
    assert!(
        header(&[("s", Param::Text("a\0b".into()))]).is_err(),
        "a NUL is refused, never sent"
    );
}

/// A send whose answer comes too late is in doubt; graphiti-core stores it anyway, and the next
/// tick finds it in the group's graph: delivered, never sent twice (Graphiti's MCP listing on
/// FalkorDB would never show it).
#[test]
fn a_send_in_doubt_is_confirmed_from_the_groups_graph_and_never_sent_twice() {
    let core = graphiti_core();
    let group = "main-dm-fk-doubt";
    let config = connected_config(core);
    let settings = config.path().join("settings.yaml");
    let lines = std::fs::read_to_string(&settings).unwrap().replace(
        "capture:\n",
        "capture:\n  send_timeout_ms: 2500\n  resend_after_doubt_ms: 600000\n",
    );
    std::fs::write(&settings, lines).unwrap();
    let state = temp_dir("falkordb-connection-state");
    let mut shim = connected_shim(core, &config, &state);
    let cy = dm("fk-doubt");
    core.answer_late(group, 5.0);

    let said = "Cy works at Globex.";
    shim.before_agent_start(&prompt(said), &cy);
    assert!(matches!(
        shim.agent_end(&end(said), &cy),
        CaptureOutcome::Spooled(_)
    ));
    let first = shim.tick();
    assert_eq!((first.sent, first.in_doubt), (0, 1), "{first:?}");
    core.wait_idle();
    core.answer_late(group, 0.0);
    // Past the capture back-off (at most 40 ms in these settings), so the tick settles doubts.
    std::thread::sleep(std::time::Duration::from_millis(100));

    let second = shim.tick();
    assert_eq!(second.in_doubt, 0, "{second:?}");
    assert!(
        second
            .notes
            .iter()
            .any(|n| n.contains("was in doubt: Graphiti has it, done")),
        "{second:?}"
    );
    assert_eq!(episodes(core, group).len(), 1, "stored once");
    assert_eq!(facts(core, group), ["Cy works at Globex | 1"]);
}

/// An entity named by its id goes with every fact of it, listed in the proposal; the person's own
/// entity is refused, and so is any entity where the plugin cannot delete one.
#[test]
fn a_named_entity_is_forgotten_with_every_fact_of_it_but_never_the_persons_own() {
    let core = graphiti_core();
    let group = "main-dm-fk-entity";
    core.add_episode(
        group,
        "ep-1",
        "user(user): Eve lives in Oslo. Max lives in Oslo. Eve likes jazz.",
    );
    assert_eq!(entities(core, group), ["Eve", "Max", "Oslo", "jazz"]);
    let uuid_of = |name: &str| {
        core.query(
            group,
            &format!("MATCH (n:Entity {{name: '{name}'}}) RETURN n.uuid"),
        )[0][0]
            .clone()
    };
    let (oslo, eve) = (uuid_of("Oslo"), uuid_of("Eve"));

    let (config, state) = (
        connected_config(core),
        temp_dir("falkordb-connection-state"),
    );
    let mut shim = connected_shim(core, &config, &state);
    let me = HookContext {
        sender_name: Some("Eve".into()),
        ..dm("fk-entity")
    };
    let own = forget(&mut shim, "Eve", &[&eve], &me);
    assert_eq!(own.exit_code, 1, "{own:?}");
    assert!(
        own.stdout.contains("Eve is you") || own.stderr.contains("Eve is you"),
        "{own:?}"
    );

    let proposal = forget(&mut shim, "Oslo", &[&oslo], &me);
    assert_eq!(proposal.exit_code, 0, "{proposal:?}");
    for listed in ["entity   ", "Eve lives in Oslo", "Max lives in Oslo"] {
        assert!(proposal.stdout.contains(listed), "{listed}: {proposal:?}");
    }
    let done = confirm(&mut shim, &forget_id(&proposal), &me);
    assert_eq!(done.exit_code, 0, "{done:?}");
    assert!(
        done.stdout.contains("2 fact(s), 0 episode(s), 1 entity"),
        "{done:?}"
    );
    assert_eq!(entities(core, group), ["Eve", "Max", "jazz"]);
    assert_eq!(facts(core, group), ["Eve likes jazz | 1"]);

    let unconnected = temp_dir("falkordb-unconnected-config");
    copy_dir(config.path(), unconnected.path());
    let settings = unconnected.path().join("settings.yaml");
    let text = std::fs::read_to_string(&settings).unwrap();
    let without = text.replace(
        &format!("  falkordb:\n    url: {}\n", core.falkordb_url()),
        "",
    );
    std::fs::write(&settings, without).unwrap();
    let mut plain = connected_shim(core, &unconnected, &temp_dir("falkordb-unconnected-state"));
    let refused = forget(&mut plain, "jazz", &[&uuid_of("jazz")], &me);
    assert_eq!(refused.exit_code, 1, "{refused:?}");
    assert!(
        format!("{refused:?}").contains("Graphiti's API has no call that deletes an entity"),
        "{refused:?}"
    );
}

/// A graph whose episodes lack Graphiti's properties (another release's schema, or not Graphiti's
/// at all) is never deleted from: the probe names the releases the queries were tested on.
#[test]
fn a_graph_without_graphitis_schema_is_never_deleted_from() {
    use graphiti_openclaw::memory::falkordb::{Falkor, group_graph};
    use graphiti_openclaw::memory::graphiti::http::Deadline;
    let core = graphiti_core();
    let group = "main-dm-fk-schema";
    core.command(&[
        "GRAPH.QUERY",
        group,
        "CREATE (:Episodic {uuid: 'e1', group_id: 'main-dm-fk-schema', name: 'x'})",
    ])
    .unwrap();
    let mut database = core.direct_database();
    let origin = core.falkordb_url();
    let mut falkor = Falkor {
        db: &mut database,
        origin: &origin,
        deadline: Deadline::after(std::time::Duration::from_secs(10)),
    };
    let refused = group_graph::delete_episode(&mut falkor, group, "e1").unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("does not have Graphiti's schema")
            && refused
                .to_string()
                .contains("graphiti-core 0.31.1 and 0.31.2"),
        "{refused}"
    );
    assert_eq!(episodes(core, group), ["x"], "nothing was deleted");
}

/// Over the REST API (which stores each message of a turn as an episode of its own), the plugin's
/// own capture is forgotten in the chat's graph the same way, and recall no longer has it.
#[test]
fn over_rest_a_captured_turn_is_forgotten_in_the_chats_graph() {
    let core = graphiti_core();
    let group = "main-dm-fk-rest";
    let config = connected_config(core);
    let settings = config.path().join("settings.yaml");
    let text = std::fs::read_to_string(&settings).unwrap().replace(
        &format!("  url: {}\n  transport: mcp\n", core.mcp_url()),
        &format!("  url: {}\n  transport: rest\n", core.rest_url()),
    );
    std::fs::write(&settings, text).unwrap();
    let state = temp_dir("falkordb-connection-state");
    let mut shim = connected_shim(core, &config, &state);
    let zoe = dm("fk-rest");
    capture(
        &mut shim,
        core,
        &zoe,
        &["Zoe lives in Rome.", "Zoe likes chess."],
    );
    assert_eq!(
        facts(core, group),
        ["Zoe likes chess | 1", "Zoe lives in Rome | 1"]
    );
    assert_eq!(
        episodes(core, group).len(),
        4,
        "a user and an assistant episode per turn"
    );

    let proposal = forget(&mut shim, "Rome", &[], &zoe);
    assert!(!proposal.stdout.contains("Warning:"), "{proposal:?}");
    let done = confirm(&mut shim, &forget_id(&proposal), &zoe);
    assert_eq!(done.exit_code, 0, "{done:?}");
    assert_eq!(facts(core, group), ["Zoe likes chess | 1"]);
    assert!(
        rows(core, group, "MATCH (e:Episodic) RETURN e.content")
            .iter()
            .all(|c| !c.contains("Rome")),
        "the episode that said it went"
    );
    let recall = search(&mut shim, "Rome", &zoe);
    assert!(
        !recall.contains("Zoe lives in Rome"),
        "recall no longer has it: {recall}\n{done:?}"
    );
}
