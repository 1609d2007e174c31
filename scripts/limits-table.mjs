// The limits table from the rows the benchmarks appended (JSON lines; see tests/src/bench_rows.rs):
// per row, the median over the runs of ours and of its baseline.
//   node scripts/limits-table.mjs ROWS_FILE RUNS            prints it
//   node scripts/limits-table.mjs ROWS_FILE RUNS --record   also keeps the rows as
//     docs/benchmarks/limits-rows.jsonl and writes the table into docs/benchmarks.md, so the
//     figures there are this output, never retyped (tests/docs/benchmarks.test.js checks it)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const RECORDED_ROWS = path.join(repo, 'docs/benchmarks/limits-rows.jsonl');
export const DOCS_PAGE = path.join(repo, 'docs/benchmarks.md');
export const BEGIN = '<!-- limits-table: written by scripts/bench.sh with BENCH_RECORD=1 from docs/benchmarks/limits-rows.jsonl -->';
export const END = '<!-- /limits-table -->';

/** The table (markdown lines) and how many rows lack a figure of some run. */
export function limitsTable(rowsText, runs) {
  const rows = new Map();
  for (const line of rowsText.split('\n').filter(Boolean)) {
    const row = JSON.parse(line);
    if (!rows.has(row.what)) rows.set(row.what, { ...row, values: [], baselines: [] });
    rows.get(row.what).values.push(row.value);
    rows.get(row.what).baselines.push(row.baseline_value);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const fixed = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const lines = [`| what | goal | ours (median of ${runs} runs) | baseline, same run | |`, '|---|---|---|---|---|'];
  let missing = 0;
  for (const row of rows.values()) {
    if (row.values.length !== Number(runs)) missing += 1;
    const ours = median(row.values);
    const runsNote = row.values.length > 1 ? ` (${row.values.map(fixed).join(', ')})` : '';
    lines.push(`| ${row.what} | ≤ ${Number(row.goal.toPrecision(4))} ${row.unit} | ${fixed(ours)} ${row.unit}${runsNote} | ${row.baseline}: ${fixed(median(row.baselines))} ${row.unit} | ${ours <= row.goal ? 'met' : '**not met**'} |`);
  }
  return { lines, missing };
}

/** The docs page with its table block replaced by `lines`. */
export function withTable(page, lines) {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${DOCS_PAGE} lacks the limits-table markers`);
  return `${page.slice(0, begin + BEGIN.length)}\n${lines.join('\n')}\n${page.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, runs, record] = process.argv.slice(2);
  const rowsText = fs.readFileSync(file, 'utf8');
  const { lines, missing } = limitsTable(rowsText, runs);
  console.log(`\n${lines.join('\n')}`);
  if (missing) {
    console.error(`limits-table: ${missing} row(s) were not measured in every one of the ${runs} runs`);
    process.exit(1);
  }
  if (record === '--record') {
    fs.mkdirSync(path.dirname(RECORDED_ROWS), { recursive: true });
    fs.writeFileSync(RECORDED_ROWS, rowsText);
    fs.writeFileSync(DOCS_PAGE, withTable(fs.readFileSync(DOCS_PAGE, 'utf8'), lines));
    console.log(`limits-table: recorded in ${path.relative(repo, RECORDED_ROWS)} and ${path.relative(repo, DOCS_PAGE)}`);
  }
}
