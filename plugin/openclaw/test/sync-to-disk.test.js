// `capture.sync_to_disk`: the spooled turn reaches the disk before agent_end returns, seen through
// the host's own file calls (fdatasync/fsync, rename) rather than a clock.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentEnd, createRuntime } from '../src/index.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const componentDir = path.join(repo, 'dist/graphiti-openclaw/dist/component');

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

/** A runtime on a fresh state directory, Graphiti unreachable, no background sending. */
async function runtime(capture) {
  const stateDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'adapter-sync-')));
  made.push(stateDir);
  const silent = () => {};
  const rt = createRuntime({
    logger: { info: silent, warn: silent, error: silent, debug: silent },
    pluginConfig: { stateDir, graphiti: { url: 'http://127.0.0.1:9/mcp' }, capture },
  }, { componentDir });
  rt.flushSoon = () => {};
  await rt.pool();
  return { rt, spoolDir: path.join(stateDir, 'spool') };
}

/** Records the host's opens, syncs and renames (in order) while `run` runs; its result and the record. */
async function fileCalls(t, run) {
  const calls = [];
  const opened = new Map();
  const { openSync, fsyncSync, fdatasyncSync, renameSync } = fs;
  t.mock.method(fs, 'openSync', (file, ...rest) => {
    const fd = openSync(file, ...rest);
    opened.set(fd, path.resolve(String(file)));
    return fd;
  });
  t.mock.method(fs, 'fsyncSync', (fd) => { calls.push({ call: 'fsync', path: opened.get(fd) }); return fsyncSync(fd); });
  t.mock.method(fs, 'fdatasyncSync', (fd) => { calls.push({ call: 'fdatasync', path: opened.get(fd) }); return fdatasyncSync(fd); });
  t.mock.method(fs, 'renameSync', (from, to) => { calls.push({ call: 'rename', from: path.resolve(String(from)), to: path.resolve(String(to)) }); return renameSync(from, to); });
  const result = await run();
  const seen = calls.slice();
  t.mock.restoreAll();
  return { result, calls: seen };
}

const ctx = { sessionKey: 'agent:main:telegram:direct:dana', agentId: 'main', senderId: 'dana', trigger: 'user' };
const event = (n) => ({
  success: true,
  messages: [{ role: 'user', content: `Remember that the blue kettle is on shelf ${n}` }, { role: 'assistant', content: 'Noted.' }],
});
const isSync = (c) => c.call === 'fsync' || c.call === 'fdatasync';

test('capture.sync_to_disk on: the entry\'s data is synced before its rename, and the spool directory after it, before agent_end returns', async (t) => {
  const { rt, spoolDir } = await runtime({ sync_to_disk: true });
  for (const n of [1, 2]) {
    const { result, calls } = await fileCalls(t, () => agentEnd(rt, event(n), ctx));
    assert.equal(result?.tag, 'spooled', `turn ${n} spooled`);
    const placed = calls.findIndex((c) => c.call === 'rename' && path.dirname(c.to) === spoolDir && c.to.endsWith('.episode'));
    assert.ok(placed >= 0, `turn ${n}: an entry renamed into the spool:\n${JSON.stringify(calls, null, 1)}`);
    assert.ok(fs.readFileSync(calls[placed].to, 'utf8').includes(`shelf ${n}`), 'the entry holds the turn');
    const dataSynced = calls.findIndex((c) => isSync(c) && c.path === calls[placed].from);
    assert.ok(dataSynced >= 0 && dataSynced < placed, `turn ${n}: its file synced before the rename:\n${JSON.stringify(calls, null, 1)}`);
    const nameSynced = calls.findIndex((c, i) => i > placed && isSync(c) && c.path === spoolDir);
    assert.ok(nameSynced > placed, `turn ${n}: the spool directory synced after the rename:\n${JSON.stringify(calls, null, 1)}`);
  }
});

test('capture.sync_to_disk off (the default): agent_end spools without a sync', async (t) => {
  const { rt, spoolDir } = await runtime({});
  const { result, calls } = await fileCalls(t, () => agentEnd(rt, event(1), ctx));
  assert.equal(result?.tag, 'spooled');
  assert.ok(calls.some((c) => c.call === 'rename' && path.dirname(c.to) === spoolDir), 'the entry was placed by a rename');
  assert.deepEqual(calls.filter(isSync), [], 'no sync');
});
