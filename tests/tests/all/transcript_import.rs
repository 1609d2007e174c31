//! Past conversations staged as the OpenClaw adapter stages them (`plugin/openclaw/src/transcripts.js`),
//! imported through the real component over REST: each turn into its own chat's group as the user's
//! and the assistant's messages, with its time and without a tool's output; a kept-out chat, an
//! expert run and OpenClaw's main direct-chat session (no sender recorded) left out and named.

use crate::memory_import::{import_until_done, request};
use graphiti_openclaw_tests::{
    copy_dir, example_config, graphiti_shim_with_workspace, standin, temp_dir,
};
use graphiti_standin::StandIn;
use host_shim::Command;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use tempfile::TempDir;

/// 2026-02-10T18:30:00Z, months before any run.
const PAST_MS: u64 = 1_770_748_200_000;

fn config(standin: &StandIn) -> TempDir {
    let dir = temp_dir("transcripts-config");
    copy_dir(&example_config(), dir.path());
    let settings = format!(
        "schema_version: 1\ngraphiti:\n  url: {}\n  transport: rest\n\
         capture:\n  import_per_minute: 600\n\
         skip:\n  chats: [agent:main:telegram:direct:kept]\n",
        standin.url()
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

fn turn(id: &str, at: u64, user: &str, reply: &str) -> Vec<Value> {
    vec![
        json!({ "id": format!("u-{id}"), "message": { "role": "user", "content": user, "timestamp": at } }),
        json!({ "id": format!("t-{id}"), "message": { "role": "toolResult", "content": [{ "type": "text", "text": "TOOL-OUTPUT-NEVER-REMEMBERED" }] } }),
        json!({ "id": format!("a-{id}"), "message": { "role": "assistant", "content": [
            { "type": "thinking", "thinking": "REASONING-NEVER-REMEMBERED" },
            { "type": "text", "text": reply }
        ] } }),
    ]
}

/// Stages the sessions as the adapter does: an index written last, a file of rows each.
fn stage(state: &Path) {
    let sessions: [(&str, &str, Vec<Value>); 5] = [
        (
            "agent:main:telegram:direct:bea",
            "direct",
            [
                turn(
                    "b1",
                    PAST_MS,
                    "I moved to Braga in January",
                    "Noted: Braga.",
                ),
                turn(
                    "b2",
                    PAST_MS + 60_000,
                    "My daughter starts school in Braga in September",
                    "Noted.",
                ),
            ]
            .concat(),
        ),
        (
            "agent:main:telegram:group:777",
            "group",
            turn(
                "g1",
                PAST_MS + 120_000,
                "The choir rehearses on Thursdays",
                "Got it.",
            ),
        ),
        (
            "agent:main:telegram:direct:kept",
            "direct",
            turn("k1", PAST_MS, "Keep this chat out of memory", "Ok."),
        ),
        (
            "agent:main:expert:trip-planner-expert",
            "direct",
            turn("e1", PAST_MS, "Book the Lisbon flight", "Booked."),
        ),
        (
            "agent:main:main",
            "direct",
            turn("m1", PAST_MS, "My cat is called Tom", "Noted."),
        ),
    ];
    let dir = state.join("import/transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let mut index = Vec::new();
    for (n, (key, chat_type, rows)) in sessions.iter().enumerate() {
        let file = format!("{n:05}.jsonl");
        let body: String = rows.iter().map(|row| format!("{row}\n")).collect();
        std::fs::write(dir.join(&file), body).unwrap();
        index.push(json!({ "file": file, "session_key": key, "session_id": format!("s{n}"), "chat_type": chat_type }));
    }
    let index = json!({ "since_ms": null, "sessions": index, "skipped": [], "notes": [] });
    std::fs::write(dir.join("index.json"), index.to_string()).unwrap();
}

#[test]
fn staged_turns_go_to_their_own_chats_over_rest_and_what_a_live_turn_skips_is_named() {
    let standin = standin();
    let config = config(&standin);
    let state = temp_dir("transcripts-state");
    let workspace = temp_dir("transcripts-workspace");
    let mut shim = graphiti_shim_with_workspace(
        config.path(),
        state.path(),
        &standin.url(),
        workspace.path(),
    );
    stage(state.path());
    let dry = shim.run_command(&Command::ImportMemory(request(true)));
    assert_eq!(dry.exit_code, 0, "{}", dry.stderr);
    for line in [
        "group main-dm-bea: 2 item(s)",
        "group main-group-777: 1 item(s)",
        "session agent:main:telegram:direct:kept: 1 entry: chat agent:main:telegram:direct:kept is kept out of memory (skip.chats)",
        "session agent:main:expert:trip-planner-expert: 1 entry: an expert run: not the user's conversation",
        "session agent:main:main: 1 entry: OpenClaw recorded no sender id for it",
        "Graphiti's work: 3 episode(s)",
    ] {
        assert!(
            dry.stdout.contains(line),
            "{line:?} not in:\n{}",
            dry.stdout
        );
    }
    assert!(
        !state.path().join("import/transcripts").exists(),
        "what was staged was for that command"
    );

    stage(state.path());
    let done = import_until_done(&mut shim, Duration::from_secs(30));
    assert_eq!(done.exit_code, 0, "{}", done.stdout);
    let episodes = standin.episodes();
    assert_where_each_went(&episodes);
    let again = {
        stage(state.path());
        import_until_done(&mut shim, Duration::from_secs(30))
    };
    assert!(
        again.stdout.contains("nothing to import"),
        "{}",
        again.stdout
    );
    assert_eq!(
        standin.episodes().len(),
        episodes.len(),
        "run twice: nothing sent twice"
    );
}

/// Each past turn in its own chat's group, with the reply and its own time; nothing skipped arrives.
fn assert_where_each_went(episodes: &[graphiti_standin::Episode]) {
    let of = |group: &str| -> Vec<String> {
        episodes
            .iter()
            .filter(|e| e.group_id == group)
            .map(|e| e.content.clone())
            .collect()
    };
    let bea = of("main-dm-bea").join("\n");
    assert!(
        bea.contains("I moved to Braga in January") && bea.contains("Noted: Braga."),
        "the user's message and the reply:\n{bea}"
    );
    assert!(
        of("main-group-777")
            .join("\n")
            .contains("The choir rehearses on Thursdays")
    );
    let all: String = episodes
        .iter()
        .map(|e| format!("{} {}\n", e.group_id, e.content))
        .collect();
    for never in [
        "TOOL-OUTPUT",
        "REASONING",
        "Keep this chat out",
        "Lisbon flight",
        "cat is called Tom",
    ] {
        assert!(!all.contains(never), "{never} reached Graphiti:\n{all}");
    }
    assert!(
        episodes.iter().all(|e| e.group_id != "main-dm-ana"),
        "no past turn given to the importing sender"
    );
    assert!(
        episodes
            .iter()
            .all(|e| e.valid_at.starts_with("2026-02-10")),
        "with their own times: {episodes:?}"
    );
}
