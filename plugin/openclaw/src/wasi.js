// WASI 0.2 for the component under Node: exactly the interfaces and functions that Rust's
// wasm32-wasip2 standard library imports (see the `imports` list of `jco transpile`), over synchronous
// node:fs. The component sees only its preopened directories, as with the wasmtime host shim:
// a path never leaves its directory (`..` and symlinks included), and read-only preopens refuse
// every change. Errors are WASI error codes, which jco hands to the guest as `result` errors.
//
// Why not @bytecodealliance/preview2-shim: it runs file streams through a worker thread with
// Atomics.wait, its preopens are process-wide, and its `open-at` refuses the `mutate-directory`
// flag that Rust's std sets on every write, so the component could not write its state.

import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Largest write the guest may hand over at once (it loops for more). */
const WRITE_CHUNK = 1n << 20n;

/** Node's errno codes as WASI `error-code`s. */
const ERROR_CODES = {
  ENOENT: 'no-entry', EEXIST: 'exist', ENOTDIR: 'not-directory', EISDIR: 'is-directory',
  ENOTEMPTY: 'not-empty', EACCES: 'access', EPERM: 'not-permitted', EROFS: 'read-only',
  EINVAL: 'invalid', ELOOP: 'loop', ENAMETOOLONG: 'name-too-long', ENOSPC: 'insufficient-space',
  EBUSY: 'busy', EMFILE: 'insufficient-memory', EXDEV: 'cross-device', EBADF: 'bad-descriptor',
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

function descriptorStat(stats) {
  return {
    type: descriptorType(stats),
    linkCount: stats.nlink,
    size: stats.size,
    dataAccessTimestamp: timestamp(stats.atimeNs),
    dataModificationTimestamp: timestamp(stats.mtimeNs),
    statusChangeTimestamp: timestamp(stats.ctimeNs),
  };
}

function isInside(root, candidate) {
  return candidate === root || candidate.startsWith(root + path.sep);
}

/** One preopened directory on the host: where it is, and whether the guest may change it. */
class Preopen {
  constructor(hostDir, writable) {
    this.root = fs.realpathSync(hostDir);
    this.writable = writable;
  }

  /** The host path for `relative` inside `base`, refusing anything that would leave the preopen. */
  resolve(base, relative, followSymlinks = true) {
    if (path.isAbsolute(relative)) throw 'not-permitted';
    const lexical = path.resolve(base, relative);
    if (!isInside(this.root, lexical)) throw 'not-permitted';
    // A symlink may point anywhere: check where the existing part of the path really is.
    let existing = followSymlinks || lexical === this.root ? lexical : path.dirname(lexical);
    while (!fs.existsSync(existing) && isInside(this.root, existing) && existing !== this.root) {
      existing = path.dirname(existing);
    }
    const real = fsCall(() => fs.realpathSync(existing));
    if (!isInside(this.root, real)) throw 'not-permitted';
    return lexical;
  }

  mustWrite() {
    if (!this.writable) throw 'read-only';
  }
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

class DirectoryEntryStream {
  constructor(entries) { this.entries = entries; }

  readDirectoryEntry() {
    const entry = this.entries.shift();
    if (!entry) return undefined;
    return { type: descriptorType(entry), name: entry.name };
  }
}

class Descriptor {
  /**
   * @param {Preopen} preopen
   * @param {string} hostPath
   * @param {number | null} fd  an open file, or null for a directory
   * @param {{read: boolean, write: boolean}} access
   */
  constructor(preopen, hostPath, fd, access) {
    this.preopen = preopen;
    this.hostPath = hostPath;
    this.fd = fd;
    this.access = access;
  }

  isDirectory() { return this.fd === null; }

  mustBeDirectory() {
    if (!this.isDirectory()) throw 'not-directory';
  }

  getFlags() {
    return { read: this.access.read, write: this.access.write, mutateDirectory: this.isDirectory() && this.preopen.writable };
  }

  getType() {
    return this.isDirectory() ? 'directory' : 'regular-file';
  }

  stat() {
    return descriptorStat(fsCall(() => this.fd === null ? fs.statSync(this.hostPath, { bigint: true }) : fs.fstatSync(this.fd, { bigint: true })));
  }

  statAt(pathFlags, relative) {
    this.mustBeDirectory();
    const target = this.preopen.resolve(this.hostPath, relative, pathFlags.symlinkFollow);
    return descriptorStat(fsCall(() => pathFlags.symlinkFollow ? fs.statSync(target, { bigint: true }) : fs.lstatSync(target, { bigint: true })));
  }

  metadataHash() {
    const stats = fsCall(() => fs.statSync(this.hostPath, { bigint: true }));
    return { lower: stats.ino, upper: stats.dev };
  }

  metadataHashAt(pathFlags, relative) {
    this.mustBeDirectory();
    const target = this.preopen.resolve(this.hostPath, relative, pathFlags.symlinkFollow);
    const stats = fsCall(() => pathFlags.symlinkFollow ? fs.statSync(target, { bigint: true }) : fs.lstatSync(target, { bigint: true }));
    return { lower: stats.ino, upper: stats.dev };
  }

  openAt(pathFlags, relative, openFlags, descriptorFlags) {
    this.mustBeDirectory();
    const target = this.preopen.resolve(this.hostPath, relative, pathFlags.symlinkFollow);
    // Rust's std asks for `mutate-directory` on every write; alone it changes nothing here.
    const writes = descriptorFlags.write || openFlags.create || openFlags.truncate;
    if (writes) this.preopen.mustWrite();
    const existing = fsCall(() => fs.statSync(target, { throwIfNoEntry: false }));
    if (openFlags.directory || (existing?.isDirectory() && !writes)) {
      if (openFlags.create) throw 'invalid';
      if (!existing) throw 'no-entry';
      if (!existing.isDirectory()) throw 'not-directory';
      return new Descriptor(this.preopen, target, null, { read: true, write: false });
    }
    if (existing?.isDirectory()) throw 'is-directory';
    let flags = 0;
    const { constants } = fs;
    if (openFlags.create) flags |= constants.O_CREAT;
    if (openFlags.exclusive) flags |= constants.O_EXCL;
    if (openFlags.truncate) flags |= constants.O_TRUNC;
    const read = descriptorFlags.read || !descriptorFlags.write;
    flags |= descriptorFlags.write ? (read ? constants.O_RDWR : constants.O_WRONLY) : constants.O_RDONLY;
    const fd = fsCall(() => fs.openSync(target, flags, 0o644));
    return new Descriptor(this.preopen, target, fd, { read, write: Boolean(descriptorFlags.write) });
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
      position += fs.writeSync(this.fd, bytes, 0, bytes.length, position);
    });
  }

  appendViaStream() {
    if (this.isDirectory()) throw 'is-directory';
    if (!this.access.write) throw 'bad-descriptor';
    return new OutputStream((bytes) => {
      fs.writeSync(this.fd, bytes, 0, bytes.length, fs.fstatSync(this.fd).size);
    });
  }

  readDirectory() {
    this.mustBeDirectory();
    const entries = fsCall(() => fs.readdirSync(this.hostPath, { withFileTypes: true }));
    return new DirectoryEntryStream(entries);
  }

  createDirectoryAt(relative) {
    this.mustBeDirectory();
    this.preopen.mustWrite();
    const target = this.preopen.resolve(this.hostPath, relative, false);
    fsCall(() => fs.mkdirSync(target));
  }

  renameAt(oldRelative, newDescriptor, newRelative) {
    this.mustBeDirectory();
    newDescriptor.mustBeDirectory();
    this.preopen.mustWrite();
    newDescriptor.preopen.mustWrite();
    const from = this.preopen.resolve(this.hostPath, oldRelative, false);
    const to = newDescriptor.preopen.resolve(newDescriptor.hostPath, newRelative, false);
    fsCall(() => fs.renameSync(from, to));
  }

  unlinkFileAt(relative) {
    this.mustBeDirectory();
    this.preopen.mustWrite();
    const target = this.preopen.resolve(this.hostPath, relative, false);
    fsCall(() => {
      if (fs.lstatSync(target).isDirectory()) throw 'is-directory';
      fs.unlinkSync(target);
    });
  }

  removeDirectoryAt(relative) {
    this.mustBeDirectory();
    this.preopen.mustWrite();
    const target = this.preopen.resolve(this.hostPath, relative, false);
    fsCall(() => fs.rmdirSync(target));
  }

  [Symbol.dispose]() {
    if (this.fd !== null) {
      try { fs.closeSync(this.fd); } catch { /* already closed */ }
      this.fd = null;
    }
  }
}

class TerminalInput {}
class TerminalOutput {}

/**
 * The WASI imports for one component instance.
 * @param {{ preopens: Array<{ guestPath: string, hostDir: string, writable: boolean }>,
 *           stdout?: (text: string) => void, stderr?: (text: string) => void }} options
 *   Preopens whose host directory does not exist are left out (the guest treats them as absent).
 */
export function createWasi({ preopens, stdout = () => {}, stderr = () => {} }) {
  const mounted = preopens
    .filter(({ hostDir }) => hostDir && fs.existsSync(hostDir) && fs.statSync(hostDir).isDirectory())
    .map(({ guestPath, hostDir, writable }) => [new Preopen(hostDir, writable), guestPath]);
  const decoder = new TextDecoder();
  const textSink = (write) => (bytes) => write(decoder.decode(bytes));
  return {
    'wasi:cli/environment': { getEnvironment: () => [], getArguments: () => [], initialCwd: () => undefined },
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
        new Descriptor(preopen, preopen.root, null, { read: true, write: false }),
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
