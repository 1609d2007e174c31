// Which of memory-core's tools exist under an OpenClaw config (the fallback note names only those),
// and the warning when the memory slot names this plugin. tests/openclaw/rollout.test.js checks the
// same against real OpenClaw with the README's commands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MEMORY_CORE_TOOLS, SLOT_FIX, memoryCoreState, slotStatusLines, slotWarning } from '../src/memory-slot.js';

const withPlugins = (plugins, rest = {}) => ({ plugins, ...rest });

test('memory-core runs by default and when it owns the slot: both tools', () => {
  for (const config of [{}, withPlugins({}), withPlugins({ slots: { memory: 'memory-core' } }), withPlugins({ slots: { memory: ' ' } }),
    withPlugins({ entries: { 'memory-core': { enabled: true } } })]) {
    const state = memoryCoreState(config);
    assert.equal(state.active, true, JSON.stringify(config));
    assert.deepEqual(state.tools, MEMORY_CORE_TOOLS);
  }
});

test('phase 3 and everything else that switches memory-core off: no tools', () => {
  const cases = {
    'plugins.entries.memory-core.enabled is false': withPlugins({ entries: { 'memory-core': { enabled: false } } }),
    'plugins.slots.memory is none': withPlugins({ slots: { memory: 'None' } }),
    'plugins.deny lists memory-core': withPlugins({ deny: [' Memory-Core '] }),
    'plugins.enabled is false': withPlugins({ enabled: false }),
    'plugins.slots.memory is "graphiti-openclaw"': withPlugins({ slots: { memory: 'graphiti-openclaw' } }),
    'plugins.slots.memory is "Memory-Core"': withPlugins({ slots: { memory: 'Memory-Core' } }),
    'plugins.slots.memory is "memory-lancedb" and its dreaming is off': withPlugins({ slots: { memory: 'memory-lancedb' }, entries: { 'memory-lancedb': { config: { dreaming: { enabled: false } } } } }),
  };
  for (const [why, config] of Object.entries(cases)) {
    assert.deepEqual(memoryCoreState(config), { active: false, why, tools: [] });
  }
  const laterSpelling = withPlugins({ entries: { 'memory-core': { enabled: false }, ' MEMORY-CORE': { enabled: true } } });
  assert.equal(memoryCoreState(laterSpelling).active, true, 'a later spelling\'s boolean wins, as in OpenClaw');
});

test('another memory plugin in the slot keeps memory-core as its dreaming sidecar, with its tools', () => {
  const state = memoryCoreState(withPlugins({ slots: { memory: 'memory-lancedb' } }));
  assert.equal(state.active, true);
  assert.match(state.why, /dreaming sidecar .*"memory-lancedb"/);
  assert.deepEqual(state.tools, MEMORY_CORE_TOOLS);
});

test('the global tool policy hides one tool or the group', () => {
  assert.deepEqual(memoryCoreState({ tools: { deny: ['memory_get'] } }).tools, ['memory_search']);
  assert.deepEqual(memoryCoreState({ tools: { deny: ['group:memory'] } }).tools, []);
  assert.deepEqual(memoryCoreState({ tools: { deny: ['exec'] } }).tools, MEMORY_CORE_TOOLS);
});

test('the slot naming this plugin is warned about with the fix; nothing else is', () => {
  const warning = slotWarning(withPlugins({ slots: { memory: ' Graphiti-OpenClaw' } }));
  assert.match(warning, /^plugins\.slots\.memory is "Graphiti-OpenClaw": OpenClaw switches its own memory \(memory-core/);
  assert.ok(warning.endsWith(`Fix: ${SLOT_FIX}`), warning);
  assert.equal(SLOT_FIX, 'openclaw config set plugins.slots.memory memory-core');
  for (const slot of [undefined, 'memory-core', 'none', 'memory-lancedb']) assert.equal(slotWarning(withPlugins({ slots: { memory: slot } })), undefined, slot);
  assert.equal(slotWarning(undefined), undefined);
});

test('status says the slot is wrong from the live config when there is one', () => {
  const wrong = withPlugins({ slots: { memory: 'graphiti-openclaw' } });
  assert.match(slotStatusLines(wrong, undefined)[0], /^memory: {3}WRONG SLOT: plugins\.slots\.memory is "graphiti-openclaw"/);
  assert.deepEqual(slotStatusLines(wrong, {}), [], 'fixed in the live config');
  assert.equal(slotStatusLines({}, wrong).length, 1, 'broken in the live config');
});
