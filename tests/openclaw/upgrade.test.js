// Upgrading keeps everything: the previous release (tests/openclaw/releases/, built from its tag) is
// installed by name from a registry on loopback into real OpenClaw 2026.9.6 and run in a Gateway
// while Graphiti is unreachable, so its captures wait in the spool; an expert run is held on a
// CONFIRM call, its approval pending. The Gateway is killed, this build is published and
// `openclaw plugins update` fetches it, and a Gateway starts again with Graphiti up: every spooled
// turn reaches Graphiti exactly once, the held run is still waiting, the approval given now lets
// exactly the call it was asked for run, once, and the turns the previous release recorded are shown.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { manifestOf, startRegistry } from './npm-registry.js';
import { PLUGIN_ID, REPO, eventually, executedCalls, installedVersion, openclaw, packageTgz, startStandIn, startStubModel, throwawayHome } from './openclaw.js';
import { configurePlugin, freePort, gatewayCall, gatewayWithPlugin, startGateway } from './gateway.js';
import { deliveries as deliveriesIn, startScriptedModel } from './scripted-model.js';

const PREVIOUS_RELEASE = path.join(REPO, 'tests/openclaw/releases/graphiti-openclaw-0.1.0.tgz');
const GATEWAY_TOKEN = 'upgrade-gateway-token';
const WEBHOOK_TOKEN = 'upgrade-webhook-token';
const PERSONA = 'You are a careful support operator.';
const EXPERT = 'ops-expert';
const UPDATE = { id: 'T-U', priority: 'high' };
const MARKERS = ['the blue kettle is in the attic', 'the spare key is under the third stone'];

const { home, env } = throwawayHome();
const stateDir = path.join(home, '.openclaw', PLUGIN_ID);
const mcpCalls = path.join(home, 'mcp-calls.jsonl');
let registry;
let registryEnv;
let model;
let gateway;
let port;
let graphitiPort;
let standIn;
let passed = false;
const outputs = [];

const toolCall = (id, args) => ({ toolCall: { name: 'tool_call', arguments: { id, args } } });

/** The main session relays; the ticket's run asks for update_ticket (held), then, approved, makes it. */
function script(info) {
  if (!info.expert) return 'Noted.';
  if (!info.summary?.includes('[confirm]')) return 'Nothing to do.';
  if (info.toolResults.length === 0) return toolCall('tickets-mcp__update_ticket', UPDATE);
  if (info.attempt === 1) return 'Proposed raising T-U to high; waiting for the user\'s approval.';
  return `Handled ${info.session} (attempt ${info.attempt}).\n\`\`\`json\n{"priority": "high"}\n\`\`\``;
}

const deliveries = (invocation, what) => deliveriesIn(model.log, invocation, what);
const updates = () => executedCalls(mcpCalls).filter((c) => c.tool === 'update_ticket');
/** The text of the spool's episodes; one sent or moved while it is read is skipped. */
const spoolText = (state = stateDir) => {
  const dir = path.join(state, 'spool');
  const read = (file) => {
    try {
      return fs.readFileSync(path.join(dir, file), 'utf8');
    } catch (error) {
      if (error.code === 'ENOENT') return '';
      throw error;
    }
  };
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.episode')).map(read).join('\n') : '';
};
const call = (method, params) => gatewayCall({ port, token: GATEWAY_TOKEN }, method, params);

before(async () => {
  fs.cpSync(path.join(REPO, 'tests/fixtures/experts', EXPERT), path.join(home, '.openclaw/experts', EXPERT), { recursive: true });
  registry = await startRegistry(PREVIOUS_RELEASE);
  registryEnv = { ...env, npm_config_registry: registry.url };
  model = await startScriptedModel(script, { persona: PERSONA });
  graphitiPort = await freePort();
});

after(async () => {
  await gateway?.kill();
  model?.stop();
  standIn?.stop();
  registry?.stop();
  fs.writeFileSync(path.join(home, 'upgrade-diagnostics.txt'), outputs.map((output, n) => `=== Gateway ${n + 1}\n${output()}`).join('\n'));
  // A failure keeps the HOME for its post-mortem.
  if (passed) fs.rmSync(home, { recursive: true, force: true });
  else console.log(`# upgrade: HOME kept at ${home}`);
});

test('an update from the previous release keeps the spool, the held run and its approval', async () => {
  const previous = manifestOf(PREVIOUS_RELEASE);
  const current = manifestOf(packageTgz());
  assert.notEqual(previous.version, current.version, 'the previous release is another version');

  await openclaw(registryEnv, ['plugins', 'install', `npm:${previous.name}`, '--force', '--accept-capabilities']);
  ({ gateway, port } = await gatewayWithPlugin(env, {
    install: false,
    token: GATEWAY_TOKEN,
    pluginConfig: {
      tickIntervalMs: 500,
      graphiti: { url: `http://127.0.0.1:${graphitiPort}/mcp`, group_id: { direct: 'upgrade', group: 'upgrade-{chat}' } },
      recall: { enabled: false },
      // Retries a second apart at most: the test waits for them.
      capture: { backoff_initial_ms: 200, backoff_max_ms: 1000 },
      experts: { webhook_token: WEBHOOK_TOKEN },
    },
    modelUrl: model.baseUrl,
    more: [{
      path: 'mcp.servers',
      value: { 'tickets-mcp': { command: process.execPath, args: [path.join(REPO, 'tests/openclaw/fake-mcp-server.js'), 'tickets-mcp', 'get_ticket', 'update_ticket', 'send_reply'], env: { FAKE_MCP_CALLS: mcpCalls } } },
    }],
  }));
  outputs.push(gateway.output);
  assert.equal(await installedVersion(env), previous.version, 'the previous release runs');

  // Its state: a run held on a CONFIRM call, and turns captured while Graphiti is unreachable.
  const hook = await fetch(`${gateway.url}/graphiti-openclaw/experts/${EXPERT}/new_ticket`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
    body: JSON.stringify({ event_id: 'e-upgrade', ticket: { id: 'T-U', summary: 'Raise priority [confirm]' } }),
  });
  assert.equal(hook.status, 202);
  const invocation = (await hook.json()).invocation;
  const ask = await eventually(() => deliveries(invocation, /experts approve /)[0], `the approval request of ${invocation}`, 90_000);
  const request = /experts approve ([0-9a-f]+)/.exec(ask.prompt)[1];
  // One turn after the other: a message sent while a turn runs is merged into the next by OpenClaw.
  for (const [n, marker] of MARKERS.entries()) {
    await call('chat.send', { sessionKey: 'agent:main:main', message: `Remember: ${marker}.`, idempotencyKey: `upgrade-turn-${n}` });
    await eventually(() => spoolText().includes(marker), `turn ${n} in the spool`, 60_000);
  }
  assert.match((await openclaw(env, ['graphiti', 'experts', 'queue'])).stdout, new RegExp(`${invocation} waiting-approval`));
  assert.deepEqual(updates(), [], 'held: not executed');
  await gateway.kill();

  // The new release is published; the user updates and starts the Gateway again.
  registry.publish(packageTgz(), current);
  const updated = await openclaw(registryEnv, ['plugins', 'update', PLUGIN_ID]);
  assert.ok(registry.requests.includes(`GET /${current.name}/-/${current.name}-${current.version}.tgz`), `${updated.stdout}\n${registry.requests.join('\n')}`);
  assert.equal(await installedVersion(env), current.version, `updated: ${updated.stdout}`);
  assert.ok(MARKERS.every((m) => spoolText().includes(m)), 'the update left the spool as it was');

  standIn = await startStandIn({ args: ['--port', String(graphitiPort)] });
  gateway = await startGateway(env, { port, token: GATEWAY_TOKEN });
  outputs.push(gateway.output);
  // A captured turn's episode is named after its turn (the chat.send's idempotency key).
  const sendsOf = async (n) => (await standIn.sends()).filter((s) => s.name?.includes(`upgrade-turn-${n}-`));
  await eventually(async () => (await Promise.all(MARKERS.map((_, n) => sendsOf(n)))).every((s) => s.length > 0), 'both spooled turns at Graphiti', 60_000);
  assert.match((await openclaw(env, ['graphiti', 'experts', 'queue'])).stdout, new RegExp(`${invocation} waiting-approval`), 'the held run is still waiting');

  await call('chat.send', { sessionKey: 'agent:main:main', message: `/experts approve ${request}`, idempotencyKey: `upgrade-approve-${request}` });
  await eventually(() => deliveries(invocation, /finished/).length, `the result of ${invocation} after the approval`, 90_000);
  assert.deepEqual(updates().map((c) => c.arguments), [UPDATE], 'update_ticket ran exactly once, with the arguments approved before the update');

  await eventually(() => spoolText() === '', 'the spool empty', 30_000);
  for (const [n, marker] of MARKERS.entries()) {
    const sends = await sendsOf(n);
    assert.equal(sends.length, 1, `turn ${n} reached Graphiti exactly once: ${JSON.stringify(sends)}`);
    const episodes = await standIn.episodes(sends[0].group_id);
    assert.ok(episodes.some((e) => e.content?.includes(marker)), `"${marker}" is in the episode: ${JSON.stringify(episodes).slice(0, 500)}`);
  }
  // The turn records the previous release wrote are read by this one (the session panel's source).
  const exported = JSON.parse((await openclaw(env, ['graphiti', 'export', '--sender', 'upgrade-user', '--session', 'agent:main:main'])).stdout);
  for (const marker of MARKERS) {
    const turn = exported.recent_turns?.items?.find((t) => t.prompt?.includes(marker));
    assert.ok(turn, `the turn "${marker}" recorded by ${previous.version} is shown: ${JSON.stringify(exported.recent_turns)}`);
    assert.match(turn.capture, /delivered/, JSON.stringify(turn));
  }
  passed = true;
  console.log(`# upgrade ${previous.version} → ${current.version}: ${MARKERS.length} spooled turns delivered once each; ${invocation} held on request ${request}, approved after the update, update_ticket run once`);
});

test('the archive the README installs, installed again over the previous release, keeps its settings and its spool', async () => {
  const { home: archiveHome, env: archiveEnv } = throwawayHome();
  const stub = await startStubModel('Noted.');
  const graphiti = await freePort();
  const current = manifestOf(packageTgz());
  const url = `http://127.0.0.1:${graphiti}/mcp`;
  const turn = (marker) => openclaw(archiveEnv, ['agent', '--local', '--message', `Remember: ${marker}.`, '--json'], { timeoutMs: 180_000 });
  let archiveStandIn;
  try {
    await openclaw(archiveEnv, ['plugins', 'install', PREVIOUS_RELEASE, '--force', '--accept-capabilities']);
    await configurePlugin(archiveEnv, {
      pluginConfig: { graphiti: { url, group_id: { direct: 'upgrade' } }, recall: { enabled: false }, capture: { backoff_initial_ms: 200, backoff_max_ms: 1000 } },
      modelUrl: stub.baseUrl,
    });
    await turn(MARKERS[0]);
    assert.ok(spoolText(path.join(archiveHome, '.openclaw', PLUGIN_ID)).includes(MARKERS[0]), 'Graphiti unreachable: the turn waits in the spool');

    await openclaw(archiveEnv, ['plugins', 'install', packageTgz(), '--force', '--accept-capabilities']);
    assert.equal(await installedVersion(archiveEnv), current.version);
    const kept = await openclaw(archiveEnv, ['config', 'get', `plugins.entries.${PLUGIN_ID}.config.graphiti.url`]);
    assert.match(kept.stdout, new RegExp(url.replaceAll('.', '\\.')), 'the plugin\'s settings are kept');

    archiveStandIn = await startStandIn({ args: ['--port', String(graphiti)] });
    await turn(MARKERS[1]);
    const contents = async () => (await archiveStandIn.episodes('upgrade')).map((e) => e.content ?? '');
    await eventually(async () => {
      const seen = await contents();
      return MARKERS.every((m) => seen.some((c) => c.includes(m)));
    }, 'both turns at Graphiti', 30_000);
    for (const marker of MARKERS) {
      assert.equal((await contents()).filter((c) => c.includes(marker)).length, 1, `"${marker}" reached Graphiti exactly once`);
    }
    console.log(`# archive reinstall ${manifestOf(PREVIOUS_RELEASE).version} → ${current.version}: the settings kept; the turn spooled before it and the one after delivered once each`);
  } finally {
    stub.stop();
    archiveStandIn?.stop();
    fs.rmSync(archiveHome, { recursive: true, force: true });
  }
});
