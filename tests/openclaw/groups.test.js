// Whose memory, in real OpenClaw 2026.9.6: a Gateway on loopback (throwaway HOME) with the packaged
// plugin, the Graphiti stand-in as Graphiti and a scripted stub model that calls the plugin's tools.
// In two Telegram group sessions, the turn's capture, `graphiti_ingest`, `graphiti_search` and
// `/recall` each use their own group's Graphiti group, never one shared by every group.

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

/** The model calls the tool a prompt names (`[ingest] …`, `[search] …`) once, then answers. */
function script(info) {
  if (info.toolResults.length > 0) return 'Done.';
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
    pluginConfig: { graphiti: { url: `${standIn.url}/mcp` }, recall: { min_relevance: 0 }, tickIntervalMs: 500 },
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
