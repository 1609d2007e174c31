// Expert runs in real OpenClaw 2026.9.6: a Gateway on loopback (throwaway HOME) with the packaged
// plugin, a copy of the ops-expert fixture as the experts directory, a fake MCP server behind its
// `tickets` tool and a scripted stub model. Proves, with figures printed: a webhook, a channel
// message and a cron slot each run a process as the expert and deliver to the main session; one key
// runs one after the other while two keys overlap; a failing run is retried and then escalated; a
// CONFIRM call waits for `/experts approve` (or Approve on the Control UI's Memory page, which a
// read-only operator cannot press) and then runs once; `/experts run … --dry-run` executes only
// the AUTO read and reports the CONFIRM call it did not make; and a Gateway killed with SIGKILL
// while runs are in flight and queued resumes after restart with every invocation delivered exactly
// once and every attempt run once (OpenClaw's own resumption of the interrupted sessions stopped).

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, eventually, executedCalls, openclaw, throwawayHome } from './openclaw.js';
import { gatewayCall, gatewayWithPlugin, scopedClient, startGateway } from './gateway.js';
import { deliveries as deliveriesIn, startScriptedModel } from './scripted-model.js';
import { clickButton, launchBrowser, pageUrl, screenshot, secretsWatch, waitForText } from './control-ui.js';

const GATEWAY_TOKEN = 'e2e-gateway-token';
const WEBHOOK_TOKEN = 'e2e-webhook-token';
const PERSONA = 'You are a careful support operator.';
const EXPERT = 'ops-expert';
/** The cron slot is set this far after the test starts: past the plugin's install and the
 * Gateway's start (together over 45 s on a loaded 2-core machine), and early enough to fire while
 * the tests before the cron test run (its lane is its own). */
const CRON_LEAD_MS = 90_000;

const { home, env } = throwawayHome();
const expertsDir = path.join(home, '.openclaw/experts');
const mcpCalls = path.join(home, 'mcp-calls.jsonl');
let model;
let gateway;
let port;
let cronSlot;
const figures = [];
/** Each Gateway's output, the killed one's included. */
const outputs = [];

function say(line) {
  figures.push(line);
  console.log(`# ${line}`);
}

// --- the scripted model -------------------------------------------------------------------------

/** While set, runs of `[hold]` tickets get no answer from the model (until the Gateway is killed). */
let holding = true;

const result = (info) => `Handled ${info.session} (attempt ${info.attempt}).\n\`\`\`json\n{"priority": "high"}\n\`\`\``;
const toolCall = (id, args) => ({ toolCall: { name: 'tool_call', arguments: { id, args } } });
const UPDATE = { id: 'T-C', priority: 'high' };
const DRY_UPDATE = { id: 'T-DRY', priority: 'low' };

/** A CONFIRM run: attempt 1 asks for update_ticket (held) and ends; attempt 2 makes the call. */
function confirmRun(info) {
  const done = info.toolResults.length;
  if (info.attempt === 1) {
    if (done === 0) return toolCall('tickets-mcp__update_ticket', UPDATE);
    return 'Proposed raising T-C to high; waiting for the user\'s approval.';
  }
  if (done === 0) return toolCall('tickets-mcp__update_ticket', UPDATE);
  return result(info);
}

/** What the model does, by session and by the ticket's summary (the webhook payload's directives). */
function script(info) {
  if (!info.expert) return 'Relayed to the user.';
  // The isolated function `classify`, in its own child session: unsure of its answer.
  if (info.prompt.includes('Run the function `classify`')) return 'Hard to tell.\n```json\n{"priority": "low", "confidence": "low"}\n```';
  const summary = info.summary ?? '';
  if (summary.includes('[fail]')) return { status: 400, message: 'stub: this ticket cannot be processed' };
  if (summary.includes('[hold]') && holding) return { hang: true };
  if (summary.includes('[slow]')) return { delayMs: 2_500, answer: result(info) };
  if (summary.includes('[confirm]')) return confirmRun(info);
  if (summary.includes('[dry]')) return dryRun(info);
  if (summary.includes('[unsure]')) return info.toolResults.length === 0
    ? toolCall('expert_function', { name: 'classify', inputs: { summary: 'Refund or outage?' } })
    : 'I recommend that a person triages T-LC.';
  return result(info);
}

/** A dry run: reads the ticket (AUTO), tries to update it (CONFIRM), then reports its plan. */
function dryRun(info) {
  const done = info.toolResults.length;
  if (done === 0) return toolCall('tickets-mcp__get_ticket', { id: 'T-DRY' });
  if (done === 1) return toolCall('tickets-mcp__update_ticket', DRY_UPDATE);
  return 'Planned: read T-DRY, then raise it to low priority (not executed).';
}

// --- reading the log --------------------------------------------------------------------------------

/** The main-session turns that delivered something of `invocation` (their message names it). */
const deliveries = (invocation, what) => deliveriesIn(model.log, invocation, what);
/** The update_ticket calls the fake MCP server executed. */
const updates = () => executedCalls(mcpCalls).filter((c) => c.tool === 'update_ticket');
/** Each attempt's runs of an invocation: how many turns began per attempt. */
function attempts(invocation) {
  const counts = {};
  for (const r of model.log) if (r.session === invocation && r.firstOfTurn) counts[r.attempt] = (counts[r.attempt] ?? 0) + 1;
  return counts;
}
/** From the first request of an invocation's session to the end of its last. */
function interval(invocation) {
  const requests = model.log.filter((r) => r.session === invocation);
  return { from: Math.min(...requests.map((r) => r.startMs)), to: Math.max(...requests.map((r) => r.endMs ?? Date.now())) };
}

async function webhook(trigger, payload, token = WEBHOOK_TOKEN) {
  const response = await fetch(`${gateway.url}/graphiti-openclaw/experts/${EXPERT}/${trigger}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(payload),
  });
  return { status: response.status, body: await response.json() };
}

async function ticket(event, id, summary) {
  const answer = await webhook('new_ticket', { event_id: event, ticket: { id, summary } });
  assert.equal(answer.status, 202, JSON.stringify(answer.body));
  return answer.body.invocation;
}

const call = (method, params) => gatewayCall({ port, token: GATEWAY_TOKEN }, method, params);
const cli = (...args) => openclaw(env, ['graphiti', 'experts', ...args]);

// --- setup ----------------------------------------------------------------------------------------

/** The copy's cron trigger fires once, at `slotMs`, in Europe/Berlin (6 fields, seconds first). */
function cronExpression(slotMs) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: 'numeric', minute: 'numeric', second: 'numeric', hourCycle: 'h23' })
    .formatToParts(new Date(slotMs)).map((p) => [p.type, Number(p.value)]));
  return `${parts.second} ${parts.minute} ${parts.hour} * * *`;
}

function installFixture() {
  const copy = path.join(expertsDir, EXPERT);
  fs.cpSync(path.join(REPO, 'tests/fixtures/experts', EXPERT), copy, { recursive: true });
  cronSlot = Math.ceil((Date.now() + CRON_LEAD_MS) / 1000) * 1000;
  const manifest = path.join(copy, 'expert.yaml');
  const text = fs.readFileSync(manifest, 'utf8')
    .replace('expr: "0 2 * * *"', `expr: "${cronExpression(cronSlot)}"`)
    // Retries after a second, not 30 s and more: the test waits for them.
    .replace(/retry:\n {4}max_attempts: 3\n {4}backoff: exponential\n {4}delay: 30s/, 'retry:\n    max_attempts: 3\n    backoff: fixed\n    delay: 1s');
  assert.match(text, /delay: 1s/);
  assert.ok(text.includes(`expr: "${cronExpression(cronSlot)}"`));
  fs.writeFileSync(manifest, text);
}

before(async () => {
  installFixture();
  model = await startScriptedModel(script, { persona: PERSONA });
  ({ gateway, port } = await gatewayWithPlugin(env, {
    token: GATEWAY_TOKEN,
    pluginConfig: {
      tickIntervalMs: 1000,
      recall: { enabled: false },
      capture: { enabled: false },
      experts: { webhook_token: WEBHOOK_TOKEN, channels: { [`${EXPERT}/support_chat`]: ['webchat'] } },
    },
    modelUrl: model.baseUrl,
    more: [{
      path: 'mcp.servers',
      value: { 'tickets-mcp': { command: process.execPath, args: [path.join(REPO, 'tests/openclaw/fake-mcp-server.js'), 'tickets-mcp', 'get_ticket', 'update_ticket', 'send_reply'], env: { FAKE_MCP_CALLS: mcpCalls } } },
    }],
  }));
  outputs.push(gateway.output);
  assert.ok(cronSlot - Date.now() > 5_000, `the Gateway took ${gateway.readyMs} ms to start, too close to the cron slot set ${CRON_LEAD_MS} ms after the test began`);
  say(`Gateway ready in ${gateway.readyMs} ms (HOME ${home}, port ${port}); cron slot at ${new Date(cronSlot).toISOString()} (${cronExpression(cronSlot)} Europe/Berlin)`);
});

let browser;

after(async () => {
  await browser?.close();
  await gateway?.kill();
  model?.stop();
  // For a failure's post-mortem: every Gateway's output and the model's log, in the throwaway HOME.
  const diagnostics = path.join(home, 'expert-runs-diagnostics.txt');
  fs.writeFileSync(diagnostics, [
    ...outputs.map((output, n) => `=== Gateway ${n + 1}\n${output()}`),
    `=== model log\n${(model?.log ?? []).map((r) => JSON.stringify({ ...r, prompt: r.prompt.slice(0, 160) })).join('\n')}`,
  ].join('\n'));
  if (figures.length) console.log(`\nexpert runs, figures:\n${figures.map((f) => `  ${f}`).join('\n')}\n(Gateway output and model log: ${diagnostics})`);
});

// --- the tests ------------------------------------------------------------------------------------

test('a webhook and a channel message each run their process as the expert and deliver to the main session', async () => {
  const refused = await webhook('new_ticket', { event_id: 'e-0', ticket: { id: 'T-0', summary: 'x' } }, 'wrong-token');
  assert.equal(refused.status, 401, 'the component checks the bearer token');
  const get = await fetch(`${gateway.url}/graphiti-openclaw/experts/${EXPERT}/new_ticket`);
  assert.equal(get.status, 405);

  const id = await ticket('e-basic', 'T-1', 'Checkout is down');
  const duplicate = await webhook('new_ticket', { event_id: 'e-basic', ticket: { id: 'T-1', summary: 'Checkout is down' } });
  assert.equal(duplicate.status, 200, 'the same event again is a duplicate');
  await call('chat.send', { sessionKey: 'agent:main:main', message: 'Where is my order?', idempotencyKey: 'e2e-channel-1' });

  const delivered = await eventually(() => deliveries(id, /finished/).length && deliveries(id, /finished/), `the result of ${id} in the main session`);
  const expertTurn = model.log.find((r) => r.session === id);
  assert.ok(expertTurn.expert, 'the run\'s session got the expert\'s system prompt');
  assert.match(expertTurn.prompt, /Run the process `triage`/);
  assert.match(delivered[0].prompt, new RegExp(`${EXPERT} · triage \\(${id}, trigger new_ticket\\) finished in`));
  say(`webhook: ${id} ran in its expert session (${model.log.filter((r) => r.session === id).length} model request(s), persona in the system prompt) and was delivered to agent:main:main in ${delivered.length} turn`);

  const channel = await eventually(() => model.log.find((r) => r.expert && /answer-question/.test(r.prompt) && r.prompt.includes('Where is my order?')), 'the channel trigger\'s run');
  await eventually(() => deliveries(channel.session, /answer-question/).length, `the result of ${channel.session}`);
  say(`channel: the webchat message "Where is my order?" fired support_chat as ${channel.session} (answer-question), delivered to main`);
});

test('two events with the same key run one after the other; another key overlaps them', async () => {
  const a1 = await ticket('e-s1', 'T-A', 'Slow one [slow]');
  const a2 = await ticket('e-s2', 'T-A', 'Slow two [slow]');
  const b1 = await ticket('e-s3', 'T-B', 'Slow three [slow]');
  await eventually(() => [a1, a2, b1].every((id) => deliveries(id, /finished/).length), 'the three results', 90_000);
  const [ia1, ia2, ib1] = [a1, a2, b1].map(interval);
  const t0 = ia1.from;
  const show = (id, i) => `${id} ${((i.from - t0) / 1000).toFixed(1)}–${((i.to - t0) / 1000).toFixed(1)} s`;
  say(`lanes (serial_per_key on ticket.id): T-A ${show(a1, ia1)}, T-A ${show(a2, ia2)}, T-B ${show(b1, ib1)}`);
  assert.ok(ia2.from >= ia1.to, `same key: ${a2} starts after ${a1} ends`);
  assert.ok(ib1.from < ia1.to && ia1.from < ib1.to, `another key: ${b1} overlaps ${a1}`);
});

test('a failing run is retried and then escalated to the main session', async () => {
  const id = await ticket('e-f1', 'T-F', 'Broken ticket [fail]');
  const escalation = await eventually(() => deliveries(id, /escalated/)[0], `the escalation of ${id}`, 120_000);
  assert.match(escalation.prompt, new RegExp(`triage \\(${id}, trigger new_ticket\\) failed after 3 attempts and is escalated`));
  assert.match(escalation.prompt, /provider rejected|LLM request failed/);
  assert.deepEqual(attempts(id), { 1: 1, 2: 1, 3: 1 }, 'three attempts, each run once');
  assert.equal(deliveries(id, /finished/).length, 0, 'no result');
  const starts = model.log.filter((r) => r.session === id && r.firstOfTurn).map((r) => r.startMs);
  say(`failure: ${id} got HTTP 400 from the model in attempts 1, 2, 3 (started at +0, +${((starts[1] - starts[0]) / 1000).toFixed(1)}, +${((starts[2] - starts[0]) / 1000).toFixed(1)} s; retry delay 1 s), then one escalation in main: "${escalation.prompt.split('\n')[0].slice(0, 120)}"`);
});

test('a CONFIRM call waits for /experts approve, then runs exactly once', async () => {
  const id = await ticket('e-c1', 'T-C', 'Raise priority [confirm]');
  const ask = await eventually(() => deliveries(id, /experts approve /)[0], `the approval request of ${id}`, 90_000);
  const request = /experts approve ([0-9a-f]+)/.exec(ask.prompt)[1];
  assert.match(ask.prompt, /tickets\.update_ticket/);
  assert.equal(fs.existsSync(mcpCalls) ? fs.readFileSync(mcpCalls, 'utf8').includes('update_ticket') : false, false, 'held: not executed');
  const queue = await cli('queue');
  assert.match(queue.stdout, new RegExp(`${id} waiting-approval`));

  await call('chat.send', { sessionKey: 'agent:main:main', message: `/experts approve ${request}`, idempotencyKey: `e2e-approve-${request}` });
  await eventually(() => deliveries(id, /finished/).length, `the result of ${id} after the approval`, 90_000);
  const executed = updates();
  assert.deepEqual(executed.map((c) => c.arguments), [UPDATE], 'update_ticket ran exactly once, with the approved arguments');
  assert.deepEqual(attempts(id), { 1: 1, 2: 1 });
  const resumed = model.log.find((r) => r.session === id && r.attempt === 2 && r.firstOfTurn);
  assert.match(resumed.prompt, /approved: tickets\.update_ticket/);
  say(`confirm: ${id} paused on tickets.update_ticket (request ${request}), /experts approve in chat resumed it as attempt 2; the fake MCP server executed update_ticket ${executed.length} time`);
});


test('Approve on the Control UI\'s Memory page lets a held CONFIRM call run once; a read-only operator cannot approve', async () => {
  const id = await ticket('e-c2', 'T-U', 'Raise priority again [confirm]');
  const ask = await eventually(() => deliveries(id, /experts approve /)[0], `the approval request of ${id}`, 90_000);
  const request = /experts approve ([0-9a-f]+)/.exec(ask.prompt)[1];
  const before = updates().length;

  const reader = await scopedClient(port, GATEWAY_TOKEN, ['operator.read']);
  const refused = await reader.call('plugins.sessionAction', { pluginId: 'graphiti-openclaw', actionId: 'approve', payload: { id: request } });
  reader.close();
  assert.equal(refused.error?.details?.missingScope, 'operator.write', JSON.stringify(refused));
  assert.match((await cli('pending')).stdout, new RegExp(request), 'still waiting after the reader\'s attempt');

  await openclaw(env, ['config', 'set', 'gateway.controlUi.experimental.customPlugins', 'true']);
  browser = await launchBrowser();
  const page = await browser.page();
  const noSecrets = secretsWatch(page, [GATEWAY_TOKEN, WEBHOOK_TOKEN]);
  await eventually(async () => {
    await page.goto(pageUrl(gateway.url, 'memory', GATEWAY_TOKEN));
    return page.waitForSelector('>>> .graphiti-openclaw-approval', { timeout: 5000 }).then(() => true, () => false);
  }, 'the approval on the Memory page', 60_000, 500);
  await waitForText(page, new RegExp(`${request} ${EXPERT}: tickets\\.update_ticket`));
  await screenshot(page, 'control-ui-approvals', '.graphiti-openclaw-approvals');
  assert.equal(updates().length, before, 'held until approved');
  await clickButton(page, 'Approve', '.graphiti-openclaw-approval');
  await waitForText(page, new RegExp(`approved ${request}`));
  await eventually(() => deliveries(id, /finished/).length, `the result of ${id} after the approval`, 90_000);
  assert.equal(updates().length, before + 1, 'update_ticket ran exactly once more');
  assert.deepEqual(attempts(id), { 1: 1, 2: 1 });
  await noSecrets();
  await page.close();
  say(`Control UI: ${id} held on tickets.update_ticket (request ${request}); a read-only operator's approve was refused (missing operator.write); Approve on the Memory page resumed it and update_ticket ran once`);
});

test('/experts run --dry-run in chat: the AUTO read runs, the CONFIRM update is recorded, not executed, and reported', async () => {
  const inputs = JSON.stringify({ ticket_id: 'T-DRY', summary: 'Refund twice [dry]' });
  await call('chat.send', { sessionKey: 'agent:main:main', message: `/experts run ${EXPERT} --process triage --inputs ${inputs} --dry-run`, idempotencyKey: 'e2e-dry-run' });
  const first = await eventually(() => model.log.find((r) => r.expert && r.summary?.includes('[dry]')), 'the dry run\'s first model request', 90_000);
  const id = first.session;
  // A manual run's title has no trigger after its id: "triage, a dry run (inv-9) finished".
  const report = await eventually(() => model.log.find((r) => r.session === 'main' && r.firstOfTurn && r.prompt.includes(`a dry run (${id}) finished`)), `the report of ${id} in the main session`, 90_000);
  assert.match(report.prompt, new RegExp(`${EXPERT} · triage, a dry run \\(${id}\\) finished in .* Only AUTO operations were executed\\.`));
  assert.match(report.prompt, /Planned: read T-DRY, then raise it to low priority/);
  assert.match(report.prompt, /Calls not executed \(1\):\n1\. tickets\.update_ticket \(CONFIRM\) \{"id":"T-DRY","priority":"low"\}: a real run would ask the user's approval, then run it once/);
  const told = model.log.filter((r) => r.session === id).map((r) => r.prompt).join('\n');
  assert.match(told, /## Dry run/, 'the run was told it is a dry run');
  const executed = executedCalls(mcpCalls).filter((c) => JSON.stringify(c.arguments ?? {}).includes('T-DRY')).map((c) => c.tool);
  assert.deepEqual(executed, ['get_ticket'], 'only the AUTO read reached the MCP server');
  assert.doesNotMatch((await cli('pending')).stdout, /T-DRY/, 'nobody was asked to approve it');
  say(`dry run: ${id} (/experts run … --dry-run) executed get_ticket, recorded update_ticket (CONFIRM) without asking, and delivered its planned-execution report with 1 call not executed`);
});

test('an isolated function that judges its confidence low: the caller is told to stop and its run is escalated, not delivered', async () => {
  const id = await ticket('e-lc', 'T-LC', 'Unclear ticket [unsure]');
  const escalation = await eventually(() => deliveries(id, /needs you/)[0], `the escalation of ${id}`, 90_000);
  assert.match(escalation.prompt, new RegExp(`${EXPERT} · triage \\(${id}, trigger new_ticket\\) needs you: its function classify judged its confidence low`));
  assert.match(escalation.prompt, /Recommended action: I recommend that a person triages T-LC\./);
  const child = model.log.find((r) => r.expert && r.prompt.includes('Run the function `classify`'));
  assert.ok(child && child.session !== id, 'the function ran in a child session of its own');
  assert.equal(deliveries(id, /finished/).length, 0, 'no result');
  say(`low confidence: ${id} called the isolated function classify, which answered confidence low; the run was told to stop and escalated to main, with no result delivered`);
});

test('the CLI beside the Gateway: validate initializes the bound MCP server, due names the cron slot, fire is a dry run', async () => {
  const payload = path.join(home, 'event.json');
  fs.writeFileSync(payload, JSON.stringify({ event_id: 'e-dry', ticket: { id: 'T-D', summary: 'Dry run' } }));
  const [validate, due, fire] = await Promise.all([
    cli('validate', EXPERT),
    cli('due', '--at', new Date(cronSlot + 1000).toISOString()),
    cli('fire', EXPERT, 'new_ticket', '--payload', payload),
  ]);
  assert.match(validate.stdout, /✓ All required tools bound \(tickets → tickets-mcp\)/);
  assert.match(validate.stdout, /✓ MCP server tickets-mcp: tickets-mcp 1\.0\.0/);
  assert.match(due.stdout, new RegExp(`${EXPERT}/nightly_report \\(${cronExpression(cronSlot).replace(/\*/g, '\\*')} Europe/Berlin\\)`));
  assert.match(fire.stdout, /triage/);
  assert.ok(!model.log.some((r) => r.summary === 'Dry run'), 'fire ran nothing');
  say(`CLI: validate → "${validate.stdout.split('\n').find((l) => l.includes('MCP server tickets-mcp')).trim()}"; due → "${due.stdout.trim().split('\n')[0]}"`);
});

test('a cron slot runs its process as the expert and delivers to the main session', async () => {
  const run = await eventually(() => model.log.find((r) => r.expert && /nightly-report/.test(r.prompt)), 'the cron run', cronSlot - Date.now() + 60_000);
  await eventually(() => deliveries(run.session, /nightly-report/).length, `the result of ${run.session}`);
  assert.ok(run.startMs >= cronSlot, 'not before its slot');
  say(`cron: slot ${new Date(cronSlot).toISOString()} ran as ${run.session} ${((run.startMs - cronSlot) / 1000).toFixed(1)} s after it, delivered to main`);
});

test('the Gateway killed with SIGKILL while runs are in flight and queued: after a restart each invocation is delivered once, each attempt run once', async () => {
  // Nothing of the earlier tests may still be in a turn (OpenClaw would resume that too).
  await eventually(() => model.log.every((r) => r.endMs !== undefined), 'the earlier turns to end');
  const ids = [];
  ids.push(await ticket('e-k1', 'T-K1', 'Kill one [hold]'));
  ids.push(await ticket('e-k2', 'T-K1', 'Kill two [hold]'));
  ids.push(await ticket('e-k3', 'T-K2', 'Kill three [hold]'));
  ids.push(await ticket('e-k4', 'T-K3', 'Kill four [hold]'));
  const inFlight = [ids[0], ids[2], ids[3]];
  await eventually(() => inFlight.every((id) => model.log.some((r) => r.session === id && r.answer === 'hang')), 'three runs hanging in the model');
  const queueBefore = (await cli('queue')).stdout;
  assert.equal(queueBefore.match(/ running · /g)?.length, 3, queueBefore);
  assert.match(queueBefore, new RegExp(`${ids[1]} queued`));
  const killedAt = Date.now();
  await gateway.kill();
  holding = false;
  say(`kill: SIGKILL with ${inFlight.join(', ')} running and ${ids[1]} queued behind ${ids[0]}`);

  gateway = await startGateway(env, { port, token: GATEWAY_TOKEN });
  outputs.push(gateway.output);
  const recovery = gateway.output().split('\n').filter((l) => /startup-orphaned|restart recovery|interrupted .* deleted|session\(s\) of runs interrupted/.test(l));
  await eventually(() => ids.every((id) => deliveries(id, /finished/).length), 'every invocation delivered after the restart', 120_000);
  await new Promise((resolve) => setTimeout(resolve, 3_000)); // anything run twice would show by now

  for (const id of ids) assert.equal(deliveries(id, /finished/).length, 1, `${id} delivered once`);
  assert.deepEqual(attempts(ids[1]), { 1: 1 }, `${ids[1]} had not started: its first attempt ran after the restart`);
  for (const id of inFlight) assert.deepEqual(attempts(id), { 1: 1, 2: 1 }, `${id}: the interrupted attempt once, its retry once`);
  const resumedByOpenClaw = model.log.filter((r) => r.startMs > killedAt && /previous turn was interrupted by a gateway restart/i.test(r.prompt));
  assert.deepEqual(resumedByOpenClaw, [], 'OpenClaw resumed no interrupted session');
  const history = await call('chat.history', { sessionKey: 'agent:main:main', limit: 200 });
  const texts = history.messages.filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content));
  for (const id of ids) assert.equal(texts.filter((t) => t.includes(`(${id}, trigger new_ticket) finished`)).length, 1, `${id} once in the main transcript`);
  // Finished invocations leave OpenClaw's session list (their transcripts stay on disk).
  const left = async () => {
    const listed = await call('sessions.list', {});
    return (listed.sessions ?? []).map((row) => row.key ?? row.sessionKey).filter((key) => ids.some((id) => key?.endsWith(`:expert:${EXPERT}:${id}`)));
  };
  await eventually(async () => (await left()).length === 0, 'the finished invocations\' sessions deleted').catch(async (error) => {
    throw new Error(`${error.message}: still listed ${JSON.stringify(await left())}`);
  });
  say(`restart: ready in ${gateway.readyMs} ms; ${recovery.map((l) => l.replace(/^\S+ /, '').slice(0, 160)).join(' | ')}`);
  say(`restart: attempts per invocation ${ids.map((id) => `${id} ${JSON.stringify(attempts(id))}`).join(', ')}; results in the main transcript: ${ids.map((id) => texts.filter((t) => t.includes(`(${id}, trigger new_ticket) finished`)).length).join(', ')}; OpenClaw resumptions seen by the model: ${resumedByOpenClaw.length}`);
});
