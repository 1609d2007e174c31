// The fault suite's OpenClaw side (tests/tests/faults.rs drives the CLI): two OpenClaw adapter
// runtimes in two processes, as a Gateway and `openclaw agent --local` or `openclaw graphiti flush`
// are, on one state directory, each capturing turns through OpenClaw's `agent_end` and ticking on its
// own 200 ms timer, then each running `flush`, against the Graphiti stand-in answering 30 ms late.
// Every captured turn must arrive exactly once and no counter be lost; also when one process is
// killed with SIGKILL while it holds the send lock, where the other (or a restart) delivers the rest
// and an episode may arrive twice only if an in-doubt entry had to be sent again. Prints the figures.
// Needs scripts/build.sh (the stand-in) and scripts/package-openclaw.sh (dist/graphiti-openclaw).

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, startStandIn, throwawayHome } from './openclaw.js';

const TURNS = 30;
/** A send whose outcome is unknown goes again only after this (the CLI suite's kill case uses the same). */
const RESEND_AFTER_DOUBT_MS = 1500;
const SPOOL_STATES = ['episode', 'sending', 'doubt', 'rejected', 'corrupt'];

const cleanups = [];
after(() => { for (const cleanup of cleanups.reverse()) cleanup(); });

function tempDir(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `faults-${label}-`));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** One adapter process (tests/openclaw/adapter-process.js); what it reported, as it reports it. */
function startAdapter(name, spec, env) {
  const child = spawn(process.execPath, [path.join(REPO, 'tests/openclaw/adapter-process.js'), JSON.stringify({ name, ...spec })], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  // Stopped before its state directory is removed (cleanups run last first), should a test fail.
  cleanups.push(() => child.kill('SIGKILL'));
  let loaded;
  const adapter = { name, pid: child.pid, child, spooled: [], notSpooled: [], flush: undefined, done: false, stderr: '' };
  adapter.ready = new Promise((resolve) => { loaded = resolve; });
  adapter.start = () => child.stdin.end('go\n');
  let pending = '';
  child.stdout.on('data', (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines.filter(Boolean)) {
      const message = JSON.parse(line);
      if (message.ready) loaded();
      if (message.spooled) adapter.spooled.push(message.spooled);
      if (message.notSpooled) adapter.notSpooled.push(message);
      if (message.flush) adapter.flush = message.flush;
      if (message.done) adapter.done = true;
    }
  });
  child.stderr.on('data', (chunk) => { adapter.stderr += chunk; });
  adapter.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  adapter.exited.then(() => loaded());
  return adapter;
}

/** Episode names in the spool, in any state. */
function spooledNames(stateDir) {
  const spool = path.join(stateDir, 'spool');
  if (!fs.existsSync(spool)) return [];
  return fs.readdirSync(spool)
    .filter((file) => SPOOL_STATES.includes(path.extname(file).slice(1)))
    .map((file) => { try { return JSON.parse(fs.readFileSync(path.join(spool, file), 'utf8')).name; } catch { return undefined; } })
    .filter(Boolean);
}

function countFiles(stateDir, extension) {
  const spool = path.join(stateDir, 'spool');
  return fs.existsSync(spool) ? fs.readdirSync(spool).filter((f) => f.endsWith(extension)).length : 0;
}

/** The pid in the send lock, while one holds it. */
function sendLockHolder(stateDir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(stateDir, 'locks', 'send.lock'), 'utf8')).pid;
  } catch {
    return undefined;
  }
}

/**
 * Once each adapter has captured `afterTurns` turns, SIGKILLs the one holding the send lock while it
 * still has turns to capture (the lock goes to whichever ticks first); the first one if neither
 * takes it within 20 s.
 */
async function killTheSender(adapters, stateDir, afterTurns) {
  while (adapters.some((a) => a.spooled.length < afterTurns)) await new Promise((resolve) => setTimeout(resolve, 5));
  const deadline = Date.now() + 20_000;
  let victim;
  while (!victim && Date.now() < deadline) {
    const holder = sendLockHolder(stateDir);
    victim = adapters.find((a) => a.pid === holder && a.spooled.length < TURNS);
    if (!victim) await new Promise((resolve) => setImmediate(resolve));
  }
  const holding = Boolean(victim);
  victim ??= adapters[0];
  victim.child.kill('SIGKILL');
  await victim.exited;
  return { victim, holding, turnsCaptured: victim.spooled.length };
}

/**
 * Two adapters on one state directory against a stand-in over `transport`; with `kill`, the first is
 * killed mid-run. Returns what arrived, against every turn a process captured.
 */
async function twoAdapters(transport, { kill = false } = {}) {
  const standIn = await startStandIn({ args: ['--latency-ms', '30'] });
  cleanups.push(() => standIn.stop());
  const stateDir = tempDir('state');
  const { home, env } = throwawayHome();
  cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
  const spec = {
    stateDir,
    graphiti: transport === 'mcp' ? { url: `${standIn.url}/mcp` } : { url: standIn.url, transport: 'rest' },
    turns: TURNS,
    gapMs: 40,
    tickIntervalMs: 200,
    capture: { backoff_initial_ms: 20, backoff_max_ms: 100, resend_after_doubt_ms: RESEND_AFTER_DOUBT_MS },
  };
  const adapters = [startAdapter('first', spec, env), startAdapter('second', spec, env)];
  // Both loaded before either captures, so that their turns overlap however slowly each loads.
  await Promise.all(adapters.map((a) => a.ready));
  for (const adapter of adapters) adapter.start();
  const expected = new Set();
  let killed;
  if (kill) {
    killed = await killTheSender(adapters, stateDir, TURNS / 3);
    killed.inDoubt = countFiles(stateDir, '.sending');
    for (const name of spooledNames(stateDir)) expected.add(name);
  }
  for (const adapter of adapters) {
    const { code, signal } = await adapter.exited;
    if (adapter !== killed?.victim) assert.equal(code, 0, `${adapter.name} exited ${code ?? signal}:\n${adapter.stderr}`);
    for (const name of adapter.spooled) expected.add(name);
    assert.deepEqual(adapter.notSpooled, [], `${adapter.name}: every turn spooled`);
  }
  let restart;
  if (spooledNames(stateDir).length > 0) {
    // What is left (an in-doubt entry of the killed process) is a restart's to send, once it may.
    await new Promise((resolve) => setTimeout(resolve, RESEND_AFTER_DOUBT_MS));
    restart = startAdapter('restart', { ...spec, turns: 0 }, env);
    await restart.ready;
    restart.start();
    assert.equal((await restart.exited).code, 0, restart.stderr);
  }
  const sends = await standIn.sends();
  const ourTurn = /^openclaw-main-dm-(first|second)-\d-(first|second)-turn-\d+-[0-9a-f]{8}$/;
  const accepted = sends.map((s) => s.name.replace(/:(user|assistant)$/, ''));
  assert.deepEqual(accepted.filter((name) => !ourTurn.test(name)), [], 'nothing but captured turns arrived');
  // A turn the killed process spooled and sent before it could say so is one of its turns too.
  for (const name of accepted) expected.add(name);
  const delivery = await standIn.delivery([...expected]);
  const stats = JSON.parse(fs.readFileSync(path.join(stateDir, 'stats.json'), 'utf8'));
  return {
    transport,
    adapters,
    killed,
    restart,
    expected,
    sends: new Set(sends.map((s) => s.request)).size,
    lost: delivery.lost,
    duplicated: Object.values(delivery.duplicated).reduce((sum, times) => sum + times - 1, 0),
    stats,
    left: spooledNames(stateDir),
  };
}

function figures(title, run, notes) {
  console.log(`${title} (${run.transport}): ${run.expected.size} episodes, ${run.sends} sends, ${run.lost.length} lost, ${run.duplicated} duplicated; ${notes}`);
}

for (const transport of ['mcp', 'rest']) {
  test(`two adapter processes on one state directory (${transport}): every captured turn delivered once, every count kept`, async () => {
    const run = await twoAdapters(transport);
    const { stats } = run;
    figures('two adapters on one state directory', run, `counters: ${stats.captures_spooled} spooled, ${stats.episodes_sent} sent; flush exit codes ${run.adapters.map((a) => a.flush?.exitCode).join(', ')}`);
    assert.equal(run.expected.size, 2 * TURNS, 'both processes captured every turn');
    assert.deepEqual(run.lost, [], 'none lost');
    assert.equal(run.duplicated, 0, 'none twice');
    assert.deepEqual(run.left, [], 'the spool is empty');
    assert.equal(stats.captures_spooled, 2 * TURNS, 'captures of both processes counted');
    assert.equal(stats.episodes_sent, 2 * TURNS, 'sends of both processes counted');
    assert.equal(stats.sends_in_doubt, 0);
  });

  test(`one of the two killed with SIGKILL while it holds the send lock (${transport}): the other or a restart delivers everything`, async () => {
    const run = await twoAdapters(transport, { kill: true });
    const { stats, killed } = run;
    const deliveredBy = run.restart ? 'the other, then a restart for what was in doubt' : 'the other';
    figures('two adapters on one state directory, one killed with SIGKILL', run,
      `the ${killed.victim.name} killed after ${killed.turnsCaptured} of its turns ${killed.holding ? 'holding the send lock' : 'NOT holding the send lock'}, ${killed.inDoubt} entry in doubt; `
      + `delivered by ${deliveredBy}; ${stats.doubts_confirmed} doubt(s) confirmed listed, ${stats.resent_after_doubt} resent after a doubt`);
    assert.ok(killed.holding, 'killed mid-send (holding the send lock)');
    assert.deepEqual(run.lost, [], 'none lost');
    assert.ok(run.duplicated <= stats.resent_after_doubt, `a duplicate only for an in-doubt entry sent again: ${run.duplicated} duplicated, ${stats.resent_after_doubt} resent`);
    assert.deepEqual(run.left, [], 'the spool is empty');
    const survivors = run.adapters.find((a) => a !== killed.victim).spooled.length;
    assert.equal(survivors, TURNS);
    assert.ok(killed.turnsCaptured < TURNS, `killed mid-run (after ${killed.turnsCaptured} turns)`);
    assert.ok(stats.captures_spooled >= killed.turnsCaptured + survivors, `captures counted before each hook returned: ${stats.captures_spooled}`);
  });
}
