// Answers the adapter must not keep: a body over the shim's cap (10 MiB, ureq's `read_to_vec` limit),
// refused with the shim's error while memory stays bounded, and a body trickling past the deadline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import { createHttpRequest } from '../src/http.js';

const HTTP_MODULE = new URL('../src/http.js', import.meta.url).href;

const CAP = 10 * 1024 * 1024;
const TOO_LARGE = { tag: 'transport', val: `the response body is larger than request limit: ${CAP}` };
const MiB = 1024 * 1024;

/**
 * A loopback server answering every request with `size` bytes, written as fast as the client takes
 * them (one reused 64 KiB chunk, so the server itself holds little), with or without Content-Length;
 * `/warm-up` gets a tiny answer. `sent` is how many bytes it handed over before the connection closed.
 */
async function bigAnswer(size, { contentLength }) {
  const seen = { sent: 0, closedEarly: false };
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const server = http.createServer((req, res) => {
    if (req.url === '/warm-up') return void res.end('ok');
    res.writeHead(200, contentLength ? { 'Content-Length': String(size) } : {});
    res.on('close', () => { seen.closedEarly = seen.sent < size || !res.writableFinished; });
    const pump = () => {
      while (seen.sent < size) {
        const n = Math.min(chunk.length, size - seen.sent);
        seen.sent += n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, seen, close: () => new Promise((r) => server.close(r)) };
}

const request = (url, extra = {}) => ({ method: 'GET', url, headers: [], body: new Uint8Array(), timeoutMs: 20_000, ...extra });

/**
 * In a fresh Node process (so memory another test left behind is not counted): serves `size` bytes,
 * requests them, and samples resident memory around the call. Prints the outcome, the peak growth in
 * MiB and what the server sent.
 */
const MEASURE = `
const [httpModule, size, contentLength] = process.argv.slice(1);
const { createHttpRequest } = await import(httpModule);
const { default: http } = await import('node:http');
${bigAnswer.toString()}
const server = await bigAnswer(Number(size), { contentLength: contentLength === 'true' });
const httpRequest = createHttpRequest({ allowedOrigins: () => [server.origin] });
// fetch loads its HTTP client on first use: not a cost of the body.
await (await fetch(server.origin + '/warm-up')).text();
const before = process.memoryUsage().rss;
let peak = before;
const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 2);
const outcome = await httpRequest({ method: 'GET', url: server.origin + '/', headers: [], body: new Uint8Array(), timeoutMs: 20000 })
  .then((response) => ({ kept: response.body.length }), (error) => ({ error }));
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
await new Promise((resolve) => setTimeout(resolve, 50));
await server.close();
process.stdout.write(JSON.stringify({ ...outcome, growthMiB: (peak - before) / ${MiB}, seen: server.seen }));
`;

for (const contentLength of [true, false]) {
  test(`a 200 MB answer (${contentLength ? 'Content-Length' : 'chunked'}) is refused at the cap with the shim's error; memory stays bounded`, () => {
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', MEASURE, HTTP_MODULE, String(200 * 1000 * 1000), String(contentLength)], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(child.status, 0, child.stderr);
    const { kept, error, growthMiB, seen } = JSON.parse(child.stdout);
    console.log(`200 MB answer, ${contentLength ? 'Content-Length' : 'chunked'}: resident memory grew by ${growthMiB.toFixed(1)} MiB at most; the server sent ${(seen.sent / MiB).toFixed(1)} MiB before the connection closed`);
    assert.equal(kept, undefined, `the answer was kept: ${kept} bytes`);
    assert.deepEqual(error, TOO_LARGE);
    assert.ok(growthMiB < 64, `resident memory grew by ${growthMiB.toFixed(1)} MiB`);
    assert.ok(seen.closedEarly && seen.sent < 50 * MiB, `the request was aborted (server sent ${seen.sent} bytes)`);
  });
}

test('the cap is the shim\'s: one byte under it is answered whole, the cap itself is refused', async () => {
  for (const [size, expected] of [[CAP - 1, 'kept'], [CAP, 'refused']]) {
    const server = await bigAnswer(size, { contentLength: true });
    const httpRequest = createHttpRequest({ allowedOrigins: () => [server.origin] });
    const outcome = await httpRequest(request(`${server.origin}/`)).then((response) => response, (error) => error);
    const summary = outcome.body ? `a ${outcome.status} answer of ${outcome.body.length} bytes` : outcome;
    await server.close();
    if (expected === 'kept') {
      assert.equal(outcome.status, 200);
      assert.equal(outcome.body.length, size);
      assert.ok(outcome.body.every((byte) => byte === 0x78), 'the bytes are those sent');
    } else {
      assert.deepEqual(summary, TOO_LARGE, `${size} bytes`);
    }
  }
});

test('a body trickling a byte at a time past the deadline is a timeout at the deadline', async () => {
  const timers = new Set();
  const server = http.createServer((req, res) => {
    res.writeHead(200);
    const timer = setInterval(() => res.write('x'), 20);
    timers.add(timer);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const httpRequest = createHttpRequest({ allowedOrigins: () => [origin] });
  const started = performance.now();
  await assert.rejects(httpRequest(request(`${origin}/`, { timeoutMs: 300 })), { tag: 'timeout' });
  const elapsed = performance.now() - started;
  console.log(`trickling body: timeout after ${Math.round(elapsed)} ms (deadline 300 ms)`);
  assert.ok(elapsed >= 280 && elapsed < 1000, `gave up after ${Math.round(elapsed)} ms`);
  for (const timer of timers) clearInterval(timer);
  server.closeAllConnections();
  server.close();
});
