// Every ```sh block of the README and docs/ runs as written: from the repository's root, in a scratch
// HOME, with the CLI and the Graphiti stand-in built (target/release on PATH). A block that cannot run
// here says why in a marker on the line before it: `<!-- doc-block: skip: REASON -->`; one marked
// `<!-- rollout:NAME -->` is run by tests/openclaw/rollout.test.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The `sh` blocks of a Markdown file, with the marker before each. */
export function shellBlocks(text) {
  const blocks = [];
  for (const match of text.matchAll(/(?:^|\n)(?:(<!-- (?:rollout:([\w-]+)|doc-block: skip: ([^\n]+?)) -->)\n)?```sh\n([\s\S]*?)```/g)) {
    const [, , rollout, skip, body] = match;
    blocks.push({ rollout, skip, body, line: text.slice(0, match.index).split('\n').length + 1 });
  }
  return blocks;
}

/** The README and every page under docs/, decision records included. */
function pages() {
  const docs = fs.readdirSync(path.join(REPO, 'docs'), { recursive: true }).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', ...docs.sort()];
}

test('every shell block of the README and docs/ runs as written, or says why it cannot here', async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-blocks-'));
  // rustup and cargo keep their homes under the real one.
  const env = {
    ...process.env,
    HOME: home,
    RUSTUP_HOME: process.env.RUSTUP_HOME ?? path.join(os.homedir(), '.rustup'),
    CARGO_HOME: process.env.CARGO_HOME ?? path.join(os.homedir(), '.cargo'),
    PATH: `${path.join(REPO, 'target/release')}:${process.env.PATH}`,
  };
  const counts = { run: 0, rollout: 0, skipped: [] };
  try {
    for (const page of pages()) {
      for (const block of shellBlocks(fs.readFileSync(path.join(REPO, page), 'utf8'))) {
        const where = `${page}:${block.line}`;
        if (block.rollout) {
          counts.rollout += 1;
          continue;
        }
        if (block.skip) {
          counts.skipped.push(`${where}: ${block.skip}`);
          continue;
        }
        // Background servers a block starts end with it.
        const script = `set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${block.body}`;
        try {
          await promisify(execFile)('bash', ['-c', script], { cwd: REPO, env, timeout: 180_000, maxBuffer: 64 << 20 });
        } catch (error) {
          assert.fail(`${where}: the block failed (${error.code}):\n${block.body}\n--- stdout\n${error.stdout}\n--- stderr\n${error.stderr}`);
        }
        counts.run += 1;
      }
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
  console.log(`doc blocks: ${counts.run} run here, ${counts.rollout} run by the rollout test, ${counts.skipped.length} skipped:\n  ${counts.skipped.join('\n  ')}`);
  assert.ok(counts.run >= 3, `only ${counts.run} blocks ran`);
});
