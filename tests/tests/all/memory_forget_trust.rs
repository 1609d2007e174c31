//! Forgets a user can trust, through the real component in the shim against the Graphiti stand-in:
//! a request matches what it means (not the speaker labels, the sender's name or one shared word),
//! the person drops or adds items before confirming; with Graphiti down the chat's captures are
//! still proposed and held; a store of proposals that cannot be read holds its chat's captures and
//! `status` names it; `status`, `spool list` and `flush` say what a forget holds back; a turn
//! captured as a pause is made is never sent; ids from Graphiti cannot drive a terminal.

use graphiti_openclaw_tests::{
    standin,
    cli_command, copy_dir, example_config, graphiti_shim as shim, graphiti_shim_at, hook_context,
    prompt, temp_dir,
};
use graphiti_standin::StandIn;
use host_shim::{
    AgentEndEvent, CaptureOutcome, ChatType, Command, CommandOutput, ForgetConfirmation,
    ForgetRequest, HookContext, MemoryCommand, SetClock, Shim, SpoolCommand,
};
use std::path::Path;
use tempfile::TempDir;


fn config(url: &str) -> TempDir {
    let dir = temp_dir("forget-trust-config");
    copy_dir(&example_config(), dir.path());
    let settings = format!(
        "schema_version: 1\ngraphiti:\n  url: {url}/mcp\n  transport: mcp\n\
         recall:\n  min_relevance: 0\ncapture:\n  backoff_initial_ms: 10\n  backoff_max_ms: 40\n"
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

/// Ana's direct chat, as a channel names her: an id and a display name.
fn ana() -> HookContext {
    HookContext {
        sender_id: Some("ana".into()),
        sender_name: Some("Ana".into()),
        ..hook_context("agent:main:telegram:direct:ana", ChatType::Direct)
    }
}

fn end(user: &str, assistant: &str) -> AgentEndEvent {
    let messages = serde_json::json!([{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]);
    AgentEndEvent { success: true, error: None, messages_json: messages.to_string(), duration_ms: Some(900) }
}

fn said(shim: &mut Shim, ctx: &HookContext, user: &str, assistant: &str) {
    shim.before_agent_start(&prompt(user), ctx);
    assert!(matches!(shim.agent_end(&end(user, assistant), ctx), CaptureOutcome::Spooled(_)), "{user}");
}

fn forget(shim: &mut Shim, query: &str, ctx: &HookContext) -> CommandOutput {
    shim.run_command(&Command::Memory(MemoryCommand::Forget(ForgetRequest {
        query: Some(query.into()),
        ids: vec![],
        everything: false,
        earlier_groups: false,
        ctx: ctx.clone(),
        operator: false,
        at_once: false,
    })))
}

fn choice(id: &str, ctx: &HookContext, drop: &[u32], add: &[u32]) -> ForgetConfirmation {
    ForgetConfirmation { id: id.into(), ctx: ctx.clone(), operator: false, drop: drop.to_vec(), add: add.to_vec() }
}

fn forget_id(proposal: &CommandOutput) -> String {
    let marker = "(forget id ";
    let at = proposal.stdout.find(marker).unwrap_or_else(|| panic!("no forget id: {proposal:?}"));
    proposal.stdout[at + marker.len()..].chars().take(16).collect()
}

/// A proposal's numbered item lines, (number, line).
type Items = Vec<(u32, String)>;

/// The numbered items of a proposal: proposed, and left out.
fn items(proposal: &str) -> (Items, Items) {
    let (mut proposed, mut left_out) = (vec![], vec![]);
    let mut weaker = false;
    for line in proposal.lines() {
        weaker |= line.starts_with("Left out, matching fewer");
        let mut words = line.split_whitespace();
        let (Some(number), Some(kind)) = (words.next(), words.next()) else { continue };
        let (Ok(number), true) = (number.parse::<u32>(), ["fact", "episode", "capture"].contains(&kind)) else { continue };
        if weaker { left_out.push((number, line.to_string())) } else { proposed.push((number, line.to_string())) }
    }
    (proposed, left_out)
}

fn mentions_each(lines: &[(u32, String)], wanted: &[&str]) -> bool {
    lines.len() == wanted.len() && wanted.iter().all(|w| lines.iter().any(|(_, l)| l.contains(w)))
}

fn seed_ana(standin: &StandIn) {
    standin
        .seed_json(
            r#"{"group_id": "main-dm-ana", "nodes": [
                {"uuid": "n-dana", "name": "Dana Lee", "summary": "Dana Lee is Ana's friend"},
                {"uuid": "n-ana", "name": "Ana", "summary": "Ana lives in Lisbon and likes hiking"}],
              "facts": [
                {"uuid": "f-seat", "name": "PREFERS", "fact": "Ana prefers window seats on long flights"},
                {"uuid": "f-window", "name": "BROKE", "fact": "Ana broke a kitchen window in 2019"},
                {"uuid": "f-dana", "name": "HAD_LUNCH_WITH", "fact": "Ana had lunch with Dana Lee on Friday"},
                {"uuid": "f-lisbon", "name": "LIVES_IN", "fact": "Ana lives in Lisbon"}]}"#,
        )
        .unwrap();
}

#[test]
fn a_table_of_forget_requests_proposes_what_each_means_and_leaves_the_weaker_apart() {
    let standin = standin();
    let config = config(&standin.url());
    let state = temp_dir("forget-table-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let ana = ana();
    seed_ana(&standin);
    said(&mut shim, &ana, "Will it rain tomorrow?", "The weather says rain tomorrow.");
    said(&mut shim, &ana, "Book me a window seat please", "Done, a window seat is booked.");
    said(&mut shim, &ana, "Hello, it is Ana", "Hello Ana, how can your assistant help?");
    assert_eq!(shim.tick().sent, 3);
    // Said since, not yet sent: an inflected form of the request's word.
    said(&mut shim, &ana, "Therapists are expensive here", "Noted.");

    struct Row {
        request: &'static str,
        proposed: &'static [&'static str],
        weaker: &'static [&'static str],
        summaries: &'static [&'static str],
    }
    let row = |request, proposed, weaker, summaries| Row { request, proposed, weaker, summaries };
    let table = [
        row("what my assistant said about the weather", &["The weather says rain"], &[], &[]),
        row("window seats", &["prefers window seats", "Book me a window seat"], &["kitchen window"], &[]),
        row("Dana Lee", &["lunch with Dana Lee"], &[], &["Dana Lee: Dana Lee is Ana's friend"]),
        row("therapist", &["Therapists are expensive"], &[], &[]),
        row("Lisbon weather", &[], &["lives in Lisbon", "The weather says rain"], &[]),
    ];
    for Row { request, proposed, weaker, summaries } in table {
        let proposal = forget(&mut shim, request, &ana);
        assert_eq!(proposal.exit_code, 0, "{request}: {proposal:?}");
        let (chosen, left_out) = items(&proposal.stdout);
        assert!(mentions_each(&chosen, proposed), "proposed for {request:?}:\n{}", proposal.stdout);
        assert!(mentions_each(&left_out, weaker), "left out for {request:?}:\n{}", proposal.stdout);
        for summary in summaries {
            assert!(proposal.stdout.contains(summary), "{request:?}: {}", proposal.stdout);
        }
        assert!(!proposal.stdout.contains("Ana lives in Lisbon and likes hiking"), "{request:?}: {}", proposal.stdout);
    }
    for request in ["what the user said", "everything Ana told you", "forget what my assistant said"] {
        let refused = forget(&mut shim, request, &ana);
        assert_eq!(refused.exit_code, 2, "{request}: {refused:?}");
        assert!(refused.stderr.contains("names nothing to look for"), "{refused:?}");
    }

    // Before confirming, Ana leaves the booking episode out and adds the kitchen window.
    let proposal = forget(&mut shim, "window seats", &ana);
    let id = forget_id(&proposal);
    let (chosen, left_out) = items(&proposal.stdout);
    let number = |lines: &[(u32, String)], text: &str| lines.iter().find(|(_, l)| l.contains(text)).unwrap().0;
    let (episode, kitchen) = (number(&chosen, "Book me a window seat"), number(&left_out, "kitchen window"));
    let edited = shim.run_command(&Command::Memory(MemoryCommand::EditForget(choice(&id, &ana, &[episode], &[kitchen]))));
    assert_eq!(edited.exit_code, 0, "{edited:?}");
    let (now_chosen, _) = items(&edited.stdout);
    assert!(mentions_each(&now_chosen, &["prefers window seats", "kitchen window"]), "{}", edited.stdout);
    let done = shim.run_command(&Command::Memory(MemoryCommand::ConfirmForget(choice(&id, &ana, &[], &[]))));
    assert!(done.stdout.contains("deleted from Graphiti: 2 fact(s), 0 episode(s)"), "{done:?}");
    let left: Vec<String> = standin.episodes().into_iter().map(|e| e.content).collect();
    assert!(left.iter().any(|c| c.contains("Book me a window seat")), "the episode left out stays: {left:?}");
}

#[test]
fn with_graphiti_down_a_forget_still_proposes_and_holds_the_chats_captures() {
    let standin = standin();
    let up = config(&standin.url());
    let down = config("http://127.0.0.1:9");
    let state = temp_dir("forget-down-state");
    let ana = ana();
    let mut offline = shim(down.path(), state.path(), "http://127.0.0.1:9");
    said(&mut offline, &ana, "My therapist is Dr. Vera Lima", "Noted.");
    said(&mut offline, &ana, "I booked a table at Nopa", "Noted.");
    let proposal = forget(&mut offline, "therapist", &ana);
    assert_eq!(proposal.exit_code, 0, "{proposal:?}");
    assert!(proposal.stdout.contains("Graphiti could not be searched"), "{}", proposal.stdout);
    let (chosen, _) = items(&proposal.stdout);
    assert!(mentions_each(&chosen, &["My therapist is Dr. Vera Lima"]), "{}", proposal.stdout);

    // Graphiti is back: the held capture waits for the confirmation, the other goes.
    let mut online = shim(up.path(), state.path(), &standin.url());
    assert_eq!(online.tick().sent, 1);
    assert!(standin.episodes().iter().all(|e| !e.content.contains("therapist")));
    let done = online.run_command(&Command::Memory(MemoryCommand::ConfirmForget(choice(&forget_id(&proposal), &ana, &[], &[]))));
    assert!(done.stdout.contains("removed here: 1 capture(s) not yet sent"), "{done:?}");
    assert_eq!(online.tick().sent, 0);
    assert!(standin.episodes().iter().all(|e| !e.content.contains("therapist")), "never sent");
}

fn spool_files(state: &Path, extension: &str) -> usize {
    std::fs::read_dir(state.join("spool")).map_or(0, |d| {
        d.filter_map(Result::ok).filter(|e| e.file_name().to_string_lossy().ends_with(extension)).count()
    })
}

#[test]
fn a_store_of_forgets_that_cannot_be_read_holds_its_chats_captures_and_is_named() {
    let standin = standin();
    let config = config(&standin.url());
    let state = temp_dir("forget-unreadable-state");
    let clock = SetClock::at(1_800_000_000_000);
    let mut shim = graphiti_shim_at(config.path(), state.path(), &standin.url(), &clock);
    let ana = ana();
    let bob = HookContext { sender_id: Some("bob".into()), ..hook_context("agent:main:telegram:direct:bob", ChatType::Direct) };
    said(&mut shim, &ana, "My therapist is Dr. Vera Lima", "Noted.");
    let proposal = forget(&mut shim, "therapist", &ana);
    assert_eq!(proposal.exit_code, 0, "{proposal:?}");
    said(&mut shim, &ana, "I booked a table at Nopa", "Noted.");
    said(&mut shim, &bob, "I like chess", "Noted.");
    let file = state.path().join("memory/forget-pending/main-dm-ana.json");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();

    assert_eq!(shim.tick().sent, 1, "only the other chat's capture goes");
    assert!(standin.episodes().iter().all(|e| !e.content.contains("Nopa") && !e.content.contains("therapist")));
    let status = shim.run_command(&Command::Status).stdout;
    assert!(status.contains("FORGETS:") && status.contains("main-dm-ana.unreadable-"), "set aside and named: {status}");
    assert!(status.contains("its chat's captures are held until"), "{status}");

    // Once nothing it held could still be confirmed, the chat's captures go.
    clock.advance(std::time::Duration::from_secs(61 * 60));
    assert_eq!(shim.tick().sent, 2);
    assert!(shim.run_command(&Command::Status).stdout.contains("holds nothing now; remove it once read"));
}

#[test]
fn a_turn_captured_as_a_pause_is_made_is_never_sent() {
    let standin = standin();
    let config = config(&standin.url());
    let state = temp_dir("pause-race-state");
    const PAUSED_AT: u64 = 1_800_000_000_000;
    let clock = SetClock::at(PAUSED_AT - 5);
    let mut shim = graphiti_shim_at(config.path(), state.path(), &standin.url(), &clock);
    let ana = ana();
    said(&mut shim, &ana, "Before the pause: I like tea", "Noted.");
    // A turn whose agent-end read the chat as not paused, while the pause was being written.
    clock.set(PAUSED_AT + 3);
    said(&mut shim, &ana, "During the pause: my salary is secret", "Noted.");
    clock.set(PAUSED_AT);
    let paused = shim.run_command(&Command::Memory(MemoryCommand::Pause(ana.clone())));
    assert_eq!(paused.exit_code, 0, "{paused:?}");
    assert!(paused.stdout.contains("1 turn(s) of this chat captured as the pause was made were removed"), "{paused:?}");
    clock.set(PAUSED_AT + 10);
    assert_eq!(shim.tick().sent, 1);
    let sent: Vec<String> = standin.episodes().into_iter().map(|e| e.content).collect();
    assert!(sent.iter().any(|c| c.contains("I like tea")), "{sent:?}");
    assert!(sent.iter().all(|c| !c.contains("salary")), "{sent:?}");
}

#[test]
fn status_spool_list_and_flush_say_which_captures_a_forget_holds_back() {
    let standin = standin();
    let config = config(&standin.url());
    let state = temp_dir("forget-held-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let ana = ana();
    said(&mut shim, &ana, "My therapist is Dr. Vera Lima", "Noted.");
    let id = forget_id(&forget(&mut shim, "therapist", &ana));
    let status = shim.run_command(&Command::Status).stdout;
    assert!(status.contains("forgets: 1 waiting for confirmation in 1 chat(s), holding back 1 capture(s)"), "{status}");
    let list = shim.run_command(&Command::Spool(SpoolCommand::List)).stdout;
    assert!(list.contains("held back") && list.contains(&format!("by forget {id}, waiting for its confirmation")), "{list}");
    let flush = shim.run_command(&Command::Flush);
    assert_eq!(flush.exit_code, 1, "{flush:?}");
    assert!(flush.stdout.contains("1 capture(s) held back by a forget waiting for its confirmation"), "{flush:?}");
    assert_eq!(spool_files(state.path(), ".episode"), 1);
}

#[test]
fn ids_from_graphiti_are_shown_escaped() {
    let standin = standin();
    let config = config(&standin.url());
    let state = temp_dir("forget-escape-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    standin
        .seed_json(r#"{"group_id": "main-dm-ana", "facts": [{"uuid": "f-\u001b[31mred\u202e", "name": "HAS", "fact": "Ana has a red badge"}]}"#)
        .unwrap();
    let proposal = forget(&mut shim, "badge", &ana());
    assert!(proposal.stdout.contains(r"f-\u{1b}[31mred\u{202e}"), "{}", proposal.stdout);
    assert!(!proposal.stdout.contains('\u{1b}') && !proposal.stdout.contains('\u{202e}'));
}

#[test]
fn a_simulated_turn_in_a_group_session_uses_the_chat_its_key_names() {
    let state = temp_dir("turn-cli-state");
    let out = cli_command(state.path(), &["turn", "Hello team, lunch is at noon", "--group", "--session", "agent:main:telegram:group:42", "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("main-group-42"), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("demo-group"), "{text}");
}

#[test]
fn group_ids_lists_a_conversation_whose_values_held_a_separator() {
    let standin = standin();
    let config = config(&standin.url());
    let state = temp_dir("group-ids-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    let odd = HookContext { sender_id: Some("x-dm-y".into()), agent_id: Some("main".into()), ..hook_context("agent:main:webchat:s1", ChatType::Direct) };
    shim.before_agent_start(&prompt("Hello there, how are you today"), &odd);
    let listed = shim.run_command(&Command::GroupIds).stdout;
    assert!(listed.contains("main-dm-x-dm-y -> main-dm-x_dm_y-"), "{listed}");
    assert!(listed.contains("agent:main:webchat:s1"), "{listed}");
}

#[test]
fn an_operators_proposal_names_the_commands_that_confirm_it() {
    let standin = standin();
    let config = config(&standin.url());
    let state = temp_dir("forget-operator-state");
    let mut shim = shim(config.path(), state.path(), &standin.url());
    seed_ana(&standin);
    let proposal = shim.run_command(&Command::Memory(MemoryCommand::Forget(ForgetRequest {
        query: Some("window seats".into()),
        ids: vec![],
        everything: false,
        earlier_groups: false,
        ctx: ana(),
        operator: true,
        at_once: false,
    })));
    let id = forget_id(&proposal);
    assert!(proposal.stdout.contains(&format!("graphiti-openclaw confirm-forget {id}")), "{}", proposal.stdout);
    assert!(proposal.stdout.contains(&format!("openclaw graphiti confirm-forget {id}")), "{}", proposal.stdout);
    assert!(!proposal.stdout.contains("--confirm"), "{}", proposal.stdout);
    let cli = cli_command(state.path(), &["memory", "confirm-forget", &id, "--drop", "1"]).output().unwrap();
    let out = String::from_utf8_lossy(&cli.stdout);
    assert!(out.contains(&format!("Forget {id} (group main-dm-ana)")), "the command the proposal names works: {out}\n{}", String::from_utf8_lossy(&cli.stderr));
}
