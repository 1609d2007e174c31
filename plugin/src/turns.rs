//! The last turn of each session, kept in the state directory for `/graphiti debug`: what recall did,
//! what routing decided and why, what was injected. A file per session, so whichever component
//! instance ran the turn, any instance can show it.

use crate::decision::Injection;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Sessions whose last turn is kept; older ones are pruned when the counters are saved.
const KEPT_SESSIONS: usize = 200;
const PROMPT_SHOWN_CHARS: usize = 200;

#[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
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
    /// The relevance floor's verdict on each recalled fact and entity (bounded; empty when off).
    #[serde(default)]
    pub relevance: Vec<String>,
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
            prompt: crate::text::truncate_chars(prompt, PROMPT_SHOWN_CHARS),
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
            prompt_digest: Some(crate::capture::prompt_digest(prompt)),
            relevance: vec![],
        }
    }

    /// What capture needs to remove exactly this turn's injection (None for older records).
    pub fn injection(self) -> Option<crate::capture::Injected> {
        Some(crate::capture::Injected {
            prompt_digest: self.prompt_digest?,
            text: self.injected,
        })
    }

    pub fn render(&self) -> String {
        let mut out = format!(
            "last turn of session {} at {}\nprompt: {:?}\n",
            self.session_key,
            crate::time::iso8601(self.at_ms),
            self.prompt
        );
        if let Some(group) = &self.group_id {
            out.push_str(&format!("graphiti group: {group}\n"));
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

fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("last-turns")
}

/// Overwrites the session's record in place, padding with spaces (JSON allows trailing whitespace)
/// rather than truncating: creating and renaming a file, or truncating one, costs more than the rest
/// of a turn on some file systems. A torn record (two instances writing one session at once) only
/// means `debug` shows nothing for that session, never a wrong decision.
pub fn save(state_dir: &Path, record: &TurnRecord) -> Result<(), String> {
    let path = crate::state::file_for(&dir(state_dir), &record.session_key);
    let mut bytes = serde_json::to_vec(record).unwrap_or_default();
    let write = |bytes: &mut Vec<u8>| -> std::io::Result<()> {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        let old_len = file.metadata()?.len() as usize;
        if old_len > bytes.len() {
            bytes.resize(old_len, b' ');
        }
        file.write_all(bytes)
    };
    write(&mut bytes)
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                fs::create_dir_all(dir(state_dir)).and_then(|()| write(&mut bytes))
            }
            _ => Err(e),
        })
        .map_err(|e| format!("cannot write the last-turn record {}: {e}", path.display()))
}

/// The session's last turn, or the most recent turn of any session.
pub fn load(state_dir: &Path, session_key: Option<&str>) -> Result<Option<TurnRecord>, String> {
    let read =
        |path: &Path| -> Option<TurnRecord> { serde_json::from_slice(&fs::read(path).ok()?).ok() };
    if let Some(key) = session_key {
        let record = read(&crate::state::file_for(&dir(state_dir), key));
        return Ok(record.filter(|r| r.session_key == key));
    }
    Ok(records(state_dir)?
        .into_iter()
        .max_by_key(|(_, r)| r.at_ms)
        .map(|(_, r)| r))
}

fn records(state_dir: &Path) -> Result<Vec<(PathBuf, TurnRecord)>, String> {
    let entries = match fs::read_dir(dir(state_dir)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(format!("cannot list {}: {e}", dir(state_dir).display())),
    };
    Ok(entries
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            let record = serde_json::from_slice(&fs::read(&path).ok()?).ok()?;
            Some((path, record))
        })
        .collect())
}

/// Keeps the most recent sessions' records only.
pub fn prune(state_dir: &Path) {
    // Counting is cheap; records are read only when there are too many.
    if fs::read_dir(dir(state_dir)).map_or(0, Iterator::count) <= KEPT_SESSIONS {
        return;
    }
    let Ok(mut all) = records(state_dir) else {
        return;
    };
    crate::sorting::sort_by_key(&mut all, |(_, r)| std::cmp::Reverse(r.at_ms));
    for (path, _) in all.into_iter().skip(KEPT_SESSIONS) {
        let _ = fs::remove_file(path);
    }
}
