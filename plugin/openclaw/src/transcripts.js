// OpenClaw's past conversations for `openclaw graphiti import --transcripts`: read through OpenClaw's
// public session store helpers (`openclaw/plugin-sdk/session-store-runtime`, never the database file)
// and staged, one session at a time, as JSON lines in the state directory, where the component
// decides what of them is remembered and where it goes (docs/decisions/transcript-import.md). This
// file only moves rows and keeps to size bounds.

import fs from 'node:fs';
import path from 'node:path';

/** Where the component looks for them (`memory::import::transcripts::STAGED_DIR`). */
export const STAGED_DIR = path.join('import', 'transcripts');
/** Without `--all-transcripts`, turns of the last this many days. */
export const RECENT_DAYS = 30;
/** A session whose transcript is larger than this is skipped, named: one session is read whole. */
export const MAX_SESSION_BYTES = 64 << 20;
/** A row larger than this is staged as a placeholder; the component leaves its turn out. */
export const MAX_ROW_BYTES = 256 << 10;
const DAY_MS = 24 * 60 * 60 * 1000;

/** What no plugin interface of OpenClaw tells this plugin, said in the dry run. */
export const FORGOTTEN_SESSIONS_NOTE = "memory-core's forgotten sessions and memoryPolicy.excludeSessions are not exposed to plugins: transcripts are imported only on request (--transcripts), and a session memory-core was told to forget must be kept out with skip.chats";

const loadSessionStore = () => import('openclaw/plugin-sdk/session-store-runtime');

/** Removes whatever was staged: a command that does not ask for transcripts imports none. */
export function clearStaged(stateDir) {
  fs.rmSync(path.join(stateDir, STAGED_DIR), { recursive: true, force: true });
}

/** Why a listed session is not staged, if it is not. */
function notStaged(entry, sinceMs) {
  if (!entry || typeof entry.sessionId !== 'string' || !entry.sessionId) return 'no transcript';
  if (entry.archivedAt || entry.archived === true) return 'archived';
  if (entry.incognito === true) return 'incognito';
  if (entry.deletedAt) return 'deleted';
  const touched = Number(entry.updatedAt ?? entry.lastInteractionAt ?? 0);
  if (sinceMs !== null && touched > 0 && touched < sinceMs) return `no turn in the last ${RECENT_DAYS} days (--all-transcripts takes it)`;
  return undefined;
}

/** A message row as staged: the row, or a placeholder when it is too large. */
function stagedRow(event) {
  const line = JSON.stringify({ id: event.id, timestamp_ms: Date.parse(event.timestamp) || undefined, message: event.message });
  return Buffer.byteLength(line) > MAX_ROW_BYTES ? JSON.stringify({ id: event.id, oversized: true }) : line;
}

/** Writes `text` to `file` so that a reader never sees half of it. */
function writeWhole(file, text) {
  const temp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(temp, text);
  fs.renameSync(temp, file);
}

/**
 * Stages the sessions of `agentId` for the component: `index.json` (written last) and a file of
 * message rows per session.
 * @returns {Promise<{ sessions: number, skipped: number }>}
 */
export async function stageTranscripts(stateDir, { agentId = 'main', all = false, now = Date.now(), sessionStore = loadSessionStore } = {}) {
  const dir = path.join(stateDir, STAGED_DIR);
  clearStaged(stateDir);
  fs.mkdirSync(dir, { recursive: true });
  const store = await sessionStore();
  const sinceMs = all ? null : now - RECENT_DAYS * DAY_MS;
  const sessions = [];
  const skipped = [];
  const listed = store.listSessionEntries({ agentId, readOnly: true });
  for (const { sessionKey, entry } of listed) {
    const why = notStaged(entry, sinceMs);
    if (why) {
      skipped.push({ session: sessionKey, why });
      continue;
    }
    const identity = { agentId, sessionId: entry.sessionId, sessionKey };
    try {
      const { sizeBytes } = store.readTranscriptStatsSync(identity);
      if (sizeBytes > MAX_SESSION_BYTES) {
        skipped.push({ session: sessionKey, why: `its transcript is ${sizeBytes} bytes, over ${MAX_SESSION_BYTES}: not read` });
        continue;
      }
      // Read per session and written at once: memory holds one session, never the whole history.
      const rows = store.loadTranscriptEventsSync(identity).filter((event) => event?.type === 'message').map(stagedRow);
      const file = `${String(sessions.length).padStart(5, '0')}.jsonl`;
      writeWhole(path.join(dir, file), rows.length ? `${rows.join('\n')}\n` : '');
      sessions.push({ file, session_key: sessionKey, session_id: entry.sessionId, chat_type: entry.chatType, channel: entry.channel ?? entry.lastChannel });
    } catch (error) {
      // Deleted, reset or archived while the import read it.
      skipped.push({ session: sessionKey, why: `OpenClaw could not give its transcript: ${error?.message ?? error}` });
    }
  }
  writeWhole(path.join(dir, 'index.json'), JSON.stringify({ since_ms: sinceMs, sessions, skipped, notes: [FORGOTTEN_SESSIONS_NOTE] }));
  return { sessions: sessions.length, skipped: skipped.length };
}
