//! The capture spool: every captured turn is a file in the state directory until Graphiti has accepted
//! it. `agent-end` only appends (no network); `tick` sends (see `delivery`).
//!
//! An entry's state is its file's extension, and it moves from state to state by rename only, so a
//! crash at any moment leaves each entry in exactly one state:
//!
//! | file | state |
//! |---|---|
//! | `<stem>.episode` | waiting to be sent |
//! | `<stem>.sending` | a send has started; a sender that finds one at start died mid-send |
//! | `<stem>.doubt` | sent, outcome unknown: not sent again until Graphiti is seen to lack it |
//! | `<stem>.rejected` | set aside: Graphiti refused this entry itself |
//! | `<stem>.corrupt` | set aside: the file cannot be read as an episode |
//! | `<stem>.unconfirmed` | set aside: sent, outcome unknown, Graphiti never listed it, and the user chose never twice (`capture.when_unconfirmed: keep-aside`) |
//!
//! `<stem>.meta` beside it keeps when doubt began and why and how often it was set aside. Stems begin
//! with the capture time, so their order is the queue's. An entry is removed only after Graphiti
//! acknowledged it, and its name is written to the acknowledgement journal first, so a replay after a
//! crash recognises what was already sent.

use crate::memory::graphiti::Episode;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Names of recently acknowledged episodes kept for recognising replays.
const ACKED_KEPT: usize = 4096;
/// The acknowledgement journal is trimmed once it is this large (about twice what [`ACKED_KEPT`]
/// names of 48 bytes take, with their line feeds).
const ACKED_TRIM_BYTES: u64 = (2 * ACKED_KEPT * 50) as u64;
/// Temporary files older than this are left over from a crash or a full disk, never in use.
const STALE_TEMP_MS: u64 = 10 * 60 * 1000;

pub struct Spool {
    dir: PathBuf,
    durability: crate::platform::files::Durability,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    Waiting,
    Sending,
    InDoubt,
    Rejected,
    Corrupt,
    Unconfirmed,
}

impl State {
    const ALL: [State; 6] = [
        State::Waiting,
        State::Sending,
        State::InDoubt,
        State::Rejected,
        State::Corrupt,
        State::Unconfirmed,
    ];

    fn extension(self) -> &'static str {
        match self {
            State::Waiting => "episode",
            State::Sending => "sending",
            State::InDoubt => "doubt",
            State::Rejected => "rejected",
            State::Corrupt => "corrupt",
            State::Unconfirmed => "unconfirmed",
        }
    }

    pub fn is_set_aside(self) -> bool {
        matches!(self, State::Rejected | State::Corrupt | State::Unconfirmed)
    }

    /// Not yet delivered and not set aside: counts against the spool's size.
    pub fn is_queued(self) -> bool {
        matches!(self, State::Waiting | State::Sending | State::InDoubt)
    }
}

/// One spool entry: its stem (queue position) and state.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub stem: String,
    pub state: State,
}

impl Entry {
    /// When the entry was captured (its stem begins with it), in Unix milliseconds.
    pub fn captured_ms(&self) -> Option<u64> {
        let micros: u64 = self.stem.split_once('-')?.0.parse().ok()?;
        Some(micros / 1000)
    }
}

/// What is kept beside an entry once something happened to it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Meta {
    /// When the last send's outcome became unknown (unix ms).
    pub in_doubt_since_ms: Option<u64>,
    /// How often a send's outcome was unknown.
    pub times_in_doubt: u32,
    /// Times the entry was set aside (it may have been put back and set aside again).
    pub set_aside_times: u32,
    /// Why it was set aside the last time.
    pub set_aside_reason: Option<String>,
    pub set_aside_at_ms: Option<u64>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Backoff {
    pub failures: u32,
    /// Unix milliseconds before which no send is tried.
    pub next_attempt_ms: u64,
    pub last_error: Option<String>,
}

/// A group whose episode listing showed nothing when a send in doubt to it came due: Graphiti
/// probably cannot list that group (FalkorDB's listing reads only its default graph), so it
/// cannot confirm sends there. Kept for `status`; forgotten once a listing confirms a doubt.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Unlisted {
    pub group_id: String,
    pub at_ms: u64,
}

#[derive(Debug, PartialEq)]
pub enum Appended {
    Spooled,
    /// The spool holds its maximum: this turn is not captured.
    Full(usize),
}

/// The entries of a listing (queue order, as [`Spool::entries`] gives it) in `state`.
pub fn in_state(listed: &[Entry], state: State) -> Vec<Entry> {
    listed
        .iter()
        .filter(|e| e.state == state)
        .cloned()
        .collect()
}

/// The acknowledgement journal as read: its names, and lines that could not be read.
#[derive(Debug, Default)]
pub struct Acked {
    /// The journal's bytes between two line feeds: each line, the first and last too, ends in one.
    text: Vec<u8>,
    /// Lines that are not names (a torn write, a disk error): skipped, and said.
    pub unreadable_lines: usize,
    /// Every name, made at the [`LOOKUPS_BEFORE_INDEX`]th look-up: a tick looks up a name or two
    /// (building a set of the few thousand names the journal keeps cost each tick more than the
    /// rest of it in OpenClaw), a flush of a backlog thousands.
    index: std::cell::OnceCell<HashSet<Vec<u8>>>,
    lookups: std::cell::Cell<u32>,
}

/// Look-ups answered by a search of the journal's text before its names are indexed.
const LOOKUPS_BEFORE_INDEX: u32 = 16;

impl Acked {
    fn new(journal: &[u8]) -> Acked {
        let mut text = Vec::with_capacity(journal.len() + 2);
        text.push(b'\n');
        text.extend_from_slice(journal);
        text.push(b'\n');
        let unreadable_lines = text
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty() && !is_name_line(line))
            .count();
        Acked {
            text,
            unreadable_lines,
            ..Acked::default()
        }
    }

    /// Whether the journal holds `name` as a line of its own.
    pub fn contains(&self, name: &str) -> bool {
        if !is_episode_name(name) {
            return false;
        }
        let lookups = self.lookups.get() + 1;
        self.lookups.set(lookups);
        if lookups < LOOKUPS_BEFORE_INDEX {
            // Line by line, its ends found by memchr (memmem's searcher would grow plugin.wasm).
            let name = name.as_bytes();
            let mut start = 0;
            return memchr::memchr_iter(b'\n', &self.text).any(|end| {
                let line = &self.text[start..end];
                start = end + 1;
                line == name
            });
        }
        self.index
            .get_or_init(|| {
                self.text
                    .split(|&b| b == b'\n')
                    .filter(|line| !line.is_empty() && is_name_line(line))
                    .map(<[u8]>::to_vec)
                    .collect()
            })
            .contains(name.as_bytes())
    }
}

fn io(what: &str, path: &Path, e: std::io::Error) -> String {
    format!("capture spool: cannot {what} {}: {e}", path.display())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::platform::files::write_atomically(path, bytes).map_err(|e| io("write", path, e))
}

/// FNV-1a: a stable short hash for file names.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A stem that sorts after every stem made before it by this clock: capture time, then a hash.
fn new_stem(micros: u128, key: &str) -> String {
    format!("{micros:020}-{:016x}", stable_hash(key))
}

fn now_micros() -> u128 {
    crate::platform::time::since_epoch().as_micros()
}

impl Spool {
    pub fn new(state_dir: &Path) -> Spool {
        Spool {
            dir: state_dir.join("spool"),
            durability: crate::platform::files::Durability::Written,
        }
    }

    /// This spool with its new entries synced to the disk before an append returns
    /// (`capture.sync_to_disk`): they then survive a power cut, not only the process.
    pub fn synced_to_disk(self, sync: bool) -> Spool {
        use crate::platform::files::Durability;
        let durability = if sync {
            Durability::Synced
        } else {
            Durability::Written
        };
        Spool { durability, ..self }
    }

    /// The state directory the spool is in.
    pub fn state_dir(&self) -> &Path {
        self.dir.parent().unwrap_or(&self.dir)
    }

    fn path(&self, stem: &str, extension: &str) -> PathBuf {
        self.dir.join(format!("{stem}.{extension}"))
    }

    pub fn file_of(&self, entry: &Entry) -> PathBuf {
        self.path(&entry.stem, entry.state.extension())
    }

    /// What to say of entries whose names are not UTF-8, if there are any: they are passed over
    /// (nothing can read, send, move or remove them), never the end of sending.
    pub fn strays(&self) -> Option<String> {
        let count = crate::platform::files::list(&self.dir).map_or(0, |listing| listing.not_utf8);
        (count > 0).then(|| {
            format!(
                "{count} entr{} in {} ha{} a name that is not UTF-8: the plugin cannot read, \
                 send or remove {}; rename or remove {} by hand",
                if count == 1 { "y" } else { "ies" },
                self.dir.display(),
                if count == 1 { "s" } else { "ve" },
                if count == 1 { "it" } else { "them" },
                if count == 1 { "it" } else { "them" },
            )
        })
    }

    /// Every entry, in queue order.
    pub fn entries(&self) -> Result<Vec<Entry>, String> {
        let names = match crate::platform::files::list_names(&self.dir) {
            Ok(names) => names,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(io("list", &self.dir, e)),
        };
        let mut entries: Vec<Entry> = names
            .iter()
            .filter_map(|name| {
                let (stem, extension) = name.rsplit_once('.')?;
                let state = State::ALL
                    .into_iter()
                    .find(|s| s.extension() == extension)?;
                Some(Entry {
                    stem: stem.to_string(),
                    state,
                })
            })
            .collect();
        crate::platform::sorting::sort(&mut entries);
        Ok(entries)
    }

    /// Entries in `state`, in queue order.
    pub fn in_state(&self, state: State) -> Result<Vec<Entry>, String> {
        Ok(in_state(&self.entries()?, state))
    }

    pub fn read(&self, entry: &Entry) -> Result<Episode, String> {
        let path = self.file_of(entry);
        let bytes = crate::platform::files::read(&path).map_err(|e| io("read", &path, e))?;
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("capture spool: {} is not an episode ({e})", path.display()))
    }

    /// Moves an entry to another state (a rename: atomic).
    pub fn move_to(&self, entry: &Entry, state: State) -> Result<Entry, String> {
        let moved = Entry {
            stem: entry.stem.clone(),
            state,
        };
        let from = self.file_of(entry);
        fs::rename(&from, self.file_of(&moved)).map_err(|e| io("move", &from, e))?;
        Ok(moved)
    }

    pub fn meta(&self, stem: &str) -> Meta {
        crate::platform::files::read(self.path(stem, "meta"))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    pub fn save_meta(&self, stem: &str, meta: &Meta) -> Result<(), String> {
        write_atomically(
            &self.path(stem, "meta"),
            &serde_json::to_vec(meta).unwrap_or_default(),
        )
    }

    /// A sent entry whose answer was lost: in doubt from `now`.
    pub fn put_in_doubt(&self, entry: &Entry, now: u64) -> Result<Entry, String> {
        let mut meta = self.meta(&entry.stem);
        meta.in_doubt_since_ms = Some(now);
        meta.times_in_doubt += 1;
        self.save_meta(&entry.stem, &meta)?;
        self.move_to(entry, State::InDoubt)
    }

    /// Back in the queue at its own place (an in-doubt entry Graphiti was seen to lack).
    pub fn put_back(&self, entry: &Entry) -> Result<Entry, String> {
        let moved = self.move_to(entry, State::Waiting)?;
        let mut meta = self.meta(&entry.stem);
        if meta.in_doubt_since_ms.take().is_some() {
            self.save_meta(&entry.stem, &meta)?;
        }
        Ok(moved)
    }

    /// Sets an entry aside (rejected or unreadable): kept for an operator, never resent by itself,
    /// never lost.
    pub fn set_aside(
        &self,
        entry: &Entry,
        state: State,
        reason: &str,
        now: u64,
    ) -> Result<(), String> {
        let mut meta = self.meta(&entry.stem);
        meta.in_doubt_since_ms = None;
        meta.set_aside_times += 1;
        meta.set_aside_reason = Some(reason.to_string());
        meta.set_aside_at_ms = Some(now);
        // The reason first: an entry seen set aside always has one.
        self.save_meta(&entry.stem, &meta)?;
        self.move_to(entry, state).map(|_| ())
    }

    /// Graphiti accepted the entry: journal its name, then remove it.
    pub fn delivered(&self, entry: &Entry, name: &str) -> Result<(), String> {
        self.mark_acked(name)?;
        self.forget(entry)
    }

    /// Removes an entry (and its meta) already known to be delivered.
    pub fn forget(&self, entry: &Entry) -> Result<(), String> {
        let path = self.file_of(entry);
        fs::remove_file(&path).map_err(|e| io("remove", &path, e))?;
        let _ = fs::remove_file(self.path(&entry.stem, "meta"));
        Ok(())
    }

    fn acked_path(&self) -> PathBuf {
        self.dir.join("acked.log")
    }

    /// Names Graphiti has acknowledged recently. A line that is not a name (a torn write, bytes that
    /// are not text) is skipped and counted; every other line still counts.
    pub fn acked(&self) -> Acked {
        Acked::new(&crate::platform::files::read(self.acked_path()).unwrap_or_default())
    }

    /// The names in the acknowledgement journal (the last few thousand Graphiti accepted) that
    /// contain `part`.
    pub fn acked_names_containing(&self, part: &str) -> Vec<String> {
        let journal = crate::platform::files::read(self.acked_path()).unwrap_or_default();
        journal
            .split(|&b| b == b'\n')
            .filter(|line| is_name_line(line))
            .filter_map(|line| std::str::from_utf8(line).ok())
            .filter(|name| name.contains(part))
            .map(str::to_string)
            .collect()
    }

    /// Records that Graphiti accepted `name`; the journal keeps the last few thousand names (and
    /// drops unreadable lines when it is trimmed).
    pub fn mark_acked(&self, name: &str) -> Result<(), String> {
        let path = self.acked_path();
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io("open", &path, e))?;
        // A line of its own even after a torn last line; one write (`writeln!` made three).
        file.write_all(format!("\n{name}\n").as_bytes())
            .map_err(|e| io("append to", &path, e))?;
        // Read back only once it is past the size it is trimmed at (a read of a few hundred KB
        // on every acknowledgement was most of a tick).
        if file.metadata().map_or(0, |m| m.len()) < ACKED_TRIM_BYTES {
            return Ok(());
        }
        drop(file);
        let bytes = crate::platform::files::read(&path).unwrap_or_default();
        // The last names, as many as are kept and fit in half the trim size: the next trim is
        // thousands of acknowledgements away whatever the names' length.
        let mut kept: Vec<&[u8]> = Vec::new();
        let mut size = 0;
        for line in bytes.rsplit(|&b| b == b'\n').filter(|l| is_name_line(l)) {
            size += line.len() + 1;
            if kept.len() == ACKED_KEPT || size > ACKED_TRIM_BYTES as usize / 2 {
                break;
            }
            kept.push(line);
        }
        kept.reverse();
        let mut text = kept.join(&b'\n');
        text.push(b'\n');
        write_atomically(&path, &text)
    }

    fn unlisted_path(&self) -> PathBuf {
        self.dir.join("unlisted.json")
    }

    pub fn unlisted(&self) -> Option<Unlisted> {
        crate::platform::files::read(self.unlisted_path())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
    }

    pub fn save_unlisted(&self, unlisted: &Unlisted) -> Result<(), String> {
        write_atomically(
            &self.unlisted_path(),
            &serde_json::to_vec(unlisted).unwrap_or_default(),
        )
    }

    pub fn forget_unlisted(&self) {
        let _ = fs::remove_file(self.unlisted_path());
    }

    pub fn backoff(&self) -> Backoff {
        crate::platform::files::read(self.dir.join("backoff.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    pub fn save_backoff(&self, backoff: &Backoff) -> Result<(), String> {
        write_atomically(
            &self.dir.join("backoff.json"),
            &serde_json::to_vec(backoff).unwrap_or_default(),
        )
    }

    /// Removes temporary files a crash or a full disk left behind (older than any write in progress).
    pub fn remove_stale_temp_files(&self, now: u64) -> usize {
        let Ok(names) = crate::platform::files::list_names(&self.dir) else {
            return 0;
        };
        let mut removed = 0;
        for name in names.iter().filter(|name| name.ends_with(".tmp")) {
            let path = self.dir.join(name);
            let stale = crate::platform::files::modified_before(&path, now, STALE_TEMP_MS);
            if stale && fs::remove_file(&path).is_ok() {
                removed += 1;
            }
        }
        removed
    }
}

/// Episode names are ours: printable, no white space (see `capture`'s naming).
fn is_episode_name(text: &str) -> bool {
    is_name_line(text.as_bytes())
}

/// [`is_episode_name`] of a journal line's bytes (an ASCII graphic byte is UTF-8 by itself).
fn is_name_line(line: &[u8]) -> bool {
    !line.is_empty() && line.iter().all(u8::is_ascii_graphic)
}

/// The wait after `failures` failed attempts in a row: initial × 2^(failures-1), capped.
pub fn backoff_delay_ms(failures: u32, initial_ms: u64, max_ms: u64) -> u64 {
    let exponent = failures.saturating_sub(1).min(40);
    initial_ms.saturating_mul(1u64 << exponent).min(max_ms)
}

mod requeue;
pub use requeue::Requeued;

mod depth;
#[cfg(test)]
mod tests;

pub use depth::{Depth, queued};
