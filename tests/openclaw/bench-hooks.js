// Per-hook overhead of the package inside OpenClaw's own hook runner, against the Graphiti stand-in:
// each `before_prompt_build` and `agent_end` (which spools; sending follows with a background tick),
// minus the time spent waiting for Graphiti's HTTP answers, minus a no-op plugin's time for the same
// hook in the same hook runner, turn by turn. Also the first turn right after loading as a Gateway
// loads (the component's compilation and instantiation, started by `register`, plus one turn), and
// agent_end with thousands of turns waiting in the spool, with and without capture.sync_to_disk,
// beside the machine's own durable write. Prints figures; asserts what every turn returned.
//
//   node tests/openclaw/bench-hooks.js      (HOOKS_BENCH_QUICK=1 for a short run; BENCH_ROWS=FILE
//                                            appends the limits rows to FILE, as scripts/bench.sh reads;
//                                            HOOKS_BENCH_PROFILE=FILE writes a CPU profile of the warm turns;
//                                            HOOKS_BENCH_PACKAGE=DIR loads another built package, e.g. a
//                                            copy of an earlier dist/graphiti-openclaw, to compare runs)

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { REPO, PLUGIN_ID, loadConfiguredWithOpenClaw, loadWithOpenClaw, startStandIn } from './openclaw.js';
import { record, scratchDir } from './bench-rows.js';

const turns = process.env.HOOKS_BENCH_QUICK ? 60 : 1000;
const warmup = 20;

// Time spent waiting for Graphiti's answers, per hook call (the adapter's fetch is the global one):
// the time while at least one request is in flight, so the two searches a recall sends at once count
// once, not twice.
let graphitiMs = 0;
let inFlight = 0;
let busySince = 0;
const realFetch = globalThis.fetch;
globalThis.fetch = async (...args) => {
  if (inFlight === 0) busySince = performance.now();
  inFlight += 1;
  try {
    const response = await realFetch(...args);
    const body = await response.arrayBuffer();
    return new Response(body, { status: response.status, headers: response.headers });
  } finally {
    inFlight -= 1;
    if (inFlight === 0) graphitiMs += performance.now() - busySince;
  }
};

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

const fmt = (ms) => `${ms.toFixed(2)} ms`;

process.env.HOME = scratchDir('openclaw-bench-home-');
const standIn = await startStandIn();
// Also when an assertion fails: a stand-in left running holds this process's stderr open, and a
// pipe reading it (scripts/bench.sh) would wait for it forever.
process.on('exit', () => standIn.stop());
const stateDir = scratchDir('openclaw-bench-state-');
// The baseline first: a plugin whose same hooks do nothing, loaded by the same loader. Then ours,
// registered as a Gateway registers it (the component starts loading in `register`), and its first
// turn right after, with nothing in between.
const noopId = 'noop-openclaw';
const noop = await loadConfiguredWithOpenClaw({
  plugins: { load: { paths: [path.join(REPO, 'tests/openclaw/noop-plugin')] }, entries: { [noopId]: { enabled: true, hooks: { allowConversationAccess: true } } } },
}, { pluginIds: [noopId], full: true });
const loadStarted = performance.now();
const { runner } = await loadWithOpenClaw(process.env.HOOKS_BENCH_PACKAGE || path.join(REPO, 'dist', PLUGIN_ID), {
  stateDir,
  graphiti: { url: `${standIn.url}/mcp`, group_id: { direct: 'demo', group: 'demo-{chat}' } },
}, { full: true });
const loadMs = performance.now() - loadStarted;

const prompt = 'Book lunch with the Acme Robotics founder';
const ctx = (i) => ({ sessionKey: `agent:main:telegram:direct:bench${i % 8}`, agentId: 'main', senderId: 'bench', trigger: 'user', runId: `bench-${i}` });

/** Until the turn `Booked lunch #${i}.` is at the stand-in. */
async function waitForEpisode(i) {
  for (;;) {
    const response = await realFetch(`${standIn.url}/episodes/demo?last_n=5`);
    const episodes = await response.json();
    if (episodes.some((e) => e.content?.includes(`Booked lunch #${i}.`))) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function timed(call) {
  graphitiMs = 0;
  const started = performance.now();
  // A request already in flight (a background send) counts from here only.
  if (inFlight > 0) busySince = started;
  const result = await call();
  const ended = performance.now();
  if (inFlight > 0) {
    graphitiMs += ended - busySince;
    busySince = ended;
  }
  const total = ended - started;
  return { result, total, added: total - graphitiMs };
}

const first = await timed(() => runner.runBeforePromptBuild({ prompt, messages: [] }, ctx(0)));
assert.match(first.result.prependContext, /<graphiti-context/);
const noopFirst = await timed(() => noop.runner.runBeforePromptBuild({ prompt, messages: [] }, ctx(0)));
assert.equal(noopFirst.result?.prependContext, undefined, 'the no-op injects nothing');

/** Starts V8's CPU profiler when HOOKS_BENCH_PROFILE names a file; the returned stop writes it. */
async function profileWarmTurns() {
  const file = process.env.HOOKS_BENCH_PROFILE;
  if (!file) return async () => {};
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    fs.writeFileSync(file, JSON.stringify(profile));
    console.log(`  CPU profile of the warm turns: ${file}`);
  };
}

const before = [];
const end = [];
const noopBefore = [];
const noopEnd = [];
let stopProfile = async () => {};
for (let i = 1; i <= warmup + turns; i += 1) {
  if (i === warmup + 1) stopProfile = await profileWarmTurns();
  const b = await timed(() => runner.runBeforePromptBuild({ prompt, messages: [] }, ctx(i)));
  assert.match(b.result.prependContext, /<graphiti-context[\s\S]*Dana Lee is CTO of Acme Robotics/, 'recalled');
  assert.match(b.result.prependContext, /<pack-context intent="vc_deal"/, 'routed');
  const e = await timed(() => runner.runAgentEnd({
    success: true,
    messages: [{ role: 'user', content: prompt }, { role: 'assistant', content: `Booked lunch #${i}.` }],
  }, ctx(i)));
  // The turn is sent by a background tick: let it finish, so it is not counted in the next hook.
  await waitForEpisode(i);
  const nb = await timed(() => noop.runner.runBeforePromptBuild({ prompt, messages: [] }, ctx(i)));
  const ne = await timed(() => noop.runner.runAgentEnd({ success: true, messages: [] }, ctx(i)));
  if (i > warmup) {
    before.push(b.added - nb.total);
    end.push(e.added - ne.total);
    noopBefore.push(nb.total);
    noopEnd.push(ne.total);
  }
}
await stopProfile();
// The same turns through the adapter directly (no OpenClaw hook runner), to show what the runner adds.
const { createRuntime, beforePromptBuild } = await import(path.join(process.env.HOOKS_BENCH_PACKAGE || path.join(REPO, 'dist', PLUGIN_ID), 'dist', 'index.js'));
/** The adapter's runtime on a fresh state directory, against Graphiti at `url`. */
const adapterRuntime = (url, prefix) => createRuntime({
  logger: { info() {}, warn() {}, error: console.error, debug() {} },
  pluginConfig: { stateDir: scratchDir(prefix), graphiti: { url, group_id: { direct: 'demo', group: 'demo-{chat}' } } },
});
const direct = adapterRuntime(`${standIn.url}/mcp`, 'openclaw-bench-direct-');
const adapterOnly = [];
for (let i = 1; i <= warmup + turns; i += 1) {
  const b = await timed(() => beforePromptBuild(direct, { prompt, messages: [] }, ctx(i)));
  assert.match(b.result.prependContext, /<pack-context intent="vc_deal"/, 'routed');
  if (i > warmup) adapterOnly.push(b.added);
}

const sent = new Set((await standIn.episodes('demo')).map((e) => /Booked lunch #(\d+)\./.exec(e.content ?? '')?.[1]).filter(Boolean)).size;
assert.equal(sent, warmup + turns, 'every captured turn reached Graphiti');
standIn.stop();

// While Graphiti is down, turns wait in the spool: agent_end through OpenClaw's hook runner with
// 2,000 and 20,000 of them waiting, the default and with capture.sync_to_disk, each turn followed by
// its background tick (backing off without sending) as in a Gateway, and each beside the machine's
// own cost of the same durable write from Node in the same moment: the turn's bytes written to a new
// file and renamed into a directory holding as many entries (with a sync: fdatasync before the
// rename, the directory's fsync after).
const waitingTurns = process.env.HOOKS_BENCH_QUICK ? 60 : 1000;

/** The spool of `stateDir` filled to `count` entries, copies of its one entry under older names. */
function fillSpool(stateDir, count) {
  const spool = path.join(stateDir, 'spool');
  const [entry] = fs.readdirSync(spool).filter((name) => name.endsWith('.episode'));
  const bytes = fs.readFileSync(path.join(spool, entry));
  const [micros, rest] = [BigInt(entry.slice(0, 20)), entry.slice(20)];
  for (let k = 1; k < count; k += 1) fs.writeFileSync(path.join(spool, `${String(micros - BigInt(k)).padStart(20, '0')}${rest}`), bytes);
  return bytes;
}

/** The machine's own durable write of `bytes` into `dir`: a new file, renamed (and synced, if asked). */
function machineWrite(dir, bytes, k, sync) {
  const started = performance.now();
  const tmp = path.join(dir, `write-${k}.tmp`);
  const fd = fs.openSync(tmp, 'wx');
  fs.writeSync(fd, bytes);
  if (sync) fs.fdatasyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, path.join(dir, `write-${k}.episode`));
  if (sync) {
    const dirFd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    fs.fsyncSync(dirFd);
    fs.closeSync(dirFd);
  }
  return performance.now() - started;
}

/** agent_end in the hook runner with `waiting` turns in the spool and Graphiti unreachable. */
async function agentEndWhileWaiting(waiting, sync) {
  let tickDone = () => {};
  const logger = {
    info() {}, debug() {}, error: console.error,
    warn(message) { if (message.includes('waiting for Graphiti, will retry')) tickDone(); },
  };
  const stateDir = scratchDir('openclaw-bench-waiting-');
  const { runner: waitingRunner } = await loadWithOpenClaw(process.env.HOOKS_BENCH_PACKAGE || path.join(REPO, 'dist', PLUGIN_ID), {
    stateDir,
    graphiti: { url: 'http://127.0.0.1:9/mcp', group_id: { direct: 'demo', group: 'demo-{chat}' } },
    capture: { spool_max_episodes: 50_000, sync_to_disk: sync },
  }, { full: true, logger });
  const turn = async (i) => {
    const ticked = new Promise((resolve) => { tickDone = resolve; });
    const started = performance.now();
    const outcome = await waitingRunner.runAgentEnd({ success: true, messages: [{ role: 'user', content: prompt }, { role: 'assistant', content: `Waiting turn ${i}.` }] }, ctx(i));
    const total = performance.now() - started;
    await ticked;
    return { total, tick: performance.now() - started - total, outcome };
  };
  await turn(0);
  const bytes = fillSpool(stateDir, waiting);
  const machineDir = scratchDir('openclaw-bench-machine-');
  for (let k = 0; k < waiting; k += 1) fs.writeFileSync(path.join(machineDir, `entry-${k}.episode`), bytes);
  const added = [];
  const machine = [];
  const ticks = [];
  for (let i = 1; i <= warmup + waitingTurns; i += 1) {
    const ours = await turn(i);
    const ne = await timed(() => noop.runner.runAgentEnd({ success: true, messages: [] }, ctx(i)));
    const own = machineWrite(machineDir, bytes, i, sync);
    if (i > warmup) {
      added.push(ours.total - ne.total);
      machine.push(own);
      ticks.push(ours.tick);
    }
  }
  const spooled = fs.readdirSync(path.join(stateDir, 'spool')).filter((name) => name.endsWith('.episode')).length;
  assert.equal(spooled, waiting + warmup + waitingTurns, 'every turn waits in the spool');
  return { added: summary(added), machine: summary(machine), tick: summary(ticks) };
}

const waitingRows = [];
for (const [waiting, sync] of [[2000, false], [20000, false], [2000, true]]) {
  waitingRows.push({ waiting, sync, ...(await agentEndWhileWaiting(waiting, sync)) });
}

const a = summary(adapterOnly);
const b = summary(before);
const e = summary(end);
const nb = summary(noopBefore);
const ne = summary(noopEnd);
const firstAdded = first.added - noopFirst.total;
console.log(`OpenClaw hook runner, ${turns} warm turns against the Graphiti stand-in (Graphiti's own time and a no-op plugin's time in the same runner subtracted, turn by turn):`);
console.log(`  before_prompt_build added: p50 ${fmt(b.p50)}, p99 ${fmt(b.p99)}; the no-op plugin's own: p50 ${fmt(nb.p50)}, p99 ${fmt(nb.p99)}`);
console.log(`  the same, adapter called directly (no hook runner, Graphiti subtracted): p50 ${fmt(a.p50)}, p99 ${fmt(a.p99)}`);
console.log(`  agent_end added (the turn spooled; sending follows in the background): p50 ${fmt(e.p50)}, p99 ${fmt(e.p99)}; the no-op's own: p50 ${fmt(ne.p50)}, p99 ${fmt(ne.p99)}`);
console.log(`  plugin load by OpenClaw's loader: ${fmt(loadMs)}; then the first turn (waits for the component's compilation, instantiation and configuration, started by register): ${fmt(first.total)}, of which Graphiti ${fmt(first.total - first.added)}; the no-op's first turn ${fmt(noopFirst.total)}`);
console.log(`  every one of ${warmup + turns} captured turns reached the stand-in`);
for (const row of waitingRows) {
  console.log(`  Graphiti unreachable, ${row.waiting} turns waiting in the spool${row.sync ? ', capture.sync_to_disk on' : ''}, ${waitingTurns} turns: agent_end added p50 ${fmt(row.added.p50)}, p99 ${fmt(row.added.p99)}; the machine's own write${row.sync ? ' and sync' : ''} p50 ${fmt(row.machine.p50)}, p99 ${fmt(row.machine.p99)}; the background tick after it (backing off) p50 ${fmt(row.tick.p50)}, p99 ${fmt(row.tick.p99)}`);
}
record('before_prompt_build added in OpenClaw, p99', b.p99, 2, "a no-op plugin's own time in the same runner, p99", nb.p99);
record('agent_end added in OpenClaw, p99', e.p99, 1, "a no-op plugin's own time in the same runner, p99", ne.p99);
for (const row of waitingRows.filter((r) => !r.sync)) {
  record(`agent_end added in OpenClaw, ${row.waiting.toLocaleString('en-US')} turns waiting in the spool, p99`, row.added.p99, 1, "the machine's own write and rename of the turn's file, p99", row.machine.p99);
}
for (const row of waitingRows.filter((r) => r.sync)) {
  // Its goal is the machine's own durable write plus the 1 ms every other agent_end row allows.
  record(`agent_end added in OpenClaw with capture.sync_to_disk, ${row.waiting.toLocaleString('en-US')} waiting, p99`, row.added.p99, Number((row.machine.p99 + 1).toFixed(2)), "the machine's own write, fdatasync, rename and directory fsync, p99", row.machine.p99);
}
record("first turn after OpenClaw loads the plugin, beyond Graphiti's time", firstAdded, 100, "Graphiti's own time in that turn", first.total - first.added);
process.exit(0);
