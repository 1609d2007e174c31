use super::*;
use crate::memory::graphiti::Episode;
use crate::memory::spool::{Appended, State};
use crate::memory::stats::{self, Stats};
use std::os::unix::fs::FileTypeExt;
use std::time::{Duration, SystemTime};

fn episode(name: &str) -> Episode {
    Episode {
        name: name.into(),
        group_id: "g".into(),
        user: format!("what {name} said"),
        assistant: "a".into(),
        user_name: None,
        reference_time: "2026-01-01T00:00:00Z".into(),
        source_description: "test".into(),
        kind: Default::default(),
    }
}

fn spares_left(state_dir: &Path) -> usize {
    (0..SPARES)
        .filter(|k| {
            fs::symlink_metadata(dir(state_dir).join(k.to_string()))
                .is_ok_and(|m| m.is_file() && m.len() == 0)
        })
        .count()
}

fn spooled(state_dir: &Path) -> Vec<String> {
    let spool = crate::memory::spool::Spool::new(state_dir);
    spool
        .in_state(State::Waiting)
        .unwrap()
        .iter()
        .map(|e| spool.read(e).unwrap().user)
        .collect()
}

fn turn() -> Stats {
    Stats {
        turns: 1,
        captures_spooled: 1,
        ..Stats::default()
    }
}

#[test]
fn a_turns_files_are_spares_renamed_and_hold_exactly_what_was_written() {
    let state_dir_temp = crate::platform::files::temp_dir("spare-files-taken");
    let state_dir = state_dir_temp.path();
    let spool = crate::memory::spool::Spool::new(state_dir);
    // No spares yet (no tick has run): files are created, as before.
    assert_eq!(spool.append(&episode("e0"), 10).unwrap(), Appended::Spooled);
    let now = crate::platform::time::now_ms();
    stats::append_counts(state_dir, &mut None, || "a-0".into(), &turn(), now).unwrap();

    renew(state_dir);
    assert_eq!(spares_left(state_dir), SPARES);
    assert_eq!(spool.append(&episode("e1"), 10).unwrap(), Appended::Spooled);
    stats::append_counts(state_dir, &mut None, || "a-1".into(), &turn(), now).unwrap();
    assert_eq!(spares_left(state_dir), SPARES - 2, "both files were spares");
    for i in 2..6 {
        assert_eq!(
            spool.append(&episode(&format!("e{i}")), 10).unwrap(),
            Appended::Spooled
        );
    }
    assert_eq!(
        spooled(state_dir),
        (0..6)
            .map(|i| format!("what e{i} said"))
            .collect::<Vec<_>>(),
        "every turn spooled, whole, spares or not"
    );
    stats::fold_into_file(
        state_dir,
        &Stats::default(),
        Some(crate::platform::time::now_ms()),
    )
    .unwrap();
    assert_eq!(stats::load(state_dir).turns, 2, "both count logs added");

    renew(state_dir);
    assert_eq!(spares_left(state_dir), SPARES, "the tick makes them again");
}

#[test]
fn only_an_empty_fresh_regular_file_is_taken_and_renew_replaces_the_rest() {
    let state_dir_temp = crate::platform::files::temp_dir("spare-files-refused");
    let state_dir = state_dir_temp.path();
    let spares = dir(state_dir);
    fs::create_dir_all(&spares).unwrap();
    // What a clumsy user or a crash could leave under the spares' names.
    let target = state_dir.join("precious.json");
    fs::write(&target, "keep me").unwrap();
    fs::write(spares.join("0"), "not empty").unwrap();
    std::os::unix::fs::symlink(&target, spares.join("1")).unwrap();
    fs::create_dir(spares.join("2")).unwrap();
    let stale = fs::File::create(spares.join("3")).unwrap();
    stale
        .set_modified(SystemTime::now() - Duration::from_millis(FRESH_MS + 60_000))
        .unwrap();
    drop(stale);

    let spool = crate::memory::spool::Spool::new(state_dir);
    for i in 0..SPARES {
        assert_eq!(
            spool.append(&episode(&format!("e{i}")), 10).unwrap(),
            Appended::Spooled
        );
    }
    assert_eq!(
        spooled(state_dir),
        (0..SPARES)
            .map(|i| format!("what e{i} said"))
            .collect::<Vec<_>>()
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep me");
    assert_eq!(fs::read_to_string(spares.join("0")).unwrap(), "not empty");
    assert!(fs::symlink_metadata(spares.join("1")).unwrap().is_symlink());
    assert!(spares.join("2").is_dir());
    assert!(spares.join("3").exists(), "a stale spare is not taken");

    renew(state_dir);
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        "keep me",
        "a link is removed, not followed"
    );
    assert_eq!(
        spares_left(state_dir),
        SPARES - 1,
        "all but the directory made again"
    );
    assert!(
        spares.join("2").is_dir(),
        "a directory is not ours to remove"
    );

    // A FIFO: opening it would wait for a reader forever.
    fs::remove_file(spares.join("0")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(spares.join("0"))
        .status()
        .unwrap();
    assert!(made.success());
    for i in SPARES..SPARES * 3 {
        assert_eq!(
            spool.append(&episode(&format!("e{i}")), 100).unwrap(),
            Appended::Spooled
        );
    }
    assert_eq!(spooled(state_dir).len(), SPARES * 3);
    assert!(
        fs::symlink_metadata(spares.join("0"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
    renew(state_dir);
    assert!(fs::symlink_metadata(spares.join("0")).unwrap().is_file());
}

#[test]
fn a_spare_is_taken_once() {
    let state_dir_temp = crate::platform::files::temp_dir("spare-files-once");
    let state_dir = state_dir_temp.path();
    fs::create_dir_all(state_dir).unwrap();
    renew(state_dir);
    let attempts = SPARES * 3;
    let taken: Vec<PathBuf> = (0..attempts)
        .filter_map(|i| {
            let path = state_dir.join(format!("t{i}"));
            take(state_dir, &path).map(|_| path)
        })
        .collect();
    assert_eq!(taken.len(), SPARES, "each spare once, then none");
    assert!(taken.iter().all(|p| p.is_file()));
    let moved = fs::read_dir(state_dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('t')
        })
        .count();
    assert_eq!(moved, SPARES, "nothing moved when no spare was ready");
}
