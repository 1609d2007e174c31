// host.utc-offset: minutes east of UTC from Node's time-zone database, an unknown zone as the error value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { utcOffset } from '../src/component.js';

const at = (iso) => BigInt(Date.parse(iso));

test('Europe/Berlin: +60 in winter, +120 in summer, switching at 01:00 UTC on the last Sunday of March', () => {
  assert.equal(utcOffset('Europe/Berlin', at('2026-01-15T12:00:00Z')), 60);
  assert.equal(utcOffset('Europe/Berlin', at('2026-07-15T12:00:00Z')), 120);
  assert.equal(utcOffset('Europe/Berlin', at('2026-03-29T00:59:59Z')), 60);
  assert.equal(utcOffset('Europe/Berlin', at('2026-03-29T01:00:00Z')), 120);
});

test('UTC, negative and non-hour offsets', () => {
  assert.equal(utcOffset('UTC', 0n), 0);
  assert.equal(utcOffset('America/New_York', at('2026-01-15T12:00:00Z')), -300);
  assert.equal(utcOffset('America/St_Johns', at('2026-01-15T12:00:00Z')), -210);
  assert.equal(utcOffset('Asia/Kathmandu', at('2026-01-15T12:00:00Z')), 345);
});

test('an unknown zone is the error value, naming it', () => {
  assert.throws(() => utcOffset('Europe/Atlantis', 0n), (error) => typeof error === 'string' && error.includes('"Europe/Atlantis"'));
  assert.throws(() => utcOffset('', 0n), (error) => typeof error === 'string');
});
