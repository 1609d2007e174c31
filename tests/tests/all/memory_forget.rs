//! Forgetting and correcting, through the real component in the shim against the Graphiti stand-in
//! (both APIs, Neo4j and FalkorDB as the real servers answer deletes): nothing goes until the person
//! it was proposed to confirms it, exactly once, in their own chat; then it is gone from Graphiti,
//! from the spool and from the next turn's recall, or the reply says what stayed and why. Hostile
//! ids never reach another chat's memories.

use graphiti_openclaw_tests::{
    standin,
    copy_dir, example_config, graphiti_shim as shim, hook_context, prompt, temp_dir,
};
use graphiti_standin::{Behaviour, GraphitiCore, Options, StandIn};
use host_shim::{
    AgentEndEvent, CaptureOutcome, ChatType, Command, CommandOutput, Correction, ForgetConfirmation,
    ForgetRequest, HookContext, MemoryCommand, SearchRequest, Shim,
};
use std::path::Path;
use tempfile::TempDir;


pub(crate) fn config(standin: &StandIn, transport: &str) -> TempDir {
    let dir = temp_dir("memory-forget-config");
    copy_dir(&example_config(), dir.path());
    let url = if transport == "mcp" { format!("{}/mcp", standin.url()) } else { standin.url() };
    let settings = format!(
        "schema_version: 1\n\
         graphiti:\n  url: {url}\n  transport: {transport}\n\
         recall:\n  min_relevance: 0\n\
         capture:\n  backoff_initial_ms: 10\n  backoff_max_ms: 40\n"
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

pub(crate) fn end(user: &str) -> AgentEndEvent {
    let messages = serde_json::json!([{"role": "user", "content": user}, {"role": "assistant", "content": "Noted."}]);
    AgentEndEvent { success: true, error: None, messages_json: messages.to_string(), duration_ms: Some(900) }
}

pub(crate) fn dm(sender: &str) -> HookContext {
    HookContext {
        sender_id: Some(sender.into()),
        ..hook_context(&format!("agent:main:telegram:direct:{sender}"), ChatType::Direct)
    }
}

pub(crate) fn forget(shim: &mut Shim, query: &str, ids: &[&str], ctx: &HookContext) -> CommandOutput {
    shim.run_command(&Command::Memory(MemoryCommand::Forget(ForgetRequest {
        query: Some(query.into()),
        ids: ids.iter().map(|id| id.to_string()).collect(),
        everything: false,
        earlier_groups: false,
        ctx: ctx.clone(),
        operator: false,
        at_once: false,
    })))
}

pub(crate) fn confirm(shim: &mut Shim, id: &str, ctx: &HookContext) -> CommandOutput {
    shim.run_command(&Command::Memory(MemoryCommand::ConfirmForget(ForgetConfirmation {
        id: id.into(),
        ctx: ctx.clone(),
        operator: false,
        drop: vec![],
        add: vec![],
    })))
}

/// The forget id a proposal showed.
pub(crate) fn forget_id(proposal: &CommandOutput) -> String {
    let marker = "(forget id ";
    let at = proposal.stdout.find(marker).unwrap_or_else(|| panic!("no forget id: {proposal:?}"));
    proposal.stdout[at + marker.len()..].chars().take(16).collect()
}

pub(crate) fn search(shim: &mut Shim, query: &str, ctx: &HookContext) -> String {
    shim.run_command(&Command::Search(SearchRequest { query: query.into(), ctx: ctx.clone() })).stdout
}

fn spooled(state: &Path) -> Vec<String> {
    std::fs::read_dir(state.join("spool")).map_or(vec![], |d| {
        d.filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".episode") || n.ends_with(".rejected") || n.ends_with(".doubt"))
            .collect()
    })
}

pub(crate) fn seed(standin: &StandIn, group: &str, facts: &str, nodes: &str) {
    standin
        .seed_json(&format!(r#"{{"group_id": "{group}", "nodes": [{nodes}], "facts": [{facts}]}}"#))
        .unwrap();
}

pub(crate) fn fact(uuid: &str, text: &str, episodes: &[String]) -> String {
    format!(
        r#"{{"uuid": "{uuid}", "name": "SAID", "fact": "{text}", "episodes": {},
             "valid_at": "2025-02-01T00:00:00+00:00", "invalid_at": null, "expired_at": null}}"#,
        serde_json::json!(episodes)
    )
}

#[test]
fn a_confirmed_forget_leaves_graphiti_the_spool_and_the_next_recall() {
    for transport in ["mcp", "rest"] {
        let standin = standin();
        // A release whose episode delete rewrites no summary: the reply names the one still said.
        standin.set_behaviour(Behaviour { graphiti_core: GraphitiCore::V0_31_1, ..standin.behaviour() });
        let config = config(&standin, transport);
        let state = temp_dir("forget-state");
        let mut shim = shim(config.path(), state.path(), &standin.url());
        let ana = dm("user-1");
        let bob = dm("user-2");
        for said in ["My therapist is Dr. Vera Lima", "I booked a table at Nopa"] {
            shim.before_agent_start(&prompt(said), &ana);
            assert!(matches!(shim.agent_end(&end(said), &ana), CaptureOutcome::Spooled(_)));
        }
        assert_eq!(shim.tick().sent, 2, "{transport}");
        let said: Vec<String> = standin.episodes().into_iter().filter(|e| e.content.contains("therapist")).map(|e| e.uuid).collect();
        assert_eq!(said.len(), 1, "{transport}");
        seed(&standin, "main-dm-user-1",
             &[fact("fact-a1", "The user sees therapist Dr. Vera Lima", &said), fact("fact-a2", "The user lives in Lisbon", &[])].join(","),
             r#"{"uuid": "node-vera", "name": "Vera Lima", "summary": "The user's therapist since 2024"}"#);
        seed(&standin, "main-dm-user-2", &fact("fact-b1", "The user sees a therapist on Mondays", &[]), "");
        // Said again, not yet sent: a forget must keep it from Graphiti.
        assert!(matches!(shim.agent_end(&end("My therapist moved her office"), &ana), CaptureOutcome::Spooled(_)));

        let proposal = forget(&mut shim, "therapist", &[], &ana);
        assert_eq!(proposal.exit_code, 0, "{transport}: {proposal:?}");
        let listed = &proposal.stdout;
        assert!(listed.contains("fact     fact-a1") && listed.contains(&format!("episode  {}", said[0])), "{listed}");
        assert!(listed.contains("capture  not yet sent  My therapist moved her office"), "{listed}");
        assert!(!listed.contains("fact-a2") && !listed.contains("fact-b1"), "{listed}");
        if transport == "mcp" {
            assert!(listed.contains("Vera Lima: The user's therapist"), "the summary is named up front: {listed}");
        } else {
            assert!(listed.contains("has no entity search"), "{listed}");
        }
        let id = forget_id(&proposal);
        assert!(listed.contains(&format!("/graphiti forget confirm {id}")), "{listed}");

        // Unconfirmed, confirmed from another chat, or with a mistyped id: nothing goes.
        assert_eq!(shim.tick().sent, 0, "{transport}: a capture a forget lists waits for its confirmation");
        assert!(search(&mut shim, "therapist", &ana).contains("Dr. Vera Lima"));
        let elsewhere = confirm(&mut shim, &id, &bob);
        assert_eq!(elsewhere.exit_code, 1);
        assert!(elsewhere.stderr.contains("proposed in another chat"), "{elsewhere:?}");
        let group_chat = HookContext { chat_id: Some("chat-9".into()), ..hook_context("agent:main:telegram:group:chat-9", ChatType::Group) };
        assert!(confirm(&mut shim, &id, &group_chat).stderr.contains("another chat"));
        assert!(search(&mut shim, "therapist", &ana).contains("Dr. Vera Lima"));

        let done = confirm(&mut shim, &id, &ana);
        let out = &done.stdout;
        assert!(out.contains("deleted from Graphiti: 1 fact(s), 1 episode(s)"), "{transport}: {done:?}");
        assert!(out.contains("removed here: 1 capture(s) not yet sent"), "{out}");
        if transport == "mcp" {
            assert!(out.contains("Still said in an entity's summary") && out.contains("Vera Lima"), "{out}");
            assert_eq!(done.exit_code, 0, "every listed item went; the summary is named: {out}");
        } else {
            assert!(out.contains("has no entity search"), "{out}");
            assert_eq!(done.exit_code, 0, "{out}");
        }
        let replay = confirm(&mut shim, &id, &ana);
        assert!(replay.stderr.contains(&format!("no forget {id} is waiting")), "{replay:?}");

        assert_eq!(shim.tick().sent, 0, "{transport}: the forgotten capture was sent");
        assert!(spooled(state.path()).is_empty());
        assert!(standin.episodes().iter().all(|e| !e.content.contains("therapist")), "{transport}");
        let recalled = shim.before_agent_start(&prompt("what did my therapist say about sleep"), &ana);
        let context = recalled.prepend_context.unwrap_or_default();
        assert!(!context.contains("sees therapist"), "{transport}: {context}");
        assert!(search(&mut shim, "Lisbon", &ana).contains("lives in Lisbon"), "other memories stay");
        assert!(search(&mut shim, "therapist", &bob).contains("on Mondays"), "another chat's stay");
        let seen = shim.run_command(&Command::Memory(MemoryCommand::See(host_shim::MemoryQuery { query: None, ctx: ana.clone(), operator: false }))).stdout;
        let turns = seen.split("Recent turns of this session").nth(1).unwrap_or_default().to_string();
        assert!(turns.contains("Nopa") && !turns.contains("therapist"), "{transport}: the turn records keep the rest: {turns}");
        let debug = shim.run_command(&Command::Debug(None)).stdout;
        assert!(!debug.contains("Vera Lima"), "{debug}");
        let log = std::fs::read_to_string(state.path().join("memory/forget-log.jsonl")).unwrap();
        assert!(log.contains("\"fact-a1\"") && log.contains("sender user-1"), "{log}");
        assert!(!log.contains("Vera") && !log.contains("therapist"), "the log holds no text: {log}");
    }
}

/// graphiti-core 0.31.2's `remove_episode` (MCP `delete_episode`) keeps a fact another episode
/// supports and rebuilds the summaries the episode fed; 0.31.1 deletes the fact it supported first
/// and rewrites no summary. The reply checks what is left, so it names a summary that still says
/// it only where one does.
#[test]
fn the_reply_names_a_summary_that_still_says_it_whichever_release_the_server_runs() {
    for (core, rebuilt) in [(GraphitiCore::V0_31_2, true), (GraphitiCore::V0_31_1, false)] {
        let standin = standin();
        standin.set_behaviour(Behaviour { graphiti_core: core, ..standin.behaviour() });
        let config = config(&standin, "mcp");
        let state = temp_dir("forget-state");
        let mut shim = shim(config.path(), state.path(), &standin.url());
        let ana = dm("user-1");
        for said in ["My therapist is Dr. Vera Lima", "Vera Lima moved her office to Baixa"] {
            shim.before_agent_start(&prompt(said), &ana);
            assert!(matches!(shim.agent_end(&end(said), &ana), CaptureOutcome::Spooled(_)));
        }
        assert_eq!(shim.tick().sent, 2);
        let uuid_of = |words: &str| standin.episodes().into_iter().find(|e| e.content.contains(words)).unwrap().uuid;
        let (first, second) = (uuid_of("therapist"), uuid_of("Baixa"));
        seed(&standin, "main-dm-user-1", &fact("fact-v1", "Vera Lima has been the user's therapist since 2024", &[first.clone(), second]),
             r#"{"uuid": "node-vera", "name": "Vera Lima", "summary": "Vera Lima is the user's therapist"}"#);

        let proposal = forget(&mut shim, "therapist", &[&first], &ana);
        assert!(proposal.stdout.contains("Vera Lima: Vera Lima is the user's therapist"), "{core:?}: {proposal:?}");
        let done = confirm(&mut shim, &forget_id(&proposal), &ana);
        assert_eq!(done.exit_code, 0, "{core:?}: {done:?}");
        assert_eq!(!done.stdout.contains("Still said in an entity's summary"), rebuilt, "{core:?}: {done:?}");
        let found = search(&mut shim, "therapist", &ana);
        assert_eq!(found.contains("therapist since 2024"), rebuilt, "{core:?}: the fact another episode supports: {found}");
    }
}

#[test]
fn hostile_ids_never_reach_another_chats_memories() {
    let standin = standin();
    let config = config(&standin, "mcp");
    let state = temp_dir("forget-hostile-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let ana = dm("user-1");
    seed(&standin, "main-dm-user-1", &fact("fact-a1", "The user sees a therapist", &[]), "");
    seed(&standin, "main-dm-user-2", &fact("fact-b1", "The user sees a therapist on Mondays", &[]), "");
    let long = "f".repeat(121);
    for id in ["FACT-A1", "fact_a1", "fact-a1.", "fact-a1 ", "fact-a1\u{200b}", "fact a1", long.as_str(), "none", "{sender}", "fact-b1", "main-dm-user-2"] {
        let refused = forget(&mut shim, "therapist", &[id], &ana);
        assert_ne!(refused.exit_code, 0, "{id:?} was taken: {refused:?}");
        assert!(!refused.stdout.contains("forget id"), "{id:?}: {refused:?}");
    }
    // The whole answer of a search of another group is not this chat's either.
    let other = forget(&mut shim, "Mondays", &[], &ana);
    assert!(other.stdout.starts_with("Nothing to forget"), "{other:?}");
    for id in ["none", "{sender}", "0123456789abcdef", &long] {
        let refused = confirm(&mut shim, id, &ana);
        assert_eq!(refused.exit_code, 1, "{id:?}");
    }
    assert!(search(&mut shim, "therapist", &dm("user-2")).contains("on Mondays"));
    assert!(search(&mut shim, "therapist", &ana).contains("sees a therapist"));

    // In a group chat everyone would read the list: only an operator forgets there.
    let group_chat = HookContext { chat_id: Some("chat-9".into()), ..hook_context("agent:main:telegram:group:chat-9", ChatType::Group) };
    assert!(forget(&mut shim, "therapist", &[], &group_chat).stderr.contains("in a group chat"));

    // An expired proposal deletes nothing.
    let proposal = forget(&mut shim, "therapist", &["fact-a1"], &ana);
    let id = forget_id(&proposal);
    let pending = state.path().join("memory/forget-pending/main-dm-user-1.json");
    let mut stored: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&pending).unwrap()).unwrap();
    stored["proposals"][0]["created_ms"] = serde_json::json!(1000);
    std::fs::write(&pending, stored.to_string()).unwrap();
    let expired = confirm(&mut shim, &id, &ana);
    assert!(expired.stderr.contains("expired"), "{expired:?}");
    assert!(search(&mut shim, "therapist", &ana).contains("sees a therapist"));
}

pub(crate) fn forget_all(shim: &mut Shim, ctx: &HookContext, earlier_groups: bool) -> CommandOutput {
    shim.run_command(&Command::Memory(MemoryCommand::Forget(ForgetRequest {
        query: None, ids: vec![], everything: true, earlier_groups, ctx: ctx.clone(), operator: true, at_once: true,
    })))
}

/// `forget --all` for one person never reaches another's memories: an earlier release put
/// `ana@x.org` and `ana.x.org` in one group (`main-dm-ana_x_org`), and after the upgrade the other
/// person's turns (recorded since) no longer name it. The old group is left alone and named, with
/// the other chat that went there, until the operator says to include it.
#[test]
fn a_whole_chats_forget_leaves_an_earlier_shared_group_alone_until_the_operator_says() {
    let standin = standin();
    let config = config(&standin, "rest");
    let state = temp_dir("forget-all-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let ana = dm("ana@x.org");
    let other = dm("ana.x.org");
    let current = shim.run_command(&Command::Memory(MemoryCommand::Forget(ForgetRequest {
        query: None, ids: vec![], everything: true, earlier_groups: false, ctx: ana.clone(), operator: false, at_once: true,
    })));
    assert!(current.stderr.contains("only an operator"), "{current:?}");
    // The other person has had a turn since the upgrade: their record names their new group.
    shim.before_agent_start(&prompt("I like hiking in Sintra"), &other);
    assert!(matches!(shim.agent_end(&end("I like hiking in Sintra"), &other), CaptureOutcome::Spooled(_)));
    assert_eq!(shim.tick().sent, 1);
    assert!(matches!(shim.agent_end(&end("I am allergic to peanuts"), &ana), CaptureOutcome::Spooled(_)));
    let Some(group) = std::fs::read_dir(state.path().join("spool")).unwrap().filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().ends_with(".episode"))
        .map(|e| serde_json::from_slice::<serde_json::Value>(&std::fs::read(e.path()).unwrap()).unwrap()["group_id"].as_str().unwrap().to_string())
    else {
        panic!("nothing spooled");
    };
    seed(&standin, &group, &fact("fact-now", "The user is allergic to peanuts", &[]), "");
    seed(&standin, "main-dm-ana_x_org", &fact("fact-then", "The user is allergic to shellfish", &[]), "");
    seed(&standin, "main-dm-user-2", &fact("fact-other", "The user is allergic to cats", &[]), "");

    let all = forget_all(&mut shim, &ana, false);
    assert_eq!(all.exit_code, 0, "{all:?}");
    assert!(all.stdout.contains(&format!("group(s) {group}\n")), "{all:?}");
    assert!(all.stdout.contains("Left alone: group main-dm-ana_x_org"), "{all:?}");
    assert!(all.stdout.contains("agent:main:telegram:direct:ana.x.org"), "the other chat that went there is named: {all:?}");
    assert!(all.stdout.contains("removed here: 1 capture(s) not yet sent"), "{all:?}");
    assert_eq!(shim.tick().sent, 0);
    assert!(!search(&mut shim, "allergic", &ana).contains("peanuts"));
    let standin_facts = |group: &str| {
        let mut probe = shim_on(&config, &standin);
        probe.run_command(&Command::Recall(host_shim::RecallCommand { query: "allergic".into(), group_id: Some(group.into()) })).stdout
    };
    assert!(standin_facts("main-dm-ana_x_org").contains("shellfish"), "the shared earlier group stays");
    assert!(standin_facts("main-dm-user-2").contains("cats"));

    let with_earlier = forget_all(&mut shim, &ana, true);
    assert_eq!(with_earlier.exit_code, 0, "{with_earlier:?}");
    assert!(with_earlier.stdout.contains(&format!("group(s) {group}, main-dm-ana_x_org")), "{with_earlier:?}");
    assert!(!standin_facts("main-dm-ana_x_org").contains("shellfish"), "the operator said so");
    assert!(standin_facts("main-dm-user-2").contains("cats"));
}

fn shim_on(config: &TempDir, standin: &StandIn) -> Shim {
    let state = temp_dir("forget-probe-state");
    shim(config.path(), state.path(), &standin.url())
}

#[test]
fn the_turn_that_asks_to_forget_is_not_remembered() {
    let standin = standin();
    let config = config(&standin, "mcp");
    let state = temp_dir("forget-turn-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let ana = dm("user-1");
    seed(&standin, "main-dm-user-1", &fact("fact-a1", "The user sees a therapist", &[]), "");
    shim.before_agent_start(&prompt("forget what I told you about my therapist"), &ana);
    let proposal = forget(&mut shim, "therapist", &[], &ana);
    assert_eq!(proposal.exit_code, 0, "{proposal:?}");
    let outcome = shim.agent_end(&end("forget what I told you about my therapist"), &ana);
    let CaptureOutcome::Skipped(why) = outcome else {
        panic!("the forget turn was captured: {outcome:?}");
    };
    assert!(why.contains("asked to forget"), "{why}");
    // The next turn is remembered again.
    shim.before_agent_start(&prompt("I booked a table at Nopa"), &ana);
    assert!(matches!(shim.agent_end(&end("I booked a table at Nopa"), &ana), CaptureOutcome::Spooled(_)));
}

#[test]
fn a_correction_names_the_old_fact_and_what_is_true_now() {
    for transport in ["mcp", "rest"] {
        let standin = standin();
        let config = config(&standin, transport);
        let state = temp_dir("correct-state");
        let mut shim = shim(config.path(), state.path(), &standin.url());
        let ana = dm("user-1");
        seed(&standin, "main-dm-user-1", &fact("fact-porto", "The user lives in Porto", &[]), "");
        let out = shim.run_command(&Command::Memory(MemoryCommand::Correct(Correction {
            old: "lives in Porto".into(),
            now_true: "The user moved to Lisbon in May".into(),
            ctx: ana.clone(),
        })));
        assert_eq!(out.exit_code, 0, "{out:?}");
        assert!(out.stdout.contains("(fact fact-porto)"), "{out:?}");
        assert_eq!(shim.tick().sent, 1);
        let bodies: Vec<String> = standin.episodes().into_iter().map(|e| e.content).collect();
        assert!(
            bodies.iter().any(|b| b.contains(r#"Correction: "The user lives in Porto" is no longer true. What is true now: The user moved to Lisbon in May"#)),
            "{transport}: {bodies:?}"
        );
    }
}

#[test]
fn a_capture_graphiti_was_still_storing_is_deleted_once_it_appears() {
    for transport in ["mcp", "rest"] {
        let standin = StandIn::start(Options { port: 0, ingest_delay: std::time::Duration::from_millis(1500), legacy_node_search: false })
            .expect("stand-in starts");
        let config = config(&standin, transport);
        let state = temp_dir("forget-late-state");
        let mut shim = shim(config.path(), state.path(), &standin.url());
        let ana = dm("user-1");
        seed(&standin, "main-dm-user-1", &fact("fact-a1", "The user sees a therapist", &[]), "");
        assert!(matches!(shim.agent_end(&end("My therapist is Dr. Vera Lima"), &ana), CaptureOutcome::Spooled(_)));
        assert_eq!(shim.tick().sent, 1, "accepted, not yet stored");
        let proposal = forget(&mut shim, "therapist", &[], &ana);
        assert!(!proposal.stdout.contains("episode "), "not listed yet: {proposal:?}");
        let done = confirm(&mut shim, &forget_id(&proposal), &ana);
        assert!(done.stdout.contains("deleted from Graphiti: 1 fact(s), 0 episode(s)"), "{done:?}");
        assert!(done.stdout.contains("are looked for until"), "{done:?}");
        // Said after the forget: kept.
        shim.before_agent_start(&prompt("My therapist retired last week"), &ana);
        assert!(matches!(shim.agent_end(&end("My therapist retired last week"), &ana), CaptureOutcome::Spooled(_)));
        assert_eq!(shim.tick().sent, 1);
        std::thread::sleep(std::time::Duration::from_millis(1700));
        assert_eq!(standin.episodes().iter().filter(|e| e.content.contains("therapist")).count(), 2, "both stored now");

        // Another process's tick finds the late one.
        let mut other = shim_on_state(&config, &state, &standin);
        other.tick();
        let left: Vec<String> = standin.episodes().into_iter().map(|e| e.content).collect();
        assert!(left.iter().all(|c| !c.contains("Vera Lima")), "{left:?}");
        assert!(left.iter().any(|c| c.contains("retired last week")), "{left:?}");
        let status = other.run_command(&Command::Status).stdout;
        assert!(status.contains("forgets: 1 looking for captures Graphiti was still storing, 1 episode(s) deleted later"), "{transport}: {status}");
        let log = std::fs::read_to_string(state.path().join("memory/forget-log.jsonl")).unwrap();
        assert!(log.contains("follow-up of a confirmed forget"), "{log}");
    }
}

fn shim_on_state(config: &TempDir, state: &TempDir, standin: &StandIn) -> Shim {
    shim(config.path(), state.path(), &standin.url())
}
