// What the Node benchmarks share: a row of the limits table, printed and appended to $BENCH_ROWS
// (scripts/bench.sh reads them), and throwaway directories removed when the process ends.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A row of the limits table: printed, and appended to $BENCH_ROWS as tests/src/bench_rows.rs does. */
export function record(what, value, goal, baseline, baselineValue) {
  console.log(`  ${what}: ${value.toFixed(3)} ms (goal ≤ ${goal} ms: ${value <= goal ? 'met' : 'NOT met'}); ${baseline}: ${baselineValue.toFixed(3)} ms`);
  if (process.env.BENCH_ROWS) {
    const row = { what, value, unit: 'ms', goal, baseline, baseline_value: baselineValue };
    fs.appendFileSync(process.env.BENCH_ROWS, `${JSON.stringify(row)}\n`);
  }
}

/** The throwaway directories this run makes, removed when it exits (failed or not). */
const scratch = [];
export function scratchDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}
function removeScratch() {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
}
process.on('exit', removeScratch);
// A run killed by a signal (Ctrl-C, a timeout) emits no 'exit': remove them, then die of that signal.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    removeScratch();
    process.kill(process.pid, signal);
  });
}
