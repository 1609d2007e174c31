// The expert runner with a fake OpenClaw subagent runtime and a scripted component: runs started
// once, waited for, reported (ok, error, timeout, run() throwing), deliveries posted to the main
// session (or as a system event when that fails), interrupted sessions deleted before the first tick.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DELIVERY_PROMPT, ExpertRunner, isInvocationSession, lastAssistantText, unfinishedRuns } from '../src/expert-runner.js';

const logger = () => {
  const lines = [];
  const log = (level) => (m) => lines.push(`${level}: ${m}`);
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
};

const start = (invocation, attempt = 1, more = {}) => ({
  invocation, attempt, expert: 'ops-expert', sessionKey: `expert:ops-expert:${invocation}`, message: `Run ${invocation}`, timeoutMs: undefined, ...more,
});

const work = (more = {}) => ({ start: [], deliver: [], notes: [], tickInMs: undefined, ...more });

/**
 * A component whose ticks hand out `starts` once, and whose run-ended answers `ended(report)`.
 */
function fakeComponent({ starts = [], ended = () => work(), queue = 'no expert runs waiting or running\n' } = {}) {
  const calls = { ticks: 0, reports: [], delivered: [] };
  let pending = [...starts];
  return {
    calls,
    async tick() {
      calls.ticks += 1;
      const now = pending;
      pending = [];
      return work({ start: now });
    },
    async runEnded(report) {
      calls.reports.push(report);
      return ended(report);
    },
    async delivered(runIds) {
      calls.delivered.push(...runIds);
    },
    async queue() {
      return queue;
    },
  };
}

/** OpenClaw's subagent runtime: `behaviour(sessionKey)` says how a run goes. */
function fakeSubagent(behaviour = () => ({ status: 'ok', terminalReply: { text: 'Done.' } })) {
  const calls = { runs: [], waits: [], deleted: [] };
  return {
    calls,
    async run(params) {
      calls.runs.push(params);
      const how = behaviour(params.sessionKey, params);
      if (how.throws) throw new Error(how.throws);
      return { runId: params.idempotencyKey, sessionKey: `agent:main:${params.sessionKey}` };
    },
    async waitForRun({ runId, timeoutMs }) {
      calls.waits.push({ runId, timeoutMs });
      const run = calls.runs.find((r) => r.idempotencyKey === runId);
      const how = behaviour(run.sessionKey, run);
      if (how.status === 'timeout') {
        await new Promise((resolve) => setTimeout(resolve, Math.min(timeoutMs, 20)));
        return { status: 'timeout' };
      }
      return how;
    },
    async getSessionMessages() {
      return { messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: [{ type: 'text', text: 'From the transcript.' }] }] };
    },
    async deleteSession(params) {
      calls.deleted.push(params);
    },
  };
}

function runner(component, subagent, more = {}) {
  const log = logger();
  const r = new ExpertRunner({ component, subagent, system: more.system, logger: log, intervalMs: more.intervalMs ?? 1000, readyFallbackMs: 60_000 });
  return { r, log };
}

async function started(r) {
  await r.start();
  r.gatewayReady();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await r.idle();
}

test('a run is started in its session, waited for and reported completed with its terminal reply', async () => {
  const component = fakeComponent({ starts: [start('inv-1')] });
  const subagent = fakeSubagent();
  const { r } = runner(component, subagent);
  await started(r);
  r.stop();
  assert.deepEqual(subagent.calls.runs.map((p) => [p.sessionKey, p.deliver, p.idempotencyKey]), [['expert:ops-expert:inv-1', false, 'inv-1:1']]);
  assert.deepEqual(component.calls.reports, [{ invocation: 'inv-1', attempt: 1, outcome: { tag: 'completed', val: 'Done.' } }]);
});

test('without a terminal reply the session\'s last assistant message is the result', async () => {
  const component = fakeComponent({ starts: [start('inv-2')] });
  const { r } = runner(component, fakeSubagent(() => ({ status: 'ok' })));
  await started(r);
  r.stop();
  assert.equal(component.calls.reports[0].outcome.val, 'From the transcript.');
});

test('an error ends the attempt as failed with OpenClaw\'s error', async () => {
  const component = fakeComponent({ starts: [start('inv-3')] });
  const { r } = runner(component, fakeSubagent(() => ({ status: 'error', error: 'LLM request failed: provider rejected the request' })));
  await started(r);
  r.stop();
  assert.deepEqual(component.calls.reports[0].outcome, { tag: 'failed', val: 'LLM request failed: provider rejected the request' });
});

test('a run still going at its timeout-ms is reported timed out (waitForRun only bounds each wait)', async () => {
  const component = fakeComponent({ starts: [start('inv-4', 2, { timeoutMs: 80n })] });
  const subagent = fakeSubagent(() => ({ status: 'timeout' }));
  const { r } = runner(component, subagent);
  const t0 = Date.now();
  await started(r);
  r.stop();
  assert.deepEqual(component.calls.reports, [{ invocation: 'inv-4', attempt: 2, outcome: { tag: 'timed-out' } }]);
  assert.ok(Date.now() - t0 >= 80, 'not before the deadline');
  assert.ok(subagent.calls.waits.length >= 2, 'waited in slices');
  assert.ok(subagent.calls.waits.every((w) => w.timeoutMs <= 80), 'no wait past the deadline');
  assert.deepEqual(subagent.calls.deleted, [{ sessionKey: 'agent:main:expert:ops-expert:inv-4', deleteTranscript: false }], 'the turn is stopped: its session deleted');
});

test('a timed-out run in the main session (session: main) is never stopped by deleting that session', async () => {
  const component = fakeComponent({ starts: [start('inv-10', 1, { timeoutMs: 30n, sessionKey: 'agent:main:main' })] });
  const subagent = fakeSubagent(() => ({ status: 'timeout' }));
  const { r } = runner(component, subagent);
  await started(r);
  r.stop();
  assert.equal(component.calls.reports[0].outcome.tag, 'timed-out');
  assert.deepEqual(subagent.calls.deleted, []);
  assert.ok(isInvocationSession('expert:ops-expert:inv-3') && isInvocationSession('agent:main:expert:ops-expert:inv-3'));
  assert.ok(!isInvocationSession('agent:main:main') && !isInvocationSession('agent:main:expert:ops-expert'));
});

test('run() throwing (e.g. the Gateway not ready yet) is a failed attempt with its error', async () => {
  const component = fakeComponent({ starts: [start('inv-5')] });
  const { r } = runner(component, fakeSubagent(() => ({ throws: 'UNAVAILABLE: agent unavailable during gateway startup' })));
  await started(r);
  r.stop();
  assert.equal(component.calls.reports[0].outcome.tag, 'failed');
  assert.match(component.calls.reports[0].outcome.val, /could not be started: UNAVAILABLE/);
});

test('the same attempt is started once even when offered twice', async () => {
  const component = fakeComponent();
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const subagent = fakeSubagent(() => ({ status: 'ok', terminalReply: { text: 'x' } }));
  const wait = subagent.waitForRun;
  subagent.waitForRun = async (params) => { await gate; return wait(params); };
  const { r } = runner(component, subagent);
  await r.start();
  r.gatewayReady();
  r.handle(work({ start: [start('inv-6')] }));
  r.handle(work({ start: [start('inv-6')] }));
  release();
  await r.idle();
  r.stop();
  assert.equal(subagent.calls.runs.length, 1);
  assert.equal(component.calls.reports.length, 1);
});

test('deliveries become a main-session turn that relays them; the next run in the lane starts from run-ended', async () => {
  const delivery = { expert: 'ops-expert', invocation: 'inv-7', kind: 'result', sessionKey: 'agent:main:main', text: 'ops-expert · triage (inv-7) finished.', runId: 'graphiti-openclaw:deliver:inv-7:result:0123456789abcdef' };
  const component = fakeComponent({
    starts: [start('inv-7')],
    ended: (report) => work(report.invocation === 'inv-7' ? { deliver: [delivery], start: [start('inv-8')], notes: ['experts: inv-7 done'] } : {}),
  });
  const subagent = fakeSubagent();
  const { r, log } = runner(component, subagent);
  await started(r);
  r.stop();
  const main = subagent.calls.runs.find((p) => p.sessionKey === 'agent:main:main');
  assert.equal(main.message, delivery.text, 'the component\'s text as it is');
  assert.equal(main.deliver, true, 'relayed to the user\'s last channel');
  assert.equal(main.extraSystemPrompt, DELIVERY_PROMPT);
  assert.equal(main.idempotencyKey, delivery.runId, 'the component\'s run id: it knows the turn as its delivery');
  assert.deepEqual(component.calls.delivered, [delivery.runId], 'reported posted once the turn is in the session');
  assert.deepEqual(component.calls.reports.map((x) => x.invocation), ['inv-7', 'inv-8'], 'inv-8 ran after inv-7 ended');
  assert.ok(!log.lines.some((l) => l.includes('inv-7 done')), 'notes are the component\'s to log (host.log)');
});

test('a delivery whose main-session turn fails or cannot start is posted as a system event instead', async () => {
  for (const failure of [{ throws: 'FORBIDDEN' }, { status: 'error', error: 'model down' }]) {
    const events = [];
    const system = { enqueueSystemEvent: (text, opts) => events.push({ text, ...opts }) && true };
    const subagent = fakeSubagent(() => failure);
    const component = fakeComponent();
    const { r, log } = runner(component, subagent, { system });
    const how = await r.deliver({ expert: 'ops-expert', invocation: 'inv-9', kind: 'escalation', sessionKey: 'agent:main:main', text: 'inv-9 failed after 3 attempts', runId: 'run-9' });
    assert.equal(how, 'system-event');
    assert.deepEqual(component.calls.delivered, ['run-9'], 'in the session either way: it leaves the record');
    assert.deepEqual(events, [{ text: 'inv-9 failed after 3 attempts', sessionKey: 'agent:main:main', agentId: 'main', contextKey: 'graphiti-openclaw:inv-9:escalation' }]);
    assert.ok(log.lines.some((l) => l.startsWith('warn:') && l.includes('posted as a system event')), log.lines.join('\n'));
  }
  const component = fakeComponent();
  const { r, log } = runner(component, fakeSubagent(() => ({ throws: 'down' })), { system: { enqueueSystemEvent: () => false } });
  assert.equal(await r.deliver({ expert: 'e', kind: 'notice', sessionKey: 'agent:main:main', text: 'lost text', runId: 'run-x' }), 'lost');
  assert.ok(log.lines.some((l) => l.startsWith('error:') && l.includes('NOT delivered') && l.includes('lost text')), 'said, with the text');
  assert.deepEqual(component.calls.delivered, [], 'not posted: it stays in the record, to be handed out again');
});

test('at start the sessions of runs left running (or asking for an approval) are deleted, before any tick', async () => {
  const queue = [
    'inv-3 running · ops-expert · triage · attempt 1 · accepted 2026-11-23T05:00:00Z · webhook · serial_per_key T-1',
    'inv-4 queued · ops-expert · triage · attempt 0 · accepted 2026-11-23T05:00:01Z · webhook · serial_per_key T-1',
    'inv-5 waiting-approval · ops-expert · triage · attempt 1 · accepted 2026-11-23T05:00:02Z · webhook · serial_per_key T-2 · waits for tickets.update_ticket (ab12)',
    'inv-6 retry-wait · ops-expert · triage · attempt 1 · accepted 2026-11-23T05:00:03Z · webhook · parallel',
  ].join('\n');
  assert.deepEqual(unfinishedRuns(queue).map((r) => r.sessionKey), ['expert:ops-expert:inv-3', 'expert:ops-expert:inv-5']);
  const component = fakeComponent({ queue });
  const subagent = fakeSubagent();
  const { r } = runner(component, subagent);
  await r.start();
  assert.deepEqual(subagent.calls.deleted, [
    { sessionKey: 'expert:ops-expert:inv-3', deleteTranscript: false },
    { sessionKey: 'expert:ops-expert:inv-5', deleteTranscript: false },
  ]);
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(component.calls.ticks, 0, 'no tick before the Gateway is ready');
  r.gatewayReady();
  await new Promise((resolve) => setTimeout(resolve, 30));
  r.stop();
  assert.equal(component.calls.ticks, 1);
});

test('ticks follow tick-in-ms, never further apart than the interval; a kick ticks at once', async () => {
  const times = [];
  const component = {
    async tick() {
      times.push(Date.now());
      return work({ tickInMs: 10_000_000n });
    },
    async runEnded() { return work(); },
    async queue() { return ''; },
  };
  const { r } = runner(component, fakeSubagent(), { intervalMs: 60 });
  await r.start();
  r.gatewayReady();
  await new Promise((resolve) => setTimeout(resolve, 250));
  const before = times.length;
  r.kick();
  await new Promise((resolve) => setTimeout(resolve, 10));
  r.stop();
  assert.ok(before >= 3 && before <= 6, `every ~60 ms, not 10^7: ${before} ticks in 250 ms`);
  assert.equal(times.length, before + 1, 'the kick ticked at once');
});

test('lastAssistantText reads string and block contents', () => {
  assert.equal(lastAssistantText([{ role: 'assistant', content: 'a' }, { role: 'assistant', content: [{ type: 'text', text: 'b' }] }, { role: 'user', content: 'c' }]), 'b');
  assert.equal(lastAssistantText([{ role: 'user', content: 'c' }]), undefined);
});

test('an isolated function runs in the child session the component named and returns its reply, or throws', async () => {
  const subagent = fakeSubagent((sessionKey) => (sessionKey.endsWith('fn-bad')
    ? { status: 'error', error: 'model refused' }
    : { status: 'ok', terminalReply: { text: '```json\n{"priority": "high"}\n```' } }));
  const { r } = runner(fakeComponent(), subagent);
  const reply = await r.runFunction({ session_key: 'expert:ops-expert:fn-1', message: 'Run classify' });
  assert.equal(reply, '```json\n{"priority": "high"}\n```');
  assert.deepEqual(subagent.calls.runs.map((p) => [p.sessionKey, p.message, p.deliver]), [['expert:ops-expert:fn-1', 'Run classify', false]]);
  await assert.rejects(r.runFunction({ session_key: 'expert:ops-expert:fn-bad', message: 'x' }), /the function's run failed: model refused/);
  const slow = runner(fakeComponent(), fakeSubagent(() => ({ status: 'timeout' }))).r;
  await assert.rejects(slow.runFunction({ session_key: 'expert:ops-expert:fn-2', message: 'x' }, 30), /did not end within 30 ms/);
});

test('the sessions of finished invocations are deleted (transcripts kept), never the main session', async () => {
  const subagent = fakeSubagent();
  const { r } = runner(fakeComponent(), subagent);
  r.handle(work({ endSessions: ['expert:ops-expert:inv-3', 'agent:main:main', 'agent:main:expert:ops-expert:inv-4'] }));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(subagent.calls.deleted, [
    { sessionKey: 'expert:ops-expert:inv-3', deleteTranscript: false },
    { sessionKey: 'agent:main:expert:ops-expert:inv-4', deleteTranscript: false },
  ]);
});
