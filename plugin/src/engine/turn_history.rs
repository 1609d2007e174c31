//! The recent turns of each session, for `memories`: what each turn injected (the recall block,
//! the packs, the decision trace) and what became of its capture. A file per session in
//! `turn-history/`, a JSON line per turn written at `agent-end` (after the reply, never in the
//! prompt's path); the last [`KEPT_TURNS`] of a session are kept, for the sessions `debug` keeps.

use super::turns::TurnRecord;
use crate::memory::control::Captured;
use crate::platform::files;
use crate::routing::decision::RuleScore;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Turns kept per session.
pub const KEPT_TURNS: usize = 10;
/// A larger file is not read (ten turns of bounded injections stay far below).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// One past turn of a session.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct PastTurn {
    pub at_ms: u64,
    pub group_id: Option<String>,
    /// The prompt, cut short.
    pub prompt: String,
    pub recall: String,
    pub packs: Vec<String>,
    pub trace: Vec<String>,
    pub injected: Option<String>,
    pub capture: Captured,
    #[serde(default)]
    pub scores: Vec<RuleScore>,
}

impl PastTurn {
    pub fn of(record: &TurnRecord, capture: Captured) -> PastTurn {
        PastTurn {
            at_ms: record.at_ms,
            group_id: record.group_id.clone(),
            prompt: record.prompt.clone(),
            recall: record.recall.clone(),
            packs: record.packs.clone(),
            trace: record.trace.clone(),
            injected: record.injected.clone(),
            capture,
            scores: record.scores.clone(),
        }
    }
}

fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("turn-history")
}

fn path(state_dir: &Path, session_key: &str) -> PathBuf {
    crate::routing::state::file_for(&dir(state_dir), session_key)
}

/// The turns of a history file, oldest first; a line that cannot be read is skipped.
fn parse(bytes: &[u8]) -> Vec<PastTurn> {
    let mut turns = Vec::new();
    for turn in bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .filter_map(|line| serde_json::from_slice::<PastTurn>(line).ok())
    {
        push(&mut turns, turn);
    }
    turns
}

/// Adds `turn` after `turns`: of two records of one turn (its prompt hook did not run, so it
/// repeats the previous record) the newer stands.
fn push(turns: &mut Vec<PastTurn>, turn: PastTurn) {
    if turns
        .last()
        .is_some_and(|last| last.at_ms == turn.at_ms && last.prompt == turn.prompt)
    {
        turns.pop();
    }
    turns.push(turn);
}

/// The last [`KEPT_TURNS`] of `turns`.
fn last_kept(mut turns: Vec<PastTurn>) -> Vec<PastTurn> {
    let excess = turns.len().saturating_sub(KEPT_TURNS);
    turns.drain(..excess);
    turns
}

fn lines(turns: &[PastTurn]) -> Vec<u8> {
    let mut out = Vec::new();
    for turn in turns {
        out.extend(serde_json::to_vec(turn).expect("turns serialise"));
        out.push(b'\n');
    }
    out
}

/// A history file at least this long is rewritten with its last turns instead of appended to.
const APPEND_BELOW_BYTES: u64 = MAX_FILE_BYTES / 4;

/// Adds `turn` to the session's history: in `agent-end`, one line appended to a regular file (a new
/// one is a spare renamed); [`prune`], off the hooks, keeps each file to its last [`KEPT_TURNS`].
/// A file too long, or not a regular file, is rewritten with its last turns and this one.
pub fn append(state_dir: &Path, session_key: &str, turn: &PastTurn) -> Result<(), String> {
    let path = path(state_dir, session_key);
    let line = lines(std::slice::from_ref(turn));
    let written = match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_file() && meta.len() < APPEND_BELOW_BYTES => {
            // A line cut short by a crash is ended first: the new one is never glued to it.
            let mut ended = b"\n".to_vec();
            ended.extend_from_slice(&line);
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|file| files::write_all_at(&file, &ended, meta.len()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            files::write_atomically_from_spare(state_dir, &path, &line, files::Durability::Written)
        }
        _ => {
            let mut turns = match files::read_regular(&path, MAX_FILE_BYTES) {
                Ok(Some(bytes)) => parse(&bytes),
                _ => vec![],
            };
            push(&mut turns, turn.clone());
            files::write_atomically(&path, &lines(&last_kept(turns)))
        }
    };
    written.map_err(|e| format!("cannot write the turn history {}: {e}", path.display()))
}

/// The session's kept turns, oldest first (a line that cannot be read is skipped).
pub fn recent(state_dir: &Path, session_key: &str) -> Result<Vec<PastTurn>, String> {
    let path = path(state_dir, session_key);
    match files::read_regular(&path, MAX_FILE_BYTES) {
        Ok(Some(bytes)) => Ok(last_kept(parse(&bytes))),
        Ok(None) => Ok(vec![]),
        Err(e) => Err(format!(
            "the turn history {} cannot be read: {e}",
            path.display()
        )),
    }
}

/// Removes the turns whose memories went to one of `groups` and whose prompt or injected blocks
/// `mentions` what is forgotten. Returns how many.
pub fn forget_groups(
    state_dir: &Path,
    groups: &[String],
    mentions: &dyn Fn(&str) -> bool,
) -> Result<usize, String> {
    let dir = dir(state_dir);
    let names = match files::list_names(&dir) {
        Ok(names) => names,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    let mut removed = 0;
    for name in names {
        let path = dir.join(name);
        let Ok(Some(bytes)) = files::read_regular(&path, MAX_FILE_BYTES) else {
            continue;
        };
        let turns = parse(&bytes);
        let (gone, kept): (Vec<PastTurn>, Vec<PastTurn>) = turns.into_iter().partition(|t| {
            t.group_id.as_ref().is_some_and(|g| groups.contains(g))
                && (mentions(&t.prompt) || t.injected.as_deref().is_some_and(mentions))
        });
        if gone.is_empty() {
            continue;
        }
        removed += gone.len();
        let written = if kept.is_empty() {
            std::fs::remove_file(&path)
        } else {
            files::write_atomically(&path, &lines(&kept))
        };
        written.map_err(|e| format!("cannot rewrite the turn history {}: {e}", path.display()))?;
    }
    Ok(removed)
}

/// Keeps the histories of the sessions whose last-turn record `debug` keeps (the same file name
/// in `turns_dir`), once there are more than `kept_sessions`, and each history to its last
/// [`KEPT_TURNS`] (`agent-end` only appends).
pub fn prune(state_dir: &Path, turns_dir: &Path, kept_sessions: usize) {
    let dir = dir(state_dir);
    let Ok(names) = files::list_names(&dir) else {
        return;
    };
    let kept = if names.len() > kept_sessions {
        files::list_names(turns_dir).ok()
    } else {
        None
    };
    for name in names {
        let path = dir.join(&name);
        if kept.as_ref().is_some_and(|kept| !kept.contains(&name)) {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        trim(&path);
    }
}

/// Rewrites a history holding more than [`KEPT_TURNS`] turns with its last ones.
fn trim(path: &Path) {
    let Ok(Some(bytes)) = files::read_regular(path, MAX_FILE_BYTES) else {
        return;
    };
    let lines_in_file = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    if lines_in_file > KEPT_TURNS {
        let _ = files::write_atomically(path, &lines(&last_kept(parse(&bytes))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(at_ms: u64, group: &str) -> PastTurn {
        PastTurn {
            at_ms,
            group_id: Some(group.into()),
            prompt: format!("turn {at_ms}"),
            recall: "recalled 1 fact".into(),
            packs: vec![],
            trace: vec![],
            injected: None,
            capture: Captured::Spooled(format!("ep-{at_ms}")),
            scores: vec![],
        }
    }

    #[test]
    fn a_session_keeps_its_last_turns_and_a_forget_takes_its_groups_out() {
        let dir = tempfile::tempdir().unwrap();
        for at in 0..15 {
            let group = if at % 2 == 0 { "dm-ana" } else { "dm-old" };
            append(dir.path(), "s1", &turn(at, group)).unwrap();
        }
        let kept = recent(dir.path(), "s1").unwrap();
        assert_eq!(
            kept.iter().map(|t| t.at_ms).collect::<Vec<_>>(),
            (5..15).collect::<Vec<_>>()
        );
        let stored = || parse(&std::fs::read(path(dir.path(), "s1")).unwrap()).len();
        assert_eq!(stored(), 15, "agent-end only appends");
        prune(dir.path(), &dir.path().join("no-turns"), 200);
        assert_eq!(stored(), 10, "the tick's prune keeps the last turns");
        assert_eq!(recent(dir.path(), "s1").unwrap(), kept);
        let all = |_: &str| true;
        assert_eq!(
            forget_groups(dir.path(), &["dm-ana".into()], &|t| t.contains("turn 14")).unwrap(),
            1
        );
        assert_eq!(
            forget_groups(dir.path(), &["dm-old".into()], &all).unwrap(),
            5
        );
        let left = recent(dir.path(), "s1").unwrap();
        assert!(
            left.iter().all(|t| t.group_id.as_deref() == Some("dm-ana")),
            "{left:?}"
        );
        assert_eq!(
            forget_groups(dir.path(), &["dm-ana".into()], &all).unwrap(),
            4
        );
        assert_eq!(recent(dir.path(), "s1").unwrap(), vec![]);
    }

    #[test]
    fn a_repeated_record_counts_once_and_a_special_file_is_replaced_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        append(dir.path(), "s1", &turn(1, "g")).unwrap();
        let mut newer = turn(1, "g");
        newer.capture = Captured::Skipped("paused".into());
        append(dir.path(), "s1", &newer).unwrap();
        assert_eq!(recent(dir.path(), "s1").unwrap(), vec![newer]);
        #[cfg(unix)]
        {
            let p = path(dir.path(), "s2");
            let made = std::process::Command::new("mkfifo").arg(&p).status();
            if made.is_ok_and(|s| s.success()) {
                append(dir.path(), "s2", &turn(2, "g")).unwrap();
                assert!(std::fs::symlink_metadata(&p).unwrap().is_file());
                assert_eq!(recent(dir.path(), "s2").unwrap(), vec![turn(2, "g")]);
            }
        }
    }

    #[test]
    fn a_turn_is_written_into_a_spare_when_one_is_ready() {
        let dir = tempfile::tempdir().unwrap();
        let spares = || std::fs::read_dir(dir.path().join("spare")).unwrap().count();
        crate::platform::spare_files::renew(dir.path());
        let ready = spares();
        append(dir.path(), "s1", &turn(1, "g")).unwrap();
        assert_eq!(
            spares(),
            ready - 1,
            "agent-end renames a spare instead of creating a file"
        );
        assert_eq!(recent(dir.path(), "s1").unwrap(), vec![turn(1, "g")]);
    }

    #[test]
    fn only_the_histories_of_sessions_whose_records_are_kept_stay() {
        let dir = tempfile::tempdir().unwrap();
        let records = dir.path().join("records");
        std::fs::create_dir_all(&records).unwrap();
        for key in ["s1", "s2", "s3"] {
            append(dir.path(), key, &turn(1, "g")).unwrap();
        }
        let kept = path(dir.path(), "s2");
        std::fs::write(records.join(kept.file_name().unwrap()), "{}").unwrap();
        prune(dir.path(), &records, 3);
        assert_eq!(
            recent(dir.path(), "s1").unwrap().len(),
            1,
            "at most 3: none pruned"
        );
        prune(dir.path(), &records, 2);
        assert!(recent(dir.path(), "s1").unwrap().is_empty());
        assert!(recent(dir.path(), "s3").unwrap().is_empty());
        assert_eq!(recent(dir.path(), "s2").unwrap().len(), 1);
    }

    #[test]
    fn a_torn_line_is_skipped_and_the_rest_read() {
        let dir = tempfile::tempdir().unwrap();
        append(dir.path(), "s1", &turn(1, "g")).unwrap();
        let p = path(dir.path(), "s1");
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.extend_from_slice(b"{\"at_ms\": 2, \"gro");
        std::fs::write(&p, bytes).unwrap();
        append(dir.path(), "s1", &turn(3, "g")).unwrap();
        let at: Vec<u64> = recent(dir.path(), "s1")
            .unwrap()
            .iter()
            .map(|t| t.at_ms)
            .collect();
        assert_eq!(at, vec![1, 3]);
    }
}
