// The limits table in docs/benchmarks.md is the benchmark's output: rendered again from the rows it
// was written from (docs/benchmarks/limits-rows.jsonl, kept by `BENCH_RECORD=1 scripts/bench.sh`),
// it must be the same, so a figure retyped or left from another run fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { BEGIN, DOCS_PAGE, END, RECORDED_ROWS, limitsTable, withTable } from '../../scripts/limits-table.mjs';

test('the limits table in docs/benchmarks.md is rendered from its recorded rows', () => {
  const rowsText = fs.readFileSync(RECORDED_ROWS, 'utf8');
  const rows = rowsText.split('\n').filter(Boolean).map((line) => JSON.parse(line));
  assert.ok(rows.length > 0, 'no recorded rows');
  const runs = rows.filter((row) => row.what === rows[0].what).length;
  const { lines, missing } = limitsTable(rowsText, runs);
  assert.equal(missing, 0, 'every row was measured in every run');
  const page = fs.readFileSync(DOCS_PAGE, 'utf8');
  assert.equal(page.split(BEGIN).length, 2, 'one table block');
  assert.equal(page, withTable(page, lines), 'the table differs from what its rows render');
  const block = page.slice(page.indexOf(BEGIN), page.indexOf(END));
  assert.match(block, new RegExp(`median of ${runs} runs`));
});
