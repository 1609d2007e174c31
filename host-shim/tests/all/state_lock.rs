//! The lock-file protocol (`host_shim::state_lock`), driven directly: what `host.acquire-lock` and
//! `host.release-lock` do for a guest instance. Two `StateLocks` stand for two instances.


use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use host_shim::{LockError, StateLocks};
use serde_json::Value;
use crate::support::{TempDir, temp_dir};

/// Who the shim says holds a lock it took: its name and version.
const SHIM: &str = concat!("graphiti-openclaw shim ", env!("CARGO_PKG_VERSION"));

const LONG: Duration = Duration::from_secs(60);
const NO_WAIT: Duration = Duration::ZERO;

/// Locks on `state`, with their info lines kept in the returned list.
fn locks(state: &TempDir) -> (StateLocks, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&lines);
    let locks = StateLocks::new(Some(state.path().to_path_buf()), move |line| {
        kept.lock().unwrap().push(line)
    });
    (locks, lines)
}

fn lock_file(state: &TempDir, name: &str) -> PathBuf {
    state.path().join("locks").join(format!("{name}.lock"))
}

fn read_record(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Rewrites fields of the lock record at `path`, as another process would have written it.
fn rewrite(path: &Path, change: impl FnOnce(&mut Value)) {
    let mut record = read_record(path);
    change(&mut record);
    fs::write(path, serde_json::to_vec(&record).unwrap()).unwrap();
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The pid of a process that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("sleep")
        .arg("0")
        .spawn()
        .unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn busy_text(result: Result<(), LockError>) -> String {
    match result {
        Err(LockError::Busy(text)) => text,
        other => panic!("expected busy, got {other:?}"),
    }
}

fn assert_failed(result: Result<(), LockError>, expected: &str) {
    match result {
        Err(LockError::Failed(text)) => assert!(text.contains(expected), "{text}"),
        other => panic!("expected failed({expected}), got {other:?}"),
    }
}

#[test]
fn the_lock_file_says_who_holds_it_and_only_its_owner_can_read_it() {
    let state = temp_dir("file");
    let (mut a, _) = locks(&state);
    a.acquire("send", LONG, NO_WAIT).unwrap();

    let path = lock_file(&state, "send");
    let record = read_record(&path);
    assert_eq!(record["pid"], std::process::id());
    assert_eq!(record["lease_ms"], 60_000);
    assert_eq!(record["holder"], SHIM);
    let token = record["token"].as_str().unwrap();
    assert!(
        token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{token}"
    );
    assert!(record["host"].as_str().is_some_and(|h| !h.is_empty()));
    assert!(now_ms().abs_diff(record["acquired_ms"].as_u64().unwrap()) < 5_000);
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);

    // A fresh token for every acquisition.
    a.release("send");
    assert!(!path.exists());
    a.acquire("send", LONG, NO_WAIT).unwrap();
    assert_ne!(read_record(&path)["token"].as_str().unwrap(), token);
}

#[test]
fn two_instances_of_one_process_exclude_each_other() {
    let state = temp_dir("two");
    let ((mut a, _), (mut b, _)) = (locks(&state), locks(&state));
    a.acquire("send", LONG, NO_WAIT).unwrap();

    let started = Instant::now();
    let text = busy_text(b.acquire("send", LONG, Duration::from_millis(200)));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(200) && waited < Duration::from_millis(1500),
        "{waited:?}"
    );
    let record = read_record(&lock_file(&state, "send"));
    let prefix = format!(
        "held by pid {} ({SHIM}) on {} since ",
        std::process::id(),
        record["host"].as_str().unwrap()
    );
    assert!(text.starts_with(&prefix), "{text}");
    assert!(text.contains(", lease until "), "{text}");
    // Other names are other locks.
    b.acquire("counters", LONG, NO_WAIT).unwrap();

    a.release("send");
    b.acquire("send", LONG, NO_WAIT).unwrap();
    busy_text(a.acquire("send", LONG, NO_WAIT));
}

#[test]
fn a_waiter_gets_the_lock_as_soon_as_it_is_released() {
    let state = temp_dir("wait");
    let (mut a, _) = locks(&state);
    a.acquire("send", LONG, NO_WAIT).unwrap();
    let waiter = {
        let (mut b, _) = locks(&state);
        std::thread::spawn(move || {
            let started = Instant::now();
            let result = b.acquire("send", LONG, Duration::from_secs(5));
            (result, started.elapsed(), b)
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    a.release("send");
    let (result, waited, _b) = waiter.join().unwrap();
    assert!(result.is_ok(), "{result:?}");
    assert!(
        waited >= Duration::from_millis(150) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
}

#[test]
fn a_lock_left_by_a_dead_process_is_broken_at_once_and_its_holder_has_lost_it() {
    let state = temp_dir("dead");
    let ((mut a, _), (mut b, b_log)) = (locks(&state), locks(&state));
    a.acquire("send", LONG, NO_WAIT).unwrap();
    let pid = dead_pid();
    rewrite(&lock_file(&state, "send"), |r| r["pid"] = pid.into());

    let started = Instant::now();
    b.acquire("send", LONG, NO_WAIT).unwrap();
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(
        *b_log.lock().unwrap(),
        vec![format!("broke the send lock left by pid {pid} (dead)")]
    );
    // Only b's lock remains: nothing set aside is left behind.
    let entries: Vec<_> = fs::read_dir(state.path().join("locks")).unwrap().collect();
    assert_eq!(entries.len(), 1);

    // a checks again: its lock was broken. It never gets it back by asking again.
    match a.acquire("send", LONG, NO_WAIT) {
        Err(LockError::Lost(text)) => assert!(
            text.starts_with("the send lock was broken by another process; it is held by pid "),
            "{text}"
        ),
        other => panic!("expected lost, got {other:?}"),
    }
    busy_text(a.acquire("send", LONG, NO_WAIT));
    // a's release leaves b's lock alone.
    a.release("send");
    b.acquire("send", LONG, NO_WAIT).unwrap();
    assert!(lock_file(&state, "send").exists());
}

#[test]
fn a_lease_that_ran_out_is_broken_even_when_its_holder_lives() {
    let state = temp_dir("lease");
    let ((mut a, _), (mut b, b_log)) = (locks(&state), locks(&state));
    a.acquire("send", LONG, NO_WAIT).unwrap();
    rewrite(&lock_file(&state, "send"), |r| {
        r["acquired_ms"] = (now_ms() - 10_000).into();
        r["lease_ms"] = 1_000.into();
    });

    b.acquire("send", LONG, NO_WAIT).unwrap();
    let pid = std::process::id();
    assert_eq!(
        *b_log.lock().unwrap(),
        vec![format!(
            "broke the send lock left by pid {pid} (lease expired)"
        )]
    );
}

#[test]
fn a_lock_dated_in_the_future_is_broken_not_obeyed_until_then() {
    let state = temp_dir("future");
    let ((mut a, _), (mut b, b_log)) = (locks(&state), locks(&state));
    a.acquire("send", LONG, NO_WAIT).unwrap();
    // A clock stepped back, or a tampered file: a lease would otherwise last a day more than it says.
    rewrite(&lock_file(&state, "send"), |r| {
        r["acquired_ms"] = (now_ms() + 86_400_000).into();
        r["host"] = "elsewhere".into();
    });
    b.acquire("send", LONG, NO_WAIT).unwrap();
    let pid = std::process::id();
    assert_eq!(
        *b_log.lock().unwrap(),
        vec![format!(
            "broke the send lock left by pid {pid} (dated in the future)"
        )]
    );
}

#[test]
fn a_holder_whose_lease_ran_out_has_lost_the_lock() {
    let state = temp_dir("own-lease");
    let (mut a, _) = locks(&state);
    a.acquire("send", Duration::from_millis(100), NO_WAIT)
        .unwrap();
    a.acquire("send", LONG, NO_WAIT).unwrap(); // Only a check: the lease stays 100 ms.
    std::thread::sleep(Duration::from_millis(150));
    match a.acquire("send", LONG, NO_WAIT) {
        Err(LockError::Lost(text)) => assert!(
            text.starts_with("the send lock's lease of 100 ms ran out at "),
            "{text}"
        ),
        other => panic!("expected lost, got {other:?}"),
    }
}

#[test]
fn another_hosts_lock_is_judged_by_its_lease_only() {
    let state = temp_dir("host");
    let ((mut a, _), (mut b, _)) = (locks(&state), locks(&state));
    a.acquire("send", LONG, NO_WAIT).unwrap();
    let pid = dead_pid();
    let path = lock_file(&state, "send");
    // Its pid means nothing here: the lock stands until its lease runs out.
    rewrite(&path, |r| {
        r["pid"] = pid.into();
        r["host"] = "elsewhere".into();
    });
    let text = busy_text(b.acquire("send", LONG, NO_WAIT));
    assert!(
        text.starts_with(&format!(
            "held by pid {pid} ({SHIM}) on elsewhere since "
        )),
        "{text}"
    );

    rewrite(&path, |r| r["acquired_ms"] = (now_ms() - 120_000).into());
    b.acquire("send", LONG, NO_WAIT).unwrap();
}

#[test]
fn an_unreadable_lock_file_stands_for_5_seconds() {
    let state = temp_dir("unreadable");
    let (mut a, a_log) = locks(&state);
    fs::create_dir_all(state.path().join("locks")).unwrap();
    let path = lock_file(&state, "send");
    // A writer killed between create and write leaves an empty file.
    fs::write(&path, b"").unwrap();
    let text = busy_text(a.acquire("send", LONG, Duration::from_millis(50)));
    assert!(
        text.starts_with("held by a lock file that is being written or is damaged"),
        "{text}"
    );

    let old = SystemTime::now() - Duration::from_secs(6);
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    a.acquire("send", LONG, NO_WAIT).unwrap();
    assert_eq!(read_record(&path)["pid"], std::process::id());
    assert_eq!(
        *a_log.lock().unwrap(),
        vec!["broke the send lock left by an unfinished writer (unreadable for 5 s)".to_string()]
    );
}

#[test]
fn a_symlink_or_a_fifo_in_the_lock_files_place_is_never_followed_or_opened() {
    let state = temp_dir("symlink");
    let outside = temp_dir("symlink-outside");
    let target = outside.path().join("target");
    fs::write(&target, "keep").unwrap();
    fs::create_dir_all(state.path().join("locks")).unwrap();
    let path = lock_file(&state, "send");
    std::os::unix::fs::symlink(&target, &path).unwrap();

    let (mut a, _) = locks(&state);
    let text = busy_text(a.acquire("send", LONG, NO_WAIT));
    assert!(text.contains("not a regular file"), "{text}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep");

    // Opening a FIFO would block until a writer came: it is judged without being opened.
    let fifo = lock_file(&state, "counters");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let text = busy_text(a.acquire("counters", LONG, NO_WAIT));
    assert!(text.contains("not a regular file"), "{text}");
}

#[test]
fn release_removes_only_this_instances_lock() {
    let state = temp_dir("release");
    let ((mut a, _), (mut b, _)) = (locks(&state), locks(&state));
    let path = lock_file(&state, "send");
    a.acquire("send", LONG, NO_WAIT).unwrap();

    b.release("send"); // b does not hold it.
    assert!(path.exists());

    // Someone else's lock now stands where a's was: a's release leaves it.
    rewrite(&path, |r| {
        r["token"] = "0123456789abcdef0123456789abcdef".into()
    });
    a.release("send");
    assert!(path.exists());
    busy_text(b.acquire("send", LONG, NO_WAIT));
}

#[test]
fn dropping_an_instance_releases_its_locks() {
    let state = temp_dir("drop");
    let (mut a, _) = locks(&state);
    a.acquire("send", LONG, NO_WAIT).unwrap();
    a.acquire("counters", LONG, NO_WAIT).unwrap();
    drop(a);
    let left: Vec<_> = fs::read_dir(state.path().join("locks")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn bad_names_and_leases_fail_and_create_nothing() {
    let state = temp_dir("names");
    let (mut a, _) = locks(&state);
    let too_long = "a".repeat(33);
    for name in [
        "",
        "Send",
        "send.lock",
        "a/b",
        "../x",
        "spool lock",
        "ü",
        too_long.as_str(),
    ] {
        assert_failed(a.acquire(name, LONG, NO_WAIT), "invalid lock name");
    }
    assert!(!state.path().join("locks").exists());
    assert_failed(
        a.acquire("send", Duration::ZERO, NO_WAIT),
        "the send lock needs a lease of at least 1 ms",
    );
    a.acquire(&"a".repeat(32), LONG, NO_WAIT).unwrap();
    a.acquire("spool-2", LONG, NO_WAIT).unwrap();
}

#[test]
fn without_a_state_directory_every_lock_fails() {
    let mut none = StateLocks::new(None, |_| {});
    let result = none.acquire("send", LONG, NO_WAIT);
    assert!(
        matches!(&result, Err(LockError::Failed(text)) if text == "no state directory"),
        "{result:?}"
    );
    none.release("send");
}
