//! Delivery of the capture spool, natively, against a scripted Graphiti (the REST API's shapes): a send
//! whose answer is lost is never sent again at once, transient errors set nothing aside, a rejection
//! sets aside that entry only, a sender killed mid-send leaves the entry in doubt, and a bad journal
//! line costs only itself.

use graphiti_openclaw::Engine;
use graphiti_openclaw::config::ConfigRoots;
use graphiti_openclaw::memory::graphiti::http::{Http, HttpError, Request, Response};
use graphiti_openclaw::platform::api::{AgentEndEvent, Command, HookContext, SpoolCommand};
use graphiti_openclaw::platform::locks::{LockError, Locks, ThisProcess};
use graphiti_openclaw::routing::decision::CaptureOutcome;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the scripted server does with the next `POST /messages`.
#[derive(Clone, Copy, Debug)]
enum Answer {
    Accept,
    /// Stores the turn, but the answer never arrives (the client times out).
    AcceptLate,
    /// Never answers and stores nothing.
    Hang,
    /// No connection could be made.
    Down,
    ServerError,
    Reject,
}

#[derive(Default)]
struct Server {
    /// Names of stored episodes, one per accepted send (a re-send is stored again).
    stored: Vec<String>,
    script: VecDeque<Answer>,
    /// Whether `/episodes` lists what is stored (false: like FalkorDB for other groups).
    lists_episodes: bool,
    sends: usize,
}

#[derive(Clone, Default)]
struct Graphiti(Arc<Mutex<Server>>);

impl Graphiti {
    fn script(&self, answers: &[Answer]) {
        self.0.lock().unwrap().script.extend(answers);
    }
    fn stored(&self) -> Vec<String> {
        self.0.lock().unwrap().stored.clone()
    }
    fn sends(&self) -> usize {
        self.0.lock().unwrap().sends
    }
}

impl Http for Graphiti {
    fn send(&mut self, request: Request) -> Result<Response, HttpError> {
        let mut server = self.0.lock().unwrap();
        let ok = |status: u16, body: Value| {
            Ok(Response {
                status,
                headers: vec![("content-type".into(), "application/json".into())],
                body: body.to_string().into_bytes(),
            })
        };
        if request.url.contains("/episodes/") {
            if !server.lists_episodes {
                return ok(200, json!([]));
            }
            let listed: Vec<Value> = server.stored.iter().map(|n| json!({"name": n})).collect();
            return ok(200, Value::Array(listed));
        }
        assert!(request.url.ends_with("/messages"), "{}", request.url);
        server.sends += 1;
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let name = body["messages"][0]["name"].as_str().unwrap().to_string();
        match server.script.pop_front().unwrap_or(Answer::Accept) {
            Answer::Accept => {
                server.stored.push(name);
                ok(202, json!({"success": true}))
            }
            Answer::AcceptLate => {
                server.stored.push(name);
                Err(HttpError::Timeout)
            }
            Answer::Hang => Err(HttpError::Timeout),
            Answer::Down => Err(HttpError::Connect("connection refused".into())),
            Answer::ServerError => ok(500, json!({"detail": "internal"})),
            Answer::Reject => ok(422, json!({"detail": [{"msg": "field required"}]})),
        }
    }
}

/// A lock that another process holds.
struct HeldElsewhere;

impl Locks for HeldElsewhere {
    fn acquire(&mut self, _: &str, _: Duration, _: Duration) -> Result<(), LockError> {
        Err(LockError::Busy("held by pid 4242".into()))
    }
    fn release(&mut self, _: &str) {}
}

/// Another instance of this process (pid 4242 on "gateway") holds every lock.
struct HeldByThisProcess;

impl Locks for HeldByThisProcess {
    fn acquire(&mut self, _: &str, _: Duration, _: Duration) -> Result<(), LockError> {
        Err(LockError::Busy(
            "held by pid 4242 (graphiti-openclaw adapter 0.1.0) on gateway since \
             2026-01-01T00:00:00.000Z, lease until 2026-01-01T00:10:00.000Z"
                .into(),
        ))
    }
    fn release(&mut self, _: &str) {}
    fn this_process(&self) -> Option<ThisProcess> {
        Some(ThisProcess {
            pid: 4242,
            host: "gateway".into(),
        })
    }
}

fn state_dir(label: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("delivery-{label}-"))
        .tempdir()
        .expect("a temporary directory")
}

fn engine(graphiti: &Graphiti, state: &Path, resend_after_doubt_ms: u64) -> Engine {
    let config = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../config");
    let mut engine = Engine::new(
        ConfigRoots::new(config, None),
        Some(state.to_path_buf()),
        Box::new(graphiti.clone()),
    );
    engine.set_host_settings(Some(
        json!({
            "graphiti": {"url": "http://graphiti.test", "transport": "rest"},
            "capture": {"backoff_initial_ms": 1, "backoff_max_ms": 1,
                        "resend_after_doubt_ms": resend_after_doubt_ms}
        })
        .to_string(),
    ));
    engine.reload().expect("configuration loads");
    engine
}

fn capture(engine: &mut Engine, n: usize) {
    let ctx = HookContext {
        session_key: Some("s".into()),
        sender_id: Some("u1".into()),
        run_id: Some(format!("run-{n}")),
        ..HookContext::default()
    };
    let messages = json!([{"role": "user", "content": format!("turn number {n} about dinner")},
                          {"role": "assistant", "content": format!("answer {n}")}]);
    let outcome = engine.agent_end(
        &AgentEndEvent {
            success: true,
            messages_json: messages.to_string(),
            ..AgentEndEvent::default()
        },
        &ctx,
    );
    assert!(
        matches!(outcome, CaptureOutcome::Spooled { .. }),
        "{outcome:?}"
    );
}

/// Ticks until nothing is sent any more (backoff is 1 ms here).
fn drain(engine: &mut Engine) {
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(3));
        let report = engine.tick();
        if report.pending == report.in_doubt && report.error.is_none() {
            return;
        }
    }
}

/// The spool entry files of `state`'s spool with `extension`.
fn entries_with(state: &Path, extension: &str) -> Vec<PathBuf> {
    std::fs::read_dir(state.join("spool"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == extension))
        .collect()
}

/// The episode name a spool entry file holds.
fn episode_name(entry: &Path) -> String {
    serde_json::from_slice::<Value>(&std::fs::read(entry).unwrap()).unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string()
}

fn distinct(names: &[String]) -> usize {
    names.iter().collect::<std::collections::HashSet<_>>().len()
}

#[test]
fn an_answer_lost_after_graphiti_stored_the_turn_is_not_sent_again() {
    let graphiti = Graphiti::default();
    graphiti.0.lock().unwrap().lists_episodes = true;
    let state_temp = state_dir("late");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000);
    for n in 0..3 {
        capture(&mut engine, n);
    }
    graphiti.script(&[Answer::AcceptLate]);
    let report = engine.tick();
    assert_eq!((report.sent, report.in_doubt), (0, 1), "{report:?}");
    drain(&mut engine);
    // The in-doubt turn is confirmed by Graphiti's listing, never re-sent.
    assert_eq!(graphiti.stored().len(), 3, "{:?}", graphiti.stored());
    assert_eq!(distinct(&graphiti.stored()), 3);
    assert_eq!(graphiti.sends(), 3);
    assert_eq!(engine.tick().pending, 0);
}

#[test]
fn an_unconfirmed_doubt_waits_then_is_sent_once_more() {
    let graphiti = Graphiti::default(); // lists nothing, like FalkorDB for a non-default group
    let state_temp = state_dir("unconfirmed");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 300);
    capture(&mut engine, 1);
    graphiti.script(&[Answer::Hang]);
    assert_eq!(engine.tick().in_doubt, 1);
    drain(&mut engine);
    assert_eq!(graphiti.sends(), 1, "not sent again before the wait");
    std::thread::sleep(Duration::from_millis(350));
    drain(&mut engine);
    assert_eq!(graphiti.sends(), 2);
    assert_eq!(graphiti.stored().len(), 1);
    assert_eq!(engine.tick().pending, 0);
}

#[test]
fn transient_errors_set_nothing_aside_and_keep_the_order() {
    let graphiti = Graphiti::default();
    let state_temp = state_dir("transient");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000);
    for n in 0..4 {
        capture(&mut engine, n);
    }
    graphiti.script(&[Answer::Down, Answer::ServerError, Answer::Down]);
    for _ in 0..3 {
        let report = engine.tick();
        assert_eq!(
            (report.sent, report.pending, report.in_doubt),
            (0, 4, 0),
            "{report:?}"
        );
        std::thread::sleep(Duration::from_millis(3));
    }
    drain(&mut engine);
    let stored = graphiti.stored();
    let runs: Vec<usize> = (0..4)
        .map(|n| {
            stored
                .iter()
                .position(|s| s.contains(&format!("-run-{n}-")))
                .unwrap()
        })
        .collect();
    assert_eq!(runs, [0, 1, 2, 3], "all four, in capture order: {stored:?}");
    let list = engine.run_command(&Command::Spool(SpoolCommand::List));
    assert_eq!(list.stdout, "the capture spool is empty\n");
}

#[test]
fn a_rejection_sets_aside_that_entry_only_and_requeue_puts_it_back_last() {
    let graphiti = Graphiti::default();
    let state_temp = state_dir("reject");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000);
    for n in 0..3 {
        capture(&mut engine, n);
    }
    graphiti.script(&[Answer::Accept, Answer::Reject]);
    let report = engine.tick();
    assert_eq!((report.sent, report.pending), (2, 0), "{report:?}");
    let list = engine.run_command(&Command::Spool(SpoolCommand::List));
    assert!(
        list.stdout
            .starts_with("0 waiting, 0 being sent, 0 in doubt, 1 set aside"),
        "{}",
        list.stdout
    );
    assert!(
        list.stdout
            .contains("1× set aside; last: Graphiti rejected episode openclaw-"),
        "{}",
        list.stdout
    );
    assert!(list.stdout.contains("HTTP 422"), "{}", list.stdout);

    capture(&mut engine, 3);
    let requeue = engine.run_command(&Command::Spool(SpoolCommand::Requeue));
    assert!(
        requeue
            .stdout
            .starts_with("1 set-aside episode(s) put back"),
        "{}",
        requeue.stdout
    );
    graphiti.script(&[Answer::Accept, Answer::Reject]);
    engine.tick();
    let list = engine.run_command(&Command::Spool(SpoolCommand::List));
    assert!(
        list.stdout.contains("2× set aside"),
        "rejected again: {}",
        list.stdout
    );
    // The requeued entry went behind the turn captured after it.
    let stored = graphiti.stored();
    assert!(stored.last().unwrap().contains("run-3"), "{stored:?}");
}

#[test]
fn a_sender_killed_mid_send_leaves_the_entry_in_doubt_not_resent() {
    let graphiti = Graphiti::default();
    let state_temp = state_dir("killed");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000);
    capture(&mut engine, 1);
    // What a kill -9 between the rename and the answer leaves behind.
    let entry = entries_with(state, "episode").remove(0);
    std::fs::rename(&entry, entry.with_extension("sending")).unwrap();
    let report = engine.tick();
    assert_eq!((report.sent, report.in_doubt), (0, 1), "{report:?}");
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("was being sent when its sender stopped"))
    );
    assert_eq!(graphiti.sends(), 0);
}

#[test]
fn a_bad_journal_line_still_recognises_the_others() {
    let graphiti = Graphiti::default();
    let state_temp = state_dir("journal");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000);
    capture(&mut engine, 1);
    let name = episode_name(&entries_with(state, "episode")[0]);
    // A torn line (not text) before the journalled name of this very entry: it was sent already.
    let mut journal = b"\xff\xfe\x00garbage\n".to_vec();
    journal.extend_from_slice(format!("{name}\n").as_bytes());
    std::fs::write(state.join("spool/acked.log"), journal).unwrap();
    let report = engine.tick();
    assert_eq!((report.sent, report.pending), (0, 0), "{report:?}");
    assert_eq!(
        graphiti.sends(),
        0,
        "a replay is recognised despite the bad line"
    );
    assert!(
        report.notes.iter().any(|n| n.contains("1 unreadable line")),
        "{:?}",
        report.notes
    );
}

#[test]
fn another_processs_sender_sends_alone() {
    let graphiti = Graphiti::default();
    let state_temp = state_dir("busy");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000).with_locks(Box::new(HeldElsewhere));
    capture(&mut engine, 1);
    let report = engine.tick();
    assert_eq!((report.sent, report.pending), (0, 1));
    assert!(report.notes[0].contains("another process is sending the spool (held by pid 4242)"));
    assert_eq!(graphiti.sends(), 0);
}

#[test]
fn another_instance_of_this_process_sending_is_not_called_another_process() {
    let graphiti = Graphiti::default();
    let state_temp = state_dir("busy-here");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000).with_locks(Box::new(HeldByThisProcess));
    capture(&mut engine, 1);
    let report = engine.tick();
    assert_eq!((report.sent, report.pending), (0, 1));
    assert!(
        report.notes[0].starts_with(
            "another instance in this process (pid 4242) is sending the spool (held by pid 4242 "
        ),
        "{:?}",
        report.notes
    );
    assert_eq!(graphiti.sends(), 0);
}

#[test]
fn flush_sends_everything_and_says_what_waits() {
    let graphiti = Graphiti::default();
    let state_temp = state_dir("flush");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000);
    for n in 0..120 {
        capture(&mut engine, n); // more than one batch (50)
    }
    let out = engine.run_command(&Command::Flush);
    assert_eq!(out.exit_code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "sent 120 episode(s); 0 waiting\n");
    capture(&mut engine, 999);
    graphiti.script(&[Answer::Down]);
    let out = engine.run_command(&Command::Flush);
    assert_eq!(out.exit_code, 1);
    assert!(
        out.stderr.starts_with("sending stopped: POST /messages"),
        "{}",
        out.stderr
    );
}

#[test]
fn one_tick_settles_what_it_recovered_and_sends_what_waits_behind_it() {
    let graphiti = Graphiti::default();
    graphiti.0.lock().unwrap().lists_episodes = true;
    let state_temp = state_dir("one-pass");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000);
    capture(&mut engine, 1);
    // Graphiti stored the first turn, then its sender was killed before the rename back.
    let first = entries_with(state, "episode").remove(0);
    graphiti.0.lock().unwrap().stored.push(episode_name(&first));
    std::fs::rename(&first, first.with_extension("sending")).unwrap();
    capture(&mut engine, 2);
    capture(&mut engine, 3);
    let report = engine.tick();
    // Recovered as in doubt, confirmed by Graphiti's listing, and the two behind it sent: one pass.
    assert_eq!(
        (report.sent, report.pending, report.in_doubt),
        (2, 0, 0),
        "{report:?}"
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("was in doubt: Graphiti has it")),
        "{:?}",
        report.notes
    );
    assert_eq!(graphiti.sends(), 2, "the stored turn is not sent again");
    assert_eq!(entries_with(state, "episode").len(), 0);
}

#[test]
fn a_doubt_put_back_is_sent_in_the_same_tick() {
    let graphiti = Graphiti::default(); // lists nothing
    let state_temp = state_dir("put-back");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 100);
    capture(&mut engine, 1);
    graphiti.script(&[Answer::Hang]);
    assert_eq!(engine.tick().in_doubt, 1);
    std::thread::sleep(Duration::from_millis(150));
    let report = engine.tick();
    assert_eq!(
        (report.sent, report.pending, report.in_doubt),
        (1, 0, 0),
        "{report:?}"
    );
    assert_eq!(graphiti.sends(), 2);
}

#[test]
fn a_tick_that_backs_off_leaves_the_journal_unread() {
    let graphiti = Graphiti::default();
    let state_temp = state_dir("backed-off");
    let state = state_temp.path();
    let mut engine = engine(&graphiti, state, 3_600_000);
    engine.set_host_settings(Some(
        json!({
            "graphiti": {"url": "http://graphiti.test", "transport": "rest"},
            "capture": {"backoff_initial_ms": 60_000, "backoff_max_ms": 60_000}
        })
        .to_string(),
    ));
    engine.reload().expect("configuration loads");
    capture(&mut engine, 1);
    std::fs::write(state.join("spool/acked.log"), b"\xff\xfe garbage\n").unwrap();
    graphiti.script(&[Answer::Down]);
    let journal_note = |notes: &[String]| notes.iter().any(|n| n.contains("1 unreadable line"));
    let failed = engine.tick();
    assert!(
        failed.error.is_some() && journal_note(&failed.notes),
        "{failed:?}"
    );
    // Backing off: nothing is looked up, so the journal is not read (nor said to be damaged).
    let waiting = engine.tick();
    assert!(waiting.retry_in_ms.is_some(), "{waiting:?}");
    assert_eq!((waiting.pending, waiting.in_doubt), (1, 0), "{waiting:?}");
    assert!(!journal_note(&waiting.notes), "{waiting:?}");
    assert_eq!(graphiti.sends(), 1);
}
