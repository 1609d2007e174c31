// The state-directory locks (`src/lock.js`): the same protocol and cases as the shim's
// `host-shim/tests/all/state_lock.rs`. Two StateLocks stand for two component instances.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HOLDER, StateLocks } from '../src/lock.js';

/** The package's version, which a lock's holder names. */
const VERSION = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
/** The version as a regular expression matches it. */
const VERSION_PATTERN = VERSION.replaceAll('.', '\\.');

const LONG = 60_000;

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

function stateDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adapter-locks-'));
  made.push(dir);
  return dir;
}

/** Locks on `dir`, with their info lines kept. */
function locks(dir) {
  const lines = [];
  return { locks: new StateLocks({ stateDir: dir, log: (line) => lines.push(line) }), lines };
}

const lockFile = (dir, name = 'send') => path.join(dir, 'locks', `${name}.lock`);
const readRecord = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** Rewrites fields of the lock record, as another process would have written it. */
function rewrite(file, change) {
  const record = readRecord(file);
  change(record);
  fs.writeFileSync(file, JSON.stringify(record));
}

/** The pid of a process that has exited and been reaped. */
function deadPid() {
  return spawnSync('sleep', ['0']).pid;
}

const rejectsWith = (promise, tag, pattern) => assert.rejects(promise, (error) => {
  assert.equal(error.tag, tag, JSON.stringify(error));
  assert.match(error.val, pattern);
  return true;
});

test('the lock file says who holds it and only its owner can read it', async () => {
  const dir = stateDir();
  const { locks: a } = locks(dir);
  await a.acquire('send', LONG, 0);
  const record = readRecord(lockFile(dir));
  assert.deepEqual(Object.keys(record), ['pid', 'host', 'token', 'acquired_ms', 'lease_ms', 'holder']);
  assert.equal(record.pid, process.pid);
  assert.equal(record.host, os.hostname());
  assert.match(record.token, /^[0-9a-f]{32}$/);
  assert.equal(record.lease_ms, LONG);
  assert.equal(record.holder, `graphiti-openclaw adapter ${VERSION}`);
  assert.equal(HOLDER, record.holder);
  assert.ok(Math.abs(Date.now() - record.acquired_ms) < 5000);
  assert.equal(fs.statSync(lockFile(dir)).mode & 0o777, 0o600);
  assert.equal(fs.statSync(path.join(dir, 'locks')).mode & 0o777, 0o700);

  a.release('send');
  assert.equal(fs.existsSync(lockFile(dir)), false);
  await a.acquire('send', LONG, 0);
  assert.notEqual(readRecord(lockFile(dir)).token, record.token, 'a fresh token for every acquisition');
  a.close();
});

test('two instances of one process exclude each other; the wait keeps the event loop free', async () => {
  const dir = stateDir();
  const [{ locks: a }, { locks: b }] = [locks(dir), locks(dir)];
  await a.acquire('send', LONG, 0);

  let ticks = 0;
  const ticker = setInterval(() => { ticks += 1; }, 5);
  const started = performance.now();
  await rejectsWith(b.acquire('send', LONG, 200), 'busy',
    new RegExp(`^held by pid ${process.pid} \\(graphiti-openclaw adapter ${VERSION_PATTERN}\\) on ${os.hostname()} since \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z, lease until `));
  clearInterval(ticker);
  const waited = performance.now() - started;
  assert.ok(waited >= 195 && waited < 1500, `${waited} ms`);
  assert.ok(ticks >= 10, `the event loop ran ${ticks} timer ticks while waiting`);

  await b.acquire('counters', LONG, 0);
  a.release('send');
  await b.acquire('send', LONG, 0);
  await rejectsWith(a.acquire('send', LONG, 0), 'busy', /^held by pid /);
  a.close();
  b.close();
});

test('a waiter gets the lock as soon as it is released', async () => {
  const dir = stateDir();
  const [{ locks: a }, { locks: b }] = [locks(dir), locks(dir)];
  await a.acquire('send', LONG, 0);
  setTimeout(() => a.release('send'), 150);
  const started = performance.now();
  await b.acquire('send', LONG, 5000);
  const waited = performance.now() - started;
  assert.ok(waited >= 140 && waited < 2000, `${waited} ms`);
  b.close();
});

test('a lock left by a dead process is broken at once and its holder has lost it', async () => {
  const dir = stateDir();
  const [{ locks: a }, { locks: b, lines }] = [locks(dir), locks(dir)];
  await a.acquire('send', LONG, 0);
  const pid = deadPid();
  rewrite(lockFile(dir), (r) => { r.pid = pid; });

  await b.acquire('send', LONG, 0);
  assert.deepEqual(lines, [`broke the send lock left by pid ${pid} (dead)`]);
  assert.deepEqual(fs.readdirSync(path.join(dir, 'locks')), ['send.lock'], 'nothing set aside is left behind');

  await rejectsWith(a.acquire('send', LONG, 0), 'lost', /^the send lock was broken by another process; it is held by pid /);
  await rejectsWith(a.acquire('send', LONG, 0), 'busy', /^held by /);
  a.release('send');
  assert.ok(fs.existsSync(lockFile(dir)), "a's release leaves b's lock alone");
  b.close();
});

test('a lease that ran out is broken even when its holder lives', async () => {
  const dir = stateDir();
  const [{ locks: a }, { locks: b, lines }] = [locks(dir), locks(dir)];
  await a.acquire('send', LONG, 0);
  rewrite(lockFile(dir), (r) => { r.acquired_ms = Date.now() - 10_000; r.lease_ms = 1000; });
  await b.acquire('send', LONG, 0);
  assert.deepEqual(lines, [`broke the send lock left by pid ${process.pid} (lease expired)`]);
  b.close();
});

test('a lock dated in the future is broken, not obeyed until then', async () => {
  const dir = stateDir();
  const [{ locks: a }, { locks: b, lines }] = [locks(dir), locks(dir)];
  await a.acquire('send', LONG, 0);
  // A clock stepped back, or a tampered file: a lease would otherwise last a day more than it says.
  rewrite(lockFile(dir), (r) => { r.acquired_ms = Date.now() + 86_400_000; r.host = 'elsewhere'; });
  await b.acquire('send', LONG, 0);
  assert.deepEqual(lines, [`broke the send lock left by pid ${process.pid} (dated in the future)`]);
  b.close();
});

test('a holder whose lease ran out has lost the lock; asking again never extends it', async () => {
  const dir = stateDir();
  const { locks: a } = locks(dir);
  await a.acquire('send', 100, 0);
  await a.acquire('send', LONG, 0);
  await new Promise((resolve) => setTimeout(resolve, 150));
  await rejectsWith(a.acquire('send', LONG, 0), 'lost', /^the send lock's lease of 100 ms ran out at \d{4}-/);
  a.close();
});

test("another host's lock is judged by its lease only", async () => {
  const dir = stateDir();
  const [{ locks: a }, { locks: b }] = [locks(dir), locks(dir)];
  await a.acquire('send', LONG, 0);
  const pid = deadPid();
  rewrite(lockFile(dir), (r) => { r.pid = pid; r.host = 'elsewhere'; });
  await rejectsWith(b.acquire('send', LONG, 0), 'busy', new RegExp(`^held by pid ${pid} \\(graphiti-openclaw adapter ${VERSION_PATTERN}\\) on elsewhere since `));
  rewrite(lockFile(dir), (r) => { r.acquired_ms = Date.now() - 120_000; });
  await b.acquire('send', LONG, 0);
  b.close();
});

test('an unreadable lock file stands for 5 seconds', async () => {
  const dir = stateDir();
  const { locks: a, lines } = locks(dir);
  fs.mkdirSync(path.join(dir, 'locks'));
  fs.writeFileSync(lockFile(dir), '');
  await rejectsWith(a.acquire('send', LONG, 50), 'busy', /^held by a lock file that is being written or is damaged/);
  const old = new Date(Date.now() - 6000);
  fs.utimesSync(lockFile(dir), old, old);
  await a.acquire('send', LONG, 0);
  assert.equal(readRecord(lockFile(dir)).pid, process.pid);
  assert.deepEqual(lines, ['broke the send lock left by an unfinished writer (unreadable for 5 s)']);
  a.close();
});

test('a symlink or a FIFO in the lock file\'s place is never followed or opened', async () => {
  const dir = stateDir();
  const outside = stateDir();
  fs.writeFileSync(path.join(outside, 'target'), 'keep');
  fs.mkdirSync(path.join(dir, 'locks'));
  fs.symlinkSync(path.join(outside, 'target'), lockFile(dir));
  const { locks: a } = locks(dir);
  await rejectsWith(a.acquire('send', LONG, 0), 'busy', /not a regular file/);
  assert.equal(fs.readFileSync(path.join(outside, 'target'), 'utf8'), 'keep');

  spawnSync('mkfifo', [lockFile(dir, 'counters')]);
  await rejectsWith(a.acquire('counters', LONG, 0), 'busy', /not a regular file/);
  a.close();
});

test("release removes only this instance's lock; closing releases every lock", async () => {
  const dir = stateDir();
  const [{ locks: a }, { locks: b }] = [locks(dir), locks(dir)];
  await a.acquire('send', LONG, 0);
  b.release('send');
  assert.ok(fs.existsSync(lockFile(dir)), 'b does not hold it');
  rewrite(lockFile(dir), (r) => { r.token = '0123456789abcdef0123456789abcdef'; });
  a.release('send');
  assert.ok(fs.existsSync(lockFile(dir)), "someone else's lock now stands there");
  fs.unlinkSync(lockFile(dir));

  await a.acquire('send', LONG, 0);
  await a.acquire('counters', LONG, 0);
  a.close();
  assert.deepEqual(fs.readdirSync(path.join(dir, 'locks')), []);
  b.close();
});

test('bad names and leases fail and create nothing; no state directory fails', async () => {
  const dir = stateDir();
  const { locks: a } = locks(dir);
  for (const name of ['', 'Send', 'send.lock', 'a/b', '../x', 'spool lock', 'ü', 'a'.repeat(33)]) {
    await rejectsWith(a.acquire(name, LONG, 0), 'failed', /^invalid lock name /);
  }
  assert.equal(fs.existsSync(path.join(dir, 'locks')), false);
  await rejectsWith(a.acquire('send', 0, 0), 'failed', /^the send lock needs a lease of at least 1 ms$/);
  await a.acquire('a'.repeat(32), LONG, 0);
  await a.acquire('spool-2', LONG, 0);
  a.close();

  const none = new StateLocks({});
  await rejectsWith(none.acquire('send', LONG, 0), 'failed', /^no state directory$/);
  none.release('send');
  none.close();
});
