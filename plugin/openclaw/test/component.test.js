// The adapter with the real component (jco output from scripts/package-openclaw.sh).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { agentEnd, beforePromptBuild, beforeToolCall, createRuntime } from '../src/index.js';
import { checkToolCommand, graphitiSlashCommand } from '../src/commands.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const componentDir = path.join(repo, 'dist/graphiti-openclaw/dist/component');
const configDir = path.join(repo, 'config');

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });
function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

function quietLogger() {
  const lines = [];
  const log = (level) => (message) => lines.push(`${level}: ${message}`);
  return { lines, info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
}

function runtime(pluginConfig) {
  const stateDir = tempDir('adapter-state-');
  const workspaceDir = tempDir('adapter-workspace-');
  const logger = quietLogger();
  const api = { logger, pluginConfig: { configDir, stateDir, workspaceDir, expertsDir: path.join(configDir, 'experts'), ...pluginConfig } };
  return { rt: createRuntime(api, { componentDir }), stateDir, workspaceDir, logger };
}

/** A Graphiti that answers every request with HTTP 500 after `delayMs`, counting requests in flight. */
async function slowGraphiti(delayMs) {
  const seen = { inFlight: 0, maxInFlight: 0 };
  const server = http.createServer((req, res) => {
    seen.inFlight += 1;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    req.resume();
    setTimeout(() => {
      seen.inFlight -= 1;
      res.writeHead(500);
      res.end('down');
    }, delayMs);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, seen, close: () => server.close() };
}

const ctx = (session) => ({ sessionKey: `agent:main:telegram:direct:${session}`, agentId: 'main', senderId: session, trigger: 'user' });
const turn = (prompt) => ({ prompt, messages: [] });

for (const instances of [1, 2]) {
  test(`${instances} instance(s): concurrent turns reach Graphiti ${instances === 1 ? 'one after the other' : 'at the same time'}`, async () => {
    const graphiti = await slowGraphiti(150);
    const { rt } = runtime({ instances, graphiti: { url: graphiti.url } });
    await (await rt.pool()).growing;
    const results = await Promise.all(['a', 'b'].map((s) => beforePromptBuild(rt, turn('I had dinner with the Series A founder'), ctx(s))));
    graphiti.close();
    for (const result of results) {
      assert.match(result.prependContext, /<graphiti-fallback>/, 'Graphiti failed: the fallback note');
      assert.match(result.prependContext, /<pack-context intent="vc_deal"/, 'routing still ran');
    }
    assert.equal(graphiti.seen.maxInFlight, instances);
  });
}

test('a captured turn is spooled in the state directory while Graphiti is down', async () => {
  const graphiti = await slowGraphiti(0);
  const { rt, stateDir } = runtime({ graphiti: { url: graphiti.url } });
  const outcome = await agentEnd(rt, {
    success: true,
    messages: [{ role: 'user', content: 'Remember that Dana leads the Series A' }, { role: 'assistant', content: 'Noted.' }],
  }, ctx('dana'));
  graphiti.close();
  assert.equal(outcome.tag, 'spooled');
  assert.equal(outcome.val.groupId, 'main-dm-dana');
  const spooled = fs.readdirSync(path.join(stateDir, 'spool')).filter((f) => f.endsWith('.episode'));
  assert.equal(spooled.length, 1, 'kept until Graphiti accepts it');
  assert.match(fs.readFileSync(path.join(stateDir, 'spool', spooled[0]), 'utf8'), /Dana leads the Series A/);
});

test('settings errors name the field; the last good configuration stays', async () => {
  const { rt } = runtime({ recall: { enabled: false } });
  const pool = await rt.pool();
  await assert.rejects(pool.reload(JSON.stringify({ recall: { timeout: 5 } })), /recall\.timeout: unknown field `timeout`/);
  const result = await beforePromptBuild(rt, turn('Draft a tweet about our launch'), ctx('t'));
  assert.match(result.prependContext, /<pack-context intent="content_tweet"/);
});

test('/graphiti debug shows the last turn of the session', async () => {
  const { rt } = runtime({ recall: { enabled: false } });
  await beforePromptBuild(rt, turn('Draft a tweet about our launch'), ctx('d'));
  const output = await rt.command({ tag: 'debug', val: ctx('d').sessionKey });
  assert.equal(output.exitCode, 0);
  assert.match(output.stdout, /intent: content_tweet/);
  assert.match(output.stdout, /recall: skipped/);
});

test('experts list with no package installed names the experts directory and how to install, not the CLI option', async () => {
  const expertsDir = path.join(tempDir('adapter-no-experts-'), 'experts');
  const { rt } = runtime({ recall: { enabled: false }, expertsDir });
  const output = await rt.command({ tag: 'experts', val: { tag: 'list' } });
  assert.equal(output.stdout, `no expert package is installed: ${expertsDir} does not exist yet; experts install <package directory or .tgz> creates it\n`);
  assert.doesNotMatch(output.stdout, /--experts-dir/);
});

test('experts: the main agent gets the registry, an expert session its prompt; EXPERTS.md is written', async () => {
  const { rt, workspaceDir } = runtime({ recall: { enabled: false } });
  const main = await beforePromptBuild(rt, turn('Draft a tweet about our launch'), ctx('m'));
  assert.match(main.appendSystemContext, /trip-planner-expert/);
  assert.equal(main.prependSystemContext, undefined);
  assert.match(fs.readFileSync(path.join(workspaceDir, 'EXPERTS.md'), 'utf8'), /## trip-planner-expert/);
  const expert = await beforePromptBuild(rt, turn('Plan my trip to Lisbon next Tuesday'), { ...ctx('e'), sessionKey: 'agent:main:expert:trip-planner-expert', trigger: 'sub-agent' });
  assert.match(expert.prependSystemContext, /^## Identity/);
  assert.match(expert.prependSystemContext, /## Tool Approval Policy/);
  assert.ok(expert.prependSystemContext.includes(path.join(workspaceDir, 'expert-state', 'trip-planner-expert')), 'the prompt names the runtime workspace');
  assert.ok(fs.existsSync(path.join(workspaceDir, 'expert-state', 'trip-planner-expert', 'state')), 'state templates copied');
});

test('experts: tool calls in an expert session follow the approval tiers through OpenClaw\'s hook', async () => {
  const { rt } = runtime({ recall: { enabled: false } });
  const session = { ...ctx('e'), sessionKey: 'agent:main:expert:trip-planner-expert' };
  assert.equal(await beforeToolCall(rt, { toolName: 'read', params: { path: 'state/trips.md' } }, session), undefined, 'workspace files are readable');
  assert.equal(await beforeToolCall(rt, { toolName: 'flights_search', params: { to: 'LIS' } }, session), undefined, 'auto: the MCP name maps to travel.search_flights');
  const manual = await beforeToolCall(rt, { toolName: 'flights_purchase', params: { offer: 'X1' } }, session);
  assert.equal(manual?.block, true);
  assert.match(manual.blockReason, /draft/i);
  const other = await beforeToolCall(rt, { toolName: 'flights_purchase', params: { offer: 'X1' } }, ctx('main'));
  assert.equal(other, undefined, 'sessions of no expert are not checked');
});

const expertSession = { sessionKey: 'agent:main:expert:trip-planner-expert', sessionId: 's-1', agentId: 'main', trigger: 'sub-agent' };

test('experts: Tool Search\'s tool_call is judged by its target; an approval lets the call and its target call run once', async () => {
  const { rt } = runtime({ recall: { enabled: false } });
  const hook = (event) => beforeToolCall(rt, event, { ...expertSession, toolCallId: event.toolCallId });
  assert.equal(await hook({ toolName: 'tool_search', params: { query: 'flights' }, toolCallId: 's1' }), undefined, 'lookups pass');
  assert.equal(await hook({ toolName: 'tool_describe', params: { id: 'flights_search' }, toolCallId: 's2' }), undefined);
  assert.equal(await hook({ toolName: 'tool_call', params: { id: 'flights_search', args: { to: 'LIS' } }, toolCallId: 'a1' }), undefined, 'AUTO through tool_call');
  const hold = (id) => ({ toolName: 'tool_call', params: { id: 'travel-booking-mcp__hold_booking', args: { offer_id: 'X1' } }, toolCallId: id });
  const asked = await hook(hold('c1'));
  assert.equal(asked?.block, true);
  const id = /approve request ([0-9a-f]{16})/.exec(asked.blockReason)?.[1];
  assert.ok(id, asked.blockReason);
  const approved = await rt.command({ tag: 'experts', val: { tag: 'approve', val: id } });
  assert.equal(approved.exitCode, 0, approved.stdout);
  assert.equal(await hook(hold('c2')), undefined, 'approved: the tool_call runs');
  const target = (n) => ({ toolName: 'travel-booking-mcp__hold_booking', params: { offer_id: 'X1' }, toolCallId: `tool_search_code:c2:travel-booking-mcp__hold_booking:${n}` });
  assert.equal(await hook(target(1)), undefined, 'and the target call OpenClaw makes for it');
  assert.equal((await hook(target(2)))?.block, true, 'once');
  assert.equal((await hook(hold('c3')))?.block, true, 'the approval is used up');
  const malformed = await hook({ toolName: 'tool_call', params: { args: { offer_id: 'X1' } }, toolCallId: 'm1' });
  assert.match(malformed?.blockReason ?? '', /^tool_call refused: it names no tool/);
});

test('experts: check-tool through the adapter records nothing', async () => {
  const { rt, stateDir } = runtime({ recall: { enabled: false } });
  const output = await rt.command(checkToolCommand('hold_booking', '{"offer_id":"X1"}', { session: expertSession.sessionKey }));
  assert.equal(output.exitCode, 0, output.stderr);
  assert.match(output.stdout, /tier:      CONFIRM\n/);
  assert.match(output.stdout, /verdict:   refused until the user approves request [0-9a-f]{16}\n/);
  assert.ok(!fs.existsSync(path.join(stateDir, 'experts', 'trip-planner-expert', 'experts-approvals.json')), 'no request recorded');
});

/**
 * The packaged plugin (it finds its component beside itself) registered against a stand-in of
 * OpenClaw's API; returns its tool factories by name.
 */
async function registeredTools(pluginConfig) {
  const { default: plugin } = await import(path.join(repo, 'dist/graphiti-openclaw/dist/index.js'));
  const tools = new Map();
  const stateDir = tempDir('adapter-state-');
  const workspaceDir = tempDir('adapter-workspace-');
  const api = {
    logger: quietLogger(),
    registrationMode: 'discovery',
    pluginConfig: { configDir, stateDir, workspaceDir, expertsDir: path.join(configDir, 'experts'), ...pluginConfig },
    on() {},
    registerCommand() {},
    registerCli() {},
    registerService() {},
    registerTool(factory, { name }) {
      tools.set(name, factory);
    },
  };
  plugin.register(api);
  return { tools, workspaceDir };
}

test('experts: expert_knowledge reads private knowledge in the expert\'s session only', async () => {
  const { tools, workspaceDir } = await registeredTools({ recall: { enabled: false } });
  const factory = tools.get('expert_knowledge');
  assert.ok(factory, `registered: ${[...tools.keys()]}`);
  const result = await factory(expertSession).execute('t1', { name: 'negotiated-rates' });
  assert.match(result.content[0].text, /HARBORLIGHT-ZX4471/);
  const list = await factory(expertSession).execute('t2', {});
  assert.match(list.content[0].text, /- negotiated-rates \(private\)/);
  await assert.rejects(
    factory({ sessionKey: 'agent:main:main', agentId: 'main' }).execute('t3', { name: 'negotiated-rates' }),
    (error) => /expert_knowledge refused: this session is not an expert's/.test(error.message) && !error.message.includes('HARBORLIGHT'),
  );
  const copy = path.join(workspaceDir, 'expert-state', 'trip-planner-expert', 'knowledge', 'negotiated-rates.md');
  assert.ok(!fs.existsSync(copy), 'never written to the workspace');
});

test('/graphiti intent-test runs through the component with the time of asking (the previous-turn fields left out)', async () => {
  const { rt } = runtime({});
  const { command } = graphitiSlashCommand('intent-test draft a tweet about our launch', { sessionKey: 'agent:main:main' });
  const output = await rt.command(command);
  assert.equal(output.exitCode, 0, output.stderr);
  assert.match(output.stdout, /tweet/i);
  await rt.close?.();
});
