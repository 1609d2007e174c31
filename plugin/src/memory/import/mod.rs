//! Importing what OpenClaw already remembers into Graphiti: memory-core's files (`MEMORY.md`,
//! `USER.md`, imported notes and, when asked, daily notes) into one group, and, when asked, past
//! conversations (staged by the OpenClaw adapter, see [`transcripts`]) each turn into its own
//! chat's group; each item once, at a pace Graphiti can take.
//!
//! - **Once.** An item's episode name is made of its group, its file and its text: an import run
//!   again (or after a kill) finds it in the ledger (`import/ledger`, a name per line) and sends
//!   nothing twice; a changed entry is a new item and sends only itself. An entry removed from a
//!   file deletes nothing in Graphiti.
//! - **Through the spool.** The job (`import/job.json`) and its queue (planned once, see
//!   [`queue`]) are fed into the capture spool by the sending pass itself, under the send lock
//!   and before it sends: an item appended but not yet in the ledger (a kill between the two) is
//!   still in the spool when the next pass looks, and is recognised there by its stem, so it is
//!   neither lost nor spooled twice.
//! - **Paced.** At most `capture.import_per_minute` are fed, and only while fewer than
//!   [`WINDOW`] episodes wait in the spool: live turns never queue behind more than that, Graphiti
//!   down stops the feed (nothing is lost), and an import can never fill the spool.

mod item;
pub mod markdown;
mod progress;
mod queue;
pub mod transcripts;
pub mod workspace;

use crate::config::Redact;
use crate::memory::graphiti::{Episode, EpisodeKind};
use crate::memory::redaction;
use crate::memory::spool::{self, Appended, Entry, Spool};
use crate::platform::time;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;
use workspace::FileKind;

pub use item::{Item, MAX_ITEM_CHARS, item_name};
pub use progress::{render_plan, render_progress, status_line};

/// Import episodes fed only while fewer than this many episodes (of any kind) wait in the spool.
pub const WINDOW: usize = 8;
/// The range of Graphiti's LLM calls for one episode (extraction, deduplication, summaries), for
/// the dry run's estimate.
pub const LLM_CALLS_PER_EPISODE: (u64, u64) = (4, 10);

/// Why a `USER.md` entry is not imported when it has no dated metadata line.
const NOT_A_DIRECTIVE: &str = "not a dated directive (memory-core's `<!-- observed: YYYY-MM-DD | status: … -->` line is not before it): instructions or a placeholder";

const JOB_FILE: &str = "import/job.json";
const LEDGER_FILE: &str = "import/ledger";

/// What to import, and where to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Options {
    pub group_id: String,
    /// Who the workspace files are about, for the episodes' speaker.
    pub user_name: Option<String>,
    pub daily_notes: bool,
    /// Whether the transcripts the OpenClaw adapter staged are imported too.
    #[serde(default)]
    pub transcripts: bool,
}

/// What an import would send, oldest first, and what it leaves out and why.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub options: Option<Options>,
    pub items: Vec<Item>,
    /// Files (or directories) not read, with why.
    pub skipped: Vec<workspace::Skipped>,
    /// Entries not imported: their file and why.
    pub skipped_entries: Vec<(String, String)>,
    /// Daily notes left out because they were not asked for: files and entries.
    pub daily_notes_left_out: (usize, usize),
    /// What the reader of the plan should know (what OpenClaw does not tell plugins).
    pub notes: Vec<String>,
}

/// The items of the workspace at `root` for `options`, oldest first (a file's entries in order).
pub fn plan(root: &Path, options: &Options) -> Plan {
    let (found, skipped) = workspace::find(root);
    let mut plan = Plan {
        options: Some(options.clone()),
        skipped,
        ..Plan::default()
    };
    for file in found {
        let (text, modified_ms) = match workspace::read(root, &file.relative) {
            Ok(read) => read,
            Err(why) => {
                plan.skipped.push(workspace::Skipped {
                    relative: file.relative,
                    why,
                });
                continue;
            }
        };
        let file_ms = modified_ms.unwrap_or(0);
        let entries = match file.kind {
            FileKind::User => markdown::directives(&text),
            _ => markdown::entries(&text),
        };
        if file.kind == FileKind::DailyNote && !options.daily_notes {
            plan.daily_notes_left_out.0 += 1;
            plan.daily_notes_left_out.1 += entries.len();
            continue;
        }
        let day_ms = workspace::daily_note_date(file.relative.rsplit('/').next().unwrap_or(""))
            .and_then(time::noon_of_date);
        for entry in entries {
            let observed_ms = entry.observed.as_deref().and_then(time::noon_of_date);
            // OpenClaw seeds USER.md with instructions and a placeholder directive: only dated
            // directives are the user's.
            if file.kind == FileKind::User && observed_ms.is_none() {
                plan.skipped_entries
                    .push((file.relative.clone(), NOT_A_DIRECTIVE.into()));
                continue;
            }
            let text = item_text(&entry);
            if text.chars().count() > MAX_ITEM_CHARS {
                plan.skipped_entries.push((
                    file.relative.clone(),
                    format!("an entry longer than {MAX_ITEM_CHARS} characters"),
                ));
                continue;
            }
            plan.items.push(Item {
                name: item_name(&options.group_id, &file.relative, &text),
                source: file.relative.clone(),
                kind: file.kind,
                text,
                assistant: String::new(),
                group_id: options.group_id.clone(),
                user_name: options.user_name.clone(),
                reference_ms: observed_ms.or(day_ms).unwrap_or(file_ms),
            });
        }
    }
    oldest_first(&mut plan);
    plan
}

/// The workspace's plan with the staged transcripts' turns added when `options` asks for them
/// (`decide` gives a turn its group, or why it is skipped).
pub fn plan_with_transcripts(
    root: Option<&Path>,
    state_dir: Option<&Path>,
    options: &Options,
    decide: &transcripts::Decide,
) -> Plan {
    let mut plan = match root {
        Some(root) => plan(root, options),
        None => Plan {
            options: Some(options.clone()),
            ..Plan::default()
        },
    };
    if !options.transcripts {
        return plan;
    }
    match state_dir.and_then(|dir| transcripts::plan(dir, decide)) {
        Some(staged) => {
            plan.items.extend(staged.items);
            plan.skipped_entries.extend(staged.skipped);
            plan.notes.extend(staged.notes);
            oldest_first(&mut plan);
        }
        None => plan.skipped_entries.push((
            "transcripts".into(),
            "nothing staged: only `openclaw graphiti import --sender ID --transcripts` reads OpenClaw's sessions"
                .into(),
        )),
    }
    plan
}

/// Oldest first (a file's entries keep their order: the sort is stable), each item once.
fn oldest_first(plan: &mut Plan) {
    crate::platform::sorting::sort_by_key(&mut plan.items, |item| item.reference_ms);
    let mut seen = HashSet::new();
    plan.items.retain(|item| seen.insert(item.name.clone()));
}

/// What Graphiti is given for an entry: its heading as context, a directive's dates.
fn item_text(entry: &markdown::Entry) -> String {
    let body = without_list_marker(&entry.text);
    let body = match entry.heading.as_deref() {
        Some(heading) => format!("{heading}: {body}"),
        None => body.to_string(),
    };
    match (&entry.superseded, entry.observed.as_deref()) {
        (Some(replaced), observed) => {
            let since = observed.map_or(String::new(), |d| format!("observed {d}, "));
            let until = replaced
                .as_deref()
                .map_or("superseded".to_string(), |d| format!("superseded on {d}"));
            format!("No longer true ({since}{until}): {body}")
        }
        (None, Some(observed)) => format!("User preference (observed {observed}): {body}"),
        (None, None) => body,
    }
}

fn without_list_marker(text: &str) -> &str {
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = text.strip_prefix(marker) {
            return rest;
        }
    }
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    match text.get(digits..digits + 2) {
        Some(". " | ") ") if digits > 0 => &text[digits + 2..],
        _ => text,
    }
}

/// An import under way: what it imports, and how far the feed got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub options: Options,
    pub started_ms: u64,
    /// When the feed last put items in the spool.
    pub last_fed_ms: u64,
    /// Items the feed put in the spool for this job.
    pub fed: u64,
    /// Items in the job's queue.
    pub items: u64,
    /// Items already imported by an earlier run when this job started.
    pub already: u64,
    pub finished_ms: Option<u64>,
    /// The queue the cursor belongs to (its header's digest).
    #[serde(default)]
    pub queue: String,
    /// The byte offset in the queue of the next item not yet passed.
    #[serde(default)]
    pub cursor: u64,
    /// Items of the queue passed (fed, found sent, or skipped).
    #[serde(default)]
    pub position: u64,
    /// The spool stems' hashes of items fed and not yet seen sent.
    #[serde(default)]
    pub in_flight: Vec<String>,
    /// Items passed because their chat was paused when their turn came.
    #[serde(default)]
    pub paused: u64,
    /// The run id of the command that started it: its later calls go on with it, finished or not.
    #[serde(default)]
    pub run: Option<String>,
}

impl Job {
    pub fn load(state_dir: &Path) -> Result<Option<Job>, String> {
        let path = state_dir.join(JOB_FILE);
        match crate::platform::files::read_regular(&path, 64 * 1024) {
            Ok(None) => Ok(None),
            Ok(Some(bytes)) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| format!("the import job {} cannot be read: {e}", path.display())),
            Err(e) => Err(format!(
                "the import job {} cannot be read: {e}",
                path.display()
            )),
        }
    }

    pub fn save(&self, state_dir: &Path) -> Result<(), String> {
        let path = state_dir.join(JOB_FILE);
        std::fs::create_dir_all(state_dir.join("import"))
            .and_then(|()| {
                crate::platform::files::write_atomically(
                    &path,
                    &serde_json::to_vec(self).unwrap_or_default(),
                )
            })
            .map_err(|e| format!("cannot write the import job {}: {e}", path.display()))
    }
}

/// The names of the items imported so far (a torn last line, from a crash, is not a name).
pub fn ledger(state_dir: &Path) -> HashSet<String> {
    // Bounded, and never a FIFO or a device: a ledger of 20,000 names is about a megabyte.
    let bytes = crate::platform::files::read_regular(&state_dir.join(LEDGER_FILE), 64 << 20)
        .ok()
        .flatten()
        .unwrap_or_default();
    names(&bytes)
}

/// The names recorded last: a sending pass needs only these, since an item at the cursor that is
/// in the ledger was recorded by a pass killed before it saved the cursor, a few items ago.
fn ledger_tail(state_dir: &Path) -> HashSet<String> {
    const TAIL_BYTES: u64 = 64 << 10;
    let path = state_dir.join(LEDGER_FILE);
    let len = std::fs::symlink_metadata(&path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map_or(0, |m| m.len());
    let from = len.saturating_sub(TAIL_BYTES);
    let bytes =
        crate::platform::files::read_from(&path, from, TAIL_BYTES as usize).unwrap_or_default();
    // A tail that starts mid-name drops its first, partial line.
    let whole = match (from, bytes.iter().position(|&b| b == b'\n')) {
        (0, _) => &bytes[..],
        (_, Some(at)) => &bytes[at + 1..],
        (_, None) => &[][..],
    };
    names(whole)
}

fn names(bytes: &[u8]) -> HashSet<String> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .filter(|line| line.starts_with("openclaw-import-") && line.len() > 32)
        .map(str::to_string)
        .collect()
}

fn record(state_dir: &Path, names: &[&str]) -> Result<(), String> {
    use std::io::Write;
    let path = state_dir.join(LEDGER_FILE);
    let mut lines = String::new();
    for name in names {
        lines.push_str(name);
        lines.push('\n');
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| {
            // A line torn by an earlier crash must not swallow the first name.
            let len = file.metadata()?.len();
            let torn = len > 0 && crate::platform::files::read_from(&path, len - 1, 1)? != b"\n";
            if torn {
                file.write_all(b"\n")?;
            }
            file.write_all(lines.as_bytes())
        })
        .map_err(|e| format!("cannot write the import ledger {}: {e}", path.display()))
}

/// The stem's hash part an item's spool entry has (stems end with the hash of the episode name).
fn stem_hash(name: &str) -> String {
    format!("{:016x}", spool::stable_hash(name))
}

/// Whether capture into a group (the second argument) is paused, in a state directory.
pub type PausedCheck = dyn Fn(&Path, &str) -> bool;

/// What the sending pass needs to feed a job.
pub struct Feeder {
    pub per_minute: u32,
    pub redact: Vec<Redact>,
    pub max_episodes: usize,
    /// Why nothing is imported now (capture is off), if it is not.
    pub held: Option<String>,
    /// Whether capture into a group is paused now: its items are passed, as a live turn there is.
    pub is_paused: Box<PausedCheck>,
}

/// What one feed did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fed {
    /// Items put in the spool now.
    pub fed: usize,
    /// Items found in the spool that the ledger lacked (a run killed between the two).
    pub recovered: usize,
    /// Items of the queue not passed yet.
    pub remaining: usize,
    /// The job's items waiting in the spool.
    pub in_spool: usize,
    pub finished: bool,
    /// Why nothing was fed though items remain (capture off), if so.
    pub held: Option<String>,
}

impl Feeder {
    /// Feeds the job in the state directory, if any and not finished, given the spool's `listed`
    /// entries; Ok(None) when there is no job to feed. It reads the queue from the job's cursor
    /// only: a pass costs the same however many items are left.
    pub fn feed(&self, spool: &Spool, listed: &[Entry], now: u64) -> Result<Option<Fed>, String> {
        let state_dir = spool.state_dir();
        let Some(mut job) = Job::load(state_dir)? else {
            return Ok(None);
        };
        if job.finished_ms.is_some() {
            return Ok(None);
        }
        let (header, first) = queue::header(state_dir)?;
        if header.digest != job.queue {
            (job.queue, job.cursor, job.position, job.items) =
                (header.digest, first, 0, header.items);
        }
        job.cursor = job.cursor.max(first);
        let waiting: HashSet<&str> = listed
            .iter()
            .filter(|e| e.state.is_queued())
            .filter_map(|e| e.stem.rsplit('-').next())
            .collect();
        let spooled: HashSet<&str> = listed
            .iter()
            .filter_map(|e| e.stem.rsplit('-').next())
            .collect();
        job.in_flight.retain(|hash| waiting.contains(hash.as_str()));
        let queued = spool::queued(listed);
        let interval = 60_000 / u64::from(self.per_minute.max(1));
        let due = (now.saturating_sub(job.last_fed_ms) / interval) as usize;
        let room = WINDOW
            .saturating_sub(queued)
            .min((self.max_episodes / 2).saturating_sub(queued));
        let allowed = if self.held.is_some() {
            0
        } else {
            due.min(room)
        };
        let mut fed = Fed {
            held: self.held.clone(),
            ..Fed::default()
        };
        let moved = self.pass_queue(spool, &spooled, &mut job, allowed, &mut fed)?;
        fed.remaining = job.items.saturating_sub(job.position) as usize;
        fed.in_spool = job.in_flight.len();
        if fed.fed > 0 {
            job.last_fed_ms = now;
            job.fed += fed.fed as u64;
        }
        fed.finished = fed.remaining == 0 && fed.in_spool == 0;
        if fed.finished {
            job.finished_ms = Some(now);
        }
        if moved || fed.finished {
            job.save(state_dir)?;
        }
        Ok(Some(fed))
    }

    /// Passes the queue from the cursor: items already sent or spooled are recorded and passed,
    /// items of a paused chat passed, and up to `allowed` items fed. Whether the job moved.
    fn pass_queue(
        &self,
        spool: &Spool,
        spooled: &HashSet<&str>,
        job: &mut Job,
        allowed: usize,
        fed: &mut Fed,
    ) -> Result<bool, String> {
        let state_dir = spool.state_dir();
        let done = ledger_tail(state_dir);
        let mut paused: std::collections::HashMap<String, bool> = Default::default();
        let start = job.position;
        'chunks: loop {
            let chunk = queue::read_from(state_dir, job.cursor)?;
            if chunk.is_empty() {
                break;
            }
            for (item, next) in chunk {
                let hash = stem_hash(&item.name);
                if done.contains(&item.name) {
                } else if spooled.contains(hash.as_str()) {
                    record(state_dir, &[item.name.as_str()])?;
                    fed.recovered += 1;
                    job.in_flight.push(hash);
                } else if *paused
                    .entry(item.group_id.clone())
                    .or_insert_with(|| (self.is_paused)(state_dir, &item.group_id))
                {
                    job.paused += 1;
                } else if fed.fed >= allowed {
                    break 'chunks;
                } else {
                    match spool.append(&self.episode(&item), self.max_episodes / 2)? {
                        Appended::Spooled => record(state_dir, &[item.name.as_str()])?,
                        Appended::Full(_) => break 'chunks,
                    }
                    fed.fed += 1;
                    job.in_flight.push(hash);
                }
                job.cursor = next;
                job.position += 1;
            }
        }
        Ok(job.position != start || fed.fed > 0)
    }

    fn episode(&self, item: &queue::Queued) -> Episode {
        let [user, assistant] =
            redaction::redact_exchange(&[&item.user, &item.assistant], &self.redact)
                .map(|redacted| redacted.text);
        let (source_description, kind) = if item.transcript {
            (
                format!("OpenClaw {} (imported)", item.source),
                EpisodeKind::Turn,
            )
        } else {
            (
                format!("OpenClaw memory-core, {} (imported)", item.source),
                EpisodeKind::Note,
            )
        };
        Episode {
            name: item.name.clone(),
            group_id: item.group_id.clone(),
            user,
            assistant,
            user_name: item.user_name.clone(),
            reference_time: time::iso8601(item.reference_ms),
            source_description,
            kind,
        }
    }
}

/// Starts (or restarts with a fresh queue) the job for `options`: its queue is what `plan` has
/// that the ledger does not; the items an earlier run already imported stay imported.
pub fn start(
    state_dir: &Path,
    plan: &Plan,
    options: &Options,
    now: u64,
    per_minute: u32,
    run: Option<String>,
) -> Result<Job, String> {
    let done = ledger(state_dir);
    let new: Vec<&Item> = plan
        .items
        .iter()
        .filter(|i| !done.contains(&i.name))
        .collect();
    let already = (plan.items.len() - new.len()) as u64;
    let header = queue::write(state_dir, &new)?;
    let interval = 60_000 / u64::from(per_minute.max(1));
    // An unreadable job is replaced: the ledger, not the job, says what was sent.
    let mut job = match Job::load(state_dir).ok().flatten() {
        Some(job) if job.options == *options && job.finished_ms.is_none() => job,
        _ => Job {
            options: options.clone(),
            started_ms: now,
            last_fed_ms: now.saturating_sub(interval),
            fed: 0,
            items: 0,
            already,
            finished_ms: None,
            queue: String::new(),
            cursor: 0,
            position: 0,
            in_flight: Vec::new(),
            paused: 0,
            run: None,
        },
    };
    job.run = run;
    (job.queue, job.cursor, job.position, job.items) = (header.digest, 0, 0, header.items);
    job.save(state_dir)?;
    Ok(job)
}

#[cfg(test)]
mod tests;
