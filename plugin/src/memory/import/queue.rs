//! The items an import still has to send, in order, planned once when it starts
//! (`import/queue.jsonl`): each sending pass reads only the next few from its cursor, so a pass
//! costs the same with 20 or 20,000 items to go, and the workspace and the transcripts are not
//! read again while the import runs. The first line names the queue (its items' digest): a job whose
//! cursor belongs to another queue (a kill between writing the queue and the job) starts it over,
//! which the ledger makes safe.

use super::item::Item;
use super::workspace::FileKind;
use crate::memory::spool;
use serde::{Deserialize, Serialize};
use std::path::Path;

const QUEUE_FILE: &str = "import/queue.jsonl";
/// Read this much of the queue at a time: a few items; more when one item is larger.
const CHUNK_BYTES: usize = 16 << 10;
/// No queued item is larger (an item's text is bounded well below it).
const MAX_LINE_BYTES: usize = 4 << 20;

/// One item as the queue keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queued {
    pub name: String,
    pub group_id: String,
    pub source: String,
    pub transcript: bool,
    pub user: String,
    #[serde(default)]
    pub assistant: String,
    #[serde(default)]
    pub user_name: Option<String>,
    pub reference_ms: u64,
}

impl Queued {
    pub fn of(item: &Item) -> Queued {
        Queued {
            name: item.name.clone(),
            group_id: item.group_id.clone(),
            source: item.source.clone(),
            transcript: item.kind == FileKind::Transcript,
            user: item.text.clone(),
            assistant: item.assistant.clone(),
            user_name: item.user_name.clone(),
            reference_ms: item.reference_ms,
        }
    }
}

#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub digest: String,
    pub items: u64,
}

/// Writes the queue of `items` (oldest first) atomically; its header.
pub fn write(state_dir: &Path, items: &[&Item]) -> Result<Header, String> {
    let mut names = String::new();
    let mut body = String::new();
    for item in items {
        names.push_str(&item.name);
        names.push('\n');
        body.push_str(&serde_json::to_string(&Queued::of(item)).unwrap_or_default());
        body.push('\n');
    }
    let header = Header {
        digest: format!("{:016x}", spool::stable_hash(&names)),
        items: items.len() as u64,
    };
    let mut bytes = serde_json::to_string(&header).unwrap_or_default();
    bytes.push('\n');
    bytes.push_str(&body);
    let path = state_dir.join(QUEUE_FILE);
    std::fs::create_dir_all(state_dir.join("import"))
        .and_then(|()| crate::platform::files::write_atomically(&path, bytes.as_bytes()))
        .map_err(|e| format!("cannot write the import queue {}: {e}", path.display()))?;
    Ok(header)
}

/// The queue's header and the byte offset of its first item.
pub fn header(state_dir: &Path) -> Result<(Header, u64), String> {
    let path = state_dir.join(QUEUE_FILE);
    let bytes = crate::platform::files::read_from(&path, 0, 4096)
        .map_err(|e| format!("the import queue {} cannot be read: {e}", path.display()))?;
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| format!("the import queue {} has no header", path.display()))?;
    let header = serde_json::from_slice(&bytes[..end])
        .map_err(|e| format!("the import queue {} has no header: {e}", path.display()))?;
    Ok((header, end as u64 + 1))
}

/// The items from byte `offset` on, each with the offset after it: a chunk's worth, at least one
/// unless the queue ends there.
pub fn read_from(state_dir: &Path, offset: u64) -> Result<Vec<(Queued, u64)>, String> {
    let path = state_dir.join(QUEUE_FILE);
    let mut want = CHUNK_BYTES;
    let bytes = loop {
        let bytes = crate::platform::files::read_from(&path, offset, want)
            .map_err(|e| format!("the import queue {} cannot be read: {e}", path.display()))?;
        let whole_line = bytes.contains(&b'\n');
        if whole_line || bytes.len() < want || want >= MAX_LINE_BYTES {
            break bytes;
        }
        want *= 4;
    };
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(len) = bytes[at..].iter().position(|&b| b == b'\n') {
        let line = &bytes[at..at + len];
        at += len + 1;
        let queued = serde_json::from_slice(line).map_err(|e| {
            format!(
                "the import queue {} is damaged at byte {}: {e}; run the import again",
                path.display(),
                offset + at as u64
            )
        })?;
        out.push((queued, offset + at as u64));
    }
    Ok(out)
}
