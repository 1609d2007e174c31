// The locks across hosts and through the component: the shim CLI and the adapter share one lock-file
// format, so each finds the other's lock busy (and breaks it once its holder was killed); and the
// probe guest (`tests/probe-guest`), transpiled like plugin.wasm, takes locks through the JSPI import
// from every export that may, while turns keep an instance of their own.
// Needs `scripts/build.sh` (the shim CLI and the probe guest) and jco on PATH (scripts/node-tools.sh).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ComponentPool } from '../src/component.js';
import { beforePromptBuild, createRuntime } from '../src/index.js';
import { StateLocks } from '../src/lock.js';

/** The package's version, which a lock's holder names. */
const VERSION = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
/** The version as a regular expression matches it. */
const VERSION_PATTERN = VERSION.replaceAll('.', '\\.');

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const shim = path.join(repo, 'target/release/graphiti-openclaw');
const probeWasm = path.join(repo, 'target/wasm32-wasip2/component/probe_guest.wasm');
for (const file of [shim, probeWasm]) {
  assert.ok(fs.existsSync(file), `${file} is missing: run scripts/build.sh first`);
}

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });
function tempDir(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `adapter-${label}-`));
  made.push(dir);
  return dir;
}

/** The shim CLI running the probe's `turn <prompt> --json` on `stateDir`, as a child process. */
function shimTurn(stateDir, prompt) {
  const home = tempDir('shim-home');
  fs.mkdirSync(path.join(home, 'config'));
  const args = ['--wasm', probeWasm, '--config-dir', path.join(home, 'config'), '--state-dir', stateDir,
    '--call-timeout-ms', '40000', 'turn', prompt, '--json'];
  const child = spawn(shim, args, { env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => { output.stdout += chunk; });
  child.stderr.on('data', (chunk) => { output.stderr += chunk; });
  const done = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, ...output })));
  return { child, done };
}

/** The probe's answer to a finished turn. */
function answerOf(result) {
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout)['before-agent-start'].prepend_context;
}

async function waitForLockFile(file) {
  const started = Date.now();
  while (!(fs.existsSync(file) && fs.statSync(file).size > 0)) {
    assert.ok(Date.now() - started < 20_000, `${file} did not appear`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("the shim's lock is busy for the adapter; once the shim is killed, the adapter breaks it at once", async () => {
  const stateDir = tempDir('cross-state');
  const holder = shimTurn(stateDir, 'lock send 60000 0; sleep 30000');
  await waitForLockFile(path.join(stateDir, 'locks/send.lock'));
  const lines = [];
  const locks = new StateLocks({ stateDir, log: (line) => lines.push(line) });

  await assert.rejects(locks.acquire('send', 60_000, 100), (error) => {
    assert.equal(error.tag, 'busy');
    assert.match(error.val, new RegExp(`^held by pid ${holder.child.pid} \\(graphiti-openclaw shim ${VERSION_PATTERN}\\) on ${os.hostname()} since `));
    return true;
  });

  holder.child.kill('SIGKILL');
  assert.equal((await holder.done).signal, 'SIGKILL');
  await locks.acquire('send', 60_000, 0);
  assert.deepEqual(lines, [`broke the send lock left by pid ${holder.child.pid} (dead)`]);
  locks.close();
});

test("the adapter's lock is busy for the shim until the adapter releases it", async () => {
  const stateDir = tempDir('cross-state');
  const locks = new StateLocks({ stateDir });
  await locks.acquire('send', 60_000, 0);

  const busy = answerOf(await shimTurn(stateDir, 'lock send 60000 0').done);
  assert.ok(busy.startsWith(`Err(LockError::Busy("held by pid ${process.pid} (graphiti-openclaw adapter ${VERSION}) on ${os.hostname()} since `), busy);

  locks.release('send');
  assert.equal(answerOf(await shimTurn(stateDir, 'lock send 60000 0').done), 'Ok(())');
  locks.close();
});

// ---- through the transpiled probe, in the adapter's component pool ----

let componentDir;
function probeComponent() {
  if (!componentDir) {
    componentDir = tempDir('probe-jco');
    execFileSync('bash', [path.join(repo, 'scripts/transpile-component.sh'), probeWasm, componentDir], { stdio: 'inherit' });
  }
  return componentDir;
}

async function probePool({ instances, sendScript }) {
  const configDir = tempDir('probe-config');
  const stateDir = tempDir('probe-state');
  if (sendScript) fs.writeFileSync(path.join(configDir, 'send-script'), `${sendScript}\n`);
  const lines = [];
  const log = (level) => (message) => lines.push(`${level}: ${message}`);
  const logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
  const pool = await ComponentPool.create(probeComponent(), { configDir, stateDir, instances }, logger);
  await pool.growing;
  return { pool, stateDir, lines };
}

const ctx = { sessionKey: 'test', chatType: 'direct', trigger: 'user' };
const turn = (pool, prompt) => pool.run('before-agent-start', (plugin) => plugin.beforeAgentStart({ prompt, messagesJson: '[]' }, ctx))
  .then((injection) => injection.prependContext);

test('instances of one pool exclude each other; a waiting guest leaves the event loop free', async () => {
  const { pool } = await probePool({ instances: 2 });
  assert.equal(await turn(pool, 'lock send 60000 0'), 'Ok(())');

  let ticks = 0;
  const ticker = setInterval(() => { ticks += 1; }, 5);
  const waiting = turn(pool, 'lock send 60000 5000');
  await new Promise((resolve) => setTimeout(resolve, 200));
  // The other instance is free: the holder gives the lock up, and the waiter gets it.
  assert.equal(await turn(pool, 'unlock send'), 'unlocked send');
  assert.equal(await waiting, 'Ok(())');
  clearInterval(ticker);
  assert.ok(ticks >= 20, `the event loop ran ${ticks} timer ticks while a guest waited`);

  // Both instances at once: the holder is only checked, the other finds it busy.
  const [first, second] = (await Promise.all([turn(pool, 'lock send 60000 0'), turn(pool, 'lock send 60000 0')])).sort();
  assert.match(first, new RegExp(`^Err\\(LockError::Busy\\("held by pid \\d+ \\(graphiti-openclaw adapter ${VERSION_PATTERN}\\)`));
  assert.equal(second, 'Ok(())');
});

test('a trapped instance gives up its locks; so does every instance when the service stops', async () => {
  const { pool, stateDir } = await probePool({ instances: 2 });
  await assert.rejects(turn(pool, 'lock send 60000 0; panic'));
  assert.equal(await turn(pool, 'lock send 60000 0'), 'Ok(())', 'the trapped instance no longer holds it');

  // agent-end may take a lock too (it merges counters): an async export.
  const outcome = await pool.run('agent-end', (plugin) => plugin.agentEnd({ success: true, messagesJson: 'lock counters 60000 0', error: undefined, durationMs: undefined }, ctx));
  assert.deepEqual(outcome, { tag: 'skipped', val: 'Ok(())' });
  assert.deepEqual(fs.readdirSync(path.join(stateDir, 'locks')).sort(), ['counters.lock', 'send.lock']);
  await pool.releaseLocks();
  assert.deepEqual(fs.readdirSync(path.join(stateDir, 'locks')), []);
});

test('a tick waiting to send never takes the instance a turn needs, even with one instance', async () => {
  const { pool, stateDir } = await probePool({ instances: 1, sendScript: 'lock send 60000 5000' });
  // Another process (say, `graphiti-openclaw flush`) is sending.
  const otherProcess = new StateLocks({ stateDir });
  await otherProcess.acquire('send', 60_000, 0);

  let tickDone = false;
  const tick = pool.runSending('tick', (plugin) => plugin.tick()).then((report) => { tickDone = true; return report; });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = performance.now();
  assert.equal(await turn(pool, 'hello'), 'echo: hello');
  assert.ok(performance.now() - started < 1000, `the turn waited ${performance.now() - started} ms`);
  assert.equal(tickDone, false, 'the tick is still waiting for the lock');

  otherProcess.close();
  assert.deepEqual((await tick).notes, ['Ok(())']);
  // flush (run-command) takes the same way; the sender holds the lock already: only checked.
  const output = await pool.runSending('flush', (plugin) => plugin.runCommand({ tag: 'flush' }));
  assert.equal(output.stdout, 'Ok(())\n');
});

test('the runtime sends flush, spool and ticks one at a time beside the turns', async () => {
  const configDir = tempDir('probe-config');
  const stateDir = tempDir('probe-state');
  fs.writeFileSync(path.join(configDir, 'send-script'), 'lock send 60000 5000\n');
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const runtime = createRuntime({ logger: quiet, pluginConfig: { configDir, stateDir, instances: 1 } }, { componentDir: probeComponent() });
  const otherProcess = new StateLocks({ stateDir });
  await otherProcess.acquire('send', 60_000, 0);

  const order = [];
  const flush = runtime.command({ tag: 'flush' }).then((output) => { order.push('flush'); return output; });
  const tick = runtime.tick().then((report) => { order.push('tick'); return report; });
  const spool = runtime.command({ tag: 'spool', val: { tag: 'list' } }).then((output) => { order.push('spool'); return output; });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const injected = await beforePromptBuild(runtime, { prompt: 'hello', messages: [] }, ctx);
  assert.equal(injected.prependContext, 'echo: hello', 'a turn is served while the flush waits');
  assert.deepEqual(order, []);

  otherProcess.close();
  assert.equal((await flush).stdout, 'Ok(())\n');
  assert.deepEqual((await tick).notes, ['Ok(())']);
  assert.equal((await spool).stdout, 'spool list\n');
  assert.deepEqual(order, ['flush', 'tick', 'spool']);
  await runtime.releaseLocks();
  assert.deepEqual(fs.readdirSync(path.join(stateDir, 'locks')), []);
});
