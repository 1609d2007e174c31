//! OpenClaw's past conversations as import items: what the OpenClaw adapter staged from OpenClaw's
//! session store (`import/transcripts/` in the state directory, see
//! docs/decisions/transcript-import.md), read here as a live capture reads a turn. A turn is the
//! user's message and the visible reply after it; tool results, reasoning and hidden rows are never
//! taken. Each turn goes to the group its conversation maps to today, decided per message; a turn
//! whose group needs a sender the transcript does not record is skipped, never given to the owner.

use super::item::{Item, MAX_ITEM_CHARS, item_name};
use super::workspace::FileKind;
use crate::memory::capture;
use crate::memory::group_id::SessionKey;
use crate::platform::api::{ChatType, HookContext};
use serde::Deserialize;
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;

/// The staging directory, in the state directory.
pub const STAGED_DIR: &str = "import/transcripts";
/// A staged session file larger than this is skipped whole, named.
const MAX_SESSION_BYTES: u64 = 256 << 20;
/// A staged row longer than this is skipped (the adapter replaces larger rows with a placeholder).
const MAX_ROW_BYTES: usize = 1 << 20;
/// Session kinds (the part of the key after `agent:<id>:`) that are never the user's conversation.
const NOT_CONVERSATIONS: [(&str, &str); 5] = [
    ("cron:", "a cron run"),
    ("subagent:", "a sub-agent's session"),
    ("hook:", "a hook's session"),
    ("heartbeat", "a heartbeat session"),
    ("expert:", "an expert run"),
];

/// What the adapter staged: the sessions, each in its own file, and those it could not read.
#[derive(Debug, Default, Deserialize)]
pub struct Staged {
    /// Turns older than this are not imported (None: all, as asked with `--all-transcripts`).
    #[serde(default)]
    pub since_ms: Option<u64>,
    #[serde(default)]
    pub sessions: Vec<StagedSession>,
    /// Sessions not staged, with why (deleted, archived, incognito, too large, unreadable).
    #[serde(default)]
    pub skipped: Vec<SkippedSession>,
    /// What the adapter could not learn from OpenClaw (memory-core's forgotten sessions).
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct StagedSession {
    pub file: String,
    pub session_key: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub chat_type: Option<String>,
    #[serde(default)]
    pub channel: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct SkippedSession {
    pub session: String,
    pub why: String,
}

/// Whether the adapter staged transcripts for the import it is asking for.
pub fn staged(state_dir: &Path) -> bool {
    std::fs::symlink_metadata(state_dir.join(STAGED_DIR).join("index.json"))
        .is_ok_and(|m| m.is_file())
}

/// Removes what was staged: each command's transcripts are staged for that command alone.
pub fn clear(state_dir: &Path) {
    let _ = std::fs::remove_dir_all(state_dir.join(STAGED_DIR));
}

/// The turns found, what was left out (`(source, why)`) and what the adapter could not learn.
#[derive(Debug, Default)]
pub struct Planned {
    pub items: Vec<Item>,
    pub skipped: Vec<(String, String)>,
    pub notes: Vec<String>,
}

/// What decides a turn's group (None: the turn is skipped, with why), as a live turn's would be.
pub type Decide<'a> = dyn Fn(&HookContext) -> Result<String, String> + 'a;

/// The staged transcripts as items, and what was skipped (`(source, why)`, one per turn or
/// session); None when nothing was staged.
pub fn plan(state_dir: &Path, decide: &Decide) -> Option<Planned> {
    let dir = state_dir.join(STAGED_DIR);
    let index = crate::platform::files::read_regular(&dir.join("index.json"), 16 << 20).ok()??;
    let mut skipped = Vec::new();
    let staged: Staged = match serde_json::from_slice(&index) {
        Ok(staged) => staged,
        Err(e) => {
            skipped.push((
                "transcripts".into(),
                format!("the staged index cannot be read ({e}): no transcript imported"),
            ));
            return Some(Planned {
                skipped,
                ..Planned::default()
            });
        }
    };
    skipped.extend(
        staged
            .skipped
            .iter()
            .map(|s| (format!("session {}", s.session), s.why.clone())),
    );
    let mut items = Vec::new();
    for session in &staged.sessions {
        let source = format!("session {}", session.session_key);
        if let Some(why) = not_a_conversation(&session.session_key) {
            skipped.push((source, format!("{why}: not the user's conversation")));
            continue;
        }
        let file = dir.join(&session.file);
        if session.file.contains(['/', '\\']) || session.file.starts_with('.') {
            skipped.push((
                source,
                "a staged file name outside the staging directory".into(),
            ));
            continue;
        }
        match read_session(&file, session, staged.since_ms, decide) {
            Ok((found, left_out)) => {
                items.extend(found);
                skipped.extend(left_out.into_iter().map(|why| (source.clone(), why)));
            }
            Err(why) => skipped.push((source, why)),
        }
    }
    Some(Planned {
        items,
        skipped,
        notes: staged.notes,
    })
}

/// Why a session key is not a user's conversation, if it is not.
pub fn not_a_conversation(session_key: &str) -> Option<&'static str> {
    let lower = session_key.trim().to_ascii_lowercase();
    let rest = lower.strip_prefix("agent:")?.split_once(':')?.1;
    NOT_CONVERSATIONS
        .iter()
        .find(|(prefix, _)| rest.starts_with(prefix) || rest.contains(&format!(":{prefix}")))
        .map(|(_, why)| *why)
}

/// The turns of one staged session; the reasons turns were left out.
fn read_session(
    file: &Path,
    session: &StagedSession,
    since_ms: Option<u64>,
    decide: &Decide,
) -> Result<(Vec<Item>, Vec<String>), String> {
    let stamp = crate::platform::files::stamp(file)
        .map_err(|e| format!("cannot be read: {e}"))?
        .ok_or("its staged file is missing")?;
    stamp
        .readable_within(MAX_SESSION_BYTES)
        .map_err(|e| format!("not imported: {e}"))?;
    let reader = std::io::BufReader::new(
        std::fs::File::open(file).map_err(|e| format!("cannot be read: {e}"))?,
    );
    let mut turns = Turns {
        session,
        since_ms,
        decide,
        items: Vec::new(),
        left_out: Vec::new(),
        current: None,
    };
    for line in reader.split(b'\n') {
        let line = line.map_err(|e| format!("cannot be read: {e}"))?;
        if line.len() > MAX_ROW_BYTES {
            turns.oversized();
            continue;
        }
        match serde_json::from_slice::<Value>(&line) {
            Ok(row) => turns.row(&row),
            Err(_) if line.iter().all(u8::is_ascii_whitespace) => {}
            // A torn last line (the adapter killed mid-write) is not a row.
            Err(_) => turns.left_out.push("a row that is not JSON".into()),
        }
    }
    turns.finish();
    Ok((turns.items, turns.left_out))
}

/// A turn being read: its user message, the replies after it, when it was said.
struct Turn {
    id: String,
    messages: Vec<Value>,
    at_ms: Option<u64>,
    not_users: Option<String>,
}

struct Turns<'a> {
    session: &'a StagedSession,
    since_ms: Option<u64>,
    decide: &'a Decide<'a>,
    items: Vec<Item>,
    left_out: Vec<String>,
    current: Option<Turn>,
}

impl Turns<'_> {
    fn row(&mut self, row: &Value) {
        if row.get("oversized").and_then(Value::as_bool) == Some(true) {
            return self.oversized();
        }
        let Some(message) = row.get("message") else {
            return;
        };
        match message.get("role").and_then(Value::as_str).unwrap_or("") {
            "user" => {
                self.finish();
                self.current = Some(Turn {
                    id: row
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    messages: vec![message.clone()],
                    at_ms: message
                        .get("timestamp")
                        .and_then(Value::as_u64)
                        .or_else(|| row.get("timestamp_ms").and_then(Value::as_u64)),
                    not_users: not_users(message),
                });
            }
            "assistant" => {
                if let Some(turn) = self.current.as_mut() {
                    turn.messages.push(message.clone());
                }
            }
            // Tool results, system rows, custom rows: never part of what is remembered.
            _ => {}
        }
    }

    /// A row replaced by a placeholder for its size: the turn it belongs to is left out whole.
    fn oversized(&mut self) {
        if let Some(turn) = self.current.as_mut() {
            turn.not_users = Some("a row OpenClaw replaced by a placeholder for its size".into());
        } else {
            self.left_out
                .push("a row OpenClaw replaced by a placeholder for its size".into());
        }
    }

    fn finish(&mut self) {
        let Some(turn) = self.current.take() else {
            return;
        };
        if let Some(why) = turn.not_users {
            return self.left_out.push(why);
        }
        let Some(at_ms) = turn.at_ms else {
            return self.left_out.push("a message without a time".into());
        };
        if self.since_ms.is_some_and(|since| at_ms < since) {
            return self.left_out.push(
                "older than the transcripts asked for (--all-transcripts takes them)".into(),
            );
        }
        let json = Value::Array(turn.messages).to_string();
        let (user, assistant) = match capture::last_exchange(&json, None) {
            Ok(exchange) => exchange,
            Err(why) => return self.left_out.push(why),
        };
        if user.trim().is_empty() || user.trim_start().starts_with('/') {
            return self
                .left_out
                .push("a command or an empty message, as a live turn".into());
        }
        if user.chars().count() + assistant.chars().count() > MAX_ITEM_CHARS * 4 {
            return self.left_out.push(format!(
                "a turn longer than {} characters",
                MAX_ITEM_CHARS * 4
            ));
        }
        let ctx = self.context();
        let group_id = match (self.decide)(&ctx) {
            Ok(group) => group,
            Err(why) => return self.left_out.push(why),
        };
        let source = format!("session {}", self.session.session_key);
        let identity = format!("{source}\n{}\n{user}", turn.id);
        self.items.push(Item {
            name: item_name(&group_id, &identity, &assistant),
            source,
            kind: FileKind::Transcript,
            text: user,
            assistant,
            group_id,
            user_name: ctx.sender_id.clone(),
            reference_ms: at_ms,
        });
    }

    /// The turn's context as a live turn in this session would have it: the sender and the chat
    /// from the session key (what OpenClaw recorded for the conversation), nothing guessed.
    fn context(&self) -> HookContext {
        let key = SessionKey::parse(&self.session.session_key);
        // The key says what the conversation is, as OpenClaw's own parser reads it; the row's
        // chat type only where the key does not (a session the operator opened keeps "direct").
        let chat_type = if key.group_peer.is_some() {
            ChatType::Group
        } else if key.direct_peer.is_some() {
            ChatType::Direct
        } else {
            match self.session.chat_type.as_deref() {
                Some("group" | "channel") => ChatType::Group,
                Some("direct") => ChatType::Direct,
                _ => ChatType::Unknown,
            }
        };
        HookContext {
            session_key: Some(self.session.session_key.clone()),
            session_id: self.session.session_id.clone(),
            agent_id: key.agent.map(str::to_string),
            sender_id: key.direct_peer.map(str::to_string),
            chat_id: key.group_peer.map(str::to_string),
            channel: self
                .session
                .channel
                .clone()
                .or(key.channel.map(str::to_string)),
            chat_type,
            ..HookContext::default()
        }
    }
}

/// Why a user row is not the user's words (another session's message, OpenClaw's own input).
fn not_users(message: &Value) -> Option<String> {
    let meta = message.get("__openclaw");
    let provenance = meta
        .and_then(|m| m.get("inputProvenance").or_else(|| m.get("provenance")))
        .or_else(|| message.get("provenance"))
        .and_then(|p| p.get("kind").or(Some(p)))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|kind| !kind.is_empty() && !kind.eq_ignore_ascii_case("external_user"));
    provenance.map(|kind| format!("input provenance {kind:?}: not the user's words"))
}
