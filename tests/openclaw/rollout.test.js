// docs/install.md's "Rolling out" in real OpenClaw 2026.9.6: every command block of that section, read
// out of the page (so the two cannot drift) and run as written, in order, in a throwaway HOME, with
// the packaged plugin (scripts/package-openclaw.sh runs first in scripts/test.sh). After each phase
// `openclaw plugins inspect --all --runtime --json` or `plugins list --json` says which plugins run
// with which tools and hooks, and OpenClaw's own loader and hook runner, given that HOME's
// openclaw.json, fire before_prompt_build with Graphiti unreachable: the fallback note names
// memory_search and memory_get only while memory-core runs. Also: the memory slot pointed at
// graphiti-openclaw gives a warning with the fix, and status says so.

import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { PLUGIN_ID, REPO, TOOLS_BIN, configSet, loadConfiguredWithOpenClaw, openclaw, packageTgz, startStandIn, throwawayHome } from './openclaw.js';

const MEMORY_CORE = 'memory-core';
const { home, env } = throwawayHome();
let closedUrl;

/** Every `<!-- rollout:NAME -->` + ```sh block of docs/install.md's "Rolling out", as lines of words. */
function rolloutBlocks(readme) {
  const start = readme.indexOf('\n## Rolling out\n');
  assert.ok(start >= 0, 'docs/install.md has a "Rolling out" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  const blocks = new Map();
  for (const [, name, body] of section.matchAll(/<!-- rollout:([\w-]+) -->\n```sh\n([\s\S]*?)```/g)) {
    assert.ok(!blocks.has(name), `rollout block ${name} appears once`);
    const lines = body.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
    blocks.set(name, lines.map(shellWords));
  }
  const allBlocks = section.match(/```sh\n/g)?.length ?? 0;
  assert.equal(blocks.size, allBlocks, 'every sh block of "Rolling out" is marked, so every one is run here');
  return blocks;
}

/** A command line's words, as sh splits them: plain words and '…' or "…" quoted parts, nothing else. */
function shellWords(line) {
  assert.doesNotMatch(line, /[$`|;&<>\\]|\s#/, `${line}: only plain words and quotes (the test does not run a shell)`);
  const words = [];
  for (const [, word] of line.matchAll(/((?:[^\s'"]+|'[^']*'|"[^"]*")+)/g)) {
    words.push(word.replace(/'([^']*)'|"([^"]*)"/g, (_, single, double) => single ?? double));
  }
  return words;
}

const BLOCKS = rolloutBlocks(fs.readFileSync(path.join(REPO, 'docs/install.md'), 'utf8'));

/** Runs a block of the page; the package build is scripts/test.sh's step before this test. */
async function runBlock(name) {
  const block = BLOCKS.get(name);
  assert.ok(block, `docs/install.md "Rolling out" has the block ${name}`);
  const printed = [];
  for (const words of block) {
    if (words.join(' ') === 'bash scripts/package-openclaw.sh') {
      packageTgz();
      continue;
    }
    assert.equal(words[0], 'openclaw', `${name}: ${words.join(' ')} is an openclaw command`);
    printed.push((await openclaw(env, words.slice(1), { cwd: REPO })).stdout);
  }
  return printed;
}

/** `openclaw plugins inspect --all --runtime --json`, by plugin id. */
async function inspectAll() {
  const { stdout } = await openclaw(env, ['plugins', 'inspect', '--all', '--runtime', '--json']);
  const reports = JSON.parse(stdout.slice(stdout.indexOf('[')));
  return new Map(reports.map((r) => [r.plugin.id, {
    status: r.plugin.status,
    reason: r.plugin.activationReason,
    tools: r.plugin.toolNames ?? [],
    hooks: (r.typedHooks ?? []).map((h) => h.name ?? h.hookName),
    diagnostics: (r.diagnostics ?? []).filter((d) => d.level !== 'info'),
  }]));
}

/** `openclaw plugins list --json`, by plugin id. */
async function listPlugins() {
  const { stdout } = await openclaw(env, ['plugins', 'list', '--json']);
  const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
  return new Map(report.plugins.map((p) => [p.id, p]));
}

function configFile() {
  return JSON.parse(fs.readFileSync(path.join(home, '.openclaw/openclaw.json'), 'utf8'));
}

/**
 * This HOME's config loaded by OpenClaw's loader (memory-core and this plugin; `full`: registered as
 * a Gateway does, which logs the start-up warnings), with Graphiti at a closed port, and the hook
 * runner fired once (unless `fire` is false): what each plugin registered, what this plugin logged,
 * and the fallback note it injected.
 */
async function loadAndFire({ full = false, fire = true } = {}) {
  process.env.HOME = home;
  const config = configFile();
  const ours = config.plugins?.entries?.[PLUGIN_ID];
  if (ours?.config?.graphiti) ours.config.graphiti.url = closedUrl;
  const warnings = [];
  const logger = { info() {}, debug() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
  const { registry, runner } = await loadConfiguredWithOpenClaw(config, { pluginIds: [MEMORY_CORE, PLUGIN_ID], full, logger });
  const of = (id) => ({
    status: registry.plugins.find((p) => p.id === id)?.status,
    tools: registry.tools.filter((t) => t.pluginId === id).flatMap((t) => t.names),
    hooks: registry.typedHooks.filter((h) => h.pluginId === id).map((h) => h.hookName),
  });
  if (!fire) return { memoryCore: of(MEMORY_CORE), ours: of(PLUGIN_ID), warnings };
  const prompt = 'What did we decide about the Acme Robotics term sheet last week?';
  const ctx = { sessionKey: 'agent:main:telegram:direct:dana', agentId: 'main', senderId: 'dana', trigger: 'user', runId: `run-${Date.now()}` };
  const result = await runner.runBeforePromptBuild({ prompt, messages: [{ role: 'user', content: prompt }] }, ctx);
  const note = /<graphiti-fallback>[\s\S]*?<\/graphiti-fallback>/.exec(result?.prependContext ?? '')?.[0];
  assert.ok(note, `Graphiti unreachable: the fallback note is injected: ${JSON.stringify(result)}`);
  return { memoryCore: of(MEMORY_CORE), ours: of(PLUGIN_ID), warnings, note };
}

const TURN_HOOKS = ['before_prompt_build', 'agent_end'];

function assertOursRuns(ours, where) {
  assert.equal(ours.status, 'loaded', `${where}: graphiti-openclaw loaded`);
  for (const hook of TURN_HOOKS) assert.ok(ours.hooks.includes(hook), `${where}: ${hook} registered: ${ours.hooks}`);
}

function assertMemoryCoreRuns(fired, where) {
  assert.equal(fired.memoryCore.status, 'loaded', `${where}: memory-core loaded`);
  for (const tool of ['memory_search', 'memory_get']) assert.ok(fired.memoryCore.tools.includes(tool), `${where}: ${tool} registered: ${fired.memoryCore.tools}`);
  assert.match(fired.note, /use the memory_search and memory_get tools\./, `${where}: the note sends the model to memory-core's tools`);
}

function assertMemoryCoreOff(fired, where) {
  assert.notEqual(fired.memoryCore.status, 'loaded', `${where}: memory-core not loaded`);
  assert.deepEqual(fired.memoryCore.tools, [], `${where}: no memory-core tools`);
  assert.doesNotMatch(fired.note, /memory_search|memory_get/, `${where}: the note names no tool that does not exist`);
  assert.match(fired.note, /No other memory search is installed/, where);
}

before(async () => {
  // A port nothing listens on: Graphiti is unreachable for every fired hook.
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedUrl = `http://127.0.0.1:${server.address().port}/mcp`;
  await new Promise((resolve) => server.close(resolve));
});

after(() => fs.rmSync(home, { recursive: true, force: true }));

test('phase 0: memory-core owns the slot, the plugin is not installed', async () => {
  await runBlock('phase-0');
  assert.equal(configFile().plugins?.slots?.memory, MEMORY_CORE);
  const plugins = await listPlugins();
  assert.equal(plugins.get(MEMORY_CORE)?.status, 'loaded');
  assert.equal(plugins.has(PLUGIN_ID), false);
});

test('phase 1: both run, memory-core with its tools, graphiti-openclaw with its hooks', async () => {
  await runBlock('phase-1');
  const inspected = await inspectAll();
  assertOursRuns(inspected.get(PLUGIN_ID), 'inspect');
  assert.deepEqual(inspected.get(PLUGIN_ID).diagnostics, [], 'no diagnostics');
  assert.equal(inspected.get(MEMORY_CORE).reason, 'selected memory slot');
  for (const tool of ['memory_search', 'memory_get']) assert.ok(inspected.get(MEMORY_CORE).tools.includes(tool), `${tool}: ${inspected.get(MEMORY_CORE).tools}`);
  assert.equal(configFile().plugins.entries[PLUGIN_ID].config.graphiti.url, 'http://localhost:8000/mcp');
  const fired = await loadAndFire();
  assertOursRuns(fired.ours, 'phase 1');
  assertMemoryCoreRuns(fired, 'phase 1');
});

test('phase 2: dreaming off, memory-core\'s tools stay as the fallback; and back to phase 1', async () => {
  await runBlock('phase-2');
  assert.equal(configFile().plugins.entries[MEMORY_CORE].config.dreaming.enabled, false);
  const plugins = await listPlugins();
  assert.equal(plugins.get(MEMORY_CORE)?.status, 'loaded');
  assert.equal(plugins.get(PLUGIN_ID)?.status, 'loaded');
  const fired = await loadAndFire();
  assertOursRuns(fired.ours, 'phase 2');
  assertMemoryCoreRuns(fired, 'phase 2');
  await runBlock('back-to-1');
  assert.equal(configFile().plugins.entries[MEMORY_CORE]?.config?.dreaming?.enabled, undefined);
});

test('phase 3: memory-core\'s files imported first, each once, and Graphiti answers from them', async () => {
  const standIn = await startStandIn({ args: ['--episodes-as-facts'] });
  try {
    await configSet(env, [
      { path: `plugins.entries.${PLUGIN_ID}.config.graphiti.url`, value: `${standIn.url}/mcp` },
      { path: `plugins.entries.${PLUGIN_ID}.config.capture.import_per_minute`, value: 600 },
    ]);
    const workspace = path.join(home, '.openclaw/workspace');
    fs.mkdirSync(path.join(workspace, 'memory'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'MEMORY.md'), '# Boats\n- Dana keeps her sailboat Andorinha in Cascais\n');
    fs.writeFileSync(path.join(workspace, 'memory/2026-03-01.md'), '- Dana and Bruno planned the Azores crossing for June\n');
    const [dry, run, recall] = await runBlock('import');
    assert.match(dry, /import \(dry run\): 2 item\(s\) for group main-dm-dana/, dry);
    assert.match(run, /import finished: 2 item\(s\) sent to group main-dm-dana/, run);
    assert.match(recall, /Dana and Bruno planned the Azores crossing for June/, recall);
    assert.equal((await standIn.episodes('main-dm-dana')).length, 2);
  } finally {
    standIn.stop();
  }
});

test('phase 3: memory-core off, graphiti-openclaw still runs, the note names no tool; and back to phase 2', async () => {
  await runBlock('phase-3');
  const inspected = await inspectAll();
  assertOursRuns(inspected.get(PLUGIN_ID), 'inspect');
  assert.equal(inspected.get(MEMORY_CORE).status, 'disabled');
  assert.equal(inspected.get(MEMORY_CORE).reason, 'disabled in config');
  assert.deepEqual(inspected.get(MEMORY_CORE).tools, []);
  const fired = await loadAndFire();
  assertOursRuns(fired.ours, 'phase 3');
  assertMemoryCoreOff(fired, 'phase 3');
  await runBlock('back-to-2');
  assertMemoryCoreRuns(await loadAndFire(), 'back to phase 2');
});

test('phase 3 through the slot (none), and back', async () => {
  await runBlock('phase-3-slot');
  const fired = await loadAndFire();
  assertOursRuns(fired.ours, 'slot none');
  assertMemoryCoreOff(fired, 'slot none');
  await runBlock('back-to-2-slot');
  assertMemoryCoreRuns(await loadAndFire(), 'back from slot none');
});

test('the memory slot set to graphiti-openclaw: accepted, memory-core off, a warning and status name the fix', async () => {
  await openclaw(env, ['config', 'set', 'plugins.slots.memory', PLUGIN_ID]);
  const fired = await loadAndFire({ full: true });
  assertOursRuns(fired.ours, 'wrong slot');
  assertMemoryCoreOff(fired, 'wrong slot');
  const fix = BLOCKS.get('slot-fix').map((words) => words.join(' ')).join(' && ');
  const warning = fired.warnings.find((w) => w.includes('plugins.slots.memory is "graphiti-openclaw"'));
  assert.ok(warning, `a warning at start: ${fired.warnings.join('\n')}`);
  assert.ok(warning.endsWith(`Fix: ${fix}`), warning);
  // Graphiti (localhost:8000) is not there: status says so and exits 1; its output is what counts here.
  const status = await promisify(execFile)(path.join(TOOLS_BIN, 'openclaw'), ['graphiti', 'status'], { env, timeout: 120_000 }).catch((error) => error);
  const first = status.stdout.split('\n')[0];
  assert.match(first, /^memory: {3}WRONG SLOT: plugins\.slots\.memory is "graphiti-openclaw": /, status.stdout);
  assert.ok(first.endsWith(`Fix: ${fix}`), first);

  await runBlock('slot-fix');
  assertMemoryCoreRuns(await loadAndFire(), 'slot fixed');
});

test('back to phase 0: the plugin disabled, memory-core as before', async () => {
  await runBlock('back-to-0');
  const plugins = await listPlugins();
  assert.equal(plugins.get(PLUGIN_ID)?.enabled, false, JSON.stringify(plugins.get(PLUGIN_ID)));
  const loaded = await loadAndFire({ fire: false });
  assert.notEqual(loaded.ours.status, 'loaded');
  assert.deepEqual(loaded.ours.hooks, [], 'no hooks of a disabled plugin');
  assert.equal(loaded.memoryCore.status, 'loaded');
  for (const tool of ['memory_search', 'memory_get']) assert.ok(loaded.memoryCore.tools.includes(tool), `${tool}: ${loaded.memoryCore.tools}`);
});
