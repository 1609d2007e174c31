// Whose memory, in real OpenClaw 2026.9.6: a Gateway on loopback (throwaway HOME) with the packaged
// plugin, the Graphiti stand-in as Graphiti and a scripted stub model that calls the plugin's tools.
// In two Telegram group sessions, the turn's capture, `graphiti_ingest`, `graphiti_search` and
// `/recall` each use their own group's Graphiti group, never one shared by every group. In a direct
// chat, the model's `graphiti_forget` only proposes; the user's `/graphiti forget confirm` deletes.
// A slash command does not steer the next turn's recall, and a forget of "what my assistant said
// about X" lists only items about X. A prompt's secrets reach neither Graphiti nor the state directory. The Control UI on the same Gateway, in headless Chromium: off
// until the Custom plugin UI lab is on; then the Memory page (the chats seen, search, entities,
// forget after a dialog with a box per item), the session panel of a real turn in the browser's
// time zone, and what a read-only operator may not do.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PLUGIN_ID, REPO, eventually, openclaw, startStandIn, throwawayHome } from './openclaw.js';
import { gatewayCall, gatewayWithPlugin, scopedClient } from './gateway.js';
import { buttonLabels, clickButton, frameText, launchBrowser, openSessionPanel, pageUrl, screenshot, searchMemories, secretsWatch, texts, waitForText } from './control-ui.js';
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

const call = (method, params) => gatewayCall({ port, token: GATEWAY_TOKEN }, method, params);
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

/** A fact whose text is markup: the Control UI must show it as text. */
const HOSTILE_FACT = 'The Orbit badge reads <script>window.__graphitiXss=1</script><img src=x onerror="window.__graphitiXss=2">';

/** A memory only a search for Vera Lima or a therapist finds. */
const THERAPIST = { uuid: '7f3c1a52-0d4e-4b8a-9c61-2e5f8a9b0c99', name: 'Vera Lima', labels: ['Entity', 'Person'], summary: 'Vera Lima is the user\'s therapist since 2024', created_at: '2025-01-10T09:00:00+00:00', attributes: {} };

/** The demo seed with the hostile fact and the therapist added. */
function seedWithHostileFact() {
  const seed = JSON.parse(fs.readFileSync(path.join(REPO, 'tests/graphiti-standin/seed/demo.json'), 'utf8'));
  seed.facts.push({ ...seed.facts[2], uuid: 'e1d2c3b4-a596-4877-8899-aabbccdd0666', name: 'READS', fact: HOSTILE_FACT });
  seed.nodes.push(THERAPIST);
  seed.facts.push({ ...seed.facts[2], uuid: 'e1d2c3b4-a596-4877-8899-aabbccdd0777', name: 'SEES', fact: 'The user sees therapist Vera Lima every Tuesday', target_node_uuid: THERAPIST.uuid });
  const file = path.join(home, 'seed.json');
  fs.writeFileSync(file, JSON.stringify(seed));
  return file;
}

before(async () => {
  // memory-core's memory in the agent's workspace, for the Memory page's import.
  fs.mkdirSync(path.join(home, '.openclaw/workspace'), { recursive: true });
  fs.writeFileSync(path.join(home, '.openclaw/workspace/MEMORY.md'), '# Office\n- The office plant is watered on Mondays\n');
  standIn = await startStandIn({ args: ['--seed', seedWithHostileFact()] });
  model = await startScriptedModel(script, { persona: 'no expert runs here' });
  ({ gateway, port } = await gatewayWithPlugin(env, {
    token: GATEWAY_TOKEN,
    // A direct chat's memories are the stand-in's seeded group "demo".
    pluginConfig: { graphiti: { url: `${standIn.url}/mcp`, group_id: { direct: 'demo', group: '{agent}-group-{chat}' } }, recall: { min_relevance: 0 }, capture: { import_per_minute: 600 }, tickIntervalMs: 500 },
    modelUrl: model.baseUrl,
    // The model calls the plugin's tools by name, not through Tool Search's `tool_call`.
    more: [{ path: 'tools.toolSearch', value: false }],
  }));
});

let browser;

after(async () => {
  await browser?.close();
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

/** Every search query the stand-in was asked, in order. */
async function searchQueries() {
  const queries = [];
  for (const request of await standIn.requests()) {
    try {
      const params = JSON.parse(request.body)?.params;
      if (/^search/.test(params?.name ?? '')) queries.push(String(params.arguments?.query ?? ''));
    } catch { /* not JSON */ }
  }
  return queries;
}

test("a memory-control command does not steer the next, unrelated turn's recall", async () => {
  const SESSION = 'agent:main:telegram:direct:user-11';
  // Words no seeded memory has (the stand-in matches any word of three letters or more).
  await send(SESSION, 'I enjoy hiking in Alps on weekends');
  await eventually(() => model.log.some((r) => /hiking in Alps/.test(r.prompt)), 'the first turn');
  await send(SESSION, '/graphiti memories Vera Lima therapist');
  const history = async () => JSON.stringify((await call('chat.history', { sessionKey: SESSION })).messages ?? []);
  await eventually(async () => /\/graphiti memories Vera Lima therapist/.test(await history()), 'the command, as OpenClaw keeps it, in the transcript');
  const seen = model.log.length;
  const searched = (await searchQueries()).length;
  await send(SESSION, 'Book a quiet booth on Friday');
  const next = await eventually(() => model.log.slice(seen).find((r) => /quiet booth/.test(r.prompt)), 'the next turn');
  assert.doesNotMatch(next.prompt, /Vera Lima|therapist/, `the command steered recall: ${next.prompt}`);
  const queries = (await searchQueries()).slice(searched);
  assert.ok(queries.some((q) => /quiet booth/.test(q)), `the turn searched: ${queries}`);
  for (const query of queries) assert.doesNotMatch(query, /Vera|therapist|\/graphiti/, query);
});

test('a forget of what the assistant said about the weather lists only what is about the weather', async () => {
  const SESSION = 'agent:main:telegram:direct:user-12';
  await send(SESSION, 'Will it rain in Lisbon tomorrow? I need to know the weather');
  await eventually(async () => /rain in Lisbon/.test(JSON.stringify(await standIn.episodes('demo'))), 'the weather turn in Graphiti');
  forgetAnswer = '';
  await send(SESSION, '[forget] what my assistant said about the weather');
  await eventually(() => forgetAnswer, "graphiti_forget's answer");
  const items = forgetAnswer.split('\n').filter((line) => /^\s+\d+\s+(fact|episode|capture)\s/.test(line));
  assert.ok(items.some((line) => /rain in Lisbon/.test(line)), forgetAnswer);
  for (const line of items) assert.match(line, /weather/i, `only what is about the weather: ${forgetAnswer}`);
  assert.doesNotMatch(forgetAnswer, /Book dinner|Acme Robotics|hiking/, forgetAnswer);
});

/** Every file under `dir`, with its text. */
function filesUnder(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(file);
    return entry.isFile() ? [{ file, text: fs.readFileSync(file, 'latin1') }] : [];
  });
}

test("a prompt's key, card and password reach neither Graphiti nor the plugin's state directory", async () => {
  const SESSION = 'agent:main:telegram:direct:user-13';
  const KEY = 'sk-proj-Vq8Wn3Lx7Rt2Pz5Ky9Mb4Hc6Jd1Fs0GaE';
  const CARD = '4242 4242 4242 4242';
  const PASSWORD = 'Heron-58-Quill';
  const searched = (await searchQueries()).length;
  await send(SESSION, `Keep my key ${KEY}, my card ${CARD} and the wifi password: ${PASSWORD} for the trip`);
  await eventually(async () => /\[redacted API key\], my card \[redacted card number\]/.test(JSON.stringify(await standIn.episodes('demo'))), 'the turn in Graphiti, redacted');
  await send(SESSION, `[search] the trip key ${KEY}`);
  const queries = await eventually(async () => {
    const since = (await searchQueries()).slice(searched);
    return since.filter((q) => /redacted API key/.test(q)).length >= 2 && since;
  }, "the turn's recall query and the tool's search");
  assert.ok(queries.some((q) => /wifi password: \[redacted password\]/.test(q)), queries.join('\n'));
  const requests = JSON.stringify(await standIn.requests());
  const state = filesUnder(path.join(home, '.openclaw', PLUGIN_ID));
  assert.ok(state.some(({ file }) => file.includes('last-turns')), 'the turn records were written');
  for (const secret of [KEY, KEY.slice(8), CARD, CARD.replaceAll(' ', ''), PASSWORD]) {
    assert.ok(!requests.includes(secret), `${secret} reached Graphiti`);
    const kept = state.filter(({ text }) => text.includes(secret)).map(({ file }) => file);
    assert.deepEqual(kept, [], `${secret} is kept under the state directory`);
  }
});

const PANEL_SESSION = 'agent:main:telegram:direct:user-9';
const PANEL = 'Why this context';
const base = () => `http://127.0.0.1:${port}`;

test('with the Custom plugin UI lab off, the Memory page and the session panel do not load; the dashboard widget does', async () => {
  browser = await launchBrowser();
  const page = await browser.page();
  await page.goto(pageUrl(base(), 'memory', GATEWAY_TOKEN));
  await waitForText(page, /Custom plugin UI is off/);
  assert.equal(await page.$('>>> .graphiti-openclaw-page'), null);
  await send(PANEL_SESSION, 'Book dinner at a restaurant for the Acme Robotics team');
  await eventually(() => model.log.some((r) => /Book dinner at a restaurant/.test(r.prompt)), 'the turn the panel shows');
  assert.equal(await openSessionPanel(page, base(), GATEWAY_TOKEN, PANEL_SESSION, PANEL), false, 'the panel is not offered');

  // The dashboard widget is sandboxed: it works with the lab off.
  const { stdout } = await openclaw(env, ['graphiti', 'widget', '--session', PANEL_SESSION]);
  const pinned = await call('board.widget.put', JSON.parse(stdout.slice(stdout.indexOf('{'))));
  assert.deepEqual(pinned.widgets.map((w) => [w.name, w.grantState]), [['graphiti-overview', 'granted']]);
  await page.goto(`${base()}/chat/${PANEL_SESSION.split(':').slice(1).join('/')}?dashboard=expanded#token=${GATEWAY_TOKEN}`);
  const widget = await frameText(page, /Memories recalled per turn/);
  // Every row is shown: the widget's frame grows to what it holds (the board sizes it after it
  // renders), where a board's default size cut the last row off.
  const heights = async () => {
    for (const frame of page.frames()) {
      const text = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
      if (!/Memories recalled per turn/.test(text)) continue;
      const box = await (await frame.frameElement())?.boundingBox();
      return [box?.height ?? 0, await frame.evaluate(() => document.documentElement.scrollHeight)];
    }
    return [0, 1];
  };
  let last;
  await eventually(async () => {
    last = await heights();
    return last[0] + 1 >= last[1];
  }, 'the widget frame as tall as its rows', 15_000, 250).catch((error) => {
    throw new Error(`${error.message}: the frame is ${last[0]}px tall for ${last[1]}px of rows`);
  });
  assert.match(widget, /Turns routed\s+[1-9]/);
  assert.match(widget, /Memories recalled per turn\s+\d+\.\d/);
  assert.match(widget, /Spool: waiting · in doubt · set aside\s+\d+ · \d+ · 0/);
  assert.match(widget, /Pack dining_recs\s+\d+%/);
  await screenshot(page, 'control-ui-dashboard-widget', 'iframe');
  await page.close();
});

test('the session panel shows a real turn: what recall injected, the pack, the scores, the trace, the capture', async () => {
  await openclaw(env, ['config', 'set', 'gateway.controlUi.experimental.customPlugins', 'true']);
  const page = await browser.page();
  // Times are the browser's own: a zone 5 h 45 min from UTC tells them apart.
  await page.emulateTimezone('Asia/Kathmandu');
  await eventually(async () => openSessionPanel(page, base(), GATEWAY_TOKEN, PANEL_SESSION, PANEL, { untilReloaded: true }), 'the panel offered once the lab is on', 90_000, 1000);
  await waitForText(page, /Capture: delivered to Graphiti/, 60_000);
  const [turn] = await texts(page, '.graphiti-openclaw-turn');
  assert.match(turn, /Book dinner at a restaurant for the Acme Robotics team/);
  const [heading] = await texts(page, '.graphiti-openclaw-turn h4');
  const { stdout } = await openclaw(env, ['graphiti', 'export', '--sender', 'user-9', '--session', PANEL_SESSION]);
  const { at } = JSON.parse(stdout.slice(stdout.indexOf('{'))).recent_turns.items.at(-1);
  const [local, utc] = await page.evaluate((when) => [new Date(when).toLocaleString(), new Date(when).toLocaleString(undefined, { timeZone: 'UTC' })], at);
  assert.notEqual(local, utc);
  assert.ok(heading.startsWith(`${local}: `), `the turn at ${at} in the browser's zone (${local}): ${heading}`);
  assert.match(turn, /Recall: recalled \d+ facts, \d+ entities/);
  assert.match(turn, /Packs: dining_recs/);
  assert.match(turn, /dining: keywords \[dinner, restaurant\]/);
  assert.deepEqual(await texts(page, '.graphiti-openclaw-rule'), ['dining']);
  const injected = await page.$eval('>>> .graphiti-openclaw-injected pre', (node) => node.textContent);
  assert.match(injected, /<graphiti-context group="demo">/, 'the recall block as injected, shown as text');
  await screenshot(page, 'control-ui-session-panel', '.graphiti-openclaw-panel');
  await page.close();
});

test('the Memory page shows recalled text as text, and forgets a fact only after its dialog', async () => {
  const page = await browser.page();
  await eventually(async () => {
    await page.goto(pageUrl(base(), 'memory', GATEWAY_TOKEN));
    return page.waitForSelector('>>> .graphiti-openclaw-page', { timeout: 5000 }).then(() => true, () => false);
  }, 'the Memory page', 60_000, 500);
  const noSecrets = secretsWatch(page, [GATEWAY_TOKEN]);
  await searchMemories(page, 'user-9', 'badge');
  await waitForText(page, /Orbit badge/);
  const [hostile] = await texts(page, '.graphiti-openclaw-fact-text');
  assert.equal(hostile, HOSTILE_FACT, 'markup shown literally');
  assert.equal(await page.evaluate(() => window.__graphitiXss), undefined, 'no script of a fact ran');
  assert.deepEqual(await page.$$eval('>>> .graphiti-openclaw-page script, .graphiti-openclaw-page img', (nodes) => nodes.length), 0);
  await screenshot(page, 'control-ui-memory-page', '.graphiti-openclaw-page');

  // The chats the plugin has seen: picking one needs no sender id (through the Gateway it is the
  // client's), and shows its memories with that session's recent turns.
  const picker = await page.$('>>> .graphiti-openclaw-chats');
  const options = await picker.$$eval('option', (nodes) => nodes.map((node) => [node.value, node.textContent]));
  const panelChat = options.find(([, label]) => label.startsWith(`${PANEL_SESSION} · direct chat with `));
  assert.ok(panelChat, options.map(([, label]) => label).join('\n'));
  await picker.select(panelChat[0]);
  await waitForText(page, /Facts \(\d+\) of group demo/);
  const sender = await page.$eval('>>> .graphiti-openclaw-field[name=sender]', (node) => node.value);
  assert.ok(sender.length > 0, 'the picked chat filled its sender');

  const FOUNDED = 'e1d2c3b4-a596-4877-8899-aabbccdd0003';
  await searchMemories(page, 'user-9', 'Dana founded');
  await waitForText(page, /Dana Lee founded Acme Robotics in 2023/);
  assert.ok((await texts(page, '.graphiti-openclaw-entity-name')).includes('Dana Lee'), 'the entities a search returns are shown');
  await clickButton(page, 'Forget', '.graphiti-openclaw-fact');
  await waitForText(page, /Nothing is deleted yet \(forget id [0-9a-f]{16}\)/);
  await screenshot(page, 'control-ui-forget-dialog', '.graphiti-openclaw-dialog');
  const boxes = await page.$$eval('>>> .graphiti-openclaw-item-box', (nodes) => nodes.map((node) => [node.dataset.number, node.checked]));
  assert.deepEqual(boxes[0], ['1', true], 'the fact is proposed, its box checked');
  assert.ok(!(await toolCalls('delete_entity_edge')).some((c) => c.uuid === FOUNDED), 'the dialog alone deletes nothing');
  await clickButton(page, 'Forget the checked items');
  await waitForText(page, /deleted/i);
  const deleted = await eventually(async () => {
    const calls = (await toolCalls('delete_entity_edge')).filter((c) => c.uuid === FOUNDED);
    return calls.length > 0 && calls;
  }, 'the confirmed delete');
  assert.equal(deleted.length, 1);
  // memory-core's files: the import's dry run for the sender in the form, through the page.
  await clickButton(page, 'Preview the import', '.graphiti-openclaw-import');
  await waitForText(page, /1 item\(s\) for group demo; 0 imported before\./);
  const listed = await texts(page, '.graphiti-openclaw-import-plan li');
  assert.ok(listed.includes('1 from MEMORY.md entries (1 file(s))'), listed.join('\n'));
  assert.ok(listed.some((line) => /^USER\.md: .*not a dated directive/.test(line)), `the USER.md OpenClaw seeded is named, not imported: ${listed.join('\n')}`);
  assert.match((await texts(page, '.graphiti-openclaw-import-progress'))[0], /No import yet\./);
  assert.ok(await noSecrets() > 0, 'the page made requests, none with the Gateway token');
  await page.close();

  const seen = model.log.length;
  await send(PANEL_SESSION, 'Who founded Acme Robotics, and when?');
  const next = await eventually(() => model.log.slice(seen).find((r) => /Who founded Acme Robotics/.test(r.prompt)), 'the next turn');
  assert.doesNotMatch(next.prompt, /Dana Lee founded Acme Robotics in 2023/, 'gone from the next turn\'s recall');
});

test('a read-only operator gets a scope error from forget, approve and requeue, and the page offers no such buttons', async () => {
  const reader = await scopedClient(port, GATEWAY_TOKEN, ['operator.read']);
  try {
    assert.deepEqual(reader.scopes, ['operator.read']);
    for (const [actionId, payload] of [['forget', { query: 'badge', sender: 'user-9' }], ['confirm-forget', { id: '0123456789abcdef' }], ['approve', { id: 'abcdef12' }], ['reject', { id: 'abcdef12' }], ['requeue', {}], ['correct', { old: 'badge', nowTrue: 'no badge', sender: 'user-9' }], ['pause', { sender: 'user-9' }], ['import', { sender: 'user-9' }]]) {
      const answer = await reader.call('plugins.sessionAction', { pluginId: 'graphiti-openclaw', actionId, payload });
      assert.equal(answer.ok, false, actionId);
      assert.equal(answer.error?.details?.missingScope, 'operator.write', `${actionId}: ${JSON.stringify(answer.error)}`);
    }
    const read = await reader.call('plugins.sessionAction', { pluginId: 'graphiti-openclaw', actionId: 'overview', payload: {} });
    assert.equal(read.ok, true, JSON.stringify(read.error));
    assert.equal(typeof read.payload.result.document.turns, 'number');
  } finally {
    reader.close();
  }
  const page = await browser.page({ readOnly: true, gatewayUrl: `ws://127.0.0.1:${port}`, token: GATEWAY_TOKEN });
  await page.goto(pageUrl(base(), 'memory', GATEWAY_TOKEN));
  await waitForText(page, /Capture spool/);
  await searchMemories(page, 'user-9', 'badge');
  await waitForText(page, /Orbit badge/);
  assert.deepEqual(await buttonLabels(page, '.graphiti-openclaw-page'), ['Show', 'Preview the import'], 'a reader gets no Forget, Requeue, Approve, Reject or Import');
  await page.close();
});

test('openclaw graphiti import --transcripts: past turns once into their own chats\' groups, as the dry run said, with their times; no cron run, no tool output; the Control UI plans the same', async () => {
  await send('agent:main:cron:nightly', 'The nightly report lists every overdue invoice');
  await eventually(() => model.log.some((r) => /nightly report/.test(r.prompt)), "the cron session's turn");
  const args = ['graphiti', 'import', '--group-id', 'workspace-notes', '--transcripts'];
  const dry = await openclaw(env, [...args, '--dry-run', '--json']);
  const plan = JSON.parse(dry.stdout.slice(dry.stdout.indexOf('{')));
  const groups = Object.fromEntries(plan.groups.map((g) => [g.group_id, g]));
  assert.ok(groups['main-group-555']?.from.some((f) => f.what === 'past conversations'), dry.stdout);
  assert.ok(groups['workspace-notes']?.from.some((f) => f.what === 'MEMORY.md entries'), dry.stdout);
  assert.ok(plan.skipped.some((s) => /cron:nightly/.test(s.file) && /a cron run/.test(s.why)), dry.stdout);
  assert.ok(plan.notes.some((n) => /forgotten sessions/.test(n)), dry.stdout);
  // The Control UI's dry run, by a read-only operator, says the same.
  const reader = await scopedClient(port, GATEWAY_TOKEN, ['operator.read']);
  try {
    const viaGateway = await reader.call('plugins.sessionAction', { pluginId: PLUGIN_ID, actionId: 'import-plan', payload: { group: 'workspace-notes', transcripts: true } });
    assert.equal(viaGateway.ok, true, JSON.stringify(viaGateway.error));
    assert.deepEqual(viaGateway.payload.result.document.groups, plan.groups, 'the operation plans what the CLI plans');
  } finally {
    reader.close();
  }

  const before = (await standIn.sends()).length;
  const run = await openclaw(env, args, { timeoutMs: 240_000 });
  assert.match(run.stdout, /import finished: \d+ item\(s\) sent/, run.stdout);
  const sent = await eventually(async () => {
    const all = (await standIn.sends()).slice(before).filter((s) => /^openclaw-import-/.test(s.name ?? ''));
    return all.length >= plan.estimate.episodes && all;
  }, 'every planned item in Graphiti', 120_000);
  assert.equal(sent.length, plan.estimate.episodes, 'exactly what the dry run listed');
  const importedAt = Date.now();
  const episodes = [];
  for (const group of new Set(sent.map((s) => s.group_id))) {
    episodes.push(...(await standIn.episodes(group)).filter((e) => /^openclaw-import-/.test(e.name ?? '')));
  }
  const porto = episodes.filter((e) => e.content.includes('The offsite is in Porto in May'));
  assert.equal(porto.length, 1, `the group turn once: ${JSON.stringify(episodes.map((e) => e.content))}`);
  assert.equal(porto[0].group_id, 'main-group-555', "into its own chat's group");
  assert.ok(Date.parse(porto[0].valid_at) < importedAt - 1000, `with its own time: ${porto[0].valid_at}`);
  assert.ok(!episodes.some((e) => /nightly report/.test(e.content)), 'nothing of the cron run');
  assert.ok(!episodes.some((e) => forgetAnswer && e.content.includes(forgetAnswer.slice(0, 40))), 'no tool result');
});
