// Prints the limits table from the rows the benchmarks appended (JSON lines; see
// tests/src/bench_rows.rs): per row, the median over the runs of ours and of its baseline.
//   node scripts/limits-table.mjs ROWS_FILE RUNS
import fs from 'node:fs';

const [file, runs] = process.argv.slice(2);
const rows = new Map();
for (const line of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
  const row = JSON.parse(line);
  if (!rows.has(row.what)) rows.set(row.what, { ...row, values: [], baselines: [] });
  rows.get(row.what).values.push(row.value);
  rows.get(row.what).baselines.push(row.baseline_value);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fixed = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
console.log(`\n| what | goal | ours (median of ${runs} runs) | baseline, same run | |`);
console.log('|---|---|---|---|---|');
let missing = 0;
for (const row of rows.values()) {
  if (row.values.length !== Number(runs)) missing += 1;
  const ours = median(row.values);
  const runsNote = row.values.length > 1 ? ` (${row.values.map(fixed).join(', ')})` : '';
  console.log(`| ${row.what} | ≤ ${row.goal} ${row.unit} | ${fixed(ours)} ${row.unit}${runsNote} | ${row.baseline}: ${fixed(median(row.baselines))} ${row.unit} | ${ours <= row.goal ? 'met' : '**not met**'} |`);
}
if (missing) {
  console.error(`limits-table: ${missing} row(s) were not measured in every one of the ${runs} runs`);
  process.exit(1);
}
