//! Counters for `status` (the PRD's post-deploy monitoring), kept in the state directory so they
//! survive restarts and are shared by every instance and process. An instance counts in memory and
//! merges its counts into the file under the `stats` lock (on `tick` and `status`), so two processes
//! never lose each other's counts and a turn costs no file I/O for them. `agent-end`, whose counts
//! must be on disk when it returns, and any call after a few dozen updates take no lock: they append
//! the counts as a line to the instance's own log in `counts/`, kept open (one write per turn), and
//! the next merge folds the lines it has not added yet into the file (see [`fold_into_file`]).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Stats {
    /// User turns routed.
    pub turns: u64,
    pub recalls: u64,
    pub recall_fallbacks: u64,
    /// Turns whose search failed and a cached answer stood in.
    pub recalls_cached: u64,
    pub recalls_skipped: u64,
    /// Facts and entities recall returned, over every recalled (or cached) turn.
    pub recalled_items: u64,
    /// Turns that got a pack, by primary pack id.
    pub packs: BTreeMap<String, u64>,
    pub captures_spooled: u64,
    pub captures_skipped: u64,
    /// Turns not captured because the spool was full or could not be written.
    pub captures_dropped: u64,
    pub episodes_sent: u64,
    pub send_failures: u64,
    /// Sends whose outcome was unknown (no answer in time, the connection broke after sending).
    pub sends_in_doubt: u64,
    /// In-doubt sends Graphiti was then seen to have stored.
    pub doubts_confirmed: u64,
    /// In-doubt sends sent again once Graphiti was seen to lack them: each may be a duplicate.
    pub resent_after_doubt: u64,
    /// In-doubt sends Graphiti never listed, set aside instead of sent again
    /// (`capture.when_unconfirmed: keep-aside`): each may be missing from Graphiti.
    pub doubts_kept_aside: u64,
    /// Entries set aside (Graphiti rejected them, or they could not be read).
    pub set_aside: u64,
    pub last_error: Option<String>,
    /// When `last_error` happened (unix ms).
    pub last_error_at_ms: u64,
    /// When Graphiti last accepted an episode (unix ms).
    pub last_sent_at_ms: u64,
    /// Said when the counters had to start again (their file was unreadable).
    pub restarted: Option<String>,
    /// The files of `counts/` already added to these counters and not yet seen removed: a merge
    /// that stopped between saving this file and removing them does not add them twice.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<String>,
    /// How much of each count log of `counts/` (bytes from its start) these counters hold: a merge
    /// adds only the lines after that. Dropped once the log is gone.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub log_offsets: BTreeMap<String, u64>,
}

impl Stats {
    /// Adds another instance's counts to these.
    pub fn merge(&mut self, other: &Stats) {
        for (mine, theirs) in [
            (&mut self.turns, other.turns),
            (&mut self.recalls, other.recalls),
            (&mut self.recall_fallbacks, other.recall_fallbacks),
            (&mut self.recalls_cached, other.recalls_cached),
            (&mut self.recalls_skipped, other.recalls_skipped),
            (&mut self.recalled_items, other.recalled_items),
            (&mut self.captures_spooled, other.captures_spooled),
            (&mut self.captures_skipped, other.captures_skipped),
            (&mut self.captures_dropped, other.captures_dropped),
            (&mut self.episodes_sent, other.episodes_sent),
            (&mut self.send_failures, other.send_failures),
            (&mut self.sends_in_doubt, other.sends_in_doubt),
            (&mut self.doubts_confirmed, other.doubts_confirmed),
            (&mut self.resent_after_doubt, other.resent_after_doubt),
            (&mut self.doubts_kept_aside, other.doubts_kept_aside),
            (&mut self.set_aside, other.set_aside),
        ] {
            *mine += theirs;
        }
        for (pack, n) in &other.packs {
            *self.packs.entry(pack.clone()).or_default() += n;
        }
        if other.last_error.is_some() && other.last_error_at_ms >= self.last_error_at_ms {
            self.last_error.clone_from(&other.last_error);
            self.last_error_at_ms = other.last_error_at_ms;
        }
        self.last_sent_at_ms = self.last_sent_at_ms.max(other.last_sent_at_ms);
        if other.restarted.is_some() {
            self.restarted.clone_from(&other.restarted);
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Stats::default()
    }

    /// The last error, unless Graphiti has accepted an episode since.
    pub fn current_error(&self) -> Option<&str> {
        self.last_error
            .as_deref()
            .filter(|_| self.last_error_at_ms >= self.last_sent_at_ms)
    }
}

fn path(state_dir: &Path) -> PathBuf {
    state_dir.join("stats.json")
}

/// The stored counters. An unreadable file is kept aside as `stats.json.corrupt` and the counters
/// start again, saying so (`restarted`), rather than silently from zero.
pub fn load(state_dir: &Path) -> Stats {
    let file = path(state_dir);
    let Ok(bytes) = crate::platform::files::read(&file) else {
        return Stats::default();
    };
    match serde_json::from_slice(&bytes) {
        Ok(stats) => stats,
        Err(e) => {
            let aside = state_dir.join("stats.json.corrupt");
            let kept = fs::rename(&file, &aside).is_ok();
            Stats {
                restarted: Some(format!(
                    "counters started again at {}: stats.json was unreadable ({e}){}",
                    crate::platform::time::iso8601(crate::platform::time::now_ms()),
                    if kept {
                        "; kept as stats.json.corrupt"
                    } else {
                        ""
                    }
                )),
                ..Stats::default()
            }
        }
    }
}

fn counts_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("counts")
}

/// A count file that does not parse is being written (it is created, then written in one call), or
/// its writer was killed between the two: removed once it is this old.
const UNREADABLE_COUNTS_KEPT_MS: u64 = 10 * 60 * 1000;

/// An instance's count log, `counts/<unique>.log`: one line of counts per save, written by this
/// instance alone, kept open from one save to the next.
pub struct CountLog {
    file: fs::File,
    len: u64,
    last_write_ms: u64,
}

/// A log idle this long or this large is not written again: its writer starts a new one, and a
/// merge removes it once [`ABANDONED_LOG_MS`] have passed (twice the idle time: a log in use is
/// never taken for an abandoned one).
const LOG_IDLE_MS: u64 = 5 * 60 * 1000;
const LOG_MAX_BYTES: u64 = 64 * 1024;
const ABANDONED_LOG_MS: u64 = 10 * 60 * 1000;

/// Saves one turn's `counts` where the next merge finds them, without the lock: a line appended to
/// this instance's log (`log`), one write. A new log (named `unique()`: a name no other writer
/// uses, e.g. a random instance id and a sequence number) is started when there is none, when it
/// is idle or full, and after a failed write (whose line, cut short, is never finished: a merge
/// adds only lines that end); it is one of the state directory's spares when one is ready (see
/// `spare_files`). On an error the counts are not in any log: the caller keeps them.
pub fn append_counts(
    state_dir: &Path,
    log: &mut Option<CountLog>,
    unique: impl FnOnce() -> String,
    counts: &Stats,
    now_ms: u64,
) -> Result<(), String> {
    let mut line = serde_json::to_vec(counts).unwrap_or_default();
    line.push(b'\n');
    if let Some(open) = log.take().filter(|open| {
        open.len < LOG_MAX_BYTES && now_ms.saturating_sub(open.last_write_ms) < LOG_IDLE_MS
    }) {
        crate::platform::files::write_all_at(&open.file, &line, open.len)
            .map_err(|e| format!("cannot save the counts to this instance's count log: {e}"))?;
        *log = Some(CountLog {
            len: open.len + line.len() as u64,
            last_write_ms: now_ms,
            ..open
        });
        return Ok(());
    }
    let dir = counts_dir(state_dir);
    let file = dir.join(format!("{}{LOG_EXTENSION}", unique()));
    let start = || -> std::io::Result<fs::File> {
        let out = crate::platform::spare_files::take_or_create(state_dir, &file)?;
        crate::platform::files::write_all_at(&out, &line, 0)?;
        Ok(out)
    };
    let out = start()
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::NotFound => fs::create_dir_all(&dir).and_then(|()| start()),
            _ => Err(e),
        })
        .map_err(|e| format!("cannot save the counts to {}: {e}", file.display()))?;
    *log = Some(CountLog {
        file: out,
        len: line.len() as u64,
        last_write_ms: now_ms,
    });
    Ok(())
}

const LOG_EXTENSION: &str = ".log";

/// Adds `counts`, and whatever `counts/` holds that is not yet added, to the stored counters and
/// saves them, then removes what is all added and no longer written. The caller holds the `stats`
/// lock. `fold_at_ms`: the time, for telling what is no longer written; None: `counts` only,
/// `counts/` is left for a later merge.
///
/// `counts/` holds the instances' count logs (see [`append_counts`]): the lines after the offset
/// the counters record for a log are added, up to its last whole line, and the new offset saved
/// with them, so a merge killed halfway adds nothing twice. A log untouched for
/// [`ABANDONED_LOG_MS`] is removed once added (a line its writer left unfinished is dropped then).
/// Count files of one turn each (`<unique>.json`, as earlier versions wrote them) are added whole
/// and recorded by name until they are seen removed.
pub fn fold_into_file(
    state_dir: &Path,
    counts: &Stats,
    fold_at_ms: Option<u64>,
) -> Result<(), String> {
    let mut stats = load(state_dir);
    stats.merge(counts);
    let Some(now_ms) = fold_at_ms else {
        let file = path(state_dir);
        return crate::platform::files::write_atomically(
            &file,
            &serde_json::to_vec(&stats).unwrap_or_default(),
        )
        .map_err(|e| format!("cannot save the counters to {}: {e}", file.display()));
    };
    let listed = count_files(state_dir);
    // Folded before, and still there: a merge stopped before removing them. Not added again.
    let already: Vec<String> = std::mem::take(&mut stats.folded)
        .into_iter()
        .filter(|name| listed.iter().any(|(listed, _)| listed == name))
        .collect();
    // Offsets of logs no longer there are dropped.
    let mut offsets = std::mem::take(&mut stats.log_offsets);
    offsets.retain(|name, _| listed.iter().any(|(listed, _)| listed == name));
    stats.log_offsets = offsets;
    let mut removable = Vec::new();
    for (name, path) in &listed {
        if name.ends_with(LOG_EXTENSION) {
            let abandoned = crate::platform::files::modified_before(path, now_ms, ABANDONED_LOG_MS);
            let offset = stats.log_offsets.get(name).copied().unwrap_or(0);
            // Unread (not a regular file, a read error): neither added nor removed.
            let Some((added, to_the_end)) = add_log_lines(&mut stats, path, offset, abandoned)
            else {
                continue;
            };
            if added != offset {
                stats.log_offsets.insert(name.clone(), added);
            }
            if abandoned && to_the_end {
                removable.push(path.clone());
            }
            continue;
        }
        if already.contains(name) {
            continue;
        }
        match crate::platform::files::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Stats>(&b).ok())
        {
            Some(turn) => {
                stats.merge(&turn);
                stats.folded.push(name.clone());
            }
            None if crate::platform::files::modified_before(
                path,
                now_ms,
                UNREADABLE_COUNTS_KEPT_MS,
            ) =>
            {
                removable.push(path.clone());
            }
            None => {}
        }
    }
    stats.folded.extend(already);
    let file = path(state_dir);
    crate::platform::files::write_atomically(
        &file,
        &serde_json::to_vec(&stats).unwrap_or_default(),
    )
    .map_err(|e| format!("cannot save the counters to {}: {e}", file.display()))?;
    for (name, path) in &listed {
        if stats.folded.contains(name) {
            let _ = fs::remove_file(path);
        }
    }
    for path in removable {
        let _ = fs::remove_file(path);
    }
    Ok(())
}

/// Adds the whole lines of the count log at `path` after `offset` to `stats`; the offset they
/// reach, and whether that read went to its end (None: the log could not be read). A line that
/// does not read as counts is being written (it is skipped once the log is `abandoned`); what
/// follows the last line feed is not finished yet. A merge reads at most [`LOG_READ_MAX`] bytes of
/// a log (a later one reads on).
fn add_log_lines(
    stats: &mut Stats,
    path: &Path,
    offset: u64,
    abandoned: bool,
) -> Option<(u64, bool)> {
    let mut bytes = crate::platform::files::read_from(path, offset, LOG_READ_MAX).ok()?;
    let to_the_end = bytes.len() < LOG_READ_MAX;
    bytes.truncate(LOG_READ_MAX);
    let mut reached = offset;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        if line.last() != Some(&b'\n') {
            break;
        }
        match serde_json::from_slice::<Stats>(line) {
            Ok(turn) => stats.merge(&turn),
            Err(_) if abandoned => {}
            Err(_) => break,
        }
        reached += line.len() as u64;
    }
    Some((reached, to_the_end))
}

/// A log is at most [`LOG_MAX_BYTES`] and a line: anything larger in `counts/` is not one of ours.
const LOG_READ_MAX: usize = 1 << 20;

/// What `counts/` holds: each file's name and stamp, in the listing's order.
#[derive(Debug, Default)]
pub struct CountsSeen(Vec<(String, Option<crate::platform::files::Stamp>)>);

/// Looks at `counts/` (a listing and a stamp per file).
pub fn look_at_counts(state_dir: &Path) -> CountsSeen {
    CountsSeen(
        count_files(state_dir)
            .into_iter()
            .map(|(name, path)| (name, crate::platform::files::stamp(&path).ok().flatten()))
            .collect(),
    )
}

impl CountsSeen {
    /// Whether a merge would find anything to do in `counts/` as it is now, when the last merge
    /// of this instance saw it as `before` (its look was taken before that merge read it): a file
    /// new or written since, or one old enough to remove. The logs of instances that are idle stay
    /// for ten minutes, and a tick every few seconds need not fold them again and again.
    pub fn worth_folding(&self, before: &CountsSeen, now_ms: u64) -> bool {
        // A few files, one per instance: compared as sets, whatever order a listing gives.
        let changed =
            self.0.len() != before.0.len() || self.0.iter().any(|file| !before.0.contains(file));
        !self.0.is_empty()
            && (changed
                || self.0.iter().any(|(_, stamp)| {
                    stamp.is_none_or(|s| s.modified_before(now_ms, ABANDONED_LOG_MS))
                }))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The count logs and count files, by name.
fn count_files(state_dir: &Path) -> Vec<(String, PathBuf)> {
    let dir = counts_dir(state_dir);
    let Ok(names) = crate::platform::files::list_names(&dir) else {
        return vec![];
    };
    names
        .into_iter()
        .filter(|name| name.ends_with(".json") || name.ends_with(LOG_EXTENSION))
        .map(|name| {
            let path = dir.join(&name);
            (name, path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> tempfile::TempDir {
        crate::platform::files::temp_dir(&format!("stats-{name}"))
    }

    fn turn(captures: u64) -> Stats {
        Stats {
            turns: 1,
            captures_spooled: captures,
            ..Stats::default()
        }
    }

    /// Appends `counts` as one instance would, its log named `name-<n>` when it starts one.
    fn append(dir: &Path, log: &mut Option<CountLog>, name: &str, counts: &Stats, now: u64) {
        let unique = || format!("{name}-{}", count_files(dir).len());
        append_counts(dir, log, unique, counts, now).unwrap();
    }

    #[test]
    fn count_logs_are_added_once_even_when_a_merge_stopped_before_saving_or_removing() {
        let dir_temp = scratch("fold");
        let dir = dir_temp.path();
        let now = crate::platform::time::now_ms();
        let (mut a, mut b) = (None, None);
        append(dir, &mut a, "a", &turn(1), now);
        append(dir, &mut b, "b", &turn(2), now);
        append(dir, &mut a, "a", &turn(4), now);
        assert_eq!(count_files(dir).len(), 2, "one log per instance");
        fold_into_file(dir, &turn(0), Some(now)).unwrap();
        let stats = load(dir);
        assert_eq!((stats.turns, stats.captures_spooled), (4, 7));
        assert_eq!(count_files(dir).len(), 2, "logs in use stay");
        // Lines appended since are added; those added before are not added again.
        append(dir, &mut b, "b", &turn(8), now);
        let before = fs::read(path(dir)).unwrap();
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(load(dir).captures_spooled, 15);
        // A merge killed before saving the counters left them as they were: the next adds the
        // same lines, once.
        fs::write(path(dir), &before).unwrap();
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!((load(dir).turns, load(dir).captures_spooled), (5, 15));
        // Untouched for longer than any writer keeps a log: removed, and its offset forgotten.
        let later = now + ABANDONED_LOG_MS + 60_000;
        fold_into_file(dir, &Stats::default(), Some(later)).unwrap();
        assert_eq!(count_files(dir).len(), 0);
        fold_into_file(dir, &Stats::default(), Some(later)).unwrap();
        let stats = load(dir);
        assert!(stats.log_offsets.is_empty(), "{:?}", stats.log_offsets);
        assert_eq!((stats.turns, stats.captures_spooled), (5, 15));
    }

    #[test]
    fn a_merge_is_worth_it_only_when_counts_changed_since_the_last_or_a_log_is_abandoned() {
        let dir_temp = scratch("worth");
        let dir = dir_temp.path();
        let now = crate::platform::time::now_ms();
        let nothing = CountsSeen::default();
        assert!(
            !look_at_counts(dir).worth_folding(&nothing, now),
            "no counts/"
        );
        let mut log = None;
        append(dir, &mut log, "w", &turn(1), now);
        let seen = look_at_counts(dir);
        assert!(seen.worth_folding(&nothing, now), "a new log");
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert!(
            !look_at_counts(dir).worth_folding(&seen, now),
            "nothing written since the look the merge read after"
        );
        append(dir, &mut log, "w", &turn(1), now);
        assert!(
            look_at_counts(dir).worth_folding(&seen, now),
            "a line since"
        );
        let later = now + ABANDONED_LOG_MS + 60_000;
        let seen = look_at_counts(dir);
        assert!(seen.worth_folding(&seen, later), "abandoned: to remove");
    }

    #[test]
    fn a_writer_keeps_one_log_until_it_is_idle_or_full() {
        let dir_temp = scratch("rotate");
        let dir = dir_temp.path();
        let now = crate::platform::time::now_ms();
        let mut log = None;
        append(dir, &mut log, "w", &turn(1), now);
        append(dir, &mut log, "w", &turn(1), now + 1_000);
        assert_eq!(count_files(dir).len(), 1, "one log, two lines");
        append(dir, &mut log, "w", &turn(1), now + 1_000 + LOG_IDLE_MS);
        assert_eq!(count_files(dir).len(), 2, "idle: a new log");
        let line = serde_json::to_vec(&turn(1)).unwrap().len() as u64 + 1;
        let lines = LOG_MAX_BYTES.div_ceil(line);
        for _ in 0..lines {
            append(dir, &mut log, "w", &turn(1), now + 1_000 + LOG_IDLE_MS);
        }
        assert_eq!(count_files(dir).len(), 3, "full: a new log");
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(load(dir).captures_spooled, 3 + lines);
    }

    #[test]
    fn a_legacy_count_file_is_folded_once_even_when_a_merge_stopped_before_removing_it() {
        let dir_temp = scratch("legacy");
        let dir = dir_temp.path();
        fs::create_dir_all(dir.join("counts")).unwrap();
        let legacy = dir.join("counts/a-1.json");
        fs::write(&legacy, serde_json::to_vec(&turn(1)).unwrap()).unwrap();
        let now = crate::platform::time::now_ms();
        fold_into_file(dir, &turn(0), Some(now)).unwrap();
        assert_eq!(load(dir).captures_spooled, 1);
        assert_eq!(count_files(dir).len(), 0, "folded files removed");
        // A merge that saved the counters but stopped before removing a file: it is not added twice.
        fs::write(&legacy, serde_json::to_vec(&turn(1)).unwrap()).unwrap();
        let mut stats = load(dir);
        stats.folded.push("a-1.json".into());
        fs::write(path(dir), serde_json::to_vec(&stats).unwrap()).unwrap();
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(load(dir).captures_spooled, 1);
        assert_eq!(count_files(dir).len(), 0);
        // Once gone, its name is dropped: a later file of that name is new counts.
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert!(load(dir).folded.is_empty());
    }

    #[test]
    fn a_line_being_written_waits_and_a_line_left_unfinished_is_dropped_with_its_log() {
        let dir_temp = scratch("unfinished");
        let dir = dir_temp.path();
        let now = crate::platform::time::now_ms();
        let mut log = None;
        append(dir, &mut log, "w", &turn(1), now);
        let (_, log_path) = count_files(dir).pop().unwrap();
        // The next line as a write cut short leaves it: no line feed yet.
        let mut file = fs::OpenOptions::new().append(true).open(&log_path).unwrap();
        std::io::Write::write_all(&mut file, br#"{"turns":1,"captures_spooled":"#).unwrap();
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(load(dir).captures_spooled, 1, "the finished line only");
        std::io::Write::write_all(&mut file, b"2}\n").unwrap();
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(load(dir).captures_spooled, 3, "finished: added");
        // A line that does not read as counts waits while the log is written...
        std::io::Write::write_all(&mut file, b"{\"turns\n").unwrap();
        std::io::Write::write_all(&mut file, &serde_json::to_vec(&turn(4)).unwrap()).unwrap();
        std::io::Write::write_all(&mut file, b"\n{\"tur").unwrap();
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(load(dir).captures_spooled, 3);
        // ...and is skipped once it is abandoned, the unfinished one dropped with the log.
        let later = now + ABANDONED_LOG_MS + 60_000;
        fold_into_file(dir, &Stats::default(), Some(later)).unwrap();
        assert_eq!(load(dir).captures_spooled, 7);
        assert_eq!(count_files(dir).len(), 0);
    }

    #[test]
    fn a_count_file_being_written_waits_and_an_old_unreadable_one_is_removed() {
        let dir_temp = scratch("unreadable");
        let dir = dir_temp.path();
        fs::create_dir_all(dir.join("counts")).unwrap();
        fs::write(dir.join("counts/c-1.json"), b"").unwrap();
        let now = crate::platform::time::now_ms();
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(
            count_files(dir).len(),
            1,
            "created, not yet written: left for the next merge"
        );
        fs::write(
            dir.join("counts/c-1.json"),
            serde_json::to_vec(&turn(1)).unwrap(),
        )
        .unwrap();
        fold_into_file(dir, &Stats::default(), Some(now)).unwrap();
        assert_eq!(load(dir).captures_spooled, 1);
        fs::write(dir.join("counts/d-1.json"), b"{").unwrap();
        fold_into_file(
            dir,
            &Stats::default(),
            Some(now + UNREADABLE_COUNTS_KEPT_MS + 1000),
        )
        .unwrap();
        assert_eq!(
            count_files(dir).len(),
            0,
            "left unreadable by a killed writer: removed"
        );
        assert_eq!(load(dir).captures_spooled, 1);
    }
}
