// The commands `openclaw graphiti` registers are those docs/cli-grammar.json gives OpenClaw (both
// CLIs' and OpenClaw's own): one grammar with the shim's CLI, whose test holds it to the same list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { register, repo, runCli } from './registered.js';

const ID = 'graphiti-openclaw';
const config = { plugins: { entries: { [ID]: { enabled: true, hooks: { allowConversationAccess: true } } } } };
const grammar = JSON.parse(fs.readFileSync(path.join(repo, 'docs/cli-grammar.json'), 'utf8'));

/** Every command path under `graphiti` of a commander program, e.g. "experts list". */
function commandPaths(command, prefix = []) {
  return command.commands.flatMap((sub) => {
    const here = [...prefix, sub.name()];
    return [here.join(' '), ...commandPaths(sub, here)];
  });
}

async function registeredPaths() {
  const { default: plugin } = await import(path.join(repo, 'dist/graphiti-openclaw/dist/index.js'));
  const { cli } = await register(plugin, config, { mode: 'cli-metadata' });
  const { Command } = await import(pathToFileURL(path.join(repo, 'tools/node/node_modules/commander/index.js')).href);
  const program = new Command();
  for (const registrar of cli) registrar({ program });
  const graphiti = program.commands.find((c) => c.name() === 'graphiti');
  assert.ok(graphiti, 'the package registers `openclaw graphiti`');
  return commandPaths(graphiti);
}

/** What the list has that `registered` lacks, and the other way round. */
function differences(registered, listed) {
  return {
    missing: listed.filter((p) => !registered.includes(p)),
    unlisted: registered.filter((p) => !listed.includes(p)),
  };
}

test('openclaw graphiti registers exactly the commands docs/cli-grammar.json gives OpenClaw', async () => {
  const listed = [...grammar.both, ...Object.keys(grammar.only_openclaw)].sort();
  assert.deepEqual(differences((await registeredPaths()).sort(), listed), { missing: [], unlisted: [] });
});

test('the comparison names a command the list lacks and one the package lacks', () => {
  assert.deepEqual(differences(['a', 'b new'], ['a', 'c']), { missing: ['c'], unlisted: ['b new'] });
});

test('openclaw graphiti spool lists by default, as graphiti-openclaw spool does', async () => {
  const { default: plugin } = await import(path.join(repo, 'dist/graphiti-openclaw/dist/index.js'));
  const { cli } = await register(plugin, config, { mode: 'cli-metadata' });
  for (const args of [['spool'], ['spool', 'list']]) {
    const { stdout, stderr, exitCode } = await runCli(cli[0], ['graphiti', ...args]);
    assert.equal(exitCode, 0, stderr);
    assert.match(stdout, /the capture spool is empty/, args.join(' '));
  }
});
