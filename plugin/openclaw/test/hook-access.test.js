// OpenClaw blocks a non-bundled plugin's turn hooks without `hooks.allowConversationAccess`: the
// adapter says so, once in the log at start and first in `/graphiti status` and `openclaw graphiti
// status`, naming the command that fixes it. (tests/openclaw/e2e.test.js checks the same decision
// against OpenClaw's own loader.) The registration tests use the packaged plugin
// (scripts/package-openclaw.sh) and commander from tools/node (scripts/node-tools.sh).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { blockedTurnHooks, describeBlockedHooks, hookPolicyOf, hookStatusLines } from '../src/hook-access.js';
import { quietLogger, register, repo, runCli } from './registered.js';

const ID = 'graphiti-openclaw';
const FIX = 'openclaw config set plugins.entries.graphiti-openclaw.hooks.allowConversationAccess true --strict-json';
const withEntry = (entry) => ({ plugins: { entries: { [ID]: entry } } });

test('without allowConversationAccess both turn hooks are blocked, and the fix is named', () => {
  for (const config of [{}, { plugins: {} }, withEntry({ enabled: true }), withEntry({ hooks: {} }), withEntry({ hooks: { allowConversationAccess: 'true' } })]) {
    const blocked = blockedTurnHooks(config, ID);
    assert.deepEqual(blocked?.hooks, ['before_prompt_build', 'agent_end'], JSON.stringify(config));
    assert.deepEqual(blocked.fixes, [FIX]);
    assert.deepEqual(blocked.reasons, ['plugins.entries.graphiti-openclaw.hooks.allowConversationAccess is not set to true']);
  }
  const off = blockedTurnHooks(withEntry({ hooks: { allowConversationAccess: false } }), ID);
  assert.deepEqual(off.reasons, ['plugins.entries.graphiti-openclaw.hooks.allowConversationAccess is false']);
});

test('the warning says what every turn loses and the exact command', () => {
  const text = describeBlockedHooks(blockedTurnHooks({}, ID));
  assert.equal(text, 'OpenClaw blocks this plugin\'s before_prompt_build and agent_end hooks: no turn gets recall, a workflow pack '
    + 'or an expert prompt, and no turn is captured (plugins.entries.graphiti-openclaw.hooks.allowConversationAccess is not set to true). '
    + `Fix: ${FIX}`);
});

test('allowConversationAccess: true lets both run; allowPromptInjection: false still blocks before_prompt_build', () => {
  assert.equal(blockedTurnHooks(withEntry({ hooks: { allowConversationAccess: true } }), ID), undefined);
  const noInjection = blockedTurnHooks(withEntry({ hooks: { allowConversationAccess: true, allowPromptInjection: false } }), ID);
  assert.deepEqual(noInjection.hooks, ['before_prompt_build']);
  assert.match(describeBlockedHooks(noInjection), /before_prompt_build hook: no turn gets recall.*allowPromptInjection is false\)\. Fix: openclaw config set plugins\.entries\.graphiti-openclaw\.hooks\.allowPromptInjection true --strict-json$/);
  const both = blockedTurnHooks(withEntry({ hooks: { allowPromptInjection: false } }), ID);
  assert.equal(both.fixes.length, 2, 'both settings named: fixing one leaves before_prompt_build blocked');
});

test('entry keys as OpenClaw reads them: trimmed, any case; a later spelling replaces hooks only as OpenClaw does', () => {
  const allow = { hooks: { allowConversationAccess: true } };
  assert.deepEqual(hookPolicyOf({ plugins: { entries: { ' Graphiti-OpenClaw ': allow } } }, ID), { allowConversationAccess: true });
  const laterSpelling = (later) => blockedTurnHooks({ plugins: { entries: { [ID]: allow, 'GRAPHITI-OPENCLAW': later } } }, ID)?.hooks ?? [];
  assert.deepEqual(laterSpelling({ enabled: true }), [], 'no hooks there: the earlier ones stay');
  assert.deepEqual(laterSpelling({ hooks: { timeoutMs: 0 } }), [], 'hooks OpenClaw drops (an invalid timeout) change nothing');
  assert.deepEqual(laterSpelling({ hooks: { timeoutMs: 5000 } }), ['before_prompt_build', 'agent_end'], 'kept hooks replace the flag');
  assert.deepEqual(laterSpelling({ hooks: { timeouts: { agent_end: 900 } } }), ['before_prompt_build', 'agent_end']);
  assert.deepEqual(laterSpelling(true), ['before_prompt_build', 'agent_end'], 'not an object: the entry starts again');
  assert.equal(blockedTurnHooks({ plugins: { entries: { other: allow } } }, ID)?.hooks.length, 2, 'another plugin\'s flag does not count');
});

test('no config object (not loaded by OpenClaw): nothing is claimed', () => {
  assert.equal(blockedTurnHooks(undefined, ID), undefined);
});

test('status lines: what this instance was registered with, and what OpenClaw\'s live config now says', () => {
  const off = withEntry({ enabled: true });
  const on = withEntry({ hooks: { allowConversationAccess: true } });
  const blockedLine = `hooks:    BLOCKED: ${describeBlockedHooks(blockedTurnHooks(off, ID))}`;
  assert.deepEqual(hookStatusLines(off, undefined, ID), [blockedLine], 'no live view: the registered config decides');
  assert.deepEqual(hookStatusLines(off, off, ID), [blockedLine]);
  assert.deepEqual(hookStatusLines(on, on, ID), []);
  assert.deepEqual(hookStatusLines(off, on, ID), [blockedLine,
    '          The configuration now lets them run, but this instance was registered before: openclaw plugins reload graphiti-openclaw (or restart the Gateway)']);
  const [changed] = hookStatusLines(on, off, ID);
  assert.match(changed, /^hooks: {4}the configuration changed since this instance was registered; once OpenClaw reloads it \(openclaw plugins reload graphiti-openclaw \(or restart the Gateway\)\): OpenClaw blocks this plugin's before_prompt_build and agent_end hooks: /);
  const noInjection = withEntry({ hooks: { allowConversationAccess: true, allowPromptInjection: false } });
  assert.equal(hookStatusLines(off, noInjection, ID).length, 2, 'blocked differently now: both said');
});

test('registered without the flag: one warning at start, and both status commands begin with it', async () => {
  const { default: plugin } = await import(path.join(repo, 'dist/graphiti-openclaw/dist/index.js'));
  const logger = quietLogger();
  const first = await register(plugin, withEntry({ enabled: true }), { logger });
  await register(plugin, withEntry({ enabled: true }), { logger });
  await register(plugin, withEntry({ enabled: true }), { mode: 'cli-metadata', logger });
  const warnings = logger.lines.filter((l) => l.includes('OpenClaw blocks'));
  assert.deepEqual(warnings, [`warn: graphiti-openclaw: ${describeBlockedHooks(blockedTurnHooks({}, ID))}`], 'logged once, as a warning');

  const slash = await first.commands.get('graphiti').handler({ args: 'status', commandBody: '/graphiti status', channel: 'telegram' });
  const [line, ...rest] = slash.text.split('\n');
  assert.equal(line, `hooks:    BLOCKED: ${describeBlockedHooks(blockedTurnHooks({}, ID))}`);
  assert.match(rest.join('\n'), /^graphiti: /, 'the component\'s status follows');
  const cli = await register(plugin, withEntry({ enabled: true }), { mode: 'cli-metadata' });
  const printed = (await runCli(cli.cli[0], ['graphiti', 'status'])).stdout;
  assert.equal(printed.split('\n')[0], line);
  assert.match(printed, /\ncapture: /);
});

test('registered with the flag: no warning, and status starts with the component\'s own first line', async () => {
  const { default: plugin } = await import(path.join(repo, 'dist/graphiti-openclaw/dist/index.js'));
  const logger = quietLogger();
  const allowed = withEntry({ enabled: true, hooks: { allowConversationAccess: true } });
  const { commands } = await register(plugin, allowed, { logger });
  assert.deepEqual(logger.lines.filter((l) => /blocks|BLOCKED/.test(l)), []);
  const slash = await commands.get('graphiti').handler({ args: 'status', commandBody: '/graphiti status', channel: 'telegram' });
  assert.match(slash.text, /^graphiti: /);
  const cli = await register(plugin, allowed, { mode: 'cli-metadata' });
  assert.match((await runCli(cli.cli[0], ['graphiti', 'status'])).stdout, /^graphiti: /);
});

test('a Gateway that has not reloaded the plugin since the flag was set: status says the fix is in, and what to run', async () => {
  const { default: plugin } = await import(path.join(repo, 'dist/graphiti-openclaw/dist/index.js'));
  const { commands } = await register(plugin, withEntry({ enabled: true }), { liveConfig: withEntry({ hooks: { allowConversationAccess: true } }) });
  const slash = await commands.get('graphiti').handler({ args: 'status', commandBody: '/graphiti status', channel: 'telegram' });
  const lines = slash.text.split('\n');
  assert.match(lines[0], /^hooks: {4}BLOCKED: /);
  assert.match(lines[1], /The configuration now lets them run, .*openclaw plugins reload graphiti-openclaw/);
  assert.match(lines[2], /^graphiti: /);
});
