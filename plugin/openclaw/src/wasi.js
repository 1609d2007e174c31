// WASI 0.2 for the component under Node: exactly the interfaces and functions that Rust's
// wasm32-wasip2 standard library imports (see the `imports` list of `jco transpile`), over synchronous
// node:fs. The component sees only its preopened directories, as with the wasmtime host shim:
// a path never leaves its directory (`..` and symlinks included), a symlink is followed only where
// the guest asks for it, only regular files and directories are opened (never in a way that can
// block: a FIFO would freeze Node's event loop), and read-only preopens refuse every change. Errors
// are WASI error codes, which jco hands to the guest as `result` errors.
//
// Node has no `openat`, so paths are resolved here one component at a time with lstat (see
// `Preopen.walk`) and the result is opened with O_NOFOLLOW. The guest cannot race that check: its
// calls are synchronous and it cannot create symlinks (no `symlink-at`). Another process that can
// write inside a preopen could swap a directory for a symlink between the check and the open and
// redirect that one open; a preopen others can write is unsafe anyway (they can rewrite its files).
// Every call walks its path again: a directory found real is not trusted for the next call, even in
// the same synchronous run of the guest, so such a swap redirects one call at most.
//
// Why not @bytecodealliance/preview2-shim: it runs file streams through a worker thread with
// Atomics.wait, its preopens are process-wide, and its `open-at` refuses the `mutate-directory`
// flag that Rust's std sets on every write, so the component could not write its state.

import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Largest write the guest may hand over at once (it loops for more). */
const WRITE_CHUNK = 1n << 20n;

/** Most symlinks one path may expand before it is a loop (Linux's limit). */
const MAX_SYMLINK_EXPANSIONS = 40;

/** What an open of anything but a regular file or a directory gives the guest (std: "Permission denied"). */
const NOT_A_REGULAR_FILE = 'access';

/** Node's errno codes as WASI `error-code`s. */
const ERROR_CODES = {
  ENOENT: 'no-entry', EEXIST: 'exist', ENOTDIR: 'not-directory', EISDIR: 'is-directory',
  ENOTEMPTY: 'not-empty', EACCES: 'access', EPERM: 'not-permitted', EROFS: 'read-only',
  EINVAL: 'invalid', ELOOP: 'loop', ENAMETOOLONG: 'name-too-long', ENOSPC: 'insufficient-space',
  EBUSY: 'busy', EMFILE: 'insufficient-memory', EXDEV: 'cross-device', EBADF: 'bad-descriptor',
  ENXIO: 'no-such-device',
};

/** Runs `action`, turning a Node fs error into the WASI error code the guest expects. */
function fsCall(action) {
  try {
    return action();
  } catch (error) {
    if (typeof error === 'string') throw error;
    throw ERROR_CODES[error?.code] ?? 'io';
  }
}

function descriptorType(stats) {
  if (stats.isFile()) return 'regular-file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'symbolic-link';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'character-device';
  if (stats.isBlockDevice()) return 'block-device';
  return 'unknown';
}

function timestamp(ns) {
  return { seconds: ns / 1_000_000_000n, nanoseconds: Number(ns % 1_000_000_000n) };
}

/**
 * A time in milliseconds (a Stats' `mtimeMs`: a float good to a fraction of a microsecond) as a WASI
 * datetime. The same file time always gives the same datetime, and times a microsecond apart differ.
 */
function timestampOfMs(ms) {
  const seconds = Math.floor(ms / 1000);
  const nanoseconds = Math.min(999_999_999, Math.max(0, Math.round((ms - seconds * 1000) * 1_000_000)));
  return { seconds: BigInt(seconds), nanoseconds };
}

/**
 * Stats as plain numbers (not `bigint: true`, which allocates a BigInt per field and costs about
 * twice as much per call): sizes and link counts are exact far beyond any real file.
 */
function descriptorStat(stats) {
  return {
    type: descriptorType(stats),
    linkCount: BigInt(stats.nlink),
    size: BigInt(stats.size),
    dataAccessTimestamp: timestampOfMs(stats.atimeMs),
    dataModificationTimestamp: timestampOfMs(stats.mtimeMs),
    statusChangeTimestamp: timestampOfMs(stats.ctimeMs),
  };
}

/** WASI's metadata hash of an entry: its inode and device. */
function metadataHash(stats) {
  return { lower: BigInt(stats.ino), upper: BigInt(stats.dev) };
}

/** The names in a relative path, without empty and `.` ones. */
function pathNames(relative) {
  return relative.split('/').filter((name) => name !== '' && name !== '.');
}

/** lstat that says "absent" with undefined. */
function entryStats(hostPath) {
  return fsCall(() => fs.lstatSync(hostPath, { throwIfNoEntry: false }));
}

/**
 * What a walk must learn of the entry a path names: STATS, its lstat; NAME, nothing (a rename, a
 * mkdir or an rmdir acts on the name itself and fails by itself).
 */
const STATS = 0;
const NAME = 1;

/** One preopened directory on the host: where it is, and whether the guest may change it. */
class Preopen {
  constructor(hostDir, writable) {
    this.root = fs.realpathSync(hostDir);
    this.writable = writable;
  }

  /**
   * Resolves `relative` inside the directory `base` (a host path in this preopen) one name at a time,
   * as cap-std does for the wasmtime shim: `..` never climbs above `base`; a symlink is expanded where
   * it is not the last name, or is the last and `follow` is set; an absolute one, or one leading above
   * `base`, is refused. Only lstat and readlink are used, so nothing here can block.
   * @param {number} need  what the caller needs of the last entry: STATS or NAME
   * @returns {{ hostPath: string, stats: fs.Stats | undefined }}  the entry reached (a symlink
   *   itself when it was not followed); `stats` is undefined when it does not exist (or was not
   *   looked at: NAME).
   */
  walk(base, relative, follow, need = STATS) {
    if (relative === '') throw 'no-entry';
    if (relative.startsWith('/')) throw 'not-permitted';
    // `a/`, `a/.` and `a/..` name a directory: a final symlink in them is followed, as the kernel does.
    const namesDirectory = /(^|\/)\.{0,2}$/.test(relative);
    // The host paths of `base` and of each directory entered below it. Names come from pathNames (no
    // `/`, no `.` or empty one; `..` pops), so appending one is what path.join would give, without
    // its normalizing pass on every step (cold, a noticeable share of a first configuration load).
    const entered = [base];
    const pending = pathNames(relative).reverse();
    let expansions = 0;
    while (pending.length > 0) {
      const name = pending.pop();
      if (name === '..') {
        if (entered.length === 1) throw 'not-permitted';
        entered.pop();
        continue;
      }
      const directory = entered[entered.length - 1];
      const hostPath = directory.endsWith('/') ? directory + name : `${directory}/${name}`;
      const last = pending.length === 0;
      // A change of a name (NAME) needs nothing of the entry unless a final symlink is to be expanded.
      if (last && need === NAME && !follow && !namesDirectory) return { hostPath, stats: undefined };
      const stats = entryStats(hostPath);
      if (stats?.isSymbolicLink() && (!last || follow || namesDirectory)) {
        expansions += 1;
        if (expansions > MAX_SYMLINK_EXPANSIONS) throw 'loop';
        const target = fsCall(() => fs.readlinkSync(hostPath));
        if (target.startsWith('/')) throw 'not-permitted';
        pending.push(...pathNames(target).reverse());
        continue;
      }
      if (last) {
        if (namesDirectory && stats && !stats.isDirectory()) throw 'not-directory';
        return { hostPath, stats };
      }
      if (!stats) throw 'no-entry';
      if (!stats.isDirectory()) throw 'not-directory';
      entered.push(hostPath);
    }
    const hostPath = entered[entered.length - 1];
    return { hostPath, stats: need === NAME ? undefined : entryStats(hostPath) };
  }

  mustWrite() {
    if (!this.writable) throw 'read-only';
  }
}

/**
 * Opens a regular file that the walk found (or that is to be created) at `hostPath`.
 * O_NOFOLLOW: every symlink to be followed was expanded by the walk, so one here was not to be (or
 * was put there since): the open fails with ELOOP. O_NONBLOCK: opening a FIFO must not wait for the
 * other end (it would freeze Node's event loop); it changes nothing for regular files, whose reads
 * and writes never block or return EAGAIN (Linux, macOS), and only regular files are kept.
 */
function openRegularFile(hostPath, openFlags, { read, write }) {
  const { constants } = fs;
  let flags = constants.O_NOFOLLOW | constants.O_NONBLOCK;
  if (openFlags.create) flags |= constants.O_CREAT;
  if (openFlags.exclusive) flags |= constants.O_EXCL;
  if (openFlags.truncate) flags |= constants.O_TRUNC;
  flags |= write ? (read ? constants.O_RDWR : constants.O_WRONLY) : constants.O_RDONLY;
  const fd = fsCall(() => fs.openSync(hostPath, flags, 0o644));
  // The entry may have changed since the walk looked at it: check what was really opened.
  let regular = false;
  try {
    regular = fsCall(() => fs.fstatSync(fd).isFile());
  } finally {
    if (!regular) fs.closeSync(fd);
  }
  if (!regular) throw NOT_A_REGULAR_FILE;
  return fd;
}

class Pollable {
  ready() { return true; }
  block() {}
}

class IoError {
  constructor(message) { this.message = message; }
  toDebugString() { return this.message; }
}

class InputStream {
  /** @param {number | null} fd  null: an empty stream (stdin) */
  constructor(fd, position) {
    this.fd = fd;
    this.position = position;
  }

  read(len) {
    if (this.fd === null) throw { tag: 'closed' };
    const buffer = Buffer.alloc(Number(len > WRITE_CHUNK ? WRITE_CHUNK : len));
    let count;
    try {
      count = fs.readSync(this.fd, buffer, 0, buffer.length, this.position);
    } catch (error) {
      throw { tag: 'last-operation-failed', val: new IoError(String(error?.message ?? error)) };
    }
    if (count === 0 && len > 0n) throw { tag: 'closed' };
    this.position += count;
    return new Uint8Array(buffer.buffer, buffer.byteOffset, count);
  }

  blockingRead(len) { return this.read(len); }
  subscribe() { return new Pollable(); }
}

class OutputStream {
  /**
   * @param {(bytes: Uint8Array) => void} sink  where written bytes go
   */
  constructor(sink) { this.sink = sink; }

  checkWrite() { return WRITE_CHUNK; }

  write(bytes) {
    try {
      this.sink(bytes);
    } catch (error) {
      throw { tag: 'last-operation-failed', val: new IoError(String(error?.message ?? error)) };
    }
  }

  blockingWriteAndFlush(bytes) { this.write(bytes); }
  flush() {}
  blockingFlush() {}
  subscribe() { return new Pollable(); }
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

class DirectoryEntryStream {
  /** @param {import('node:fs').Dirent<Buffer>[]} entries  names as bytes */
  constructor(entries) { this.entries = entries; }

  /** An entry whose name is not UTF-8 is an error of its own, as in wasmtime: the next one follows. */
  readDirectoryEntry() {
    const entry = this.entries.shift();
    if (!entry) return undefined;
    let name;
    try {
      name = STRICT_UTF8.decode(entry.name);
    } catch {
      throw 'illegal-byte-sequence';
    }
    return { type: descriptorType(entry), name };
  }
}

const READ_ONLY = { read: true, write: false };

class Descriptor {
  /**
   * @param {Preopen} preopen
   * @param {string | null} location  a directory's path from the preopen's root ('' for the root);
   *   null for a file
   * @param {number | null} fd  an open file, or null for a directory
   * @param {{read: boolean, write: boolean}} access
   */
  constructor(preopen, location, fd, access) {
    this.preopen = preopen;
    this.location = location;
    this.fd = fd;
    this.access = access;
  }

  isDirectory() { return this.fd === null; }

  /** This directory's host path, walked again from the root: it may have been replaced since. */
  directoryPath() {
    if (!this.isDirectory()) throw 'not-directory';
    if (this.location === '') return this.preopen.root;
    const { hostPath, stats } = this.preopen.walk(this.preopen.root, this.location, false);
    if (!stats) throw 'no-entry';
    if (!stats.isDirectory()) throw 'not-directory';
    return hostPath;
  }

  /** lstat of `relative` under this directory, following a final symlink if asked. */
  entryAt(pathFlags, relative) {
    const { stats } = this.preopen.walk(this.directoryPath(), relative, pathFlags.symlinkFollow);
    if (!stats) throw 'no-entry';
    return stats;
  }

  ownStats() {
    return this.isDirectory() ? entryStats(this.directoryPath()) : fsCall(() => fs.fstatSync(this.fd));
  }

  getFlags() {
    return { read: this.access.read, write: this.access.write, mutateDirectory: this.isDirectory() && this.preopen.writable };
  }

  getType() {
    return this.isDirectory() ? 'directory' : 'regular-file';
  }

  /**
   * The guest's libc asks for every stat twice: `stat` and `metadata-hash` (for st_ino), or
   * `stat-at` and `metadata-hash-at` of one path, one right after the other in the same synchronous
   * call, in either order. The stats of the first are kept for the second, so one stat walks the
   * path (or calls fstat) once.
   */
  stat() {
    return descriptorStat(this.keptOwnStats());
  }

  statAt(pathFlags, relative) {
    return descriptorStat(this.keptEntryAt(pathFlags, relative));
  }

  metadataHash() {
    return metadataHash(this.keptOwnStats());
  }

  metadataHashAt(pathFlags, relative) {
    return metadataHash(this.keptEntryAt(pathFlags, relative));
  }

  keptOwnStats() {
    return takeKeptStats(this, null, false) ?? keepStats(this, null, false, this.ownStats());
  }

  keptEntryAt(pathFlags, relative) {
    const follow = Boolean(pathFlags.symlinkFollow);
    return takeKeptStats(this, relative, follow) ?? keepStats(this, relative, follow, this.entryAt(pathFlags, relative));
  }

  openAt(pathFlags, relative, openFlags, descriptorFlags) {
    lastStatAt = undefined;
    const base = this.directoryPath();
    // Rust's std asks for `mutate-directory` on every write; alone it changes nothing here.
    const writes = descriptorFlags.write || openFlags.create || openFlags.truncate;
    if (writes) this.preopen.mustWrite();
    // An exclusive create never follows a final symlink (POSIX O_CREAT|O_EXCL): it fails with `exist`.
    const follow = pathFlags.symlinkFollow && !(openFlags.create && openFlags.exclusive);
    const { hostPath, stats } = this.preopen.walk(base, relative, follow);
    if (openFlags.directory || (stats?.isDirectory() && !writes)) {
      if (openFlags.create) throw 'invalid';
      if (!stats) throw 'no-entry';
      if (stats.isSymbolicLink()) throw 'loop';
      if (!stats.isDirectory()) throw 'not-directory';
      return new Descriptor(this.preopen, path.relative(this.preopen.root, hostPath), null, READ_ONLY);
    }
    if (stats?.isDirectory()) throw 'is-directory';
    // Absent as the walk saw it: an open without create would fail the same (a tick asks for files
    // that are often not there: an entry's send record, the backoff).
    if (!stats && !openFlags.create) throw 'no-entry';
    // Refused before opening: opening a device or socket may itself do something.
    if (stats && !stats.isFile() && !stats.isSymbolicLink()) throw NOT_A_REGULAR_FILE;
    const access = { read: descriptorFlags.read || !descriptorFlags.write, write: Boolean(descriptorFlags.write) };
    return new Descriptor(this.preopen, null, openRegularFile(hostPath, openFlags, access), access);
  }

  /** `length` bytes at `offset` or fewer (the guest's pread), and whether the file ends there. */
  read(length, offset) {
    if (this.isDirectory()) throw 'is-directory';
    if (!this.access.read) throw 'bad-descriptor';
    const buffer = Buffer.alloc(Number(length > WRITE_CHUNK ? WRITE_CHUNK : length));
    const count = fsCall(() => fs.readSync(this.fd, buffer, 0, buffer.length, Number(offset)));
    return [new Uint8Array(buffer.buffer, buffer.byteOffset, count), count < buffer.length];
  }

  /** Writes `bytes` at `offset` (the guest's pwrite); how many were written. */
  write(bytes, offset) {
    if (this.isDirectory()) throw 'is-directory';
    if (!this.access.write) throw 'bad-descriptor';
    lastStatAt = undefined;
    return BigInt(fsCall(() => fs.writeSync(this.fd, bytes, 0, bytes.length, Number(offset))));
  }

  readViaStream(offset) {
    if (this.isDirectory()) throw 'is-directory';
    return new InputStream(this.fd, Number(offset));
  }

  writeViaStream(offset) {
    if (this.isDirectory()) throw 'is-directory';
    if (!this.access.write) throw 'bad-descriptor';
    let position = Number(offset);
    return new OutputStream((bytes) => {
      lastStatAt = undefined;
      position += fs.writeSync(this.fd, bytes, 0, bytes.length, position);
    });
  }

  appendViaStream() {
    if (this.isDirectory()) throw 'is-directory';
    if (!this.access.write) throw 'bad-descriptor';
    return new OutputStream((bytes) => {
      lastStatAt = undefined;
      fs.writeSync(this.fd, bytes, 0, bytes.length, fs.fstatSync(this.fd).size);
    });
  }

  /** `sync-data` (the guest's fdatasync): a file's data on the disk, or a directory's entries. */
  syncData() {
    this.syncWith(fs.fdatasyncSync);
  }

  /** `sync` (the guest's fsync): as `syncData`, and the metadata too. */
  sync() {
    this.syncWith(fs.fsyncSync);
  }

  /** A directory is held by its path (no descriptor stays open): opened for the sync alone. */
  syncWith(syncFd) {
    if (!this.isDirectory()) return fsCall(() => syncFd(this.fd));
    const fd = fsCall(() => fs.openSync(this.directoryPath(), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY));
    try {
      fsCall(() => syncFd(fd));
    } finally {
      fs.closeSync(fd);
    }
  }

  readDirectory() {
    const entries = fsCall(() => fs.readdirSync(this.directoryPath(), { withFileTypes: true, encoding: 'buffer' }));
    return new DirectoryEntryStream(entries);
  }

  /** The host path of the entry `relative` names itself (a final symlink is not followed), for a change. */
  entryToChange(relative, need = STATS) {
    lastStatAt = undefined;
    const base = this.directoryPath();
    this.preopen.mustWrite();
    return this.preopen.walk(base, relative, false, need);
  }

  createDirectoryAt(relative) {
    const { hostPath } = this.entryToChange(relative, NAME);
    fsCall(() => fs.mkdirSync(hostPath));
  }

  renameAt(oldRelative, newDescriptor, newRelative) {
    const from = this.entryToChange(oldRelative, NAME).hostPath;
    const to = newDescriptor.entryToChange(newRelative, NAME).hostPath;
    fsCall(() => fs.renameSync(from, to));
  }

  unlinkFileAt(relative) {
    const { hostPath, stats } = this.entryToChange(relative);
    if (stats?.isDirectory()) throw 'is-directory';
    fsCall(() => fs.unlinkSync(hostPath));
  }

  removeDirectoryAt(relative) {
    const { hostPath } = this.entryToChange(relative, NAME);
    fsCall(() => fs.rmdirSync(hostPath));
  }

  [Symbol.dispose]() {
    if (this.fd !== null) {
      try { fs.closeSync(this.fd); } catch { /* already closed */ }
      this.fd = null;
    }
  }
}

/**
 * The stats the last stat call answered, for the other half of the guest's pair (see
 * `Descriptor.stat`): used once, by the same descriptor for the same path, within the same
 * synchronous run of the guest, and dropped by any open, write or change made through this host.
 * @type {{ descriptor: Descriptor, relative: string | null, follow: boolean, stats: fs.Stats } | undefined}
 */
let lastStatAt;

function keepStats(descriptor, relative, follow, stats) {
  // Never past the guest's current synchronous run: it yields to the event loop only between calls
  // of its exports or while it waits for an async import (HTTP, a lock), and microtasks run then.
  if (!lastStatAt) queueMicrotask(forgetKeptStats);
  lastStatAt = { descriptor, relative, follow, stats };
  return stats;
}

function forgetKeptStats() {
  lastStatAt = undefined;
}

function takeKeptStats(descriptor, relative, follow) {
  const last = lastStatAt;
  lastStatAt = undefined;
  if (last && last.descriptor === descriptor && last.relative === relative && last.follow === follow) return last.stats;
  return undefined;
}

class TerminalInput {}
class TerminalOutput {}

/**
 * The WASI imports for one component instance.
 * @param {{ preopens: Array<{ guestPath: string, hostDir: string, writable: boolean }>,
 *           environment?: Array<[string, string]>,
 *           stdout?: (text: string) => void, stderr?: (text: string) => void }} options
 *   Preopens whose host directory does not exist are left out (the guest treats them as absent).
 *   `environment` is all the guest sees of environment variables (none of the Gateway's own).
 */
export function createWasi({ preopens, environment = [], stdout = () => {}, stderr = () => {} }) {
  const mounted = preopens
    .filter(({ hostDir }) => hostDir && fs.existsSync(hostDir) && fs.statSync(hostDir).isDirectory())
    .map(({ guestPath, hostDir, writable }) => [new Preopen(hostDir, writable), guestPath]);
  const decoder = new TextDecoder();
  const textSink = (write) => (bytes) => write(decoder.decode(bytes));
  return {
    'wasi:cli/environment': { getEnvironment: () => environment.map(([name, value]) => [name, value]), getArguments: () => [], initialCwd: () => undefined },
    'wasi:cli/exit': {
      exit(status) {
        throw new Error(`the component called exit (${status?.tag ?? status})`);
      },
    },
    'wasi:cli/stdin': { getStdin: () => new InputStream(null, 0) },
    'wasi:cli/stdout': { getStdout: () => new OutputStream(textSink(stdout)) },
    'wasi:cli/stderr': { getStderr: () => new OutputStream(textSink(stderr)) },
    'wasi:cli/terminal-input': { TerminalInput },
    'wasi:cli/terminal-output': { TerminalOutput },
    'wasi:cli/terminal-stdin': { getTerminalStdin: () => undefined },
    'wasi:cli/terminal-stdout': { getTerminalStdout: () => undefined },
    'wasi:cli/terminal-stderr': { getTerminalStderr: () => undefined },
    'wasi:clocks/monotonic-clock': {
      now: () => process.hrtime.bigint(),
      resolution: () => 1n,
      subscribeDuration: () => new Pollable(),
      subscribeInstant: () => new Pollable(),
    },
    'wasi:clocks/wall-clock': {
      now: () => timestamp(BigInt(Date.now()) * 1_000_000n),
      resolution: () => ({ seconds: 0n, nanoseconds: 1_000_000 }),
    },
    'wasi:filesystem/preopens': {
      getDirectories: () => mounted.map(([preopen, guestPath]) => [
        new Descriptor(preopen, '', null, READ_ONLY),
        guestPath,
      ]),
    },
    'wasi:filesystem/types': {
      Descriptor,
      DirectoryEntryStream,
      filesystemErrorCode: () => undefined,
    },
    'wasi:io/error': { Error: IoError },
    'wasi:io/poll': { Pollable, poll: (list) => new Uint32Array(list.map((_, i) => i)) },
    'wasi:io/streams': { InputStream, OutputStream },
    'wasi:random/insecure-seed': {
      insecureSeed: () => {
        const bytes = randomBytes(16);
        return [bytes.readBigUInt64LE(0), bytes.readBigUInt64LE(8)];
      },
    },
  };
}
