//! Importing memory-core's workspace files through the real component against the Graphiti stand-in
//! (both APIs): each entry once, into the group named, with its original time; run again, nothing;
//! a changed entry, only it; a CLI killed with SIGKILL half-way and run again, every entry once;
//! Graphiti down, nothing lost and live turns still captured; hostile files named and skipped.

use graphiti_openclaw_tests::{
    copy_dir, example_config, exchange, graphiti_shim_with_workspace, hook_context, standin,
    temp_dir, workspace,
};
use graphiti_standin::{Fault, StandIn};
use host_shim::{CaptureOutcome, ChatType, Command, HookContext, ImportRequest, Shim};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};
use tempfile::TempDir;

const UNDER_WAY: u8 = 75;

fn config(standin: &StandIn, transport: &str, per_minute: u32) -> TempDir {
    let dir = temp_dir("import-config");
    copy_dir(&example_config(), dir.path());
    let url = match transport {
        "rest" => standin.url(),
        _ => format!("{}/mcp", standin.url()),
    };
    let settings = format!(
        "schema_version: 1\ngraphiti:\n  url: {url}\n  transport: {transport}\n\
         capture:\n  backoff_initial_ms: 20\n  backoff_max_ms: 100\n  import_per_minute: {per_minute}\n"
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

/// memory-core's files as a user's workspace holds them after months: curated facts with recall
/// markers, directives (one superseded), daily notes, an imported note, and what is not memory.
fn memory_core_workspace() -> TempDir {
    let dir = temp_dir("import-workspace");
    let files = [
        (
            "MEMORY.md",
            "# Family\n- Ana's sister Marta lives in Porto <!-- trigger: family --> <!-- importance: 7 -->\n\
             - The deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789\n\n# Work\n\
             Ana leads the Atlas migration at Globex.\n",
        ),
        (
            "USER.md",
            "## Style\n<!-- observed: 2026-05-10 | status: superseded -->\n\n- Prefer detailed explanations.\n\n\
             <!-- observed: 2026-07-27 | status: active -->\n\n- Prefer concise summaries.\n",
        ),
        (
            "memory/2026-03-01.md",
            "- Met Bruno at the harbour about the sailing trip\n",
        ),
        (
            "memory/2026-03-02-standup.md",
            "## Standup\n- Atlas cutover moved to April 9\n",
        ),
        (
            "memory/imports/codex/MEMORY.md",
            "- Ana writes Rust with edition 2024\n",
        ),
        ("DREAMS.md", "- A dream diary, derived from the rest\n"),
    ];
    for (relative, text) in files {
        let path = dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// What each import episode should say, and when it happened (None: the file's time).
const EXPECTED: [(&str, Option<&str>); 8] = [
    ("Family: Ana's sister Marta lives in Porto", None),
    ("Family: The deploy token is [redacted API key]", None),
    ("Work: Ana leads the Atlas migration at Globex.", None),
    (
        "No longer true (observed 2026-05-10, superseded on 2026-07-27): Style: Prefer detailed explanations.",
        Some("2026-05-10"),
    ),
    (
        "User preference (observed 2026-07-27): Style: Prefer concise summaries.",
        Some("2026-07-27"),
    ),
    (
        "Met Bruno at the harbour about the sailing trip",
        Some("2026-03-01"),
    ),
    (
        "Standup: Atlas cutover moved to April 9",
        Some("2026-03-02"),
    ),
    ("Ana writes Rust with edition 2024", None),
];

pub(crate) fn request(dry_run: bool) -> ImportRequest {
    ImportRequest {
        ctx: HookContext {
            agent_id: Some("main".into()),
            sender_id: Some("ana".into()),
            ..hook_context("import", ChatType::Direct)
        },
        group_id: None,
        daily_notes: true,
        dry_run,
        json: false,
    }
}

/// Runs the import until the component says it is done (or `deadline` passes); the last output.
pub(crate) fn import_until_done(shim: &mut Shim, deadline: Duration) -> host_shim::CommandOutput {
    let until = Instant::now() + deadline;
    loop {
        let out = shim.run_command(&Command::ImportMemory(request(false)));
        if out.exit_code != UNDER_WAY || Instant::now() > until {
            return out;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The stand-in's episodes of the group, by what they say (their body without REST's role prefix).
fn episodes_by_text(standin: &StandIn) -> HashMap<String, Vec<String>> {
    let mut found: HashMap<String, Vec<String>> = HashMap::new();
    for episode in standin.episodes() {
        assert_eq!(episode.group_id, "main-dm-ana", "{episode:?}");
        let text = match episode.content.split_once("(user): ") {
            Some((_, text)) => text.to_string(),
            None => episode.content.clone(),
        };
        found
            .entry(text)
            .or_default()
            .push(episode.valid_at.clone());
    }
    found
}

fn assert_each_once(standin: &StandIn) {
    let found = episodes_by_text(standin);
    for (text, date) in EXPECTED {
        let times = found
            .get(text)
            .unwrap_or_else(|| panic!("{text:?} never arrived: {found:#?}"));
        assert_eq!(times.len(), 1, "{text:?} arrived {} times", times.len());
        if let Some(date) = date {
            assert!(times[0].starts_with(date), "{text:?} at {}", times[0]);
        }
    }
    assert_eq!(found.len(), EXPECTED.len(), "nothing else: {found:#?}");
}

fn imports_each_entry_once_over(transport: &str) {
    let standin = standin();
    let config = config(&standin, transport, 600);
    let state = temp_dir("import-state");
    let agents = memory_core_workspace();
    let mut shim =
        graphiti_shim_with_workspace(config.path(), state.path(), &standin.url(), agents.path());

    let dry = shim.run_command(&Command::ImportMemory(request(true)));
    assert_eq!(dry.exit_code, 0, "{}", dry.stderr);
    for line in [
        "import (dry run): 8 item(s) for group main-dm-ana",
        "3 from MEMORY.md entries (1 file(s))",
        "2 from daily notes (2 file(s))",
        "DREAMS.md: derived by memory-core's dreaming",
        "about 32 to 80 calls to its LLM provider",
    ] {
        assert!(
            dry.stdout.contains(line),
            "{line:?} not in:\n{}",
            dry.stdout
        );
    }
    assert!(standin.episodes().is_empty(), "a dry run sends nothing");

    let done = import_until_done(&mut shim, Duration::from_secs(60));
    assert_eq!(done.exit_code, 0, "{}{}", done.stdout, done.stderr);
    assert!(
        done.stdout
            .contains("import finished: 8 item(s) sent to group main-dm-ana"),
        "{}",
        done.stdout
    );
    assert_each_once(&standin);

    let again = import_until_done(&mut shim, Duration::from_secs(10));
    assert_eq!(again.exit_code, 0);
    assert!(
        again.stdout.contains("were all imported before"),
        "{}",
        again.stdout
    );
    assert_eq!(
        standin.episodes().len(),
        8,
        "run twice: nothing sent the second time"
    );

    let memory = agents.path().join("MEMORY.md");
    let text = std::fs::read_to_string(&memory).unwrap();
    std::fs::write(
        &memory,
        text.replace("lives in Porto", "lives in Lisbon now"),
    )
    .unwrap();
    let changed = import_until_done(&mut shim, Duration::from_secs(30));
    assert_eq!(changed.exit_code, 0, "{}", changed.stdout);
    let found = episodes_by_text(&standin);
    assert_eq!(
        standin.episodes().len(),
        9,
        "only the changed entry: {found:#?}"
    );
    assert!(found.contains_key("Family: Ana's sister Marta lives in Lisbon now"));
}

#[test]
fn an_import_sends_each_entry_once_with_its_time_over_mcp() {
    imports_each_entry_once_over("mcp");
}

#[test]
fn an_import_sends_each_entry_once_with_its_time_over_rest() {
    imports_each_entry_once_over("rest");
}

#[test]
fn with_graphiti_down_an_import_loses_nothing_and_leaves_room_for_live_turns() {
    let standin = standin();
    let config = config(&standin, "mcp", 600);
    let state = temp_dir("import-down-state");
    let agents = memory_core_workspace();
    let many: String = (0..40)
        .map(|i| format!("- Old fact number {i}\n"))
        .collect();
    std::fs::write(agents.path().join("memory/imports/many.md"), many).unwrap();
    let mut shim =
        graphiti_shim_with_workspace(config.path(), state.path(), &standin.url(), agents.path());
    standin.set_fault(Fault::Down);
    let waiting = |state: &Path| {
        std::fs::read_dir(state.join("spool"))
            .map(|dir| {
                dir.filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|x| x == "episode")
                })
                .count()
            })
            .unwrap_or(0)
    };
    // At 600 a minute, ten are due each second: for two seconds the feed could put twenty in.
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        let out = shim.run_command(&Command::ImportMemory(request(false)));
        assert_eq!(out.exit_code, UNDER_WAY, "{}{}", out.stdout, out.stderr);
        std::thread::sleep(Duration::from_millis(30));
    }
    assert_eq!(
        waiting(state.path()),
        8,
        "the feed stops at its window while Graphiti is down"
    );
    let live = shim.agent_end(
        &exchange("Remember that the boat is called Andorinha", "Noted."),
        &hook_context("live", ChatType::Direct),
    );
    assert!(matches!(live, CaptureOutcome::Spooled(_)), "{live:?}");
    let status = shim.run_command(&Command::Status);
    assert!(
        status.stdout.contains("import:   under way since"),
        "{}",
        status.stdout
    );

    standin.set_fault(Fault::None);
    let done = import_until_done(&mut shim, Duration::from_secs(120));
    assert_eq!(done.exit_code, 0, "{}{}", done.stdout, done.stderr);
    let contents: Vec<String> = standin.episodes().into_iter().map(|e| e.content).collect();
    assert_eq!(
        contents.len(),
        8 + 40 + 1,
        "every item and the live turn, once each"
    );
    assert!(contents.iter().any(|c| c.contains("Andorinha")));
    let status = shim.run_command(&Command::Status);
    assert!(
        status.stdout.contains("import:   finished"),
        "{}",
        status.stdout
    );
}

#[test]
fn an_import_killed_half_way_and_run_again_sends_every_entry_once() {
    let standin = standin();
    let state = temp_dir("import-kill-state");
    let agents = memory_core_workspace();
    let many: String = (0..30)
        .map(|i| format!("- Old fact number {i}\n"))
        .collect();
    std::fs::write(agents.path().join("memory/imports/many.md"), many).unwrap();
    let cli = |per_minute: u32| {
        let config = config(&standin, "mcp", per_minute);
        let mut command =
            std::process::Command::new(workspace().join("target/release/graphiti-openclaw"));
        command
            .arg("--config-dir")
            .arg(config.path())
            .arg("--state-dir")
            .arg(state.path())
            .arg("--workspace-dir")
            .arg(agents.path())
            .arg("--allow-origin")
            .arg(standin.url())
            .arg("--cache-dir")
            .arg(workspace().join("target/test-component-cache"))
            .args(["--quiet", "import", "--sender", "ana", "--daily-notes"])
            .stdout(std::process::Stdio::piped());
        (command, config)
    };
    let (mut slow, _slow_config) = cli(120);
    let mut child = slow.spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while standin.episodes().len() < 5 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let sent_before = standin.episodes().len();
    assert!(
        (5..38).contains(&sent_before),
        "killed half-way: {sent_before} sent"
    );

    let (mut fast, _fast_config) = cli(600);
    let out = fast.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mut contents: Vec<String> = standin.episodes().into_iter().map(|e| e.content).collect();
    let total = contents.len();
    contents.sort();
    contents.dedup();
    assert_eq!((total, contents.len()), (38, 38), "every item once");
}

#[test]
fn hostile_workspace_files_are_named_and_never_hang_the_import() {
    let standin = standin();
    let config = config(&standin, "mcp", 600);
    let state = temp_dir("import-hostile-state");
    let agents = temp_dir("import-hostile-workspace");
    let root = agents.path();
    std::fs::create_dir_all(root.join("memory")).unwrap();
    std::fs::write(root.join("memory/2026-01-01.md"), "- The one good note\n").unwrap();
    std::fs::write(root.join("MEMORY.md"), [b'-', b' ', 0xff, 0xfe, b'\n']).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("USER.md")).unwrap();
    let fifo = root.join("memory/2026-01-02.md");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let big = std::fs::File::create(root.join("memory/2026-01-03.md")).unwrap();
    big.set_len(100 << 20).unwrap();
    let mut shim = graphiti_shim_with_workspace(config.path(), state.path(), &standin.url(), root);
    let dry = shim.run_command(&Command::ImportMemory(request(true)));
    assert_eq!(dry.exit_code, 0, "{}", dry.stderr);
    for line in [
        "MEMORY.md: not UTF-8 text",
        "USER.md: a symbolic link: not followed",
        "memory/2026-01-02.md: not a regular file",
        "memory/2026-01-03.md: 104857600 bytes, more than the 8 MiB",
        "import (dry run): 1 item(s)",
    ] {
        assert!(
            dry.stdout.contains(line),
            "{line:?} not in:\n{}",
            dry.stdout
        );
    }
    let done = import_until_done(&mut shim, Duration::from_secs(30));
    assert_eq!(done.exit_code, 0, "{}", done.stdout);
    assert_eq!(standin.episodes().len(), 1);
}

/// Without a sender or a group the import refuses, naming both flags; a group id that is not one
/// is named.
#[test]
fn an_import_without_a_group_says_which_flags_name_one() {
    let standin = standin();
    let config = config(&standin, "mcp", 600);
    let state = temp_dir("import-refuse-state");
    let agents = memory_core_workspace();
    let mut shim =
        graphiti_shim_with_workspace(config.path(), state.path(), &standin.url(), agents.path());
    let mut nobody = request(true);
    nobody.ctx.sender_id = None;
    nobody.ctx.chat_id = None;
    let out = shim.run_command(&Command::ImportMemory(nobody));
    assert_eq!(out.exit_code, 2);
    assert!(
        out.stderr.contains("--sender ID") && out.stderr.contains("--group-id ID"),
        "{}",
        out.stderr
    );
    let mut bad_group = request(true);
    bad_group.group_id = Some("no spaces allowed".into());
    let out = shim.run_command(&Command::ImportMemory(bad_group));
    assert_eq!(out.exit_code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--group-id"), "{}", out.stderr);
}

/// The shim has no OpenClaw: asked for past conversations it says where they are imported, and
/// imports nothing.
#[test]
fn the_cli_without_openclaw_refuses_transcripts_and_names_the_command_that_imports_them() {
    let standin = standin();
    let config = config(&standin, "mcp", 600);
    let state = temp_dir("import-transcripts-shim");
    let agents = memory_core_workspace();
    let out = std::process::Command::new(workspace().join("target/release/graphiti-openclaw"))
        .arg("--config-dir")
        .arg(config.path())
        .arg("--state-dir")
        .arg(state.path())
        .arg("--workspace-dir")
        .arg(agents.path())
        .args(["--quiet", "import", "--sender", "ana", "--transcripts"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("openclaw graphiti import --sender ID --transcripts"),
        "{stderr}"
    );
    assert!(standin.episodes().is_empty());
}

/// What the chat's `forget --all` removed stays forgotten: an import run after it leaves out every
/// item older than the forget (the daily notes) and says so; what the user wrote since (the files
/// modified after it) is imported.
#[test]
fn an_import_after_a_chats_forget_all_leaves_what_came_before_forgotten() {
    let standin = standin();
    let config = config(&standin, "mcp", 600);
    let state = temp_dir("import-after-forget-state");
    let agents = memory_core_workspace();
    let mut shim =
        graphiti_shim_with_workspace(config.path(), state.path(), &standin.url(), agents.path());
    let forgot = shim.run_command(&Command::Memory(host_shim::MemoryCommand::Forget(
        host_shim::ForgetRequest {
            query: None,
            ids: vec![],
            everything: true,
            earlier_groups: false,
            ctx: request(true).ctx,
            operator: true,
            at_once: true,
        },
    )));
    assert_eq!(forgot.exit_code, 0, "{forgot:?}");
    std::thread::sleep(Duration::from_millis(20));
    // Written after the forget: the user's memory since.
    std::fs::write(
        agents.path().join("MEMORY.md"),
        "- Ana moved to Braga in November\n",
    )
    .unwrap();
    let dry = shim.run_command(&Command::ImportMemory(request(true)));
    assert_eq!(dry.exit_code, 0, "{}", dry.stderr);
    assert!(
        dry.stdout
            .contains("import (dry run): 1 item(s) for group main-dm-ana"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout
            .contains("memory/2026-03-01.md: 1 entry: older than its chat's `forget --all`"),
        "{}",
        dry.stdout
    );
    let done = import_until_done(&mut shim, Duration::from_secs(30));
    assert_eq!(done.exit_code, 0, "{}", done.stdout);
    let sent = episodes_by_text(&standin);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent.keys().any(|text| text.contains("Braga")), "{sent:?}");
}

/// A job this command started and another pass finished between two of its calls (the Gateway's
/// ticks, a `flush`) is reported as finished, not planned again as "nothing to import".
#[test]
fn a_call_of_the_same_command_after_another_pass_finished_its_job_reports_it_finished() {
    let standin = standin();
    let config = config(&standin, "mcp", 600);
    let state = temp_dir("import-same-run-state");
    let agents = memory_core_workspace();
    let mut shim =
        graphiti_shim_with_workspace(config.path(), state.path(), &standin.url(), agents.path());
    let mut call = request(false);
    call.ctx.run_id = Some("import-test-run".into());
    let first = shim.run_command(&Command::ImportMemory(call.clone()));
    assert_eq!(first.exit_code, UNDER_WAY, "{}", first.stdout);
    let until = Instant::now() + Duration::from_secs(30);
    while standin.episodes().len() < EXPECTED.len() && Instant::now() < until {
        shim.run_command(&Command::Flush);
        std::thread::sleep(Duration::from_millis(50));
    }
    shim.run_command(&Command::Flush);
    let last = shim.run_command(&Command::ImportMemory(call));
    assert_eq!(last.exit_code, 0, "{}", last.stdout);
    assert!(
        last.stdout
            .starts_with(&format!("import finished: {} item(s) sent", EXPECTED.len())),
        "{}",
        last.stdout
    );
    assert_each_once(&standin);
}
