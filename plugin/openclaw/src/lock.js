// `host.acquire-lock` and `host.release-lock` for the component: one owner per state directory. The
// protocol is the wasmtime shim's, written down once in `host-shim/src/state_lock.rs` (docs/memory.md:
// "One owner per state directory"); the two hosts share lock files, so a `graphiti-openclaw` CLI and an
// OpenClaw Gateway on one state directory exclude each other. In short: `<state>/locks/<name>.lock`
// created exclusively (no-follow, 0600) with {pid, host, token, acquired_ms, lease_ms, holder};
// stale when the lease ran out or its pid (on this host) is dead; broken by renaming it aside and
// checking the token; a busy lock is retried every 10-20 ms, on timers: the event loop never waits.

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const { O_WRONLY, O_RDONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
/** A lock file larger than this is not one of ours. */
const MAX_LOCK_FILE = 4096;
/** An unreadable lock file younger than this may still be being written. */
const UNFINISHED_WRITE_GRACE_MS = 5000;
const NAME = /^[a-z0-9-]{1,32}$/;

export const HOLDER = `graphiti-openclaw adapter ${packageVersion()}`;

function packageVersion() {
  try {
    // `src/lock.js` in the repository, `dist/lock.js` in the package: package.json is one up.
    return JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Every StateLocks not closed yet, released when the process exits normally. Process-wide, with one
 * exit listener: OpenClaw loads this module once per registration (full, discovery, …).
 */
const exitState = (globalThis[Symbol.for('graphiti-openclaw.state-locks')] ??= { live: new Set(), hooked: false });
const live = exitState.live;

/** The locks one component instance holds on one state directory. */
export class StateLocks {
  /**
   * @param {{ stateDir?: string, log?: (line: string) => void, holder?: string }} options
   *   `log` gets the info lines (a stale lock broken).
   */
  constructor({ stateDir, log = () => {}, holder = HOLDER } = {}) {
    this.stateDir = stateDir;
    this.log = log;
    this.holder = holder;
    /** @type {Map<string, { token: string, acquiredMs: number, leaseMs: number }>} */
    this.held = new Map();
    live.add(this);
    if (!exitState.hooked) {
      exitState.hooked = true;
      process.once('exit', () => {
        for (const locks of live) locks.releaseAll();
      });
    }
  }

  /**
   * Takes lock `name` for `leaseMs`, waiting up to `waitMs` while another holder has it; when this
   * instance holds it already, only checks that it still does. Throws the WIT `lock-error`
   * (`{ tag: 'busy' | 'lost' | 'failed', val }`), as jco expects of a `result` import.
   */
  async acquire(name, leaseMs, waitMs) {
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw failed(`invalid lock name ${JSON.stringify(printable(String(name)))}: use 1 to 32 of a-z, 0-9 and -`);
    }
    if (!this.stateDir) throw failed('no state directory');
    const file = this.lockPath(name);
    if (this.held.has(name)) return this.verify(name, file);
    if (!(leaseMs >= 1)) throw failed(`the ${name} lock needs a lease of at least 1 ms`);
    ensureLockDir(path.dirname(file));
    const token = crypto.randomBytes(16).toString('hex');
    const deadline = Date.now() + waitMs;
    for (;;) {
      const record = { pid: process.pid, host: os.hostname(), token, acquired_ms: Date.now(), lease_ms: leaseMs, holder: this.holder };
      if (createLockFile(file, record)) {
        this.held.set(name, { token, acquiredMs: record.acquired_ms, leaseMs });
        return;
      }
      const found = readLock(file);
      const why = staleness(found);
      if (why) {
        this.breakStale(name, file, found, why, token);
      } else if (found.kind !== 'gone') {
        const left = deadline - Date.now();
        if (left <= 0) throw { tag: 'busy', val: busyText(found) };
        await new Promise((resolve) => setTimeout(resolve, Math.min(left, 10 + Math.floor(Math.random() * 11))));
      }
    }
  }

  /** Gives up lock `name` if this instance holds it (removing the file only while it holds this
   * instance's token); forgets it either way. */
  release(name) {
    const held = this.held.get(name);
    if (!held) return;
    this.held.delete(name);
    try {
      const file = this.lockPath(name);
      const found = readLock(file);
      if (found.kind === 'record' && found.record.token === held.token) fs.unlinkSync(file);
    } catch {
      // Nothing to give up that can be given up: staleness frees it.
    }
  }

  releaseAll() {
    for (const name of [...this.held.keys()]) this.release(name);
  }

  /** Releases everything and stops tracking this instance (it is dropped). */
  close() {
    this.releaseAll();
    live.delete(this);
  }

  lockPath(name) {
    return path.join(this.stateDir, 'locks', `${name}.lock`);
  }

  verify(name, file) {
    const held = this.held.get(name);
    const found = readLock(file);
    let lost;
    if (found.kind === 'record' && found.record.token === held.token) {
      const leaseEnd = held.acquiredMs + held.leaseMs;
      if (Date.now() < leaseEnd) return;
      lost = `the ${name} lock's lease of ${held.leaseMs} ms ran out at ${new Date(leaseEnd).toISOString()}`;
    } else if (found.kind === 'record') {
      lost = `the ${name} lock was broken by another process; it is held by ${describe(found.record)}`;
    } else if (found.kind === 'gone') {
      lost = `the ${name} lock was broken by another process`;
    } else {
      lost = `the ${name} lock was broken by another process (${found.why})`;
    }
    this.held.delete(name);
    throw { tag: 'lost', val: lost };
  }

  /** Moves the stale lock `judged` aside and removes it, or puts back a fresh one moved by mistake. */
  breakStale(name, file, judged, why, token) {
    const aside = path.join(path.dirname(file), `${name}.lock.stale-${token}`);
    try {
      fs.renameSync(file, aside);
    } catch (error) {
      if (error.code === 'ENOENT') return; // Someone else broke it first.
      throw ioFailure('move aside', file, error);
    }
    const moved = readLock(aside);
    if (!sameLock(moved, judged)) {
      // A newcomer's fresh lock: back where it was, unless yet another one stands there now.
      try {
        fs.linkSync(aside, file);
      } catch (error) {
        if (error.code !== 'EEXIST') throw ioFailure('put back', file, error);
      }
      unlink(aside);
      return;
    }
    unlink(aside);
    const holder = judged.kind === 'record' ? `pid ${judged.record.pid}` : 'an unfinished writer';
    this.log(`broke the ${name} lock left by ${holder} (${why})`);
  }
}

const failed = (val) => ({ tag: 'failed', val });

function ioFailure(action, file, error) {
  return failed(`cannot ${action} lock file ${file}: ${error?.message ?? error}`);
}

function unlink(file) {
  try {
    fs.unlinkSync(file);
  } catch (error) {
    throw ioFailure('remove', file, error);
  }
}

function ensureLockDir(dir) {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (error.code !== 'EEXIST') throw failed(`cannot create lock directory ${dir}: ${error.message}`);
    if (!fs.lstatSync(dir).isDirectory()) throw failed(`${dir} is not a directory`);
  }
}

/** Creates the lock file exclusively with `record`; false when one exists. A half-written file is removed. */
function createLockFile(file, record) {
  let fd;
  try {
    fd = fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  } catch (error) {
    if (error.code === 'EEXIST') return false;
    throw ioFailure('create', file, error);
  }
  try {
    fs.writeFileSync(fd, JSON.stringify(record));
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw ioFailure('write', file, error);
  }
  fs.closeSync(fd);
  return true;
}

/**
 * What is at a lock's path, never following a symlink or blocking on a FIFO:
 * `{ kind: 'gone' }`, `{ kind: 'record', record }` or `{ kind: 'unreadable', why, ageMs, identity }`.
 */
function readLock(file) {
  let stat;
  try {
    stat = fs.lstatSync(file);
  } catch (error) {
    if (error.code === 'ENOENT') return { kind: 'gone' };
    throw ioFailure('read', file, error);
  }
  const unreadable = (why, bytes = Buffer.alloc(0)) => ({
    kind: 'unreadable', why, ageMs: Date.now() - stat.mtimeMs, identity: `${stat.dev}:${stat.ino}:${bytes.toString('hex')}`,
  });
  if (stat.isDirectory()) throw ioFailure('read', file, new Error('a directory is in the lock file\'s place'));
  if (!stat.isFile()) return unreadable('not a regular file');
  let fd;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if (error.code === 'ENOENT') return { kind: 'gone' };
    return unreadable(error.message);
  }
  let bytes;
  try {
    bytes = readAtMost(fd, MAX_LOCK_FILE + 1);
  } finally {
    fs.closeSync(fd);
  }
  if (bytes.length > MAX_LOCK_FILE) return unreadable('larger than 4 KiB', bytes);
  let record;
  try {
    record = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return unreadable(`not a lock record: ${error.message}`, bytes);
  }
  const problem = recordProblem(record);
  return problem ? unreadable(`not a lock record: ${problem}`, bytes) : { kind: 'record', record };
}

function readAtMost(fd, limit) {
  const buffer = Buffer.alloc(limit);
  let length = 0;
  for (;;) {
    const n = fs.readSync(fd, buffer, length, limit - length, null);
    if (n === 0 || length + n === limit) return buffer.subarray(0, length + n);
    length += n;
  }
}

/** What is wrong with a parsed lock record (the shim's serde rules), or undefined. */
function recordProblem(record) {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return 'not an object';
  const isCount = (value, max) => Number.isSafeInteger(value) && value >= 0 && value <= max;
  if (!isCount(record.pid, 2 ** 31 - 1) || record.pid === 0) return 'pid is not a process id';
  for (const key of ['acquired_ms', 'lease_ms']) if (!isCount(record[key], Number.MAX_SAFE_INTEGER)) return `${key} is not a count`;
  for (const key of ['host', 'token', 'holder']) if (typeof record[key] !== 'string') return `${key} is not a string`;
  return undefined;
}

/** Why the lock may be broken ("dead", "lease expired", ...), or undefined while it stands. */
function staleness(found) {
  if (found.kind === 'record') {
    const { record } = found;
    if (Date.now() >= record.acquired_ms + record.lease_ms) return 'lease expired';
    // A lease never lasts longer than its stated length from now: a clock stepped back or a
    // tampered file must not hold the state directory until some later date.
    if (record.acquired_ms > Date.now()) return 'dated in the future';
    if (record.host === os.hostname() && !pidAlive(record.pid)) return 'dead';
    return undefined;
  }
  if (found.kind === 'unreadable' && found.ageMs >= UNFINISHED_WRITE_GRACE_MS) return 'unreadable for 5 s';
  return undefined;
}

function sameLock(moved, judged) {
  if (moved.kind === 'record' && judged.kind === 'record') return moved.record.token === judged.record.token;
  if (moved.kind === 'unreadable' && judged.kind === 'unreadable') return moved.identity === judged.identity;
  return false;
}

/** `kill(pid, 0)`: only ESRCH means there is no such process. */
function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code !== 'ESRCH';
  }
}

function describe(record) {
  const iso = (ms) => new Date(ms).toISOString();
  return `pid ${record.pid} (${printable(record.holder)}) on ${printable(record.host)} since ${iso(record.acquired_ms)}, lease until ${iso(record.acquired_ms + record.lease_ms)}`;
}

function busyText(found) {
  if (found.kind === 'record') return `held by ${describe(found.record)}`;
  return `held by a lock file that is being written or is damaged (${found.why}); it counts as stale once it is 5 s old`;
}

/** Text from a lock file, safe for one log line: control characters shown as \u{..}, as the shim does. */
function printable(text) {
  return [...text].slice(0, 200).map((c) => (/\p{Cc}/u.test(c) ? `\\u{${c.codePointAt(0).toString(16)}}` : c)).join('');
}
