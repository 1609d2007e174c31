//! The last turn of each session, kept in the state directory for `/graphiti debug`: what recall did,
//! what routing decided and why, what was injected. A file per session, so whichever component
//! instance ran the turn, any instance can show it.

use crate::platform::files::Kept;
use crate::routing::decision::{Injection, RuleScore};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// Sessions whose last turn is kept; older ones are pruned when the counters are saved (at most
/// once a minute).
pub const KEPT_SESSIONS: usize = 200;
/// A larger record is not read (a record is a few kilobytes: its injection is bounded).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
const PROMPT_SHOWN_CHARS: usize = 200;

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct TurnRecord {
    pub at_ms: u64,
    pub session_key: String,
    pub prompt: String,
    pub group_id: Option<String>,
    /// "recalled 3 facts, 2 entities", "fallback: …", "skipped: …".
    pub recall: String,
    pub intent: Option<String>,
    pub packs: Vec<String>,
    pub no_pack_reason: Option<String>,
    pub trace: Vec<String>,
    pub injected_chars: usize,
    pub notes: Vec<String>,
    /// Exactly what was prepended to the prompt, so capture removes that and nothing else.
    #[serde(default)]
    pub injected: Option<String>,
    /// `capture::prompt_digest` of the whole prompt: whether a captured message is this turn's.
    #[serde(default)]
    pub prompt_digest: Option<u64>,
    /// Why the turn's input was not the user's (nothing recalled or routed): its `agent-end` does not
    /// capture it, though the host may not say so again there.
    #[serde(default)]
    pub not_users: Option<String>,
    /// The host's run id of a turn whose input was not the user's: which `agent-end` is its.
    #[serde(default)]
    pub run_id: Option<String>,
    /// The relevance floor's verdict on each recalled fact and entity (bounded; empty when off).
    #[serde(default)]
    pub relevance: Vec<String>,
    /// Who the turn was with, as the host named them: what `group-ids` recomputes a group from.
    #[serde(default)]
    pub conversation: Option<RecordedConversation>,
    /// Each candidate rule's score against its floor: what the session panel draws.
    #[serde(default)]
    pub scores: Vec<RuleScore>,
}

/// The values a group id is filled from, as a turn's host gave them.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct RecordedConversation {
    pub agent_id: Option<String>,
    pub sender_id: Option<String>,
    pub chat_id: Option<String>,
    pub channel: Option<String>,
    pub group_chat: bool,
}

impl RecordedConversation {
    pub fn of(ctx: &crate::platform::api::HookContext) -> RecordedConversation {
        RecordedConversation {
            agent_id: ctx.agent_id.clone(),
            sender_id: ctx.sender_id.clone(),
            chat_id: ctx.chat_id.clone(),
            channel: ctx.channel.clone(),
            group_chat: ctx.chat_type == crate::platform::api::ChatType::Group,
        }
    }
}

impl TurnRecord {
    pub fn new(
        at_ms: u64,
        session_key: &str,
        prompt: &str,
        group_id: Option<String>,
        recall: String,
        injection: &Injection,
    ) -> TurnRecord {
        let d = &injection.decision;
        TurnRecord {
            at_ms,
            session_key: session_key.into(),
            prompt: crate::platform::text::truncate_chars(prompt, PROMPT_SHOWN_CHARS),
            group_id,
            recall,
            intent: d.intent.clone(),
            packs: d
                .primary_pack
                .iter()
                .chain(&d.additional_packs)
                .cloned()
                .collect(),
            no_pack_reason: d.no_pack_reason.clone(),
            trace: d.trace.clone(),
            injected_chars: injection
                .prepend_context
                .as_ref()
                .map_or(0, |c| c.chars().count()),
            notes: injection.notes.clone(),
            injected: injection.prepend_context.clone(),
            prompt_digest: Some(crate::memory::capture::prompt_digest(prompt)),
            not_users: None,
            run_id: None,
            relevance: vec![],
            conversation: None,
            scores: d
                .candidates
                .iter()
                .map(|c| RuleScore {
                    rule: c.intent.clone(),
                    score: c.score,
                    min_confidence: c.min_confidence,
                    suppressed_by: c.suppressed_by.clone(),
                })
                .collect(),
        }
    }

    /// What capture needs to remove exactly this turn's injection (None for older records).
    pub fn injection(&self) -> Option<crate::memory::capture::Injected> {
        Some(crate::memory::capture::Injected {
            prompt_digest: self.prompt_digest?,
            text: self.injected.clone(),
        })
    }

    pub fn render(&self) -> String {
        let mut out = format!(
            "last turn of session {} at {}\nprompt: {:?}\n",
            self.session_key,
            crate::platform::time::iso8601(self.at_ms),
            self.prompt
        );
        if let Some(group) = &self.group_id {
            out.push_str(&format!("graphiti group: {group}\n"));
        }
        if let Some(why) = &self.not_users {
            out.push_str(&format!("input: {why}\n"));
        }
        out.push_str(&format!("recall: {}\n", self.recall));
        if let Some((headline, items)) = self.relevance.split_first() {
            out.push_str(&format!("{headline}\n"));
            for item in items {
                out.push_str(&format!("  - {item}\n"));
            }
        }
        match (&self.intent, self.packs.is_empty()) {
            (Some(intent), false) => out.push_str(&format!(
                "intent: {intent}; packs: {}\n",
                self.packs.join(", ")
            )),
            _ => out.push_str(&format!(
                "no pack: {}\n",
                self.no_pack_reason.as_deref().unwrap_or("none chosen")
            )),
        }
        out.push_str(&format!("injected: {} characters\n", self.injected_chars));
        if !self.trace.is_empty() {
            out.push_str("trace:\n");
            for step in &self.trace {
                out.push_str(&format!("  - {step}\n"));
            }
        }
        for note in &self.notes {
            out.push_str(&format!("note: {note}\n"));
        }
        out
    }
}

/// Where the last-turn records are.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("last-turns")
}

/// Overwrites the session's record in place ([`crate::platform::files::write_in_place`]): creating and renaming
/// a file, or truncating one, costs more than the rest of a turn on some file systems. A torn record
/// (a crash mid-write) only means `debug` shows nothing for that session and capture strips nothing
/// it cannot recognise, never a wrong decision. The instance keeps the record in `kept`, for the
/// session's `agent-end`.
pub fn save(
    kept: &mut Kept<TurnRecord>,
    state_dir: &Path,
    record: TurnRecord,
) -> Result<(), String> {
    let path = crate::routing::state::file_for(&dir(state_dir), &record.session_key);
    let bytes = serde_json::to_vec(&record).unwrap_or_default();
    kept.write(&path, &bytes, record)
        .map_err(|e| format!("cannot write the last-turn record {}: {e}", path.display()))
}

/// What capture needs of the session's last turn: from `kept` while its file is unchanged.
pub fn injection_of(
    kept: &mut Kept<TurnRecord>,
    state_dir: &Path,
    session_key: &str,
) -> Option<crate::memory::capture::Injected> {
    let path = crate::routing::state::file_for(&dir(state_dir), session_key);
    kept.read(&path, MAX_FILE_BYTES)
        .ok()
        .flatten()
        .filter(|r| r.session_key == session_key)
        .and_then(TurnRecord::injection)
}

/// Why the session's last turn, when it is the turn of `run_id`, was not the user's: its prompt hook
/// found so (a record without a run id, or a host without one, counts as the same turn).
pub fn not_users(
    kept: &mut Kept<TurnRecord>,
    state_dir: &Path,
    session_key: &str,
    run_id: Option<&str>,
) -> Option<String> {
    let path = crate::routing::state::file_for(&dir(state_dir), session_key);
    let record = kept
        .read(&path, MAX_FILE_BYTES)
        .ok()
        .flatten()
        .filter(|r| r.session_key == session_key)?;
    let same_turn = match (record.run_id.as_deref(), run_id) {
        (Some(recorded), Some(this)) => recorded == this,
        _ => true,
    };
    record.not_users.clone().filter(|_| same_turn)
}

/// The session's last turn, or the most recent turn of any session.
pub fn load(state_dir: &Path, session_key: Option<&str>) -> Result<Option<TurnRecord>, String> {
    let read = |path: &Path| -> Option<TurnRecord> {
        crate::platform::files::parse_first(&crate::platform::files::read(path).ok()?).ok()
    };
    if let Some(key) = session_key {
        let record = read(&crate::routing::state::file_for(&dir(state_dir), key));
        return Ok(record.filter(|r| r.session_key == key));
    }
    Ok(records(state_dir)?
        .into_iter()
        .max_by_key(|(_, r)| r.at_ms)
        .map(|(_, r)| r))
}

/// Every session's kept record.
pub fn all(state_dir: &Path) -> Result<Vec<TurnRecord>, String> {
    Ok(records(state_dir)?.into_iter().map(|(_, r)| r).collect())
}

fn records(state_dir: &Path) -> Result<Vec<(PathBuf, TurnRecord)>, String> {
    let dir = dir(state_dir);
    let names = match crate::platform::files::list_names(&dir) {
        Ok(names) => names,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    Ok(names
        .into_iter()
        .filter_map(|name| {
            let path = dir.join(name);
            let record =
                crate::platform::files::parse_first(&crate::platform::files::read(&path).ok()?)
                    .ok()?;
            Some((path, record))
        })
        .collect())
}

/// Removes the records of turns whose memories went to one of `groups` and whose prompt or
/// injected blocks `mentions` what was forgotten. Returns how many.
pub fn forget_groups(
    state_dir: &Path,
    groups: &[String],
    mentions: &dyn Fn(&str) -> bool,
) -> Result<usize, String> {
    let mut removed = 0;
    for (path, record) in records(state_dir)? {
        let in_group = record.group_id.as_ref().is_some_and(|g| groups.contains(g));
        if in_group
            && (mentions(&record.prompt) || record.injected.as_deref().is_some_and(mentions))
        {
            fs::remove_file(&path)
                .map_err(|e| format!("cannot remove the turn record {}: {e}", path.display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Marks the session's last turn as not the user's to remember (`why`): its `agent-end` captures
/// nothing of it.
pub fn keep_out_of_capture(
    kept: &mut Kept<TurnRecord>,
    state_dir: &Path,
    session_key: &str,
    why: &str,
) -> Result<(), String> {
    let path = crate::routing::state::file_for(&dir(state_dir), session_key);
    let mut record = kept
        .read(&path, MAX_FILE_BYTES)
        .ok()
        .flatten()
        .filter(|r| r.session_key == session_key)
        .cloned()
        .unwrap_or_else(|| TurnRecord {
            session_key: session_key.to_string(),
            ..TurnRecord::default()
        });
    record.not_users = Some(why.to_string());
    record.run_id = None;
    save(kept, state_dir, record)
}

/// The session's record as this instance last read or wrote it, while its file is unchanged.
pub fn kept_record(
    kept: &mut Kept<TurnRecord>,
    state_dir: &Path,
    session_key: &str,
) -> Option<TurnRecord> {
    let path = crate::routing::state::file_for(&dir(state_dir), session_key);
    kept.read(&path, MAX_FILE_BYTES)
        .ok()
        .flatten()
        .filter(|r| r.session_key == session_key)
        .cloned()
}

/// Keeps the most recent sessions' records only.
pub fn prune(state_dir: &Path) {
    // Counting is cheap; records are read only when there are too many.
    if crate::platform::files::list_names(&dir(state_dir)).map_or(0, |names| names.len())
        <= KEPT_SESSIONS
    {
        return;
    }
    let Ok(mut all) = records(state_dir) else {
        return;
    };
    crate::platform::sorting::sort_by_key(&mut all, |(_, r)| std::cmp::Reverse(r.at_ms));
    for (path, _) in all.into_iter().skip(KEPT_SESSIONS) {
        let _ = fs::remove_file(path);
    }
}

/// The last-turn records as this instance last read or wrote them, and when they were last pruned
/// (at most once a minute).
pub struct TurnsState {
    pub kept: Kept<TurnRecord>,
    pub pruned_at_ms: u64,
}

impl Default for TurnsState {
    fn default() -> Self {
        TurnsState {
            kept: Kept::new(crate::routing::state::KEPT_SESSIONS),
            pruned_at_ms: 0,
        }
    }
}
