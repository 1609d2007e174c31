// `experts validate`'s MCP server check: the servers a report binds, a stdio server spawned and sent
// `initialize`, an HTTP server POSTed it, 5 s (here less) each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { boundServers, checkServers } from '../src/mcp-check.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const fakeServer = path.join(repo, 'tests/openclaw/fake-mcp-server.js');

test('the servers a validation report binds tools to', () => {
  const report = 'Validating ops-expert\n✓ Cross-references intact (triggers → processes → functions, tools, knowledge, policy)\n✓ All required tools bound (tickets → tickets-mcp, mail → mail-mcp, files → tickets-mcp)\n✓ MCP servers configured\n';
  assert.deepEqual(boundServers(report), ['tickets-mcp', 'mail-mcp']);
  assert.deepEqual(boundServers('Valid.\n'), []);
});

test('each bound server: ✓ when it answers initialize, ✗ with why not', async () => {
  const http200 = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const { id } = JSON.parse(body);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { serverInfo: { name: 'remote', version: '2' } } })}\n\n`);
  });
  await new Promise((resolve) => http200.listen(0, '127.0.0.1', resolve));
  const servers = {
    'tickets-mcp': { command: process.execPath, args: [fakeServer, 'tickets-mcp', 'get_ticket'] },
    silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] },
    crashing: { command: process.execPath, args: ['-e', 'process.exit(3)'] },
    remote: { url: `http://127.0.0.1:${http200.address().port}/mcp` },
    nowhere: { url: 'http://127.0.0.1:9/mcp' },
  };
  try {
    const t0 = Date.now();
    const { lines, failed } = await checkServers(['tickets-mcp', 'silent', 'crashing', 'remote', 'nowhere', 'unconfigured'], servers, 1500);
    assert.ok(Date.now() - t0 < 5000, 'bounded');
    assert.deepEqual(lines.map((l) => l.slice(0, 1)), ['✓', '✗', '✗', '✓', '✗', '✗']);
    assert.equal(lines[0], '✓ MCP server tickets-mcp: tickets-mcp 1.0.0');
    assert.equal(lines[1], '✗ MCP server silent: no answer to initialize within 1.5 s');
    assert.match(lines[2], /^✗ MCP server crashing: exited \(3\) before answering/);
    assert.equal(lines[3], '✓ MCP server remote: remote 2');
    assert.equal(lines[5], '✗ MCP server unconfigured: not in OpenClaw\'s mcp.servers');
    assert.equal(failed, 4);
  } finally {
    http200.close();
  }
});
