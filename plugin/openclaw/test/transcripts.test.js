// Staging OpenClaw's sessions for the import: what is left out and why, the size bounds, and a
// session OpenClaw cannot give mid-import named, never a crash.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAX_ROW_BYTES, MAX_SESSION_BYTES, STAGED_DIR, clearStaged, stageTranscripts } from '../src/transcripts.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const DAY = 24 * 60 * 60 * 1000;

function store(sessions) {
  return async () => ({
    listSessionEntries: ({ agentId, readOnly }) => {
      assert.equal(agentId, 'main');
      assert.equal(readOnly, true, 'never joins the store as a writer');
      return sessions.map(({ key, entry }) => ({ sessionKey: key, entry }));
    },
    readTranscriptStatsSync: ({ sessionKey }) => ({ sizeBytes: sessions.find((s) => s.key === sessionKey).size ?? 100 }),
    loadTranscriptEventsSync: ({ sessionKey }) => {
      const session = sessions.find((s) => s.key === sessionKey);
      if (session.gone) throw new Error('session was deleted');
      return session.events;
    },
  });
}

const message = (id, role, content) => ({ type: 'message', id, timestamp: '2026-11-30T10:00:00.000Z', message: { role, content, timestamp: NOW - DAY } });

test('each session is staged with its message rows only; what is not staged is named with why', async () => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stage-'));
  const huge = 'x'.repeat(MAX_ROW_BYTES + 1);
  const result = await stageTranscripts(stateDir, {
    now: NOW,
    sessionStore: store([
      { key: 'agent:main:telegram:direct:ana', entry: { sessionId: 's1', chatType: 'direct', updatedAt: NOW - DAY }, events: [{ type: 'session' }, message('u1', 'user', 'I live in Porto'), { type: 'custom' }, message('a1', 'assistant', [{ type: 'text', text: 'Noted' }]), message('u2', 'user', huge)] },
      { key: 'agent:main:telegram:direct:old', entry: { sessionId: 's2', updatedAt: NOW - 90 * DAY }, events: [] },
      { key: 'agent:main:telegram:direct:arch', entry: { sessionId: 's3', archivedAt: NOW - DAY, updatedAt: NOW }, events: [] },
      { key: 'agent:main:telegram:direct:incog', entry: { sessionId: 's4', incognito: true, updatedAt: NOW }, events: [] },
      { key: 'agent:main:telegram:direct:big', entry: { sessionId: 's5', updatedAt: NOW }, size: MAX_SESSION_BYTES + 1, events: [] },
      { key: 'agent:main:telegram:direct:gone', entry: { sessionId: 's6', updatedAt: NOW }, gone: true, events: [] },
    ]),
  });
  assert.deepEqual(result, { sessions: 1, skipped: 5 });
  const dir = path.join(stateDir, STAGED_DIR);
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8'));
  assert.equal(index.since_ms, NOW - 30 * DAY, 'recent transcripts by default');
  const why = Object.fromEntries(index.skipped.map((s) => [s.session.split(':').pop(), s.why]));
  assert.match(why.old, /last 30 days.*--all-transcripts/);
  assert.equal(why.arch, 'archived');
  assert.equal(why.incog, 'incognito');
  assert.match(why.big, /over \d+: not read/);
  assert.match(why.gone, /could not give its transcript: session was deleted/);
  assert.match(index.notes[0], /forgotten sessions/);
  const rows = fs.readFileSync(path.join(dir, index.sessions[0].file), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(rows.map((r) => r.id), ['u1', 'a1', 'u2'], 'message rows only');
  assert.equal(rows[2].oversized, true, 'a row over the bound is a placeholder');
  assert.equal(rows[2].message, undefined);

  const all = await stageTranscripts(stateDir, { now: NOW, all: true, sessionStore: store([{ key: 'agent:main:telegram:direct:old', entry: { sessionId: 's2', updatedAt: NOW - 90 * DAY }, events: [] }]) });
  assert.deepEqual(all, { sessions: 1, skipped: 0 }, '--all-transcripts takes the old session; the earlier staging is gone');
  assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8')).since_ms, null);
  clearStaged(stateDir);
  assert.equal(fs.existsSync(dir), false);
  fs.rmSync(stateDir, { recursive: true, force: true });
});

test('a compacted session is staged whole, without the summary compaction wrote into it', async () => {
  // OpenClaw's compaction keeps the history on disk and adds a summary entry for the model.
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stage-'));
  const result = await stageTranscripts(stateDir, {
    now: NOW,
    sessionStore: store([{
      key: 'agent:main:telegram:direct:ana',
      entry: { sessionId: 's1', chatType: 'direct', updatedAt: NOW - DAY },
      events: [
        message('u1', 'user', 'I live in Porto'), message('a1', 'assistant', 'Noted'),
        { type: 'compaction', id: 'c1', summary: 'SUMMARY-ONLY: Ana lives in Porto', firstKeptEntryId: 'u2', tokensBefore: 90_000 },
        message('u2', 'user', 'I moved to Braga'), message('a2', 'assistant', 'Noted: Braga'),
      ],
    }]),
  });
  assert.deepEqual(result, { sessions: 1, skipped: 0 });
  const dir = path.join(stateDir, STAGED_DIR);
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'index.json'), 'utf8'));
  const staged = fs.readFileSync(path.join(dir, index.sessions[0].file), 'utf8');
  assert.deepEqual(staged.trim().split('\n').map((line) => JSON.parse(line).id), ['u1', 'a1', 'u2', 'a2'], 'every turn, before and after the compaction');
  assert.ok(!staged.includes('SUMMARY-ONLY'), 'the summary is derived: not staged');
  fs.rmSync(stateDir, { recursive: true, force: true });
});
