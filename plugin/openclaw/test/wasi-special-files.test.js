// Files that are not regular files (FIFOs, sockets, devices) in a preopen: an open must never block
// Node's event loop, and must be refused with an error the guest sees. Opens that could block run in a
// child process with a watchdog, so a regression shows as a failure, not a hung test run.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createWasi } from '../src/wasi.js';

const WASI_MODULE = new URL('../src/wasi.js', import.meta.url).href;
const INDEX_MODULE = new URL('../src/index.js', import.meta.url).href;
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
const WATCHDOG_MS = 10_000;
const FOLLOW = { symlinkFollow: true };
const OPEN = { create: false, directory: false, exclusive: false, truncate: false };
const READ = { read: true, write: false, mutateDirectory: false };
const WRITE = { read: false, write: true, mutateDirectory: true };

/** Opens each of `opens` in a child Node process; returns what each gave ({ opened } or { error }). */
const CHILD = `
const [wasiModule, request] = process.argv.slice(1);
const { createWasi } = await import(wasiModule);
const { preopens, opens } = JSON.parse(request);
const dirs = Object.fromEntries(createWasi({ preopens })['wasi:filesystem/preopens'].getDirectories().map(([d, p]) => [p, d]));
const results = opens.map(({ dir, path, openFlags, access }) => {
  try {
    return { opened: dirs[dir].openAt({ symlinkFollow: true }, path, openFlags, access).getType() };
  } catch (error) {
    return { error };
  }
});
process.stdout.write(JSON.stringify(results));
`;

/** Runs `script` (an ES module) in a child Node process; a frozen child is killed and fails the test. */
function runInChild(script, args) {
  const started = performance.now();
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script, ...args], { timeout: WATCHDOG_MS, encoding: 'utf8' });
  const elapsed = Math.round(performance.now() - started);
  assert.equal(child.signal, null, `the open froze the process: killed by the watchdog after ${elapsed} ms`);
  assert.equal(child.status, 0, child.stderr);
  return child.stdout;
}

function openInChild(preopens, opens) {
  return JSON.parse(runInChild(CHILD, [WASI_MODULE, JSON.stringify({ preopens, opens })]));
}

/** The adapter with the real component checks a configuration directory: what it says, or its error. */
const CHECK_CONFIG = `
const [indexModule, componentDir, configDir, stateDir] = process.argv.slice(1);
const { createRuntime } = await import(indexModule);
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const runtime = createRuntime({ logger: quiet, pluginConfig: { configDir, stateDir } }, { componentDir });
try {
  const output = await runtime.command({ tag: 'check-config' });
  process.stdout.write(output.stdout + output.stderr);
} catch (error) {
  process.stdout.write(String(error?.message ?? error));
}
`;

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wasi-special-'));
  made.push(root);
  for (const dir of ['config', 'overlay/packs', 'state']) fs.mkdirSync(path.join(root, dir), { recursive: true });
  const preopens = [
    { guestPath: '/config', hostDir: path.join(root, 'config'), writable: false },
    { guestPath: '/overlay', hostDir: path.join(root, 'overlay'), writable: false },
    { guestPath: '/state', hostDir: path.join(root, 'state'), writable: true },
  ];
  return { root, preopens };
}

test('a FIFO named like a config, pack or state file is refused at once, for reading and for writing', () => {
  const { root, preopens } = setup();
  execFileSync('mkfifo', [path.join(root, 'config', 'intent_rules.yaml'), path.join(root, 'overlay', 'packs', 'x.pack.yaml'), path.join(root, 'state', 'backoff.json')]);
  fs.symlinkSync('intent_rules.yaml', path.join(root, 'config', 'rules-link.yaml'));
  const results = openInChild(preopens, [
    { dir: '/config', path: 'intent_rules.yaml', openFlags: OPEN, access: READ },
    { dir: '/overlay', path: 'packs/x.pack.yaml', openFlags: OPEN, access: READ },
    { dir: '/config', path: 'rules-link.yaml', openFlags: OPEN, access: READ },
    { dir: '/state', path: 'backoff.json', openFlags: OPEN, access: READ },
    { dir: '/state', path: 'backoff.json', openFlags: { ...OPEN, create: true, truncate: true }, access: WRITE },
    { dir: '/state', path: 'backoff.json', openFlags: OPEN, access: { ...READ, write: true } },
  ]);
  for (const result of results) assert.deepEqual(result, { error: 'access' });
});

test('a unix socket in a preopen is refused with the same error', async () => {
  const { root, preopens } = setup();
  const server = net.createServer();
  await new Promise((resolve) => server.listen(path.join(root, 'config', 'settings.yaml'), resolve));
  try {
    const [result] = openInChild(preopens, [{ dir: '/config', path: 'settings.yaml', openFlags: OPEN, access: READ }]);
    assert.deepEqual(result, { error: 'access' });
  } finally {
    server.close();
  }
});

test('a character device inside a preopen is refused; a symlink to /dev/zero leaves the preopen', { skip: process.getuid?.() !== 0 && 'mknod needs root' }, () => {
  const { root, preopens } = setup();
  execFileSync('mknod', [path.join(root, 'config', 'zero.yaml'), 'c', '1', '5']);
  fs.symlinkSync('/dev/zero', path.join(root, 'config', 'dev-zero.yaml'));
  const results = openInChild(preopens, [
    { dir: '/config', path: 'zero.yaml', openFlags: OPEN, access: READ },
    { dir: '/config', path: 'dev-zero.yaml', openFlags: OPEN, access: READ },
  ]);
  assert.deepEqual(results, [{ error: 'access' }, { error: 'not-permitted' }]);
});

test('special files are still seen by stat and directory listings, without blocking', () => {
  const { root, preopens } = setup();
  execFileSync('mkfifo', [path.join(root, 'config', 'intent_rules.yaml')]);
  const dirs = Object.fromEntries(createWasi({ preopens })['wasi:filesystem/preopens'].getDirectories().map(([d, p]) => [p, d]));
  assert.equal(dirs['/config'].statAt(FOLLOW, 'intent_rules.yaml').type, 'fifo');
  const entries = dirs['/config'].readDirectory();
  assert.deepEqual(entries.readDirectoryEntry(), { type: 'fifo', name: 'intent_rules.yaml' });
});

test('regular files and directories still open', () => {
  const { root, preopens } = setup();
  fs.writeFileSync(path.join(root, 'config', 'settings.yaml'), 'recall: {}\n');
  const results = openInChild(preopens, [
    { dir: '/config', path: 'settings.yaml', openFlags: OPEN, access: READ },
    { dir: '/overlay', path: 'packs', openFlags: { ...OPEN, directory: true }, access: READ },
    { dir: '/state', path: 'new.json', openFlags: { ...OPEN, create: true, truncate: true }, access: WRITE },
  ]);
  assert.deepEqual(results, [{ opened: 'regular-file' }, { opened: 'directory' }, { opened: 'regular-file' }]);
});

test('through the real component: a FIFO as intent_rules.yaml is a configuration error naming the file', () => {
  const { root } = setup();
  const configDir = path.join(root, 'config');
  fs.cpSync(path.join(REPO, 'config'), configDir, { recursive: true });
  fs.rmSync(path.join(configDir, 'intent_rules.yaml'));
  execFileSync('mkfifo', [path.join(configDir, 'intent_rules.yaml')]);
  const componentDir = path.join(REPO, 'dist/graphiti-openclaw/dist/component');
  const said = runInChild(CHECK_CONFIG, [INDEX_MODULE, componentDir, configDir, path.join(root, 'state')]);
  assert.match(said, /intent_rules\.yaml\b.*Permission denied/);
});
