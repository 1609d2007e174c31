// Symlinks against the sandbox: every open-flag combination, and every path operation the WASI layer
// provides, against final and intermediate symlinks pointing inside, outside (absolute and via `..`),
// nowhere, and at themselves. Nothing outside a preopen may ever be read, created or changed; a
// no-follow open of a symlink fails and never touches its target; a followed symlink that stays inside
// behaves exactly as opening its target.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createWasi } from '../src/wasi.js';

const OLD_TIME = new Date('2001-02-03T04:05:06Z');

// The trees a failed test left (the others remove theirs).
const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

/** Builds a fresh tree: a writable preopen `state`, a read-only `config`, and `outside` beside them. */
function fixture() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wasi-symlinks-'));
  made.push(root);
  const at = (...parts) => path.join(root, ...parts);
  for (const dir of ['state/sub', 'config/sub', 'outside/dir']) fs.mkdirSync(at(dir), { recursive: true });
  fs.writeFileSync(at('state/real.txt'), 'inside');
  fs.writeFileSync(at('state/sub/file.txt'), 'sub file');
  fs.writeFileSync(at('config/settings.yaml'), 'recall: {}\n');
  fs.writeFileSync(at('outside/secret.txt'), 'secret');
  fs.writeFileSync(at('outside/dir/deeper.txt'), 'deeper secret');
  const links = {
    'in-file': 'real.txt',
    'in-via-dotdot': 'sub/../real.txt',
    'dangling-in': 'nowhere.txt',
    'dir-in': 'sub',
    'out-abs': at('outside/secret.txt'),
    'out-rel': '../outside/secret.txt',
    'out-deep': 'sub/../../outside/secret.txt',
    'dangling-out': '../outside/created.txt',
    'dangling-out-abs': at('outside/created.txt'),
    'dir-out': '../outside',
    'dir-out-abs': at('outside'),
    'loop-a': 'loop-b',
    'loop-b': 'loop-a',
    self: 'self',
  };
  for (const [name, target] of Object.entries(links)) {
    fs.symlinkSync(target, at('state', name));
    fs.symlinkSync(target.replace('real.txt', 'settings.yaml'), at('config', name));
  }
  for (const file of ['outside/secret.txt', 'outside/dir/deeper.txt', 'outside/dir', 'outside']) fs.utimesSync(at(file), OLD_TIME, OLD_TIME);
  const wasi = createWasi({
    preopens: [
      { guestPath: '/state', hostDir: at('state'), writable: true },
      { guestPath: '/config', hostDir: at('config'), writable: false },
    ],
  });
  const dirs = Object.fromEntries(wasi['wasi:filesystem/preopens'].getDirectories().map(([d, p]) => [p, d]));
  return { root, at, dirs, links };
}

/** Every entry under `dir`: regular files with their bytes and mtime, symlinks with their target. */
function snapshot(dir) {
  const entries = {};
  for (const name of fs.readdirSync(dir, { recursive: true }).sort()) {
    const full = path.join(dir, name);
    const stats = fs.lstatSync(full, { bigint: true });
    if (stats.isSymbolicLink()) entries[name] = `-> ${fs.readlinkSync(full)}`;
    else if (stats.isFile()) entries[name] = `${fs.readFileSync(full, 'latin1')} @${stats.mtimeNs}`;
    else entries[name] = `dir @${stats.mtimeNs}`;
  }
  return entries;
}

/** Snapshot of `dir` without times and with `root` written as <root>: two trees built apart compare. */
function contents(dir, root) {
  return JSON.stringify(Object.fromEntries(Object.entries(snapshot(dir)).map(([name, value]) => [name, value.replace(/ @\d+$/, '').replace(root, '<root>')])));
}

/** A fixture reused across cases, built again only after a case changed it. */
class Reusable {
  constructor() { this.build(); }

  build() {
    if (this.tree) fs.rmSync(this.tree.root, { recursive: true });
    this.tree = fixture();
    this.before = { outside: JSON.stringify(snapshot(this.tree.at('outside'))), state: JSON.stringify(snapshot(this.tree.at('state'))) };
  }

  /** What changed since the tree was built; rebuilds it when anything did. */
  changes() {
    const outside = JSON.stringify(snapshot(this.tree.at('outside'))) !== this.before.outside;
    const state = JSON.stringify(snapshot(this.tree.at('state'))) !== this.before.state;
    return { outside, state };
  }

  dispose() { fs.rmSync(this.tree.root, { recursive: true }); }
}

function readAll(descriptor) {
  const stream = descriptor.readViaStream(0n);
  const chunks = [];
  for (;;) {
    try {
      chunks.push(Buffer.from(stream.blockingRead(4096n)));
    } catch (e) {
      if (e?.tag !== 'closed') throw e;
      return Buffer.concat(chunks).toString();
    }
  }
}

/** Opens `relative` in `/state` and says what happened, reading the file when it may be read. */
function attempt(dir, relative, { follow, openFlags, access }) {
  try {
    const opened = dir.openAt({ symlinkFollow: follow }, relative, openFlags, access);
    const result = { opened: opened.getType() };
    if (result.opened === 'regular-file' && (access.read || !access.write)) result.content = readAll(opened);
    opened[Symbol.dispose]();
    return result;
  } catch (error) {
    return { error: typeof error === 'string' ? error : `thrown: ${error?.stack ?? error}` };
  }
}

const ACCESS = {
  read: { read: true, write: false, mutateDirectory: false },
  write: { read: false, write: true, mutateDirectory: true },
  'read-write': { read: true, write: true, mutateDirectory: true },
};

function* combinations() {
  for (const follow of [true, false]) {
    for (let bits = 0; bits < 16; bits += 1) {
      const openFlags = { create: Boolean(bits & 1), exclusive: Boolean(bits & 2), truncate: Boolean(bits & 4), directory: Boolean(bits & 8) };
      for (const [accessName, access] of Object.entries(ACCESS)) {
        const label = `${follow ? 'follow' : 'no-follow'} ${Object.keys(openFlags).filter((k) => openFlags[k]).join('+') || 'plain'} ${accessName}`;
        yield { follow, openFlags, access, label };
      }
    }
  }
}

/** What an open of a final symlink that is not followed must answer: POSIX's order of checks. */
function symlinkRefusal(openFlags) {
  if (openFlags.directory && openFlags.create) return 'invalid';
  if (openFlags.create && openFlags.exclusive) return 'exist';
  return 'loop';
}

// Final symlinks whose target stays inside: followed, they act as the target; else they are refused.
const INSIDE = { 'in-file': 'real.txt', 'in-via-dotdot': 'real.txt', 'dangling-in': 'nowhere.txt', 'dir-in': 'sub', 'dir-in/file.txt': 'sub/file.txt' };
// Paths that lead outside (or loop) whenever the symlink in them is followed.
const ESCAPES = {
  'out-abs': 'not-permitted', 'out-rel': 'not-permitted', 'out-deep': 'not-permitted',
  'dangling-out': 'not-permitted', 'dangling-out-abs': 'not-permitted', 'dir-out': 'not-permitted',
  'dir-out-abs': 'not-permitted', 'loop-a': 'loop', self: 'loop',
};
// Intermediate symlinks and `..` are always followed: these fail whatever the flags.
const ALWAYS_REFUSED = {
  'dir-out/secret.txt': 'not-permitted', 'dir-out-abs/secret.txt': 'not-permitted', 'dir-out/created.txt': 'not-permitted',
  'dir-out/dir/deeper.txt': 'not-permitted', 'loop-a/x': 'loop', '../outside/secret.txt': 'not-permitted',
  'sub/../../outside/secret.txt': 'not-permitted', '/etc/passwd': 'not-permitted',
};

for (const relative of [...Object.keys(INSIDE), ...Object.keys(ESCAPES), ...Object.keys(ALWAYS_REFUSED)]) {
  test(`every open of ${relative} in a writable preopen stays inside`, () => {
    const failures = [];
    const tree = new Reusable();
    const twin = new Reusable();
    for (const { follow, openFlags, access, label } of combinations()) {
      const got = attempt(tree.tree.dirs['/state'], relative, { follow, openFlags, access });
      let expected;
      if (relative in ALWAYS_REFUSED) {
        expected = { error: ALWAYS_REFUSED[relative] };
      } else if (!relative.includes('/') && (!follow || (openFlags.create && openFlags.exclusive))) {
        // An exclusive create never follows a final symlink (POSIX: O_CREAT|O_EXCL).
        expected = { error: symlinkRefusal(openFlags) };
      } else if (relative in ESCAPES) {
        expected = { error: ESCAPES[relative] };
      } else {
        // The oracle: the same open of the target itself, in a twin tree.
        expected = attempt(twin.tree.dirs['/state'], INSIDE[relative], { follow, openFlags, access });
        if (contents(tree.tree.at('state'), tree.tree.root) !== contents(twin.tree.at('state'), twin.tree.root)) {
          failures.push(`${label}: the tree differs from opening ${INSIDE[relative]} itself`);
        }
      }
      if (JSON.stringify(got) !== JSON.stringify(expected)) failures.push(`${label}: got ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
      const changed = tree.changes();
      if (changed.outside) failures.push(`${label}: a file outside the preopen changed or appeared`);
      if (expected.error && changed.state) failures.push(`${label}: a refused open changed the preopen`);
      if (changed.outside || changed.state) tree.build();
      const twinChanged = twin.changes();
      if (twinChanged.outside || twinChanged.state) twin.build();
    }
    tree.dispose();
    twin.dispose();
    assert.deepEqual(failures.slice(0, 12), [], `${failures.length} of 96 combinations wrong`);
  });
}

test('a read-only preopen: symlinks out are refused for reading; no-follow opens of symlinks fail', () => {
  const { root, dirs } = fixture();
  const config = dirs['/config'];
  const read = (relative, follow = true) => attempt(config, relative, { follow, openFlags: { create: false, exclusive: false, truncate: false, directory: false }, access: ACCESS.read });
  assert.deepEqual(read('in-file'), { opened: 'regular-file', content: 'recall: {}\n' });
  for (const escape of ['out-abs', 'out-rel', 'out-deep', 'dir-out/secret.txt', 'dir-out-abs/dir/deeper.txt']) {
    assert.deepEqual(read(escape), { error: 'not-permitted' }, escape);
  }
  assert.deepEqual(read('in-file', false), { error: 'loop' });
  assert.deepEqual(read('out-abs', false), { error: 'loop' });
  fs.rmSync(root, { recursive: true });
});

test('stat and metadata-hash: follow stays inside, no-follow describes the link itself', () => {
  const { root, at, dirs } = fixture();
  const state = dirs['/state'];
  const FOLLOW = { symlinkFollow: true };
  const NOFOLLOW = { symlinkFollow: false };
  assert.equal(state.statAt(FOLLOW, 'in-file').type, 'regular-file');
  assert.equal(state.statAt(FOLLOW, 'in-file').size, 6n);
  assert.equal(state.statAt(NOFOLLOW, 'out-abs').type, 'symbolic-link');
  assert.equal(state.statAt(FOLLOW, 'dir-in/file.txt').size, 8n);
  for (const [relative, error] of [['out-abs', 'not-permitted'], ['out-rel', 'not-permitted'], ['dir-out', 'not-permitted'], ['dir-out/secret.txt', 'not-permitted'], ['loop-a', 'loop'], ['..', 'not-permitted'], ['dangling-in', 'no-entry']]) {
    assert.throws(() => state.statAt(FOLLOW, relative), (e) => e === error, `stat ${relative}`);
    assert.throws(() => state.metadataHashAt(FOLLOW, relative), (e) => e === error, `metadata-hash ${relative}`);
  }
  assert.throws(() => state.statAt(NOFOLLOW, 'dir-out/secret.txt'), (e) => e === 'not-permitted', 'an intermediate symlink is followed');
  const outside = fs.statSync(at('outside/secret.txt'), { bigint: true });
  const linkHash = state.metadataHashAt(NOFOLLOW, 'out-abs');
  assert.notEqual(linkHash.lower, outside.ino, 'the link, not its target');
  fs.rmSync(root, { recursive: true });
});

test('a directory reached through a symlink is listed only when it is inside', () => {
  const { root, dirs } = fixture();
  const state = dirs['/state'];
  const DIRECTORY = { create: false, exclusive: false, truncate: false, directory: true };
  const names = (descriptor) => {
    const stream = descriptor.readDirectory();
    const list = [];
    for (let entry = stream.readDirectoryEntry(); entry; entry = stream.readDirectoryEntry()) list.push(entry.name);
    return list.sort();
  };
  assert.deepEqual(names(state.openAt({ symlinkFollow: true }, 'dir-in', DIRECTORY, ACCESS.read)), ['file.txt']);
  assert.throws(() => state.openAt({ symlinkFollow: true }, 'dir-out', DIRECTORY, ACCESS.read), (e) => e === 'not-permitted');
  assert.throws(() => state.openAt({ symlinkFollow: false }, 'dir-out', DIRECTORY, ACCESS.read), (e) => e === 'loop');
  assert.throws(() => state.openAt({ symlinkFollow: false }, 'dir-out-abs', DIRECTORY, ACCESS.read), (e) => e === 'loop');
  fs.rmSync(root, { recursive: true });
});

test('.. never climbs out of a directory descriptor', () => {
  const { root, dirs } = fixture();
  const sub = dirs['/state'].openAt({ symlinkFollow: true }, 'sub', { create: false, exclusive: false, truncate: false, directory: true }, ACCESS.read);
  assert.equal(sub.statAt({ symlinkFollow: true }, 'file.txt').size, 8n);
  assert.throws(() => sub.statAt({ symlinkFollow: true }, '../real.txt'), (e) => e === 'not-permitted');
  assert.throws(() => sub.statAt({ symlinkFollow: true }, '../../outside/secret.txt'), (e) => e === 'not-permitted');
  fs.rmSync(root, { recursive: true });
});

test('unlink, rename, mkdir and rmdir act on links themselves and never reach outside', () => {
  const { root, at, dirs } = fixture();
  const state = dirs['/state'];
  const outsideBefore = snapshot(at('outside'));
  const refused = (action, error, what) => assert.throws(action, (e) => e === error, what);

  state.unlinkFileAt('out-abs');
  assert.equal(fs.existsSync(at('state/out-abs')), false, 'the link is gone');
  refused(() => state.unlinkFileAt('dir-out/secret.txt'), 'not-permitted', 'unlink through a symlinked directory');
  refused(() => state.unlinkFileAt('../outside/secret.txt'), 'not-permitted', 'unlink via ..');

  state.renameAt('out-rel', state, 'moved-link');
  assert.equal(fs.readlinkSync(at('state/moved-link')), '../outside/secret.txt', 'the link itself moved');
  refused(() => state.renameAt('dir-out/secret.txt', state, 'stolen.txt'), 'not-permitted', 'rename from outside');
  refused(() => state.renameAt('real.txt', state, 'dir-out/planted.txt'), 'not-permitted', 'rename to outside');
  refused(() => state.renameAt('real.txt', state, '../outside/planted.txt'), 'not-permitted', 'rename to outside via ..');
  state.renameAt('real.txt', state, 'in-file');
  assert.equal(fs.readFileSync(at('state/in-file'), 'utf8'), 'inside', 'rename replaces a link, not its target');
  assert.equal(fs.lstatSync(at('state/in-file')).isFile(), true);

  refused(() => state.createDirectoryAt('dir-out/made'), 'not-permitted', 'mkdir through a symlinked directory');
  refused(() => state.createDirectoryAt('../outside/made'), 'not-permitted', 'mkdir via ..');
  refused(() => state.createDirectoryAt('dangling-out'), 'exist', 'mkdir on a dangling link does not follow it');

  refused(() => state.removeDirectoryAt('dir-out'), 'not-directory', 'rmdir on a link to a directory');
  refused(() => state.removeDirectoryAt('dir-out/dir'), 'not-permitted', 'rmdir through a symlinked directory');
  refused(() => state.removeDirectoryAt('loop-a/x'), 'loop', 'a symlink loop');

  assert.deepEqual(snapshot(at('outside')), outsideBefore, 'nothing outside changed');
  assert.equal(fs.readlinkSync(at('state/dir-out')), '../outside');
  fs.rmSync(root, { recursive: true });
});

test('a directory swapped for a symlink after it was opened is not followed out', () => {
  const { root, at, dirs } = fixture();
  const state = dirs['/state'];
  const sub = state.openAt({ symlinkFollow: true }, 'sub', { create: false, exclusive: false, truncate: false, directory: true }, ACCESS.read);
  fs.renameSync(at('state/sub'), at('state/sub-old'));
  fs.symlinkSync('../outside', at('state/sub'));
  assert.throws(() => sub.readDirectory(), (e) => e === 'not-directory', 'readdir');
  assert.throws(() => sub.statAt({ symlinkFollow: true }, 'secret.txt'), (e) => e === 'not-directory', 'stat');
  assert.throws(() => sub.openAt({ symlinkFollow: true }, 'secret.txt', { create: false, exclusive: false, truncate: true, directory: false }, ACCESS.write), (e) => e === 'not-directory', 'open');
  assert.equal(fs.readFileSync(at('outside/secret.txt'), 'utf8'), 'secret');
  fs.rmSync(root, { recursive: true });
});

test('a symlink the guest moves where a directory it used was is not followed out, in the same run', () => {
  const { root, at, dirs } = fixture();
  const state = dirs['/state'];
  const ACCESS_WRITE = { read: false, write: true, mutateDirectory: true };
  const open = (relative) => state.openAt({ symlinkFollow: true }, relative, { create: false, exclusive: false, truncate: true, directory: false }, ACCESS_WRITE);
  // All synchronous, as one run of the guest: `sub` is found to be a directory, then the guest renames
  // it away and moves the link `dir-out` (-> ../outside) to its name. The guest cannot create a
  // symlink, but it can move one that is there.
  assert.equal(state.statAt({ symlinkFollow: true }, 'sub/file.txt').type, 'regular-file');
  state.renameAt('sub', state, 'sub-old');
  state.renameAt('dir-out', state, 'sub');
  assert.throws(() => open('sub/secret.txt'), (e) => e === 'not-permitted', 'open through the moved link');
  assert.throws(() => state.statAt({ symlinkFollow: true }, 'sub/secret.txt'), (e) => e === 'not-permitted', 'stat through the moved link');
  // And a directory moved under another name is found there, not at its old one.
  assert.equal(state.statAt({ symlinkFollow: true }, 'sub-old/file.txt').type, 'regular-file');
  assert.equal(fs.readFileSync(at('outside/secret.txt'), 'utf8'), 'secret');
  fs.rmSync(root, { recursive: true });
});
