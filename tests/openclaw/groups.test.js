// Whose memory, in real OpenClaw 2026.9.6: a Gateway on loopback (throwaway HOME) with the packaged
// plugin, the Graphiti stand-in as Graphiti and a scripted stub model that calls the plugin's tools.
// In two Telegram group sessions, the turn's capture, `graphiti_ingest`, `graphiti_search` and
// `/recall` each use their own group's Graphiti group, never one shared by every group. In a direct
// chat, the model's `graphiti_forget` only proposes; the user's `/graphiti forget confirm` deletes.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { eventually, startStandIn, throwawayHome } from './openclaw.js';
import { gatewayCall, gatewayWithPlugin } from './gateway.js';
import { startScriptedModel } from './scripted-model.js';

const GATEWAY_TOKEN = 'e2e-groups-token';
const GROUP_A = 'agent:main:telegram:group:555';
const GROUP_B = 'agent:main:telegram:group:556';

const { home, env } = throwawayHome();
let standIn;
let model;
let gateway;
let port;

const DIRECT = 'agent:main:telegram:direct:user-7';
const DIRECT_OTHER = 'agent:main:telegram:direct:user-8';
/** What the last `graphiti_forget` answered. */
let forgetAnswer = '';

/** The model calls the tool a prompt names (`[ingest] …`, `[search] …`, `[forget] …`) once, then answers. */
function script(info) {
  if (info.toolResults.length > 0 && /\[forget\]/.test(info.prompt)) {
    forgetAnswer = info.toolResults.join('\n');
    return 'I can forget that; confirm with the command above.';
  }
  if (info.toolResults.length > 0) return 'Done.';
  const forget = /\[forget\] (.+)/.exec(info.prompt);
  if (forget) return { toolCall: { name: 'graphiti_forget', arguments: { query: forget[1] } } };
  const ingest = /\[ingest\] (.+)/.exec(info.prompt);
  if (ingest) return { toolCall: { name: 'graphiti_ingest', arguments: { text: ingest[1] } } };
  const search = /\[search\] (.+)/.exec(info.prompt);
  if (search) return { toolCall: { name: 'graphiti_search', arguments: { query: search[1] } } };
  return 'Noted.';
}

const call = (method, params) => gatewayCall(env, { port, token: GATEWAY_TOKEN }, method, params);
let sent = 0;
const send = (sessionKey, message) => call('chat.send', { sessionKey, message, idempotencyKey: `e2e-groups-${++sent}` });

/** The group ids of every search the stand-in was asked. */
async function searchedGroups() {
  const groups = [];
  for (const request of await standIn.requests()) {
    try {
      groups.push(...(JSON.parse(request.body)?.params?.arguments?.group_ids ?? []));
    } catch { /* not JSON */ }
  }
  return groups;
}

before(async () => {
  standIn = await startStandIn();
  model = await startScriptedModel(script, { persona: 'no expert runs here' });
  ({ gateway, port } = await gatewayWithPlugin(env, {
    token: GATEWAY_TOKEN,
    // A direct chat's memories are the stand-in's seeded group "demo".
    pluginConfig: { graphiti: { url: `${standIn.url}/mcp`, group_id: { direct: 'demo', group: '{agent}-group-{chat}' } }, recall: { min_relevance: 0 }, tickIntervalMs: 500 },
    modelUrl: model.baseUrl,
    // The model calls the plugin's tools by name, not through Tool Search's `tool_call`.
    more: [{ path: 'tools.toolSearch', value: false }],
  }));
});

after(async () => {
  await gateway?.kill();
  model?.stop();
  standIn?.stop();
  fs.rmSync(home, { recursive: true, force: true });
});

test("a group's turn, graphiti_ingest, graphiti_search and /recall all use that group's memories", async () => {
  await send(GROUP_A, '[ingest] The offsite is in Porto in May');
  const episodes = await eventually(async () => {
    const all = (await standIn.sends()).map((s) => s.group_id);
    return all.length >= 2 && all;
  }, 'the ingested note and the captured turn in Graphiti');
  assert.deepEqual([...new Set(episodes)], ['main-group-555'], `every episode of group 555 in its own group: ${episodes}`);

  const beforeB = (await searchedGroups()).length;
  await send(GROUP_B, '[search] offsite in Porto');
  await eventually(() => model.log.some((r) => r.toolResults > 0 && /\[search\]/.test(r.prompt)), "the search tool's answer");
  const searchedFromB = (await searchedGroups()).slice(beforeB);
  assert.deepEqual([...new Set(searchedFromB)], ['main-group-556'], `the turn and the search in group 556 read group 556 only: ${searchedFromB}`);

  const before = (await searchedGroups()).length;
  await send(GROUP_A, '/recall offsite');
  const recalled = await eventually(async () => {
    const groups = await searchedGroups();
    return groups.length > before && groups.slice(before);
  }, "/recall's search");
  assert.deepEqual([...new Set(recalled)], ['main-group-555'], '/recall in group 555 searched group 555');
});

/** The Graphiti tools the stand-in was asked to run, with their arguments. */
async function toolCalls(name) {
  const calls = [];
  for (const request of await standIn.requests()) {
    try {
      const params = JSON.parse(request.body)?.params;
      if (params?.name === name) calls.push(params.arguments);
    } catch { /* not JSON */ }
  }
  return calls;
}

test('graphiti_forget proposes; only the user\'s confirmation in their chat deletes, once', async () => {
  const DINNER_FACT = 'e1d2c3b4-a596-4877-8899-aabbccdd0004';
  await send(DIRECT, '[forget] Saffron Lantern');
  await eventually(() => forgetAnswer, "graphiti_forget's answer");
  assert.match(forgetAnswer, new RegExp(`fact +${DINNER_FACT}`), forgetAnswer);
  assert.match(forgetAnswer, /Saffron Lantern: Saffron Lantern is a Persian restaurant/, 'the summary that stays is named');
  const id = /\(forget id ([0-9a-f]{16})\)/.exec(forgetAnswer)?.[1];
  assert.ok(id, forgetAnswer);
  assert.match(forgetAnswer, new RegExp(`/graphiti forget confirm ${id}`));
  assert.deepEqual(await toolCalls('delete_entity_edge'), [], 'a proposal deletes nothing');

  // Another chat cannot confirm it, nor can a made-up id.
  await send(DIRECT_OTHER, `/graphiti forget confirm ${id}`);
  await send(DIRECT, '/graphiti forget confirm 0123456789abcdef');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.deepEqual(await toolCalls('delete_entity_edge'), [], 'nothing deleted by another chat or a wrong id');

  await send(DIRECT, `/graphiti forget confirm ${id}`);
  const deleted = await eventually(async () => {
    const calls = await toolCalls('delete_entity_edge');
    return calls.length > 0 && calls;
  }, 'the confirmed delete');
  assert.deepEqual(deleted.map((c) => c.uuid), [DINNER_FACT]);
  await send(DIRECT, `/graphiti forget confirm ${id}`);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal((await toolCalls('delete_entity_edge')).length, 1, 'a confirmation is used once');

  // The next turn's recall: the fact is gone; the summary that stays was said up front.
  const seen = model.log.length;
  await send(DIRECT, 'Where does Dana take the team for dinner?');
  const next = await eventually(() => model.log.slice(seen).find((r) => /take the team for dinner/.test(r.prompt)), 'the next turn');
  assert.doesNotMatch(next.prompt, /takes the Acme Robotics team to Saffron Lantern/, next.prompt);
  // The forget turn itself was not captured.
  const captured = (await standIn.sends()).filter((s) => s.group_id === 'demo');
  assert.ok(captured.every((s) => !/\[forget\]/.test(JSON.stringify(s.request))), JSON.stringify(captured));
});
