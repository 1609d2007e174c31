import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { MAX_BATCH, createHttpBatch, createHttpRequest, originOf } from '../src/http.js';

/** A loopback server; `handler(req, res)` answers. Resolves to its origin and a closer. */
async function serve(handler) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

const request = (url, extra = {}) => ({ method: 'GET', url, headers: [], body: new Uint8Array(), timeoutMs: 2000, ...extra });

test('origins are normalised as the shim does', () => {
  assert.equal(originOf('HTTP://LocalHost:8000/mcp?x=1'), 'http://localhost:8000');
  assert.equal(originOf('http://localhost:80/mcp'), 'http://localhost');
  assert.throws(() => originOf('ftp://x/'), /only http and https/);
});

test('a request to an origin that is not allowed is refused and never sent', async () => {
  let sent = 0;
  const httpRequest = createHttpRequest({ allowedOrigins: () => ['http://localhost:8000'], fetchImpl: () => { sent += 1; } });
  await assert.rejects(httpRequest(request('http://evil.example:8000/x')), { tag: 'refused', val: 'http://evil.example:8000 is not an allowed origin' });
  await assert.rejects(httpRequest(request('not a url')), (e) => e.tag === 'invalid-request');
  assert.equal(sent, 0);
});

test('every status is a response; redirects are not followed; header names are lower case', async () => {
  const server = await serve((req, res) => {
    if (req.url === '/redirect') {
      res.writeHead(307, { Location: 'http://elsewhere.example/' });
      return res.end();
    }
    res.writeHead(500, { 'X-Thing': 'Yes' });
    res.end(`${req.method} ${req.headers['content-type']}`);
  });
  const httpRequest = createHttpRequest({ allowedOrigins: () => [server.origin] });
  const redirect = await httpRequest(request(`${server.origin}/redirect`));
  assert.equal(redirect.status, 307);
  const error = await httpRequest(request(`${server.origin}/`, { method: 'POST', headers: [['Content-Type', 'application/json']], body: new TextEncoder().encode('{}') }));
  assert.equal(error.status, 500);
  assert.equal(new TextDecoder().decode(error.body), 'POST application/json');
  assert.ok(error.headers.some(([k, v]) => k === 'x-thing' && v === 'Yes'));
  await server.close();
});

test('a slow answer is a timeout within the deadline, body included', async () => {
  const server = await serve((req, res) => {
    res.writeHead(200);
    res.write('partial');
    setTimeout(() => res.end(), 2000);
  });
  const httpRequest = createHttpRequest({ allowedOrigins: () => [server.origin] });
  const started = performance.now();
  await assert.rejects(httpRequest(request(`${server.origin}/`, { timeoutMs: 150 })), { tag: 'timeout' });
  assert.ok(performance.now() - started < 1500, 'gave up at the deadline');
  server.close();
});

test('a closed port is a connect error (nothing was sent) that names the cause', async () => {
  const server = await serve(() => {});
  await server.close();
  const httpRequest = createHttpRequest({ allowedOrigins: () => [server.origin] });
  await assert.rejects(httpRequest(request(`${server.origin}/`)), (e) => e.tag === 'connect' && e.val.includes('ECONNREFUSED'));
  // By name too (localhost may resolve to ::1 and 127.0.0.1: every address refused).
  const byName = server.origin.replace('127.0.0.1', 'localhost');
  const viaName = createHttpRequest({ allowedOrigins: () => [byName] });
  await assert.rejects(viaName(request(`${byName}/`)), (e) => e.tag === 'connect' && e.val.includes('ECONNREFUSED'));
});

test('a connection closed after the request was read is a transport error (the outcome is unknown)', async () => {
  const requests = [];
  const server = net.createServer((socket) => {
    let head = '';
    socket.on('data', (chunk) => {
      head += chunk;
      if (head.includes('\r\n\r\n')) {
        requests.push(head.split('\r\n')[0]);
        socket.destroy();
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const httpRequest = createHttpRequest({ allowedOrigins: () => [origin] });
  await assert.rejects(httpRequest(request(`${origin}/episodes`)), (e) => e.tag === 'transport');
  assert.deepEqual(requests, ['GET /episodes HTTP/1.1'], 'the server had the request');
  server.close();
});

test('a batch is sent at once and answered in order, each as ok or err; an oversized batch is refused whole', async () => {
  let inFlight = 0;
  let most = 0;
  const server = await serve((req, res) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    // Each answer waits until both requests have arrived, so only concurrent sending finishes fast.
    setTimeout(() => { inFlight -= 1; res.end(req.url); }, 150);
  });
  try {
    const httpRequest = createHttpRequest({ allowedOrigins: () => [server.origin] });
    const httpBatch = createHttpBatch(httpRequest);
    const started = performance.now();
    const answers = await httpBatch([request(`${server.origin}/facts`), request('http://evil.example/x'), request(`${server.origin}/nodes`)]);
    assert.equal(most, 2, 'both requests were in flight together');
    assert.ok(performance.now() - started < 1000);
    assert.deepEqual(answers.map((a) => a.tag), ['ok', 'err', 'ok']);
    assert.equal(new TextDecoder().decode(answers[0].val.body), '/facts');
    assert.equal(new TextDecoder().decode(answers[2].val.body), '/nodes');
    assert.equal(answers[1].val.tag, 'refused');
    const tooMany = await httpBatch(Array.from({ length: MAX_BATCH + 1 }, () => request(`${server.origin}/x`)));
    assert.equal(tooMany.length, MAX_BATCH + 1);
    assert.ok(tooMany.every((a) => a.tag === 'err' && a.val.tag === 'invalid-request' && /at most 16/.test(a.val.val)));
  } finally {
    await server.close();
  }
});
