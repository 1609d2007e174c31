// Forgetting on FalkorDB in real OpenClaw 2026.9.6: a Gateway on loopback (throwaway HOME) with the
// packaged plugin connected to the FalkorDB behind Graphiti (`graphiti.falkordb.url`, its password a
// SecretRef to the Gateway's environment), Graphiti being the project's graphiti-core test server over a real FalkorDB
// (tests/graphiti-core-server/, from scripts/python-tools.sh). The model's `graphiti_forget`
// proposes, the user's `/graphiti forget confirm` deletes the fact and the episode in the chat's
// own graph (checked by query), and the next turn's recall, answered by graphiti-core, no longer
// holds it.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, eventually, throwawayHome } from './openclaw.js';
import { freePort, gatewayCall, gatewayWithPlugin } from './gateway.js';
import { startScriptedModel } from './scripted-model.js';
import { createRedisCommand } from '../../plugin/openclaw/src/database.js';

const GATEWAY_TOKEN = 'e2e-falkordb-token';
const PASSWORD = 'e2e-falkordb-secret';
const DIRECT = 'agent:main:telegram:direct:user-9';
/** The direct chat's group, named by the plugin config (a Gateway call's sender is its CLI client). */
const GROUP = 'e2e-dana';

const { home, env } = throwawayHome();
let server;
let falkordbUrl;
let mcpUrl;
let model;
let gateway;
let port;
let forgetAnswer = '';

/** The model calls `graphiti_forget` for `[forget] …` once, then answers. */
function script(info) {
  if (info.toolResults.length > 0) {
    forgetAnswer = info.toolResults.join('\n');
    return 'I can forget that; confirm with the command above.';
  }
  const forget = /\[forget\] (.+)/.exec(info.prompt);
  if (forget) return { toolCall: { name: 'graphiti_forget', arguments: { query: forget[1] } } };
  return 'Noted.';
}

const call = (method, params) => gatewayCall({ port, token: GATEWAY_TOKEN }, method, params);
let sent = 0;
const send = (sessionKey, message) => call('chat.send', { sessionKey, message, idempotencyKey: `e2e-falkordb-${++sent}` });

/** One MCP tool call to the graphiti-core server, as a client other than the plugin. */
async function tool(name, args) {
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return (await response.text()).split('\n').find((l) => l.startsWith('data: '));
}

/** A read-only query of the chat's graph: each row's cells as text. */
async function query(cypher) {
  const redis = createRedisCommand({ allowedDatabases: () => [falkordbUrl], password: () => PASSWORD });
  const values = await redis(falkordbUrl, ['GRAPH.RO_QUERY', GROUP, cypher].map((a) => new TextEncoder().encode(a)), 10_000);
  // [header, rows, stats]: the rows' texts, in order (verbose replies: every cell is a text or nil).
  const texts = values.map((v) => (v.tag === 'bytes' ? new TextDecoder().decode(v.val) : v.tag === 'array' ? null : v.tag));
  const rows = [];
  let at = 1 + 1 + values[1].val; // past the reply's array, the header's array and its names
  const count = values[at].val;
  at += 1;
  for (let i = 0; i < count; i += 1) {
    const width = values[at].val;
    rows.push(texts.slice(at + 1, at + 1 + width));
    at += 1 + width;
  }
  return rows;
}

before(async () => {
  const python = path.join(REPO, 'tools/python/venv/bin/python');
  assert.ok(fs.existsSync(python), `${python} is missing: run scripts/python-tools.sh`);
  const [falkordbPort, serverPort] = [await freePort(), await freePort()];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-falkordb-'));
  // The server starts FalkorDB with a password, and both exit when its standard input closes.
  server = spawn(python, [path.join(REPO, 'tests/graphiti-core-server/server.py'), '--port', String(serverPort),
    '--falkordb-port', String(falkordbPort), '--start-falkordb', dir, '--falkordb-password', PASSWORD],
  { stdio: ['pipe', 'ignore', 'inherit'], env: { ...process.env, GRAPHITI_TELEMETRY_ENABLED: 'false' } });
  falkordbUrl = `redis://127.0.0.1:${falkordbPort}`;
  mcpUrl = `http://127.0.0.1:${serverPort}/mcp`;
  await eventually(async () => (await fetch(`http://127.0.0.1:${serverPort}/health`).catch(() => undefined))?.ok, 'the graphiti-core server');
  await tool('add_memory', { name: 'ep-1', episode_body: 'user(user): Dana lives in Lisbon. Dana likes green tea.', group_id: GROUP });
  await tool('add_memory', { name: 'ep-2', episode_body: 'user(user): Dana likes green tea. Dana works at Acme.', group_id: GROUP });
  await fetch(`http://127.0.0.1:${serverPort}/control/idle`);
  model = await startScriptedModel(script, { persona: 'no expert runs here' });
  // The password as a user should give it: a SecretRef, here to the Gateway's environment.
  env.E2E_FALKORDB_PASSWORD = PASSWORD;
  ({ gateway, port } = await gatewayWithPlugin(env, {
    token: GATEWAY_TOKEN,
    pluginConfig: { graphiti: { url: mcpUrl, falkordb: { url: falkordbUrl }, group_id: { direct: GROUP, group: '{agent}-group-{chat}' } }, falkordbPassword: '${E2E_FALKORDB_PASSWORD}', recall: { min_relevance: 0 }, tickIntervalMs: 500 },
    modelUrl: model.baseUrl,
    more: [{ path: 'tools.toolSearch', value: false }],
  }));
});

after(async () => {
  await gateway?.kill();
  model?.stop();
  server?.stdin.end();
  fs.rmSync(home, { recursive: true, force: true });
});

test('a forget confirmed in the Gateway deletes in FalkorDB, and the next recall no longer has it', async () => {
  const facts = async () => (await query('MATCH ()-[r:RELATES_TO]->() RETURN r.fact ORDER BY r.fact')).map((r) => r[0]);
  assert.deepEqual(await facts(), ['Dana likes green tea', 'Dana lives in Lisbon', 'Dana works at Acme']);

  await send(DIRECT, '[forget] Lisbon');
  await eventually(() => forgetAnswer, "graphiti_forget's answer");
  assert.doesNotMatch(forgetAnswer, /Warning:/, 'connected, the plugin can delete');
  const id = /\(forget id ([0-9a-f]{16})\)/.exec(forgetAnswer)?.[1];
  assert.ok(id, forgetAnswer);
  assert.deepEqual(await facts(), ['Dana likes green tea', 'Dana lives in Lisbon', 'Dana works at Acme'], 'a proposal deletes nothing');

  await send(DIRECT, `/graphiti forget confirm ${id}`);
  // The episode is the delete's last write: once it is gone, the fact's delete has run too.
  const episodes = async () => (await query('MATCH (e:Episodic) RETURN e.name ORDER BY e.name')).map((r) => r[0]);
  await eventually(async () => !(await episodes()).includes('ep-1'), 'the confirmed delete in FalkorDB');
  assert.deepEqual(await episodes(), ['ep-2'], 'the episode that said it went');
  assert.deepEqual(await facts(), ['Dana likes green tea', 'Dana works at Acme']);

  const seen = model.log.length;
  await send(DIRECT, 'Where does Dana live?');
  const next = await eventually(() => model.log.slice(seen).find((r) => /Where does Dana live/.test(r.prompt)), 'the next turn');
  assert.match(next.prompt, /<graphiti-context/, 'recall answered');
  assert.doesNotMatch(next.prompt, /- Dana lives in Lisbon/, next.prompt);
  const logs = fs.readdirSync(path.join(home, '.openclaw'), { recursive: true }).map(String);
  for (const file of logs.filter((f) => /\.(json|jsonl|log|txt|md)$/.test(f))) {
    const text = fs.readFileSync(path.join(home, '.openclaw', file), 'utf8');
    assert.ok(!text.includes(PASSWORD), `the FalkorDB password is in ${file}`);
  }
  assert.ok(!gateway.output().includes(PASSWORD), 'the Gateway never printed the password');
  // OpenClaw's own file log, shared by every HOME.
  for (const shared of new Set([path.join(os.tmpdir(), 'openclaw'), '/tmp/openclaw'])) {
    for (const file of fs.existsSync(shared) ? fs.readdirSync(shared) : []) {
      assert.ok(!fs.readFileSync(path.join(shared, file), 'utf8').includes(PASSWORD), `the FalkorDB password is in ${shared}/${file}`);
    }
  }
});
