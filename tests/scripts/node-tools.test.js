// scripts/node-tools.sh with a stub `npm` on PATH that takes a second per install and logs it: two
// runs at once install once, one after the other, never interleaved; a tree with a file missing,
// or an install stopped half-way, is installed again from the lockfile with `npm ci`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = path.join(REPO, 'scripts/node-tools.sh');
const NODE_VERSION = /node_version=(\S+)/.exec(fs.readFileSync(SCRIPT, 'utf8'))[1];

/** A stub npm: `install --prefix DIR node@…` makes a node that prints the pinned version; `ci` in
 * the tools directory makes the three commands and a few package files. Each logs its start and end. */
const STUB_NPM = `#!/usr/bin/env bash
set -euo pipefail
echo "start $$ $1" >> "$NPM_LOG"
if [ "$1" = install ] && [ "$2" = --prefix ]; then
    sleep 1
    mkdir -p "$3/node_modules/.bin"
    printf '#!/bin/sh\\necho v${NODE_VERSION}\\n' > "$3/node_modules/.bin/node"
    chmod +x "$3/node_modules/.bin/node"
else
    rm -rf node_modules
    mkdir -p node_modules/.bin node_modules/openclaw/dist
    echo "part 1" > node_modules/openclaw/dist/part-1.js
    sleep 1
    for command in jco openclaw esbuild; do printf '#!/bin/sh\\n' > "node_modules/.bin/$command"; done
    for n in 2 3 4 5; do echo "part $n" > "node_modules/openclaw/dist/part-$n.js"; done
fi
echo "end $$ $1" >> "$NPM_LOG"
`;

/** A scratch tools directory and stub npm, removed when test `t` ends. */
function sandbox(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-tools-test-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const stubs = path.join(dir, 'stubs');
  fs.mkdirSync(stubs);
  fs.writeFileSync(path.join(stubs, 'npm'), STUB_NPM, { mode: 0o755 });
  const log = path.join(dir, 'npm.log');
  fs.writeFileSync(log, '');
  const env = { ...process.env, PATH: `${stubs}:${process.env.PATH}`, NODE_TOOLS_DIR: path.join(dir, 'tools'), NPM_LOG: log };
  const run = () => promisify(execFile)('bash', [SCRIPT], { env });
  const calls = () => fs.readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => line.split(' '));
  return { dir, tools: env.NODE_TOOLS_DIR, run, calls, env };
}

/** The npm runs' (start, end) lines, checked to nest one after the other; returns the commands. */
function sequential(calls) {
  const commands = [];
  for (let at = 0; at < calls.length; at += 2) {
    const [start, end] = [calls[at], calls[at + 1]];
    assert.equal(start[0], 'start', `npm runs interleaved: ${calls.map((c) => c.join(' ')).join('; ')}`);
    assert.deepEqual(end, ['end', start[1], start[2]], `npm runs interleaved: ${calls.map((c) => c.join(' ')).join('; ')}`);
    commands.push(start[2]);
  }
  return commands;
}

test('two runs at once install once, one after the other; both print the tools directory', async (t) => {
  const box = sandbox(t);
  const [first, second] = await Promise.all([box.run(), box.run()]);
  for (const out of [first, second]) assert.equal(out.stdout.trim().split('\n').at(-1), path.join(box.tools, 'bin'));
  assert.deepEqual(sequential(box.calls()), ['install', 'ci'], 'Node once, the tools once');
  await box.run();
  assert.equal(box.calls().length, 4, 'a third run installs nothing');
});

test('a tree with a file missing is installed again with npm ci', async (t) => {
  const box = sandbox(t);
  await box.run();
  fs.rmSync(path.join(box.tools, 'node_modules/openclaw/dist/part-3.js'));
  await box.run();
  assert.deepEqual(sequential(box.calls()), ['install', 'ci', 'ci']);
  assert.ok(fs.existsSync(path.join(box.tools, 'node_modules/openclaw/dist/part-3.js')));
});

test('an install stopped half-way is done again by the next run', async (t) => {
  const box = sandbox(t);
  await box.run();
  // A changed lockfile: the next run installs again. It is killed while npm runs.
  fs.writeFileSync(path.join(box.tools, '.installed-lock'), 'an older lockfile');
  const stopped = spawn('bash', [SCRIPT], { env: box.env, stdio: 'ignore', detached: true });
  const exited = new Promise((resolve) => stopped.on('exit', resolve));
  while (box.calls().length < 5) await new Promise((resolve) => setTimeout(resolve, 50));
  process.kill(-stopped.pid, 'SIGKILL');
  await exited;
  assert.ok(!fs.existsSync(path.join(box.tools, 'node_modules/.bin/jco')), 'the stopped install left a broken tree');
  await box.run();
  const calls = box.calls().map((call) => `${call[0]} ${call[2]}`);
  assert.deepEqual(calls.slice(4), ['start ci', 'start ci', 'end ci'], 'the next run installed again, whole');
  for (const part of [1, 2, 3, 4, 5]) assert.ok(fs.existsSync(path.join(box.tools, `node_modules/openclaw/dist/part-${part}.js`)));
});
