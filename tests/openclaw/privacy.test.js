// What is not the user's, in real OpenClaw 2026.9.6: a Gateway on loopback (throwaway HOME) with the
// packaged plugin, recall and capture on against the Graphiti stand-in, the ops-expert fixture with
// its channel trigger bound to webchat, and a scripted stub model. Proves that an expert's delivery
// into the main session is relayed but neither recalled for, routed nor captured as the user's words;
// that an expert run's session gets no <graphiti-context> and no <pack-context>, only its expert's
// prompt; that a slash command or a message typed into an expert's session fires no channel
// trigger; and that a message the user sends while a delivery waits to start, which OpenClaw moves
// into the delivery's prompt, is captured as the user's, once.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, eventually as poll, startStandIn, throwawayHome } from './openclaw.js';
import { gatewayCall, gatewayWithPlugin } from './gateway.js';
import { startScriptedModel } from './scripted-model.js';

const GATEWAY_TOKEN = 'privacy-gateway-token';
const WEBHOOK_TOKEN = 'privacy-webhook-token';
const PERSONA = 'You are a careful support operator.';
const EXPERT = 'ops-expert';
const MAIN = 'agent:main:main';
/** Blocks the plugin prepends to a turn it recalls for or routes. */
const INJECTED = /<graphiti-context|<graphiti-fallback|<pack-context/;

const { home, env } = throwawayHome();
let standIn;
let model;
let gateway;
let port;

/** Waits until `check` returns something truthy: a delivery takes a run and a relay. */
const eventually = (check, what, timeoutMs = 90_000) => poll(check, what, timeoutMs);

/** The system prompt of each main-session turn whose message names a passport. */
const passportTurns = [];

/** An expert's answer names a dinner (the example rules route that to the dining pack). */
function script(info) {
  if (!info.expert && info.prompt.includes('passport')) passportTurns.push(info);
  if (!info.expert) return 'Relayed to the user.';
  return `Handled ${info.session}: book a bistro for dinner on Friday for the team.\n\`\`\`json\n{"priority": "high"}\n\`\`\``;
}

const call = (method, params) => gatewayCall({ port, token: GATEWAY_TOKEN }, method, params);
const send = (sessionKey, message, idempotencyKey) => call('chat.send', { sessionKey, message, idempotencyKey });
/** The first model request of each main-session turn whose message matches. */
const mainTurns = (what) => model.log.filter((r) => r.session === 'main' && r.firstOfTurn && what.test(r.prompt));
/** Expert runs whose message matches. */
const expertRuns = (what) => model.log.filter((r) => r.expert && r.firstOfTurn && what.test(r.prompt));
/** Every episode the stand-in holds in the groups anything was sent to. */
async function episodes() {
  const groups = [...new Set((await standIn.sends()).map((s) => s.group_id))];
  return (await Promise.all(groups.map((group) => standIn.episodes(group)))).flat();
}
/** The episodes that mention `text`. */
const captured = async (text) => (await episodes()).filter((e) => String(e.content ?? '').includes(text));

before(async () => {
  fs.cpSync(path.join(REPO, 'tests/fixtures/experts', EXPERT), path.join(home, '.openclaw/experts', EXPERT), { recursive: true });
  standIn = await startStandIn();
  model = await startScriptedModel(script, { persona: PERSONA });
  ({ gateway, port } = await gatewayWithPlugin(env, {
    token: GATEWAY_TOKEN,
    pluginConfig: {
      tickIntervalMs: 1000,
      // The stand-in's seeded memories (Dana Lee, Acme Robotics) are in the group "demo".
      graphiti: { url: `${standIn.url}/mcp`, group_id: { direct: 'demo', group: 'demo-{chat}' } },
      // A send that fails on a loaded machine is retried within a second, not after minutes.
      capture: { backoff_initial_ms: 200, backoff_max_ms: 1000 },
      experts: { webhook_token: WEBHOOK_TOKEN, channels: { [`${EXPERT}/support_chat`]: ['webchat'] } },
    },
    modelUrl: model.baseUrl,
    more: [{
      path: 'mcp.servers',
      value: { 'tickets-mcp': { command: process.execPath, args: [path.join(REPO, 'tests/openclaw/fake-mcp-server.js'), 'tickets-mcp', 'get_ticket', 'update_ticket', 'send_reply'] } },
    }],
  }));
});

after(async () => {
  await gateway?.kill();
  model?.stop();
  standIn?.stop();
  const diagnostics = path.join(home, 'privacy-diagnostics.txt');
  fs.writeFileSync(diagnostics, [
    `=== Gateway\n${gateway?.output() ?? ''}`,
    `=== model log\n${(model?.log ?? []).map((r) => JSON.stringify({ ...r, prompt: r.prompt.slice(0, 300) })).join('\n')}`,
  ].join('\n'));
  console.log(`# Gateway output and model log: ${diagnostics}`);
});

test('an expert\'s delivery is relayed in the main session, neither recalled for nor routed', async () => {
  const response = await fetch(`${gateway.url}/graphiti-openclaw/experts/${EXPERT}/new_ticket`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
    body: JSON.stringify({ event_id: 'e-privacy-1', ticket: { id: 'T-1', summary: 'Checkout is down' } }),
  });
  assert.equal(response.status, 202);
  const { invocation } = await response.json();
  const delivery = await eventually(() => mainTurns(new RegExp(`\\(${invocation}, trigger new_ticket\\) finished`))[0], `the delivery of ${invocation}`);
  assert.match(delivery.prompt, /book a bistro for dinner/, 'the result as the expert wrote it');
  assert.doesNotMatch(delivery.prompt, INJECTED, 'no recall, no pack');
});

test('an expert run\'s session gets no recall and no pack, only its expert\'s prompt', async () => {
  await send(MAIN, 'Book lunch with the Acme Robotics founder Dana Lee on Friday', 'privacy-channel-1');
  const main = await eventually(() => mainTurns(/Acme Robotics founder/)[0], 'the user\'s own turn');
  assert.match(main.prompt, /<graphiti-context/, 'the user\'s turn is recalled for (the stand-in has Dana Lee)');
  const run = await eventually(() => expertRuns(/Acme Robotics founder/)[0], 'the channel trigger\'s run');
  assert.ok(run.expert, 'its expert\'s prompt');
  assert.doesNotMatch(run.prompt, INJECTED, 'neither the user\'s memories nor a pack');
});

test('a slash command and a message typed into an expert\'s session fire no channel trigger', async () => {
  const run = await eventually(() => expertRuns(/Acme Robotics founder/)[0], 'the run of the previous test');
  await send(MAIN, '/experts list', 'privacy-command-1');
  await send(`agent:main:expert:${EXPERT}:${run.session}`, 'Any update on the Acme lunch?', 'privacy-in-expert-1');
  await eventually(() => model.log.some((r) => r.expert && r.prompt.includes('Any update on the Acme lunch?')), 'the expert session\'s own turn');
  // A plain message after them fires: had they fired, their runs were queued before its own.
  await send(MAIN, 'Where is my order?', 'privacy-plain-1');
  await eventually(() => expertRuns(/Where is my order\?/)[0], 'the plain message\'s run');
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  assert.deepEqual(expertRuns(/\/experts list/).map((r) => r.session), [], 'the command started no run');
  // The finished run's session was deleted, so the message is the first turn of a fresh session of
  // that name: a run would be told to run a process, the session's own turn is the message itself.
  assert.deepEqual(expertRuns(/Any update on the Acme lunch\?/).filter((r) => /Run the process/.test(r.prompt)).map((r) => r.session), [], 'the message in the expert\'s session started no run');
});

test('the deliveries are not captured as the user\'s words; the user\'s own turns are', async () => {
  const delivered = mainTurns(/\(inv-\d+, trigger [a-z_]+\) finished/);
  assert.ok(delivered.length >= 1, 'a delivery turn ran in the main session');
  // The user's own turn after them: the spool sends in order, so its arrival means theirs would have.
  await send(MAIN, 'Please remember that I prefer window seats on trains.', 'privacy-user-1');
  await eventually(async () => (await captured('window seats on trains')).length, 'the user\'s own turn at the stand-in', 240_000);
  const deliveries = (await episodes()).filter((e) => /trigger [a-z_]+\) finished/.test(String(e.content ?? '')));
  assert.deepEqual(deliveries.map((e) => e.name), [], 'no delivery is an episode');
});

test('a message sent while a delivery waits to start is captured as the user\'s, once, and answered', async () => {
  const response = await fetch(`${gateway.url}/graphiti-openclaw/experts/${EXPERT}/new_ticket`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
    body: JSON.stringify({ event_id: 'e-privacy-2', ticket: { id: 'T-2', summary: 'Refunds are slow' } }),
  });
  const { invocation } = await response.json();
  // Sent the moment the delivery is posted, before its run starts: OpenClaw then moves the message
  // into the delivery's prompt, drops it from the transcript and fails the user's own run.
  const posted = new RegExp(`result of ${EXPERT} ${invocation} posted to ${MAIN}`);
  await poll(() => posted.test(gateway.output()), `the delivery of ${invocation} posted`, 90_000, 20);
  const said = 'Please remember that my passport expires in March.';
  await send(MAIN, said, 'privacy-during-delivery-1');
  const delivery = await eventually(() => mainTurns(new RegExp(`\\(${invocation}, trigger new_ticket\\) finished`))[0], `the delivery of ${invocation}`);
  const merged = delivery.prompt.includes(said);
  console.log(`# the message was ${merged ? '' : 'not '}merged into the delivery turn by OpenClaw`);
  if (merged) {
    const turn = passportTurns.find((t) => t.prompt.includes(`(${invocation},`));
    assert.match(turn.system, /queued user message comes before it, the user wrote that one/, 'the main agent is told to answer it');
  }
  await eventually(async () => (await captured('passport expires in March')).length, 'the user\'s message at the stand-in', 240_000);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const episodes = await captured('passport expires in March');
  assert.equal(episodes.length, 1, 'captured once');
  assert.doesNotMatch(String(episodes[0].content), /trigger new_ticket\) finished|Refunds are slow/, 'without the delivery');
});
