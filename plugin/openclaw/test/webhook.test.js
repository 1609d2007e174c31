// The webhook route: POST only, the body read within its bound (413 decided by the component without
// reading the rest), headers lower-cased, the path below the prefix, the component's answer as it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { WEBHOOK_PREFIX, pathBelow, webhookHandler } from '../src/webhook.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/** A server with the handler; `webhook` is the fake component call. */
async function serve({ maxBytes = 1000, webhook, afterAccept }) {
  const handler = webhookHandler({ maxBytes, webhook, afterAccept, logger: quiet });
  const server = http.createServer((req, res) => {
    handler(req, res).then((handled) => assert.equal(handled, true));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

test('anything but POST is 405, and the component is not asked', async () => {
  let asked = 0;
  const { url, close } = await serve({ webhook: async () => { asked += 1; } });
  try {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await fetch(`${url}${WEBHOOK_PREFIX}/ops-expert/new_ticket`, { method });
      assert.equal(response.status, 405);
      assert.equal(response.headers.get('allow'), 'POST');
      assert.match((await response.json()).error, new RegExp(`${method} is not allowed`));
    }
    assert.equal(asked, 0);
  } finally {
    close();
  }
});

test('status and body are the component\'s; it gets the path below the prefix, lower-case headers and the body', async () => {
  const seen = [];
  const accepted = [];
  const { url, close } = await serve({
    webhook: async (request) => {
      seen.push(request);
      return { status: 202, body: '{"invocation":"inv-12"}', work: { notes: ['accepted'], tickInMs: 1n } };
    },
    afterAccept: (work) => accepted.push(work),
  });
  try {
    const response = await fetch(`${url}${WEBHOOK_PREFIX}/ops-expert/new_ticket?source=test`, {
      method: 'POST',
      headers: { Authorization: 'Bearer s3cret', 'X-Event-Id': 'e-1', 'Content-Type': 'application/json' },
      body: '{"event_id":"e-1"}',
    });
    assert.equal(response.status, 202);
    assert.match(response.headers.get('content-type'), /^application\/json/);
    assert.deepEqual(await response.json(), { invocation: 'inv-12' });
    assert.equal(seen[0].path, 'ops-expert/new_ticket');
    assert.equal(Buffer.from(seen[0].body).toString(), '{"event_id":"e-1"}');
    const headers = Object.fromEntries(seen[0].headers);
    assert.equal(headers.authorization, 'Bearer s3cret');
    assert.equal(headers['x-event-id'], 'e-1');
    assert.ok(seen[0].headers.every(([name]) => name === name.toLowerCase()));
    assert.deepEqual(accepted, [{ notes: ['accepted'], tickInMs: 1n }], 'the runner gets the work after the answer');

    for (const [status, body] of [[401, '{"error":"missing or wrong bearer token"}'], [200, '{"duplicate":"e-1"}']]) {
      const server = await serve({ webhook: async () => ({ status, body, work: {} }) });
      const answer = await fetch(`${server.url}${WEBHOOK_PREFIX}/a/b`, { method: 'POST', body: '{}' });
      assert.equal(answer.status, status);
      assert.equal(await answer.text(), `${body}\n`);
      server.close();
    }
  } finally {
    close();
  }
});

test('a body over the limit: the component gets limit + 1 bytes and says 413 before the rest is sent', async () => {
  const seen = [];
  const { url, close } = await serve({
    maxBytes: 1000,
    webhook: async (request) => {
      seen.push(request.body.length);
      return request.body.length > 1000
        ? { status: 413, body: '{"error":"the body has 1001 bytes; at most 1000 are accepted"}', work: {} }
        : { status: 202, body: '{}', work: {} };
    },
  });
  try {
    const { port } = new URL(url);
    // 64 KiB now, and the rest never: the answer must come without it.
    const answer = await new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: `${WEBHOOK_PREFIX}/ops-expert/new_ticket`, headers: { 'content-length': 10_000_000 } }, (response) => {
        let body = '';
        response.on('data', (chunk) => { body += chunk; });
        response.on('end', () => resolve({ status: response.statusCode, connection: response.headers.connection, body }));
      });
      request.on('error', (error) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
      request.write(Buffer.alloc(64 * 1024, 'x'));
    });
    assert.equal(answer.status, 413);
    assert.match(answer.body, /at most 1000/);
    assert.equal(answer.connection, 'close', 'the unread rest closes the connection');
    assert.deepEqual(seen, [1001]);

    const exact = await fetch(`${url}${WEBHOOK_PREFIX}/a/b`, { method: 'POST', body: 'y'.repeat(1000) });
    assert.equal(exact.status, 202, 'exactly the limit is read whole');
    assert.deepEqual(seen, [1001, 1000]);
  } finally {
    close();
  }
});

test('the component failing is a 503, never a hang', async () => {
  const { url, close } = await serve({ webhook: async () => { throw new Error('instance trapped'); } });
  try {
    const response = await fetch(`${url}${WEBHOOK_PREFIX}/a/b`, { method: 'POST', body: '{}' });
    assert.equal(response.status, 503);
  } finally {
    close();
  }
});

test('the path below the prefix', () => {
  assert.equal(pathBelow('/graphiti-openclaw/experts/ops-expert/new_ticket'), 'ops-expert/new_ticket');
  assert.equal(pathBelow('/graphiti-openclaw/experts//a/b?x=1#f'), 'a/b');
  assert.equal(pathBelow('/graphiti-openclaw/experts'), '');
  assert.equal(pathBelow('/graphiti-openclaw/experts/B%C3%BCro-Ops/new_ticket'), 'Büro-Ops/new_ticket', 'percent-encoded names');
  assert.equal(pathBelow('/graphiti-openclaw/experts/a%2Fb/t'), 'a%2Fb/t', 'an encoded slash stays in its segment');
  assert.equal(pathBelow('/graphiti-openclaw/experts/%E0%A4/t'), '%E0%A4/t', 'a malformed escape as written');
});
