use super::*;
use crate::memory::spool::State;
use std::fs;

fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = crate::platform::files::temp_dir("import-unit");
    for (relative, text) in files {
        let path = dir.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

fn options(daily_notes: bool) -> Options {
    Options {
        group_id: "main-dm-ana".into(),
        user_name: Some("ana".into()),
        daily_notes,
        transcripts: false,
    }
}

fn feeder(per_minute: u32) -> Feeder {
    Feeder {
        per_minute,
        redact: vec![Redact::ApiKeys],
        max_episodes: 1000,
        held: None,
        is_paused: Box::new(|dir, group| {
            crate::memory::control::capture_paused(Some(dir), group).is_some()
        }),
    }
}

const MEMORY: &str = "# Facts\n- The user's sister is Marta <!-- trigger: family --> <!-- importance: 7 -->\n- Deploy key is ghp_abcdefghijklmnopqrstuvwxyz0123456789\n";

#[test]
fn the_plan_takes_memory_user_and_imports_and_names_what_it_skips() {
    let root = workspace(&[
        ("MEMORY.md", MEMORY),
        (
            "USER.md",
            "<!-- observed: 2026-05-10 | status: superseded -->\n- Prefer long answers.\n\n<!-- observed: 2026-07-27 | status: active -->\n- Prefer short answers.\n",
        ),
        ("DREAMS.md", "- dreamt\n"),
        (
            "memory/2026-03-01.md",
            "- Met Bruno at the harbour\n- Bought a boat\n",
        ),
        ("memory/imports/codex/MEMORY.md", "- Uses Rust 1.95\n"),
        ("memory/notes.txt", "x"),
    ]);
    let plan = plan(root.path(), &options(false));
    let texts: Vec<&str> = plan.items.iter().map(|i| i.text.as_str()).collect();
    assert!(
        texts.contains(&"Facts: The user's sister is Marta"),
        "{texts:?}"
    );
    assert!(texts.contains(
        &"No longer true (observed 2026-05-10, superseded on 2026-07-27): Prefer long answers."
    ));
    assert!(texts.contains(&"User preference (observed 2026-07-27): Prefer short answers."));
    assert!(texts.contains(&"Uses Rust 1.95"));
    assert!(
        !texts
            .iter()
            .any(|t| t.contains("boat") || t.contains("dreamt"))
    );
    assert_eq!(plan.daily_notes_left_out, (1, 2));
    let skipped: Vec<&str> = plan.skipped.iter().map(|s| s.relative.as_str()).collect();
    assert_eq!(skipped, ["DREAMS.md", "memory/notes.txt"]);
    // Oldest first: the superseded directive (2026-05-10) before the active one.
    let at = |needle: &str| texts.iter().position(|t| t.contains(needle)).unwrap();
    assert!(at("long answers") < at("short answers"));

    let with_notes = super::plan(root.path(), &options(true));
    let boat = with_notes
        .items
        .iter()
        .find(|i| i.text == "Bought a boat")
        .unwrap();
    assert_eq!(time::iso8601(boat.reference_ms), "2026-03-01T12:00:00.000Z");
}

#[test]
fn hostile_files_are_named_and_skipped() {
    let root = workspace(&[("memory/2026-01-01.md", "- fine\n")]);
    fs::write(root.path().join("MEMORY.md"), [0x66, 0xff, 0xfe, 0x0a]).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.path().join("USER.md")).unwrap();
    let fifo = root.path().join("memory/2026-01-02.md");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let big = fs::File::create(root.path().join("memory/2026-01-03.md")).unwrap();
    big.set_len(workspace::MAX_FILE_BYTES + 1).unwrap();
    let plan = plan(root.path(), &options(true));
    let why = |file: &str| {
        plan.skipped
            .iter()
            .find(|s| s.relative == file)
            .map(|s| s.why.clone())
            .unwrap_or_else(|| panic!("{file} not skipped: {:?}", plan.skipped))
    };
    assert!(why("MEMORY.md").contains("not UTF-8"));
    assert!(why("USER.md").contains("symbolic link"));
    assert!(why("memory/2026-01-02.md").contains("not a regular file"));
    assert!(why("memory/2026-01-03.md").contains("MiB"));
    assert_eq!(plan.items.len(), 1, "the one good note still comes");
}

#[test]
fn each_item_goes_once_paced_and_a_changed_entry_alone_goes_again() {
    let root = workspace(&[("MEMORY.md", "- one\n- two\n- three\n")]);
    let state = crate::platform::files::temp_dir("import-state");
    let spool = Spool::new(state.path());
    let feed = feeder(60); // one a second
    let planned = plan(root.path(), &options(false));
    let job = start(state.path(), &planned, &options(false), 10_000, 60, None).unwrap();
    assert_eq!(job.items, 3);
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 10_000)
        .unwrap()
        .unwrap();
    assert_eq!((fed.fed, fed.remaining), (1, 2), "one is due at once");
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 10_500)
        .unwrap()
        .unwrap();
    assert_eq!(fed.fed, 0, "the next is due a second later");
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 13_000)
        .unwrap()
        .unwrap();
    assert_eq!((fed.fed, fed.remaining, fed.in_spool), (2, 0, 3));
    assert!(!fed.finished, "still in the spool");
    // Graphiti takes them: the spool empties and the job finishes.
    for entry in spool.in_state(State::Waiting).unwrap() {
        let name = spool.read(&entry).unwrap().name;
        spool.delivered(&entry, &name).unwrap();
    }
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 14_000)
        .unwrap()
        .unwrap();
    assert!(fed.finished);
    assert_eq!(
        feed.feed(&spool, &[], 15_000).unwrap(),
        None,
        "a finished job feeds nothing"
    );

    // Run again: nothing to send. Change one entry: only it.
    let again = plan(root.path(), &options(false));
    start(state.path(), &again, &options(false), 20_000, 60, None).unwrap();
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 20_000)
        .unwrap()
        .unwrap();
    assert_eq!((fed.fed, fed.remaining, fed.finished), (0, 0, true));
    fs::write(
        root.path().join("MEMORY.md"),
        "- one\n- two, changed\n- three\n",
    )
    .unwrap();
    let changed = plan(root.path(), &options(false));
    start(state.path(), &changed, &options(false), 30_000, 60, None).unwrap();
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 30_000)
        .unwrap()
        .unwrap();
    assert_eq!((fed.fed, fed.remaining), (1, 0));
    let sent = spool
        .read(&spool.in_state(State::Waiting).unwrap()[0])
        .unwrap();
    assert_eq!(sent.user, "two, changed");
}

#[test]
fn an_item_spooled_but_not_in_the_ledger_is_recognised_not_spooled_twice() {
    let root = workspace(&[("MEMORY.md", "- one\n- two\n")]);
    let state = crate::platform::files::temp_dir("import-recover");
    let spool = Spool::new(state.path());
    let feed = feeder(600);
    let planned = plan(root.path(), &options(false));
    start(state.path(), &planned, &options(false), 0, 600, None).unwrap();
    // As a kill between the append and the ledger line leaves it.
    spool
        .append(&feed.episode(&queue::Queued::of(&planned.items[0])), 100)
        .unwrap();
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 60_000)
        .unwrap()
        .unwrap();
    assert_eq!((fed.recovered, fed.fed, fed.in_spool), (1, 1, 2));
    assert_eq!(spool.entries().unwrap().len(), 2, "no copy of the first");
    assert_eq!(ledger(state.path()).len(), 2);
}

#[test]
fn the_feed_leaves_the_spool_to_live_turns_and_redacts() {
    let root = workspace(&[]);
    let many: String = (0..30).map(|i| format!("- fact {i}\n")).collect();
    fs::write(root.path().join("MEMORY.md"), format!("{many}{MEMORY}")).unwrap();
    let state = crate::platform::files::temp_dir("import-window");
    let spool = Spool::new(state.path());
    let feed = feeder(600);
    let planned = plan(root.path(), &options(false));
    start(state.path(), &planned, &options(false), 0, 600, None).unwrap();
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 3_600_000)
        .unwrap()
        .unwrap();
    assert_eq!(fed.fed, WINDOW, "never more than the window waits");
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 7_200_000)
        .unwrap()
        .unwrap();
    assert_eq!(fed.fed, 0, "the window is full until Graphiti takes some");
    let held = Feeder {
        held: Some("paused".into()),
        ..feeder(600)
    };
    let mut bodies = Vec::new();
    for entry in spool.in_state(State::Waiting).unwrap() {
        bodies.push(spool.read(&entry).unwrap().user);
        spool.delivered(&entry, "x").unwrap();
    }
    let fed = held
        .feed(&spool, &spool.entries().unwrap(), 9_000_000)
        .unwrap()
        .unwrap();
    assert_eq!(fed.fed, 0, "a paused group takes nothing");
    // All of it, in the end; the secret redacted.
    for step in 0..10 {
        feed.feed(
            &spool,
            &spool.entries().unwrap(),
            10_000_000 + step * 60_000,
        )
        .unwrap();
        for entry in spool.in_state(State::Waiting).unwrap() {
            bodies.push(spool.read(&entry).unwrap().user);
            spool.delivered(&entry, "x").unwrap();
        }
    }
    assert_eq!(bodies.len(), 32);
    let key = bodies.iter().find(|b| b.contains("Deploy key")).unwrap();
    assert!(
        !key.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        "{key}"
    );
}

#[test]
fn an_unreadable_job_is_said_by_the_feed_and_replaced_by_the_next_import() {
    let root = workspace(&[("MEMORY.md", "- one\n")]);
    let state = crate::platform::files::temp_dir("import-corrupt-job");
    let spool = Spool::new(state.path());
    fs::create_dir_all(state.path().join("import")).unwrap();
    fs::write(state.path().join(JOB_FILE), b"{not json").unwrap();
    let feed = feeder(600);
    let error = feed.feed(&spool, &[], 0).unwrap_err();
    assert!(
        error.contains("import job") && error.contains("cannot be read"),
        "{error}"
    );
    let planned = plan(root.path(), &options(false));
    start(state.path(), &planned, &options(false), 0, 600, None).unwrap();
    let fed = feed.feed(&spool, &[], 60_000).unwrap().unwrap();
    assert_eq!(fed.fed, 1);
}

#[test]
fn a_seeded_user_md_template_gives_no_item_and_says_why() {
    let template = "---\ntitle: USER template\n---\n# USER.md\n\nStore preferences as directives.\n\n\
        - Begin each directive with an imperative.\n\n## Directives\n\n\
        <!-- observed: YYYY-MM-DD | status: active -->\n\n- Prefer ...\n";
    let root = workspace(&[("USER.md", template)]);
    let plan = plan(root.path(), &options(false));
    assert!(plan.items.is_empty(), "{:?}", plan.items);
    assert_eq!(plan.skipped_entries.len(), 3);
    assert!(
        plan.skipped_entries
            .iter()
            .all(|(file, why)| file == "USER.md" && why.contains("not a dated directive"))
    );
    let shown = render_plan(&plan, &HashSet::new(), 4, false);
    assert!(
        shown.contains("USER.md: 3 entries: not a dated directive"),
        "{shown}"
    );
}

/// Stages sessions as the OpenClaw adapter does: an index and a file of message rows each.
fn stage(state: &Path, since_ms: Option<u64>, sessions: &[(&str, &str, Vec<serde_json::Value>)]) {
    let dir = state.join(transcripts::STAGED_DIR);
    fs::create_dir_all(&dir).unwrap();
    let mut index = Vec::new();
    for (n, (key, chat_type, rows)) in sessions.iter().enumerate() {
        let file = format!("{n:04}.jsonl");
        let body: String = rows.iter().map(|r| format!("{r}\n")).collect();
        fs::write(dir.join(&file), body).unwrap();
        index.push(serde_json::json!({ "file": file, "session_key": key, "session_id": format!("s{n}"), "chat_type": chat_type }));
    }
    let index = serde_json::json!({ "since_ms": since_ms, "sessions": index, "skipped": [{ "session": "agent:main:telegram:direct:gone", "why": "deleted" }] });
    fs::write(dir.join("index.json"), index.to_string()).unwrap();
}

fn user(id: &str, at: u64, text: &str) -> serde_json::Value {
    serde_json::json!({ "id": id, "message": { "role": "user", "content": text, "timestamp": at } })
}

fn reply(text: &str) -> serde_json::Value {
    serde_json::json!({ "id": "r", "message": { "role": "assistant", "content": [
        { "type": "thinking", "thinking": "hidden reasoning" },
        { "type": "toolCall", "name": "exec", "arguments": {} },
        { "type": "text", "text": text }
    ] } })
}

/// As the engine decides a live turn's group: `agent-dm-{sender}`, `agent-group-{chat}`, or none.
fn decide(ctx: &crate::platform::api::HookContext) -> Result<String, String> {
    let templates = crate::config::group_ids::GroupIdSettings::default();
    crate::memory::group_id::group_id_of_known(&templates, ctx)
}

/// Sessions of every kind: DMs keyed by sender, OpenClaw's main DM session, a group, a cron run.
fn stage_every_kind() -> tempfile::TempDir {
    let state = crate::platform::files::temp_dir("import-transcripts");
    let tool_result = serde_json::json!({ "id": "t", "message": { "role": "toolResult", "content": "SECRET TOOL OUTPUT" } });
    let relayed = serde_json::json!({ "id": "u9", "message": { "role": "user", "content": "from another session", "timestamp": 5_000, "__openclaw": { "inputProvenance": { "kind": "inter_session" } } } });
    stage(
        state.path(),
        Some(1_000),
        &[
            (
                "agent:main:telegram:direct:user-7",
                "direct",
                vec![
                    user("u1", 2_000, "I moved to Lisbon last spring"),
                    tool_result.clone(),
                    reply("Noted: Lisbon."),
                    user("u0", 500, "too old to import"),
                    reply("ok"),
                    relayed,
                    reply("relayed"),
                    user("u2", 3_000, "/graphiti status"),
                    reply("status"),
                ],
            ),
            (
                "agent:main:main",
                "direct",
                vec![user("m1", 2_500, "My cat is Tom"), reply("Noted.")],
            ),
            (
                "agent:main:telegram:group:555",
                "group",
                vec![
                    user("g1", 2_200, "The team meets on Fridays"),
                    reply("Got it."),
                ],
            ),
            (
                "agent:main:cron:nightly",
                "direct",
                vec![user("c1", 2_300, "Run the nightly report"), reply("Done.")],
            ),
            (
                "agent:main:telegram:direct:user-8",
                "direct",
                vec![
                    serde_json::json!({ "oversized": true }),
                    user("o1", 2_400, "fine"),
                    reply("ok"),
                ],
            ),
        ],
    );
    state
}

#[test]
fn past_turns_go_to_their_chats_group_without_tool_results_or_guessed_senders() {
    let state = stage_every_kind();
    assert!(transcripts::staged(state.path()));
    let opts = Options {
        transcripts: true,
        ..options(false)
    };
    let planned = plan_with_transcripts(None, Some(state.path()), &opts, &decide);
    let turns: Vec<(&str, &str, &str)> = planned
        .items
        .iter()
        .map(|i| (i.group_id.as_str(), i.text.as_str(), i.assistant.as_str()))
        .collect();
    assert_eq!(turns.len(), 3, "{turns:?}\n{:?}", planned.skipped_entries);
    assert!(
        turns.iter().any(|t| t.1 == "I moved to Lisbon last spring"
            && t.2 == "Noted: Lisbon."
            && t.0.contains("user-7")),
        "{turns:?}"
    );
    assert!(
        turns
            .iter()
            .any(|t| t.1 == "The team meets on Fridays" && t.0.contains("555")),
        "{turns:?}"
    );
    assert!(
        turns
            .iter()
            .any(|t| t.1 == "fine" && t.0.contains("user-8")),
        "{turns:?}"
    );
    assert!(
        planned
            .items
            .iter()
            .all(|i| !i.assistant.contains("hidden reasoning") && !i.text.contains("SECRET"))
    );
    let why: Vec<String> = planned
        .skipped_entries
        .iter()
        .map(|(source, why)| format!("{source}: {why}"))
        .collect();
    let said = |needle: &str| why.iter().any(|w| w.contains(needle));
    assert!(
        said("agent:main:main: OpenClaw recorded no sender id"),
        "{why:?}"
    );
    assert!(said("agent:main:cron:nightly: a cron run"), "{why:?}");
    assert!(said("older than the transcripts asked for"), "{why:?}");
    assert!(said("inter_session"), "{why:?}");
    assert!(said("a command"), "{why:?}");
    assert!(said("placeholder for its size"), "{why:?}");
    assert!(said("gone: deleted"), "{why:?}");
    // Oldest first, with their own times.
    let times: Vec<u64> = planned.items.iter().map(|i| i.reference_ms).collect();
    assert_eq!(times, vec![2_000, 2_200, 2_400]);
}

#[test]
fn past_turns_are_fed_once_as_turns_redacted_and_a_paused_chat_is_left_out() {
    let state = crate::platform::files::temp_dir("import-transcripts-feed");
    stage(
        state.path(),
        None,
        &[
            (
                "agent:main:telegram:direct:user-7",
                "direct",
                vec![
                    user(
                        "u1",
                        2_000,
                        "my key is ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                    ),
                    reply("stored"),
                    user("u2", 3_000, "I like green tea"),
                    reply("ok"),
                ],
            ),
            (
                "agent:main:telegram:group:555",
                "group",
                vec![
                    user("g1", 2_500, "The team meets on Fridays"),
                    reply("Got it."),
                ],
            ),
        ],
    );
    let opts = Options {
        transcripts: true,
        ..options(false)
    };
    let planned = plan_with_transcripts(None, Some(state.path()), &opts, &decide);
    let paused_group = planned
        .items
        .iter()
        .find(|i| i.text.contains("Fridays"))
        .unwrap()
        .group_id
        .clone();
    crate::memory::control::paused::set(
        state.path(),
        &paused_group,
        true,
        1,
        &mut crate::platform::locks::Unshared,
    )
    .unwrap();
    start(state.path(), &planned, &opts, 0, 600, None).unwrap();
    transcripts::clear(state.path());
    let spool = Spool::new(state.path());
    let feed = feeder(600);
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 60_000)
        .unwrap()
        .unwrap();
    assert_eq!((fed.fed, fed.remaining), (2, 0));
    let sent: Vec<_> = spool
        .entries()
        .unwrap()
        .iter()
        .map(|e| spool.read(e).unwrap())
        .collect();
    assert!(
        sent.iter()
            .all(|e| e.kind == EpisodeKind::Turn && !e.user.contains("ghp_abcdef")),
        "{sent:?}"
    );
    assert!(
        sent.iter().all(|e| !e.user.contains("Fridays")),
        "a paused chat takes nothing"
    );
    let job = Job::load(state.path()).unwrap().unwrap();
    assert_eq!(job.paused, 1);
}

#[test]
fn a_job_whose_queue_was_rewritten_after_it_starts_the_queue_over_and_sends_nothing_twice() {
    let state = crate::platform::files::temp_dir("import-transcripts-queue");
    stage(
        state.path(),
        None,
        &[(
            "agent:main:telegram:direct:user-7",
            "direct",
            vec![user("u1", 2_000, "I like green tea"), reply("ok")],
        )],
    );
    let opts = Options {
        transcripts: true,
        ..options(false)
    };
    let planned = plan_with_transcripts(None, Some(state.path()), &opts, &decide);
    start(state.path(), &planned, &opts, 0, 600, None).unwrap();
    let spool = Spool::new(state.path());
    let feed = feeder(600);
    feed.feed(&spool, &spool.entries().unwrap(), 60_000)
        .unwrap();
    let job = Job::load(state.path()).unwrap().unwrap();
    // Killed after the queue was rewritten, before the job: the old cursor is not trusted.
    let mut stale = job.clone();
    stale.cursor = 10_000;
    stale.queue = "another queue".into();
    stale.save(state.path()).unwrap();
    let fed = feed
        .feed(&spool, &spool.entries().unwrap(), 120_000)
        .unwrap()
        .unwrap();
    assert_eq!(fed.fed, 0, "nothing twice");
    assert_eq!(spool.entries().unwrap().len(), 1);
}

#[test]
fn a_pass_reads_the_ledger_s_tail_whole_names_only() {
    let state = crate::platform::files::temp_dir("import-ledger-tail");
    fs::create_dir_all(state.path().join("import")).unwrap();
    let names: Vec<String> = (0..3000)
        .map(|i| format!("openclaw-import-g-{i:016x}{}", "0".repeat(20)))
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    record(state.path(), &refs).unwrap();
    let tail = ledger_tail(state.path());
    assert!(
        tail.contains(names.last().unwrap()),
        "the last recorded is in the tail"
    );
    assert!(!tail.contains(&names[0]), "the tail is bounded");
    assert!(
        tail.iter().all(|name| names.contains(name)),
        "no partial name"
    );
    assert_eq!(ledger(state.path()).len(), 3000);
}
