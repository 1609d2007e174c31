//! What the user and the operator keep out of memory, through the real component in the shim
//! against the Graphiti stand-in: a paused chat and a kept-out channel or chat type capture nothing
//! (neither the spool nor Graphiti gets it), secrets are redacted before the spool, and `status` and
//! `paused` say what is left out.

use graphiti_openclaw_tests::{
    standin,
    cli_command, copy_dir, example_config, graphiti_shim as shim, hook_context, prompt, temp_dir,
};
use graphiti_standin::StandIn;
use host_shim::{
    AgentEndEvent, CaptureOutcome, ChatType, Command, HookContext, IngestRequest, MemoryCommand,
    MemoryQuery, SearchRequest, Shim,
};
use std::path::Path;
use tempfile::TempDir;


fn config(standin: &StandIn, extra: &str) -> TempDir {
    let dir = temp_dir("memory-control-config");
    copy_dir(&example_config(), dir.path());
    let settings = format!(
        "schema_version: 1\n\
         graphiti:\n  url: {}/mcp\n  transport: mcp\n\
         recall:\n  min_relevance: 0\n\
         capture:\n  backoff_initial_ms: 10\n  backoff_max_ms: 40\n{extra}",
        standin.url()
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

fn end(user: &str) -> AgentEndEvent {
    let messages = serde_json::json!([{"role": "user", "content": user}, {"role": "assistant", "content": "Noted."}]);
    AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.to_string(),
        duration_ms: Some(900),
    }
}

fn spooled(state: &Path) -> usize {
    let spool = state.join("spool");
    std::fs::read_dir(spool).map_or(0, |d| {
        d.filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".episode"))
        })
        .count()
    })
}

fn memory(shim: &mut Shim, command: MemoryCommand) -> host_shim::CommandOutput {
    shim.run_command(&Command::Memory(command))
}

#[test]
fn a_paused_chat_captures_nothing_until_it_resumes_and_others_go_on() {
    let standin = standin();
    let config = config(&standin, "");
    let state = temp_dir("paused-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let dm = hook_context("agent:main:telegram:direct:user-1", ChatType::Direct);
    let group = HookContext {
        chat_id: Some("555".into()),
        ..hook_context("agent:main:telegram:group:555", ChatType::Group)
    };

    let paused = memory(&mut shim, MemoryCommand::Pause(dm.clone()));
    assert_eq!(paused.exit_code, 0, "{paused:?}");
    assert!(paused.stdout.contains("Memory is paused for this chat"), "{}", paused.stdout);
    let again = memory(&mut shim, MemoryCommand::Pause(dm.clone()));
    assert!(again.stdout.contains("already paused"), "{}", again.stdout);

    let outcome = shim.agent_end(&end("Remember that my therapist is Dr. Lima"), &dm);
    let CaptureOutcome::Skipped(why) = outcome else {
        panic!("a paused chat was captured: {outcome:?}");
    };
    assert!(why.contains("memory is paused for this chat (group main-dm-user-1)"), "{why}");
    let ingest = shim.run_command(&Command::Ingest(IngestRequest {
        text: "The user's therapist is Dr. Lima".into(),
        source: Some("agent tool".into()),
        ctx: dm.clone(),
    }));
    assert_eq!(ingest.exit_code, 1, "graphiti_ingest is refused too");
    assert!(ingest.stderr.contains("not stored: memory is paused"), "{}", ingest.stderr);
    assert_eq!(spooled(state.path()), 0);

    // The group chat is another chat: captured as before.
    let outcome = shim.agent_end(&end("Remember that the offsite is in Porto"), &group);
    assert!(matches!(outcome, CaptureOutcome::Spooled(_)), "{outcome:?}");

    let status = shim.run_command(&Command::Status);
    assert!(status.stdout.contains("memory:   paused in 1 chat(s)"), "{}", status.stdout);
    let listed = memory(&mut shim, MemoryCommand::Paused);
    assert!(listed.stdout.contains("paused:   main-dm-user-1 since 20"), "{}", listed.stdout);

    // A second process on the state directory sees the pause (it is the state directory's).
    let mut other = host_shim_for(&config, &state, &standin);
    assert!(matches!(
        other.agent_end(&end("Remember that I moved to Lisbon"), &dm),
        CaptureOutcome::Skipped(_)
    ));

    let resumed = memory(&mut shim, MemoryCommand::Resume(dm.clone()));
    assert!(resumed.stdout.contains("Memory is on again"), "{}", resumed.stdout);
    let outcome = other.agent_end(&end("Remember that I moved to Lisbon"), &dm);
    assert!(matches!(outcome, CaptureOutcome::Spooled(_)), "{outcome:?}");
    assert_eq!(shim.tick().sent, 2);
    let bodies: Vec<String> = standin.episodes().into_iter().map(|e| e.content).collect();
    assert!(bodies.iter().all(|b| !b.contains("therapist")), "{bodies:?}");
    assert!(bodies.iter().any(|b| b.contains("Lisbon")), "{bodies:?}");
}

fn host_shim_for(config: &TempDir, state: &TempDir, standin: &StandIn) -> Shim {
    shim(config.path(), state.path(), &standin.url())
}

#[test]
fn a_kept_out_channel_or_chat_type_is_neither_recalled_nor_captured() {
    let standin = standin();
    standin
        .seed_json(
            r#"{"group_id": "main-dm-user-1", "nodes": [],
                "facts": [{"uuid": "f1", "name": "LIKES", "fact": "Alice likes dinner at Nopa",
                           "valid_at": "2025-02-01T00:00:00+00:00", "invalid_at": null, "expired_at": null}]}"#,
        )
        .unwrap();
    let config = config(&standin, "skip:\n  channels: [discord]\n  chat_types: [group]\n");
    let state = temp_dir("kept-out-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let discord = HookContext {
        channel: Some("discord".into()),
        ..hook_context("agent:main:discord:direct:user-1", ChatType::Direct)
    };
    let group = hook_context("agent:main:telegram:group:chat-1", ChatType::Group);
    for ctx in [&discord, &group] {
        let injection = shim.before_agent_start(&prompt("where should we have dinner tonight"), ctx);
        let context = injection.prepend_context.unwrap_or_default();
        assert!(!context.contains("Nopa"), "recalled in a kept-out chat: {context}");
        let outcome = shim.agent_end(&end("Remember that I like dinner at Nopa"), ctx);
        let CaptureOutcome::Skipped(why) = outcome else {
            panic!("a kept-out chat was captured: {outcome:?}");
        };
        assert!(why.contains("kept out of memory (skip."), "{why}");
        let search = shim.run_command(&Command::Search(SearchRequest {
            query: "dinner".into(),
            ctx: ctx.clone(),
        }));
        assert_eq!(search.exit_code, 1);
        assert!(search.stderr.contains("not searched:"), "{}", search.stderr);
    }
    assert_eq!(spooled(state.path()), 0);
    // The same user on Telegram, directly: recalled and captured.
    let dm = hook_context("agent:main:telegram:direct:user-1", ChatType::Direct);
    let injection = shim.before_agent_start(&prompt("where should we have dinner tonight"), &dm);
    assert!(injection.prepend_context.unwrap_or_default().contains("Nopa"));
    assert!(matches!(
        shim.agent_end(&end("Remember that I like dinner at Nopa"), &dm),
        CaptureOutcome::Spooled(_)
    ));
    assert_eq!(shim.tick().sent, 1);
    assert_eq!(standin.episodes().len(), 1);
    let status = shim.run_command(&Command::Status);
    assert!(
        status.stdout.contains("memory:   kept out: channels discord; group chats"),
        "{}",
        status.stdout
    );
}

#[test]
fn secrets_are_replaced_before_the_spool_and_never_reach_graphiti() {
    let standin = standin();
    let config = config(&standin, "");
    let state = temp_dir("redaction-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let dm = hook_context("agent:main:telegram:direct:user-1", ChatType::Direct);
    let said = "Book it with card 4111 1111 1111 1111, and the wifi password: Tr0ub4dor&3 \
                uses key sk-proj-4fG7hJ2kL9mN3pQ8rS5tV1wX";
    let outcome = shim.agent_end(&end(said), &dm);
    let CaptureOutcome::Spooled(turn) = outcome else {
        panic!("not captured: {outcome:?}");
    };
    assert_eq!(
        turn.user,
        "Book it with card [redacted card number], and the wifi password: [redacted password] \
         uses key [redacted API key]"
    );
    let note = shim.run_command(&Command::Ingest(IngestRequest {
        text: "Door code pin=4921 for the office".into(),
        source: None,
        ctx: dm.clone(),
    }));
    assert_eq!(note.exit_code, 0, "{note:?}");
    assert_eq!(shim.tick().sent, 2);
    let spool_and_graphiti: Vec<String> =
        standin.episodes().into_iter().map(|e| e.content).collect();
    for secret in ["4111", "Tr0ub4dor", "sk-proj", "4921"] {
        assert!(
            spool_and_graphiti.iter().all(|b| !b.contains(secret)),
            "{secret} reached Graphiti: {spool_and_graphiti:?}"
        );
    }
    assert!(spool_and_graphiti.iter().any(|b| b.contains("pin=[redacted password]")));
}

#[test]
fn redaction_is_off_when_the_settings_say_so_and_a_bad_kind_is_named() {
    let standin = standin();
    let config = config(&standin, "  redact: []\n");
    let state = temp_dir("redaction-off-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let dm = hook_context("agent:main:telegram:direct:user-1", ChatType::Direct);
    let outcome = shim.agent_end(&end("my password: hunter2 is weak"), &dm);
    let CaptureOutcome::Spooled(turn) = outcome else {
        panic!("not captured: {outcome:?}");
    };
    assert_eq!(turn.user, "my password: hunter2 is weak");

    std::fs::write(
        config.path().join("settings.yaml"),
        "schema_version: 1\ncapture:\n  redact: [passwords, ssn]\n",
    )
    .unwrap();
    let out = shim.run_command(&Command::CheckConfig);
    assert_eq!(out.exit_code, 1);
    assert!(
        out.stderr.contains("unknown variant `ssn`") && out.stderr.contains("card-numbers"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_unreadable_or_special_paused_file_stops_capture_and_says_why() {
    let standin = standin();
    let config = config(&standin, "");
    let state = temp_dir("paused-corrupt-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let dm = hook_context("agent:main:telegram:direct:user-1", ChatType::Direct);
    std::fs::create_dir_all(state.path().join("memory")).unwrap();
    let file = state.path().join("memory/paused.json");
    std::fs::write(&file, "{\"groups\": {\"main-dm-user-1\"").unwrap();
    let outcome = shim.agent_end(&end("Remember that my therapist is Dr. Lima"), &dm);
    let CaptureOutcome::Skipped(why) = outcome else {
        panic!("captured although a pause may be in force: {outcome:?}");
    };
    assert!(why.contains("the paused chats are unknown") && why.contains("paused.json"), "{why}");
    let status = shim.run_command(&Command::Status);
    assert!(status.stdout.contains("NOTHING IS CAPTURED"), "{}", status.stdout);

    std::fs::remove_file(&file).unwrap();
    let fifo = std::process::Command::new("mkfifo").arg(&file).status().unwrap();
    assert!(fifo.success());
    let outcome = shim.agent_end(&end("Remember that my therapist is Dr. Lima"), &dm);
    assert!(matches!(outcome, CaptureOutcome::Skipped(_)), "{outcome:?}");
    assert_eq!(spooled(state.path()), 0);
}

/// Two CLI processes on one state directory, each pausing 40 direct chats as fast as it can: the
/// `memory-scopes` lock makes every read-change-write whole, so all 80 stay paused.
#[test]
fn chats_paused_at_the_same_moment_from_two_processes_are_all_kept() {
    let state = temp_dir("paused-race-state");
    let pausers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|side| {
            let state = state.path().to_path_buf();
            std::thread::spawn(move || {
                for n in 0..40 {
                    let out = cli(&state, &["memory", "pause", "--sender", &format!("{side}-{n}")]);
                    assert!(out.status.success(), "{out:?}");
                }
            })
        })
        .collect();
    for pauser in pausers {
        pauser.join().unwrap();
    }
    let listed = cli(state.path(), &["memory", "paused"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(listed.matches("paused:   main-dm-").count(), 80, "{listed}");
    let resumed = cli(state.path(), &["memory", "resume", "--sender", "a-3"]);
    assert!(String::from_utf8_lossy(&resumed.stdout).contains("Memory is on again"));
    let listed = cli(state.path(), &["memory", "paused"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout).matches("paused:   main-dm-").count(), 79);
}

/// A CLI killed with SIGKILL at any moment of a pause never leaves the paused chats torn or
/// loses a chat paused before: the file is replaced whole (write, then rename).
#[test]
fn a_pause_killed_at_any_moment_loses_no_earlier_pause() {
    let state = temp_dir("paused-kill-state");
    // Many paused chats, so that writing the file takes long enough for kills to land inside it.
    let many: serde_json::Map<String, serde_json::Value> = (0..30_000)
        .map(|n| (format!("main-dm-earlier-{n:05}"), serde_json::json!({"since_ms": 1_700_000_000_000u64})))
        .collect();
    std::fs::create_dir_all(state.path().join("memory")).unwrap();
    std::fs::write(state.path().join("memory/paused.json"), serde_json::json!({"groups": many}).to_string()).unwrap();
    assert!(cli(state.path(), &["memory", "pause", "--sender", "first"]).status.success());
    let started = std::time::Instant::now();
    assert!(cli(state.path(), &["memory", "pause", "--sender", "second"]).status.success());
    let one_run = started.elapsed();
    let mut killed_mid_run = 0;
    for n in 0..16u32 {
        // Spread over one run's length, so some kills land inside the write.
        let delay = one_run.mul_f64(f64::from(n) / 16.0 + 0.03);
        let mut child = cli_command(state.path(), &["memory", "pause", "--sender", &format!("k-{n}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the CLI starts");
        std::thread::sleep(delay);
        if child.try_wait().unwrap().is_none() {
            killed_mid_run += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
        let listed = cli(state.path(), &["memory", "paused"]);
        let text = String::from_utf8_lossy(&listed.stdout);
        assert!(listed.status.success(), "after kill {n}: {listed:?}");
        assert!(text.contains("main-dm-first") && text.contains("main-dm-second"), "after kill {n}: {text:.300}");
        assert_eq!(text.matches("paused:   main-dm-earlier-").count(), 30_000, "after kill {n}");
    }
    assert!(killed_mid_run > 4, "only {killed_mid_run} kills landed before the CLI finished");
}

fn cli(state: &Path, args: &[&str]) -> std::process::Output {
    cli_command(state, args).output().expect("the CLI runs")
}

fn seed_two_senders(standin: &StandIn) {
    for (group, facts) in [
        (
            "main-dm-user-1",
            r#"[{"uuid": "f1", "name": "WORKS_AT", "fact": "Alice works at Acme Corp",
                 "valid_at": "2024-01-01T00:00:00+00:00", "invalid_at": "2025-01-03T00:00:00+00:00", "expired_at": "2025-01-03T00:00:00+00:00"},
                {"uuid": "f2", "name": "WORKS_AT", "fact": "Alice now works at Globex <script>alert(1)</script>",
                 "valid_at": "2025-01-03T00:00:00+00:00", "invalid_at": null, "expired_at": null}]"#,
        ),
        (
            "main-dm-user-2",
            r#"[{"uuid": "f9", "name": "WORKS_AT", "fact": "Bob works at the clinic",
                 "valid_at": "2024-01-01T00:00:00+00:00", "invalid_at": null, "expired_at": null}]"#,
        ),
        (
            "main-group-chat-1",
            r#"[{"uuid": "f5", "name": "PLANS", "fact": "The team works on the offsite in Porto",
                 "valid_at": "2025-03-01T00:00:00+00:00", "invalid_at": null, "expired_at": null}]"#,
        ),
    ] {
        standin
            .seed_json(&format!(r#"{{"group_id": "{group}", "nodes": [], "facts": {facts}}}"#))
            .unwrap();
    }
}

fn see(shim: &mut Shim, query: Option<&str>, ctx: &HookContext, operator: bool) -> host_shim::CommandOutput {
    memory(
        shim,
        MemoryCommand::See(MemoryQuery {
            query: query.map(Into::into),
            ctx: ctx.clone(),
            operator,
        }),
    )
}

#[test]
fn a_user_sees_their_own_current_and_no_longer_true_facts_and_no_one_elses() {
    let standin = standin();
    seed_two_senders(&standin);
    let config = config(&standin, "");
    let state = temp_dir("see-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let dm = hook_context("agent:main:telegram:direct:user-1", ChatType::Direct);
    let out = see(&mut shim, Some("works"), &dm, false);
    assert_eq!(out.exit_code, 0, "{out:?}");
    assert!(out.stdout.starts_with("Memories of this chat (Graphiti group main-dm-user-1)\n"), "{}", out.stdout);
    let current = out.stdout.find("current:").unwrap();
    let past = out.stdout.find("no longer true:").unwrap();
    let globex = out.stdout.find("f2  Alice now works at Globex").unwrap();
    let acme = out.stdout.find("f1  Alice works at Acme Corp  (2024-01-01 to 2025-01-03)").unwrap();
    assert!(current < globex && globex < past && past < acme, "{}", out.stdout);
    assert!(out.stdout.contains("<script>alert(1)</script>"), "shown as the text it is");
    assert!(out.stdout.contains("not every fact Graphiti holds"), "{}", out.stdout);
    assert!(!out.stdout.contains("Bob") && !out.stdout.contains("Porto"), "{}", out.stdout);

    // In their group chat: refused, and never their direct chat's memories.
    let group = hook_context("agent:main:telegram:group:chat-1", ChatType::Group);
    let refused = see(&mut shim, Some("works"), &group, false);
    assert_eq!(refused.exit_code, 1);
    assert!(refused.stderr.contains("in a group chat everyone would read them"), "{}", refused.stderr);
    assert!(!refused.stdout.contains("Alice"));
    // An operator sees the group's, and only the group's.
    let operator = see(&mut shim, Some("works"), &group, true);
    assert!(operator.stdout.contains("f5  The team works on the offsite in Porto"), "{}", operator.stdout);
    assert!(!operator.stdout.contains("Alice") && !operator.stdout.contains("Bob"));
}

#[test]
fn the_recent_episodes_are_listed_with_their_ids() {
    let standin = standin();
    let config = config(&standin, "");
    let state = temp_dir("see-episodes-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let dm = hook_context("agent:main:telegram:direct:user-1", ChatType::Direct);
    assert!(matches!(
        shim.agent_end(&end("Remember that I moved to Lisbon"), &dm),
        CaptureOutcome::Spooled(_)
    ));
    assert_eq!(shim.tick().sent, 1);
    let stored = standin.episodes();
    let out = see(&mut shim, None, &dm, false);
    assert_eq!(out.exit_code, 0, "{out:?}");
    assert!(out.stdout.contains("Facts and entities: give a search"), "{}", out.stdout);
    assert!(out.stdout.contains("Recent episodes (1 of the last 10 Graphiti lists):"), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("  {}  ", stored[0].uuid)), "{}", out.stdout);
    assert!(out.stdout.contains("moved to Lisbon"), "{}", out.stdout);
}

#[test]
fn an_export_holds_exactly_the_scopes_items_graphiti_returned() {
    let standin = standin();
    seed_two_senders(&standin);
    let config = config(&standin, "");
    let state = temp_dir("export-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let dm = hook_context("agent:main:telegram:direct:user-1", ChatType::Direct);
    let other = HookContext {
        sender_id: Some("user-2".into()),
        ..hook_context("agent:main:telegram:direct:user-2", ChatType::Direct)
    };
    shim.agent_end(&end("Remember that I moved to Lisbon"), &dm);
    shim.agent_end(&end("Remember that I moved to Oslo"), &other);
    assert_eq!(shim.tick().sent, 2);
    let out = memory(
        &mut shim,
        MemoryCommand::Export(MemoryQuery {
            query: Some("works".into()),
            ctx: dm.clone(),
            operator: true,
        }),
    );
    assert_eq!(out.exit_code, 0, "{out:?}");
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("one JSON document");
    assert_eq!(doc["group_id"], "main-dm-user-1");
    let uuids = |list: &serde_json::Value| -> Vec<String> {
        let mut ids: Vec<String> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["uuid"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    let own: Vec<String> = standin
        .episodes()
        .into_iter()
        .filter(|e| e.group_id == "main-dm-user-1")
        .map(|e| e.uuid)
        .collect();
    assert_eq!(uuids(&doc["episodes"]), own);
    assert_eq!(doc["episodes"]["complete"], true);
    assert_eq!(uuids(&doc["facts"]), ["f1", "f2"]);
    assert_eq!(doc["facts"]["complete"], false);
    assert!(!out.stdout.contains("Oslo") && !out.stdout.contains("Bob"), "{}", out.stdout);
}

#[test]
fn see_shows_a_sessions_recent_turns_and_what_became_of_each_capture() {
    let standin = standin();
    let config = config(&standin, "");
    let state = temp_dir("see-turns-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let dm = hook_context("agent:main:telegram:direct:user-1", ChatType::Direct);
    let see = |shim: &mut Shim| {
        memory(shim, MemoryCommand::See(MemoryQuery { query: None, ctx: dm.clone(), operator: false })).stdout
    };
    for said in ["I booked a table at Nopa for Friday", "Remember the offsite is in Porto"] {
        shim.before_agent_start(&prompt(said), &dm);
        assert!(matches!(shim.agent_end(&end(said), &dm), CaptureOutcome::Spooled(_)));
    }
    let waiting = see(&mut shim);
    assert!(waiting.contains("Recent turns of this session (the last 10 turns of each of the 200 most recent sessions are kept):"), "{waiting}");
    assert!(waiting.contains("\"I booked a table at Nopa for Friday\""), "{waiting}");
    assert_eq!(waiting.matches("capture: waiting to be sent to Graphiti").count(), 2, "{waiting}");

    assert_eq!(shim.tick().sent, 2);
    memory(&mut shim, MemoryCommand::Pause(dm.clone()));
    shim.before_agent_start(&prompt("My therapist is Dr. Lima"), &dm);
    shim.agent_end(&end("My therapist is Dr. Lima"), &dm);
    let after = see(&mut shim);
    assert_eq!(after.matches("capture: delivered to Graphiti").count(), 2, "{after}");
    assert!(after.contains("capture: not captured: memory is paused for this chat"), "{after}");

    // Eleven more turns: the oldest go.
    memory(&mut shim, MemoryCommand::Resume(dm.clone()));
    for n in 0..11 {
        let said = format!("Turn number {n} about the garden");
        shim.before_agent_start(&prompt(&said), &dm);
        shim.agent_end(&end(&said), &dm);
    }
    let see_all = see(&mut shim);
    let kept = see_all.split("Recent turns of this session").nth(1).unwrap_or_default();
    assert_eq!(kept.matches("    capture: ").count(), 10, "{kept}");
    assert!(!kept.contains("Nopa") && kept.contains("Turn number 10"), "{kept}");
    // Another chat's session shows none of them.
    let other = hook_context("agent:main:telegram:direct:user-2", ChatType::Direct);
    let other = HookContext { sender_id: Some("user-2".into()), ..other };
    let theirs = memory(&mut shim, MemoryCommand::See(MemoryQuery { query: None, ctx: other, operator: false })).stdout;
    assert!(theirs.contains("Recent turns of this session: none kept"), "{theirs}");
}
