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
    }
}

fn feeder(root: &Path, per_minute: u32) -> Feeder {
    Feeder {
        workspace: root.to_path_buf(),
        per_minute,
        redact: vec![Redact::ApiKeys],
        max_episodes: 1000,
        held: None,
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
    let feed = feeder(root.path(), 60); // one a second
    let planned = plan(root.path(), &options(false));
    let job = start(state.path(), &planned, &options(false), 10_000, 60).unwrap();
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
    start(state.path(), &again, &options(false), 20_000, 60).unwrap();
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
    start(state.path(), &changed, &options(false), 30_000, 60).unwrap();
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
    let feed = feeder(root.path(), 600);
    let planned = plan(root.path(), &options(false));
    start(state.path(), &planned, &options(false), 0, 600).unwrap();
    // As a kill between the append and the ledger line leaves it.
    spool
        .append(&feed.episode(&planned.items[0], &options(false)), 100)
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
    let feed = feeder(root.path(), 600);
    let planned = plan(root.path(), &options(false));
    start(state.path(), &planned, &options(false), 0, 600).unwrap();
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
        ..feeder(root.path(), 600)
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
    let feed = feeder(root.path(), 600);
    let error = feed.feed(&spool, &[], 0).unwrap_err();
    assert!(
        error.contains("import job") && error.contains("cannot be read"),
        "{error}"
    );
    let planned = plan(root.path(), &options(false));
    start(state.path(), &planned, &options(false), 0, 600).unwrap();
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
