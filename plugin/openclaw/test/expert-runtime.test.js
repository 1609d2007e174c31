// The adapter's expert runtime with the real component (jco output from scripts/package-openclaw.sh)
// and a fake OpenClaw subagent runtime: a webhook and a channel message each run their process and
// deliver to the main session; a CONFIRM call pauses the run until approved; install, bind and
// remove change the experts directory through an instance of their own.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeToolCall, createRuntime, installSource, messageReceived } from '../src/index.js';
import { expertsCommand, outputText } from '../src/commands.js';
import { ExpertRunner } from '../src/expert-runner.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const componentDir = path.join(repo, 'dist/graphiti-openclaw/dist/component');
const fixture = path.join(repo, 'tests/fixtures/experts/ops-expert');
const TOKEN = 'unit-token';

function quietLogger() {
  const lines = [];
  const log = (level) => (message) => lines.push(`${level}: ${message}`);
  return { lines, info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
}

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

function temp(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `expert-runtime-${name}-`));
  made.push(dir);
  return dir;
}

/** A runtime on a copy of the ops-expert fixture, and a runner whose subagent calls `reply(run)`. */
function setup(reply) {
  const expertsDir = temp('experts');
  fs.cpSync(fixture, path.join(expertsDir, 'ops-expert'), { recursive: true });
  const logger = quietLogger();
  const api = {
    logger,
    config: { mcp: { servers: { 'tickets-mcp': { command: 'unused' } } } },
    pluginConfig: {
      configDir: path.join(repo, 'config'), stateDir: temp('state'), workspaceDir: temp('workspace'), expertsDir,
      recall: { enabled: false }, capture: { enabled: false },
      experts: { webhook_token: TOKEN, channels: { 'ops-expert/support_chat': ['telegram'] } },
    },
  };
  const rt = createRuntime(api, { componentDir });
  const runs = [];
  const subagent = {
    async run(params) {
      const run = { ...params, runId: params.idempotencyKey, canonical: `agent:main:${params.sessionKey}` };
      runs.push(run);
      run.result = params.sessionKey.startsWith('agent:main:main') ? { status: 'ok', terminalReply: { text: 'relayed' } } : await reply(run);
      return { runId: run.runId, sessionKey: run.canonical };
    },
    async waitForRun({ runId }) {
      return runs.find((r) => r.runId === runId).result;
    },
    async getSessionMessages() { return { messages: [] }; },
    async deleteSession() {},
  };
  const runner = new ExpertRunner({ component: rt.experts, subagent, logger, intervalMs: 200 });
  return { rt, runner, runs, expertsDir, logger };
}

const webhookBody = (event, ticket, summary) => JSON.stringify({ event_id: event, ticket: { id: ticket, summary } });

async function webhook(rt, body, token = TOKEN) {
  const answer = await rt.webhook({
    path: 'ops-expert/new_ticket',
    headers: [['content-type', 'application/json'], ['authorization', `Bearer ${token}`]],
    body: new TextEncoder().encode(body),
  });
  return { status: answer.status, body: JSON.parse(answer.body) };
}

async function until(check, what, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const mainTurns = (runs) => runs.filter((r) => r.sessionKey === 'agent:main:main');

test('a webhook and a channel message each run their process in an expert session and deliver to the main session', async () => {
  const { rt, runner, runs, logger } = setup(async () => ({ status: 'ok', terminalReply: { text: 'Triaged as high.\n```json\n{"priority": "high"}\n```' } }));
  await runner.start();
  runner.gatewayReady();
  try {
    assert.equal((await webhook(rt, webhookBody('e-1', 'T-1', 'Checkout down'), 'wrong')).status, 401, 'the component checks the token');
    const accepted = await webhook(rt, webhookBody('e-1', 'T-1', 'Checkout down'));
    assert.equal(accepted.status, 202);
    assert.equal(accepted.body.invocation, 'inv-1');
    runner.kick();
    await until(() => mainTurns(runs).length === 1, 'the result delivery');
    const expertRun = runs.find((r) => r.sessionKey === 'expert:ops-expert:inv-1');
    assert.equal(expertRun.idempotencyKey, 'inv-1:1');
    assert.equal(expertRun.deliver, false);
    assert.match(expertRun.message, /Run the process `triage`/);
    assert.match(mainTurns(runs)[0].message, /^ops-expert · triage \(inv-1, trigger new_ticket\) finished in .* \(attempt 1\)\.\n\nTriaged as high\./);

    await messageReceived(rt, { content: 'Where is my order?', senderId: 'u-7' }, { channelId: 'telegram', conversationId: 'chat-7', senderId: 'u-7' });
    await messageReceived(rt, { content: 'Not bound', senderId: 'u-8' }, { channelId: 'slack' });
    await until(() => mainTurns(runs).length === 2, 'the channel run\'s delivery');
    const channelRun = runs.find((r) => r.sessionKey === 'expert:ops-expert:inv-2');
    assert.match(channelRun.message, /"question": "Where is my order\?"/);
    assert.match(channelRun.message, /"customer": "u-7"/);
    assert.equal(runs.filter((r) => r.sessionKey.startsWith('expert:')).length, 2, 'slack is not bound: nothing queued');
    assert.deepEqual(logger.lines.filter((l) => /could not be told|failed in the component/.test(l)), [], 'each delivery reported posted to the component');
    assert.equal(mainTurns(runs).length, 2, 'each delivery posted once');
  } finally {
    runner.stop();
    await runner.idle();
  }
});

test('a command and a message in an expert\'s own session queue no run; the same message in the user\'s chat does', async () => {
  const { rt } = setup(async () => ({ status: 'ok', terminalReply: { text: 'Answered.' } }));
  const queue = async () => outputText(await rt.command(expertsCommand('queue')));
  await messageReceived(rt, { content: '/experts list', senderId: 'u-7' }, { channelId: 'telegram', conversationId: 'chat-7', sessionKey: 'agent:main:telegram:direct:u-7' });
  await messageReceived(rt, { content: 'Any update?', senderId: 'u-7' }, { channelId: 'telegram', sessionKey: 'agent:main:expert:ops-expert:inv-1' });
  assert.match(await queue(), /no expert runs/);
  await messageReceived(rt, { content: 'Any update?', senderId: 'u-7' }, { channelId: 'telegram', sessionKey: 'agent:main:telegram:direct:u-7' });
  assert.match(await queue(), /^inv-1 queued · ops-expert · /m);
});

test('a CONFIRM call pauses the run; /experts approve queues it again and the next attempt may make the call once', async () => {
  const verdicts = [];
  let rt;
  const { rt: runtime, runner, runs } = setup(async (run) => {
    const ctx = { sessionKey: run.canonical, sessionId: `s-${run.runId}`, agentId: 'main', trigger: 'user', runId: run.runId };
    const verdict = await beforeToolCall(rt, { toolName: 'update_ticket', params: { id: 'T-9', priority: 'high' } }, { ...ctx, toolName: 'update_ticket' });
    verdicts.push(verdict?.block ? 'blocked' : 'allowed');
    return { status: 'ok', terminalReply: { text: verdict?.block ? 'Proposed raising T-9 to high.' : 'Raised T-9 to high.' } };
  });
  rt = runtime;
  await runner.start();
  runner.gatewayReady();
  try {
    assert.equal((await webhook(rt, webhookBody('e-9', 'T-9', 'Outage'))).status, 202);
    runner.kick();
    const ask = await until(() => mainTurns(runs).find((r) => /experts approve /.test(r.message)), 'the approval request in the main session');
    assert.match(ask.message, /tickets\.update_ticket/);
    assert.deepEqual(verdicts, ['blocked']);
    assert.match(outputText(await rt.command(expertsCommand('queue'))), /inv-1 waiting-approval/);
    const id = /experts approve ([0-9a-f]+)/.exec(ask.message)[1];
    const approved = await rt.command(expertsCommand('approve', id));
    assert.match(approved.stdout, /inv-1 resumes/);
    runner.kick();
    await until(() => mainTurns(runs).some((r) => /Raised T-9 to high/.test(r.message)), 'the result after the approval');
    assert.deepEqual(verdicts, ['blocked', 'allowed'], 'the approved call ran in the second attempt');
    assert.deepEqual(runs.filter((r) => r.sessionKey.startsWith('expert:')).map((r) => r.idempotencyKey), ['inv-1:1', 'inv-1:2']);
  } finally {
    runner.stop();
    await runner.idle();
  }
});

test('install, bind and remove write the experts directory through an instance of their own', async () => {
  const { rt, expertsDir } = setup(async () => ({ status: 'ok' }));
  fs.rmSync(path.join(expertsDir, 'ops-expert'), { recursive: true });
  const source = temp('source');
  fs.cpSync(fixture, path.join(source, 'ops-expert'), { recursive: true });
  fs.rmSync(path.join(source, 'ops-expert', 'bindings.yaml'));
  const install = installSource(path.join(source, 'ops-expert'));
  const installed = await rt.command(install.command, { installDir: install.installDir });
  assert.equal(installed.exitCode, 0, outputText(installed));
  assert.ok(fs.existsSync(path.join(expertsDir, 'ops-expert', 'expert.yaml')), 'copied in');
  const bound = await rt.command(expertsCommand('bind', { expert: 'ops-expert', tool: 'tickets', server: 'tickets-mcp' }));
  assert.equal(bound.exitCode, 0, outputText(bound));
  assert.match(fs.readFileSync(path.join(expertsDir, 'ops-expert', 'bindings.yaml'), 'utf8'), /tickets-mcp/);
  const listed = await rt.command(expertsCommand('list'));
  assert.match(listed.stdout, /ops-expert/);
  const removed = await rt.command(expertsCommand('remove', 'ops-expert'));
  assert.equal(removed.exitCode, 0, outputText(removed));
  assert.ok(!fs.existsSync(path.join(expertsDir, 'ops-expert')), 'removed');
});

test('the run outcomes reach the component as its variant: timed-out and failed are failed attempts, retried', async () => {
  const { rt } = setup(async () => ({ status: 'ok' }));
  for (const [n, outcome] of [[1, { tag: 'timed-out' }], [2, { tag: 'failed', val: 'model unreachable' }]]) {
    assert.equal((await webhook(rt, webhookBody(`e-t${n}`, `T-T${n}`, 'x'))).status, 202);
  }
  const work = await rt.experts.tick(BigInt(Date.now()));
  assert.deepEqual(work.start.map((s) => [s.invocation, s.attempt, s.timeoutMs]), [['inv-1', 1, 600_000n], ['inv-2', 1, 600_000n]]);
  for (const [n, outcome] of [[1, { tag: 'timed-out' }], [2, { tag: 'failed', val: 'model unreachable' }]]) {
    await rt.experts.runEnded({ invocation: `inv-${n}`, attempt: 1, outcome }, BigInt(Date.now()));
  }
  const queue = await rt.experts.queue();
  assert.match(queue, /inv-1 retry-wait .*attempt 1 failed: timed out after 10m/);
  assert.match(queue, /inv-2 retry-wait .*attempt 1 failed: model unreachable/);
});
