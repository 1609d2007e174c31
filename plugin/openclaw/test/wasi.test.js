import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createWasi } from '../src/wasi.js';

const READ = { read: true, write: false, mutateDirectory: false };
// Rust's std asks for mutate-directory on every write.
const WRITE = { read: false, write: true, mutateDirectory: true };
const FOLLOW = { symlinkFollow: true };
const CREATE = { create: true, directory: false, exclusive: false, truncate: true };
const OPEN = { create: false, directory: false, exclusive: false, truncate: false };

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wasi-test-'));
  made.push(root);
  for (const dir of ['config', 'state', 'outside']) fs.mkdirSync(path.join(root, dir));
  fs.writeFileSync(path.join(root, 'config', 'rules.yaml'), 'rules: []\n');
  fs.writeFileSync(path.join(root, 'outside', 'secret.txt'), 'secret');
  const wasi = createWasi({
    preopens: [
      { guestPath: '/config', hostDir: path.join(root, 'config'), writable: false },
      { guestPath: '/state', hostDir: path.join(root, 'state'), writable: true },
      { guestPath: '/overlay', hostDir: path.join(root, 'missing'), writable: false },
    ],
  });
  const dirs = Object.fromEntries(wasi['wasi:filesystem/preopens'].getDirectories().map(([d, p]) => [p, d]));
  return { root, dirs };
}

function readAll(descriptor) {
  const stream = descriptor.readViaStream(0n);
  const chunks = [];
  for (;;) {
    try {
      chunks.push(Buffer.from(stream.blockingRead(4096n)));
    } catch (e) {
      assert.deepEqual(e, { tag: 'closed' });
      return Buffer.concat(chunks).toString();
    }
  }
}

test('only existing preopens are mounted', () => {
  const { dirs } = setup();
  assert.deepEqual(Object.keys(dirs).sort(), ['/config', '/state']);
});

test('files are read through streams until closed', () => {
  const { dirs } = setup();
  const file = dirs['/config'].openAt(FOLLOW, 'rules.yaml', OPEN, READ);
  assert.equal(readAll(file), 'rules: []\n');
  assert.equal(file.stat().type, 'regular-file');
  assert.equal(file.stat().size, 10n);
});

test('positional reads and writes (pread, pwrite): one call each, at the offset asked', () => {
  const { root, dirs } = setup();
  const file = dirs['/state'].openAt(FOLLOW, 'state.json', CREATE, { read: true, write: true, mutateDirectory: true });
  assert.equal(file.write(new TextEncoder().encode('hello world'), 0n), 11n);
  assert.equal(file.write(new TextEncoder().encode('W'), 6n), 1n);
  assert.equal(fs.readFileSync(path.join(root, 'state', 'state.json'), 'utf8'), 'hello World');
  const [head, headEnds] = file.read(5n, 0n);
  assert.equal(Buffer.from(head).toString(), 'hello');
  assert.equal(headEnds, false);
  const [tail, tailEnds] = file.read(100n, 6n);
  assert.equal(Buffer.from(tail).toString(), 'World');
  assert.equal(tailEnds, true, 'a read that reaches the end says so');
  assert.deepEqual(file.read(10n, 11n), [new Uint8Array(), true]);
  // What the descriptor was not opened for is refused, as pread and pwrite refuse it (EBADF).
  const readOnly = dirs['/config'].openAt(FOLLOW, 'rules.yaml', OPEN, READ);
  assert.throws(() => readOnly.write(new Uint8Array([1]), 0n), (e) => e === 'bad-descriptor');
  const writeOnly = dirs['/state'].openAt(FOLLOW, 'state.json', OPEN, WRITE);
  assert.throws(() => writeOnly.read(1n, 0n), (e) => e === 'bad-descriptor');
  assert.throws(() => dirs['/state'].read(1n, 0n), (e) => e === 'is-directory');
});

test('the state directory takes writes with mutate-directory, atomically renamed', () => {
  const { root, dirs } = setup();
  const state = dirs['/state'];
  state.createDirectoryAt('spool');
  const file = state.openAt(FOLLOW, 'spool/x.tmp', CREATE, WRITE);
  const out = file.writeViaStream(0n);
  out.write(new TextEncoder().encode('hello'));
  out.blockingFlush();
  file[Symbol.dispose]();
  state.renameAt('spool/x.tmp', state, 'spool/x.json');
  assert.equal(fs.readFileSync(path.join(root, 'state', 'spool', 'x.json'), 'utf8'), 'hello');
  const names = [];
  const entries = state.openAt(FOLLOW, 'spool', { ...OPEN, directory: true }, READ).readDirectory();
  for (let e = entries.readDirectoryEntry(); e; e = entries.readDirectoryEntry()) names.push(e.name);
  assert.deepEqual(names, ['x.json']);
  state.unlinkFileAt('spool/x.json');
  assert.equal(fs.existsSync(path.join(root, 'state', 'spool', 'x.json')), false);
});

test('an entry whose name is not UTF-8 is an error of its own, and the listing goes on', () => {
  const { root, dirs } = setup();
  const spool = path.join(root, 'state', 'spool');
  fs.mkdirSync(spool);
  for (const name of ['a.episode', 'b.episode']) fs.writeFileSync(path.join(spool, name), '');
  fs.writeFileSync(Buffer.concat([Buffer.from(`${spool}/`), Buffer.from([0x61, 0xff, 0x2e, 0x65])]), '');
  const entries = dirs['/state'].openAt(FOLLOW, 'spool', { ...OPEN, directory: true }, READ).readDirectory();
  const names = [];
  let refused = 0;
  for (;;) {
    let entry;
    try {
      entry = entries.readDirectoryEntry();
    } catch (code) {
      assert.equal(code, 'illegal-byte-sequence');
      refused += 1;
      continue;
    }
    if (!entry) break;
    names.push(entry.name);
  }
  assert.deepEqual([names.sort(), refused], [['a.episode', 'b.episode'], 1]);
});

test('appends go to the end of the file', () => {
  const { root, dirs } = setup();
  for (const word of ['a', 'b']) {
    const file = dirs['/state'].openAt(FOLLOW, 'log', { ...OPEN, create: true }, WRITE);
    file.appendViaStream().write(new TextEncoder().encode(word));
    file[Symbol.dispose]();
  }
  assert.equal(fs.readFileSync(path.join(root, 'state', 'log'), 'utf8'), 'ab');
});

test('the config directory is read-only', () => {
  const { root, dirs } = setup();
  const config = dirs['/config'];
  assert.throws(() => config.openAt(FOLLOW, 'new.yaml', CREATE, WRITE), (e) => e === 'read-only');
  assert.throws(() => config.openAt(FOLLOW, 'rules.yaml', OPEN, WRITE), (e) => e === 'read-only');
  assert.throws(() => config.unlinkFileAt('rules.yaml'), (e) => e === 'read-only');
  assert.throws(() => config.createDirectoryAt('d'), (e) => e === 'read-only');
  assert.throws(() => config.renameAt('rules.yaml', config, 'r.yaml'), (e) => e === 'read-only');
  assert.equal(fs.readFileSync(path.join(root, 'config', 'rules.yaml'), 'utf8'), 'rules: []\n');
});

test('paths cannot leave their directory, by .., absolute paths or symlinks', () => {
  const { root, dirs } = setup();
  fs.symlinkSync(path.join(root, 'outside'), path.join(root, 'config', 'link'));
  fs.symlinkSync(path.join(root, 'outside', 'secret.txt'), path.join(root, 'state', 'secret-link'));
  // `a` exists: `..` is resolved after the names before it, as the kernel does.
  fs.mkdirSync(path.join(root, 'config', 'a'));
  const config = dirs['/config'];
  for (const escape of ['../outside/secret.txt', '/etc/passwd', 'link/secret.txt', 'a/../../outside/secret.txt']) {
    assert.throws(() => config.openAt(FOLLOW, escape, OPEN, READ), (e) => e === 'not-permitted', escape);
  }
  assert.throws(() => dirs['/state'].openAt(FOLLOW, 'secret-link', OPEN, WRITE), (e) => e === 'not-permitted');
  assert.throws(() => config.statAt(FOLLOW, '..'), (e) => e === 'not-permitted');
  assert.equal(config.statAt({ symlinkFollow: false }, '.').type, 'directory');
});

test('file system errors are WASI error codes', () => {
  const { dirs } = setup();
  assert.throws(() => dirs['/config'].openAt(FOLLOW, 'missing.yaml', OPEN, READ), (e) => e === 'no-entry');
  assert.throws(() => dirs['/config'].openAt(FOLLOW, 'rules.yaml', { ...OPEN, directory: true }, READ), (e) => e === 'not-directory');
  dirs['/state'].createDirectoryAt('d');
  assert.throws(() => dirs['/state'].createDirectoryAt('d'), (e) => e === 'exist');
  assert.throws(() => dirs['/state'].unlinkFileAt('d'), (e) => e === 'is-directory');
});

test('stat answers as exact as the bigint one, and the metadata hash paired with a stat is the same entry', async () => {
  const { root, dirs } = setup();
  const state = dirs['/state'];
  const file = path.join(root, 'state', 'a.json');
  fs.writeFileSync(file, 'x'.repeat(300));
  const exact = fs.lstatSync(file, { bigint: true });
  const stat = state.statAt({ symlinkFollow: false }, 'a.json');
  assert.equal(stat.size, 300n);
  assert.equal(stat.linkCount, exact.nlink);
  const mtime = stat.dataModificationTimestamp;
  // Node's plain Stats keep a fraction of a microsecond: within a microsecond of the exact time.
  const ns = mtime.seconds * 1_000_000_000n + BigInt(mtime.nanoseconds);
  assert.ok(ns - exact.mtimeNs < 1000n && exact.mtimeNs - ns < 1000n, `${ns} vs ${exact.mtimeNs}`);
  assert.deepEqual(state.metadataHashAt({ symlinkFollow: false }, 'a.json'), { lower: exact.ino, upper: exact.dev });
  // Replaced through the host between the two calls: the hash is of the new entry, not the kept stat.
  state.statAt({ symlinkFollow: false }, 'a.json');
  const moved = state.openAt({ symlinkFollow: false }, 'b.json', CREATE, WRITE);
  moved[Symbol.dispose]();
  state.renameAt('b.json', state, 'a.json');
  const replaced = fs.lstatSync(file, { bigint: true });
  assert.notEqual(replaced.ino, exact.ino);
  assert.deepEqual(state.metadataHashAt({ symlinkFollow: false }, 'a.json'), { lower: replaced.ino, upper: replaced.dev });
  // Another path's hash is never the kept stat's.
  fs.writeFileSync(path.join(root, 'state', 'c.json'), '');
  state.statAt({ symlinkFollow: false }, 'a.json');
  assert.equal(state.metadataHashAt({ symlinkFollow: false }, 'c.json').lower, fs.lstatSync(path.join(root, 'state', 'c.json'), { bigint: true }).ino);
  // The hash first, then the stat (as libc asks): the stat is of the same entry. Once the guest has
  // yielded (a microtask ran), nothing kept is used: another process's change is seen.
  state.metadataHashAt({ symlinkFollow: false }, 'a.json');
  assert.equal(state.statAt({ symlinkFollow: false }, 'a.json').size, 0n);
  state.statAt({ symlinkFollow: false }, 'a.json');
  await Promise.resolve();
  fs.renameSync(path.join(root, 'state', 'c.json'), file);
  const other = fs.lstatSync(file, { bigint: true });
  assert.deepEqual(state.metadataHashAt({ symlinkFollow: false }, 'a.json'), { lower: other.ino, upper: other.dev });
  // A descriptor's own stat and hash: one fstat, of the open file.
  const opened = state.openAt({ symlinkFollow: false }, 'a.json', OPEN, READ);
  assert.equal(opened.stat().size, 0n);
  assert.deepEqual(opened.metadataHash(), { lower: other.ino, upper: other.dev });
  opened[Symbol.dispose]();
});
