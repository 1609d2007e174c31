// Importing a busy user's history: OpenClaw stores of 2,000 turns (50 sessions) and 20,000 turns
// (500 sessions), made through OpenClaw's own interface (its Doctor imports a legacy session store
// the harness writes), staged by the packaged adapter through OpenClaw's session store helpers and
// planned by the component into its queue, Graphiti's time aside. Prints per-turn figures side by
// side (linear in the turns when they match) and the cost of one sending pass with every turn to go
// (a cursor read: the same for both); asserts that every turn is planned once, each into its own
// chat's group.
//
//   node tests/openclaw/bench-import.js   (IMPORT_BENCH_QUICK=1: 200 and 2,000 turns; BENCH_ROWS=FILE
//                                          appends the limits rows to FILE, as scripts/bench.sh reads)

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, PLUGIN_ID, TOOLS_BIN, sessionStoreByDoctor, startStandIn } from './openclaw.js';
import { record, scratchDir } from './bench-rows.js';

const quick = Boolean(process.env.IMPORT_BENCH_QUICK);
const TURNS_PER_SESSION = quick ? 20 : 40;
const SIZES = quick ? [10, 100] : [50, 500];
const PASSES = 15;
const PACKAGE = path.join(REPO, 'dist', PLUGIN_ID, 'dist');
const SDK = path.join(TOOLS_BIN, '..', 'node_modules/openclaw/dist/plugin-sdk/session-store-runtime.js');
const { createRuntime } = await import(path.join(PACKAGE, 'index.js'));
const { importCommand } = await import(path.join(PACKAGE, 'commands.js'));
const { stageTranscripts } = await import(path.join(PACKAGE, 'transcripts.js'));

/** A store of `sessions` direct chats of `TURNS_PER_SESSION` turns each, made by OpenClaw's Doctor. */
async function openclawStore(sessions) {
  const home = scratchDir('openclaw-bench-import-home-');
  const start = Date.parse('2026-06-01T09:00:00Z');
  const made = Array.from({ length: sessions }, (_, s) => ({
    key: `agent:main:telegram:direct:user-${s}`,
    turns: Array.from({ length: TURNS_PER_SESSION }, (_, t) => ({
      at: start + (t * sessions + s) * 60_000,
      user: `User ${s} said fact number ${t}: the meeting moved to room ${t % 17}`,
      reply: `Noted, room ${t % 17}.`,
    })),
  }));
  await sessionStoreByDoctor(home, made);
  return home;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Stages, plans and starts the import of the store in `home`; then times passes with every turn to go. */
async function importFrom(home, sessions, standIn) {
  process.env.HOME = home;
  const stateDir = scratchDir('openclaw-bench-import-state-');
  const workspace = scratchDir('openclaw-bench-import-workspace-');
  const runtime = createRuntime({
    pluginConfig: { stateDir, graphiti: { url: `${standIn.url}/mcp` }, capture: { import_per_minute: 1 } },
    config: { agents: { defaults: { workspace } } },
    logger: { info() {}, warn() {}, error() {}, debug() {} },
    runtime: { state: { resolveStateDir: () => path.join(home, '.openclaw') } },
  });
  const sessionStore = () => import(SDK);
  const turns = sessions * TURNS_PER_SESSION;
  const request = { group: 'bench-workspace', agent: 'main' };

  const dryStarted = performance.now();
  await stageTranscripts(stateDir, { agentId: 'main', all: true, sessionStore });
  const dry = await runtime.command(importCommand(request, { dryRun: true, json: true }));
  const dryMs = performance.now() - dryStarted;
  assert.equal(dry.exitCode, 0, dry.stderr);
  const plan = JSON.parse(dry.stdout);
  assert.equal(plan.estimate.episodes, turns, 'every turn planned once');
  assert.equal(plan.groups.filter((g) => g.items > 0).length, sessions, "each session's turns in its own chat's group");

  const startStarted = performance.now();
  await stageTranscripts(stateDir, { agentId: 'main', all: true, sessionStore });
  const started = await runtime.command(importCommand(request));
  const startMs = performance.now() - startStarted;
  assert.equal(started.exitCode, 75, `under way: ${started.stdout}${started.stderr}`);
  const job = JSON.parse(fs.readFileSync(path.join(stateDir, 'import/job.json'), 'utf8'));
  assert.equal(job.items, turns, 'the queue holds every turn');

  // One a minute: each later pass finds nothing due and reads the queue from its cursor.
  const passes = [];
  for (let i = 0; i < PASSES; i += 1) {
    const passStarted = performance.now();
    const pass = await runtime.command(importCommand(request));
    passes.push(performance.now() - passStarted);
    assert.equal(pass.exitCode, 75, pass.stdout);
  }
  return { turns, dryMs, startMs, passMs: median(passes) };
}

const standIn = await startStandIn();
process.on('exit', () => standIn.stop());
const results = [];
for (const sessions of SIZES) results.push(await importFrom(await openclawStore(sessions), sessions, standIn));
const [few, many] = results;
const perTurn = (ms, r) => ms / r.turns;
const label = (r) => `${r.turns.toLocaleString('en-US')} turns from ${(r.turns / TURNS_PER_SESSION).toLocaleString('en-US')} sessions`;
console.log(`Importing past conversations from a real OpenClaw store (Graphiti's time aside; ${TURNS_PER_SESSION} turns a session):`);
for (const r of results) {
  console.log(`  ${label(r)}: dry run ${r.dryMs.toFixed(0)} ms (${perTurn(r.dryMs, r).toFixed(3)} ms a turn), staged, planned and started ${r.startMs.toFixed(0)} ms (${perTurn(r.startMs, r).toFixed(3)} ms a turn), a sending pass with every turn to go ${r.passMs.toFixed(2)} ms`);
}
record(`import --transcripts of ${label(many)}: staged, planned and queued, per turn`, perTurn(many.startMs, many), 0.5, `${label(few)}, per turn`, perTurn(few.startMs, few));
record(`an import's sending pass with ${many.turns.toLocaleString('en-US')} turns to go`, many.passMs, 50, `with ${few.turns.toLocaleString('en-US')} to go`, few.passMs);
process.exit(0);
