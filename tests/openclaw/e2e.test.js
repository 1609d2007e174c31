// The package in real OpenClaw 2026.9.6 with its default configuration (Tool Search on): installed
// from the .tgz, inspected, driven through OpenClaw's own loader and hook runner, and real
// `openclaw agent --local` turns against a stub model, with the Graphiti stand-in as Graphiti and a
// fake MCP server behind the example expert's tools. Also installed without
// `hooks.allowConversationAccess`: the plugin says OpenClaw blocks its turn hooks. The import of
// memory-core's files and of months of past conversations, made in OpenClaw's store by its Doctor.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { mockProvider } from './gateway.js';
import { startRegistry } from './npm-registry.js';
import { PLUGIN_ID, REPO, configSet, eventually as poll, executedCalls, installedVersion, loadWithOpenClaw, openclaw, packageTgz, sessionStoreByDoctor, startStandIn, startStubModel, throwawayHome } from './openclaw.js';

/** Waits until `check` returns something truthy: these turns are quick. */
const eventually = (check, what, timeoutMs = 15_000) => poll(check, what, timeoutMs, 100);

const { home, env } = throwawayHome();
let standIn;
let model;

function pluginConfig() {
  // The stand-in's seeded memories live in the group "demo". The memory-control keys are set as a
  // user would, so OpenClaw checks them against the manifest and the component reads them.
  return {
    graphiti: { url: `${standIn.url}/mcp`, group_id: { direct: 'demo', group: 'demo-{chat}' } },
    skip: { channels: ['discord'], chat_types: [], chats: ['telegram:-100999'] },
    capture: { redact: ['api-keys', 'private-keys', 'card-numbers', 'passwords', 'email-addresses', 'phone-numbers'], import_per_minute: 600 },
    tickIntervalMs: 500,
  };
}

/** When Dana's past conversations happened: months before this run. */
const PAST = Date.parse('2026-02-10T18:30:00Z');

before(async () => {
  // Months of conversations in OpenClaw's store before the plugin is installed: a DM of Dana's (a
  // fact only said there, a tool's output), another sender's DM, a cron run.
  await sessionStoreByDoctor(home, [
    { key: 'agent:main:telegram:direct:dana', turns: [
      { at: PAST, user: 'I ordered new mainsails for the Andorinha from Velas do Porto', reply: 'Noted: new mainsails from Velas do Porto.' },
      { at: PAST + 60_000, user: 'What is the weather in Cascais?', reply: 'Sunny, 21 degrees.', toolResult: 'WEATHER-TOOL-OUTPUT 21C' },
    ] },
    { key: 'agent:main:telegram:direct:bruno', turns: [{ at: PAST + 120_000, user: 'I will bring the charts for the crossing', reply: 'Noted.' }] },
    { key: 'agent:main:cron:nightly', turns: [{ at: PAST + 180_000, user: 'Compile the nightly invoice report', reply: 'Done.' }] },
    // A group chat; an expert's run; a chat kept out by skip.chats (how a session memory-core was
    // told to forget is kept out) and one on a kept-out channel; a secret said in a DM.
    { key: 'agent:main:telegram:group:-100777', chatType: 'group', turns: [{ at: PAST + 240_000, user: 'The regatta moves to Saturday', reply: 'Noted for the crew.' }] },
    { key: 'agent:main:expert:ops-expert:inv-3', turns: [{ at: PAST + 300_000, user: 'Run the process `triage` now: invocation inv-3', reply: 'Triaged EXPERT-RUN-ONLY.' }] },
    { key: 'agent:main:telegram:group:-100999', chatType: 'group', turns: [{ at: PAST + 360_000, user: 'FORGOTTEN-CHAT: my old address', reply: 'Noted.' }] },
    { key: 'agent:main:discord:direct:dana', turns: [{ at: PAST + 420_000, user: 'DISCORD-ONLY plans', reply: 'Noted.' }] },
    { key: 'agent:main:telegram:direct:carla', turns: [{ at: PAST + 480_000, user: 'My API key is sk-live-51HbQzLkT9v2XcWq8RmNp3Ys and the dinghy is blue', reply: 'Noted: the dinghy is blue.' }] },
  ]);
  standIn = await startStandIn({ args: ['--episodes-as-facts'] });
  model = await startStubModel('Booked: Thursday 12:30 at Saffron Lantern.');
  await openclaw(env, ['plugins', 'install', packageTgz(), '--force', '--accept-capabilities']);
  await configSet(env, [
    { path: `plugins.entries.${PLUGIN_ID}.hooks.allowConversationAccess`, value: true },
    { path: `plugins.entries.${PLUGIN_ID}.config`, value: pluginConfig() },
    { path: 'models.providers.mock', value: mockProvider(model.baseUrl) },
    { path: 'agents.defaults.model', value: 'mock/mock-1' },
  ]);
});

after(() => {
  standIn?.stop();
  model?.stop();
  fs.rmSync(home, { recursive: true, force: true });
});

test('the installed package is copied into OpenClaw\'s extensions with its component', () => {
  const installed = path.join(home, '.openclaw/extensions', PLUGIN_ID);
  for (const file of ['openclaw.plugin.json', 'package.json', 'dist/index.js', 'dist/component/plugin.js', 'dist/component/plugin.core.wasm', 'config/intent_rules.yaml']) {
    assert.ok(fs.existsSync(path.join(installed, file)), `${file} installed`);
  }
});

test('plugins inspect --runtime lists the hooks, commands, tools and CLI, with no diagnostics', async () => {
  const { stdout } = await openclaw(env, ['plugins', 'inspect', PLUGIN_ID, '--runtime', '--json']);
  const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
  const text = JSON.stringify(report);
  const hooks = (report.typedHooks ?? report.plugin?.typedHooks ?? []).map((h) => h.hookName ?? h.name ?? h);
  for (const hook of ['before_prompt_build', 'agent_end', 'before_tool_call']) assert.ok(hooks.includes(hook) || text.includes(`"${hook}"`), `hook ${hook} in ${text}`);
  for (const name of ['graphiti', 'recall', 'experts', 'graphiti_search', 'graphiti_ingest', 'expert_knowledge']) {
    assert.ok(text.includes(`"${name}"`), `${name} registered: ${text}`);
  }
  const diagnostics = report.diagnostics ?? report.plugin?.diagnostics ?? [];
  assert.deepEqual(diagnostics.filter((d) => d.level !== 'info'), [], 'no diagnostics');
});

test('OpenClaw\'s loader and the adapter agree on which turn hooks run; status leads with the blocked ones, then what OpenClaw\'s live config says', async () => {
  process.env.HOME = home;
  const installed = path.join(home, '.openclaw/extensions', PLUGIN_ID);
  const { blockedTurnHooks } = await import(path.join(installed, 'dist/hook-access.js'));
  const config = pluginConfig();
  const cases = {
    'no hook policy': { [PLUGIN_ID]: { enabled: true, config } },
    'allowConversationAccess false': { [PLUGIN_ID]: { enabled: true, hooks: { allowConversationAccess: false }, config } },
    'allowConversationAccess true': { [PLUGIN_ID]: { enabled: true, hooks: { allowConversationAccess: true }, config } },
    'access, but allowPromptInjection false': { [PLUGIN_ID]: { enabled: true, hooks: { allowConversationAccess: true, allowPromptInjection: false }, config } },
    'allowPromptInjection false alone': { [PLUGIN_ID]: { enabled: true, hooks: { allowPromptInjection: false }, config } },
    'the id in capitals': { 'GRAPHITI-OPENCLAW': { enabled: true, hooks: { allowConversationAccess: true }, config } },
    'a later spelling without hooks': { [PLUGIN_ID]: { enabled: true, hooks: { allowConversationAccess: true }, config }, ' Graphiti-OpenClaw ': { enabled: true, config } },
    'a later spelling with only a timeout': { [PLUGIN_ID]: { enabled: true, hooks: { allowConversationAccess: true }, config }, 'Graphiti-OpenClaw': { hooks: { timeoutMs: 20000 } } },
    'a later spelling with an invalid timeout': { [PLUGIN_ID]: { enabled: true, hooks: { allowConversationAccess: true }, config }, 'Graphiti-OpenClaw': { hooks: { timeoutMs: 0 } } },
  };
  const turnHooks = ['before_prompt_build', 'agent_end'];
  for (const [name, entries] of Object.entries(cases)) {
    const { registry } = await loadWithOpenClaw(installed, config, { entries });
    const ours = registry.typedHooks.filter((h) => h.pluginId === PLUGIN_ID).map((h) => h.hookName);
    const blockedByOpenClaw = turnHooks.filter((hook) => !ours.includes(hook));
    const said = blockedTurnHooks({ plugins: { entries } }, PLUGIN_ID);
    assert.deepEqual(said?.hooks ?? [], blockedByOpenClaw, `${name}: the adapter names exactly the hooks OpenClaw dropped`);
    const status = registry.commands.find((c) => c.pluginId === PLUGIN_ID && c.command.name === 'graphiti').command;
    const { text } = await status.handler({ args: 'status', commandBody: '/graphiti status', channel: 'telegram' });
    const lines = text.split('\n');
    if (blockedByOpenClaw.length > 0) {
      assert.match(lines[0], new RegExp(`^hooks: {4}BLOCKED: OpenClaw blocks this plugin's ${blockedByOpenClaw.join(' and ')} hooks?: .*Fix: openclaw config set plugins\\.entries\\.graphiti-openclaw\\.hooks\\.allow`), name);
      // OpenClaw's live config (api.runtime.config.current()) is this HOME's openclaw.json, which has the flag.
      assert.match(lines[1], /^ {10}The configuration now lets them run, but this instance was registered before: openclaw plugins reload graphiti-openclaw/, name);
      assert.match(lines[2], /^graphiti: mcp /, name);
    } else {
      assert.match(lines[0], /^graphiti: mcp /, `${name}: the component's status, nothing before it`);
    }
  }
});

test('installed without hooks.allowConversationAccess: the turn is not touched, a warning at start, status says so; its fix works', async () => {
  const bare = throwawayHome();
  const stub = await startStubModel('Noted without memory.');
  try {
    await openclaw(bare.env, ['plugins', 'install', packageTgz(), '--force', '--accept-capabilities']);
    await openclaw(bare.env, ['config', 'set', '--batch-json', JSON.stringify([
      { path: `plugins.entries.${PLUGIN_ID}.config`, value: pluginConfig() },
      { path: 'models.providers.mock', value: mockProvider(stub.baseUrl) },
      { path: 'agents.defaults.model', value: 'mock/mock-1' },
    ])]);
    const turn = await openclaw(bare.env, ['agent', '--local', '--message', 'Book lunch with the Acme Robotics founder', '--json'], { timeoutMs: 180_000 });
    const warnings = turn.stderr.split('\n').filter((line) => line.includes('OpenClaw blocks this plugin'));
    assert.equal(warnings.length, 1, `one warning at start:\n${turn.stderr}`);
    const [, fix] = /Fix: (openclaw config set \S+ true --strict-json)$/.exec(warnings[0]) ?? [];
    assert.equal(fix, `openclaw config set plugins.entries.${PLUGIN_ID}.hooks.allowConversationAccess true --strict-json`);
    assert.doesNotMatch(JSON.stringify(stub.requests.at(-1)?.body), /<graphiti-context|<pack-context/, 'really blocked: nothing injected');
    assert.ok(!fs.existsSync(path.join(bare.home, '.openclaw', PLUGIN_ID, 'spool')) || fs.readdirSync(path.join(bare.home, '.openclaw', PLUGIN_ID, 'spool')).length === 0, 'and nothing captured');

    const blocked = await openclaw(bare.env, ['graphiti', 'status']);
    assert.match(blocked.stdout.split('\n')[0], /^hooks: {4}BLOCKED: OpenClaw blocks this plugin's before_prompt_build and agent_end hooks: /);
    assert.ok(blocked.stdout.split('\n')[0].endsWith(`Fix: ${fix}`), blocked.stdout);
    assert.match(blocked.stdout.split('\n')[1], /^graphiti: mcp /, 'then the component\'s status');

    await openclaw(bare.env, fix.split(' ').slice(1));
    const fixed = await openclaw(bare.env, ['graphiti', 'status']);
    assert.match(fixed.stdout, /^graphiti: mcp /, 'fixed: no warning line');
  } finally {
    stub.stop();
    fs.rmSync(bare.home, { recursive: true, force: true });
  }
});

test('OpenClaw\'s loader and hook runner: recall and pack before the prompt, capture after the turn', async () => {
  process.env.HOME = home;
  const { registry, runner } = await loadWithOpenClaw(path.join(home, '.openclaw/extensions', PLUGIN_ID), pluginConfig());
  const plugin = registry.plugins.find((p) => p.id === PLUGIN_ID);
  assert.equal(plugin?.status, 'loaded', JSON.stringify(plugin));
  const ctx = { sessionKey: 'agent:main:telegram:direct:dana', agentId: 'main', senderId: 'dana', trigger: 'user', runId: 'run-loader-1' };
  const prompt = 'Book lunch with the Acme Robotics founder';
  const result = await runner.runBeforePromptBuild({ prompt, messages: [{ role: 'user', content: prompt }] }, ctx);
  assert.match(result.prependContext, /<graphiti-context[^>]*>[\s\S]*Dana Lee is CTO of Acme Robotics/, 'current fact recalled');
  assert.doesNotMatch(result.prependContext.split('No longer true')[0], /Dana Lee is CEO of Acme Robotics/, 'superseded fact not shown as current');
  assert.match(result.prependContext, /<pack-context intent="vc_deal"/, 'recalled startup broke the lunch/founder tie');

  await runner.runAgentEnd({
    success: true,
    messages: [{ role: 'user', content: `${result.prependContext}\n\n${prompt}` }, { role: 'assistant', content: 'Lunch booked with Dana Lee, Thursday.' }],
  }, ctx);
  const episodes = await eventually(async () => {
    const all = await standIn.episodes('demo');
    return all.find((e) => e.content?.includes('Lunch booked with Dana Lee')) && all;
  }, 'the captured turn at the stand-in');
  const captured = episodes.find((e) => e.content.includes('Lunch booked with Dana Lee'));
  assert.doesNotMatch(captured.content, /<graphiti-context|<pack-context/, 'our blocks are stripped before capture');
});

test('openclaw graphiti import: memory-core\'s files once into the sender\'s group with their dates; the next DM turn recalls a daily note', async () => {
  const workspace = path.join(home, '.openclaw/workspace');
  fs.mkdirSync(path.join(workspace, 'memory'), { recursive: true });
  fs.writeFileSync(path.join(workspace, 'MEMORY.md'), '# Boats\n- Dana keeps her sailboat Andorinha in Cascais <!-- trigger: sailing --> <!-- importance: 6 -->\n');
  fs.writeFileSync(path.join(workspace, 'memory/2026-03-01.md'), '- Dana and Bruno planned the Azores crossing for June\n');
  fs.writeFileSync(path.join(workspace, 'DREAMS.md'), '- derived\n');
  const args = ['graphiti', 'import', '--sender', 'dana', '--daily-notes'];
  const dry = await openclaw(env, [...args, '--dry-run']);
  assert.match(dry.stdout, /import \(dry run\): 2 item\(s\) for group demo/, dry.stdout);
  assert.match(dry.stdout, /DREAMS\.md: derived by memory-core's dreaming/, dry.stdout);
  const run = await openclaw(env, args, { timeoutMs: 120_000 });
  assert.match(run.stdout, /import finished: 2 item\(s\) sent to group demo/, run.stdout);
  const episodes = await standIn.episodes('demo');
  const note = episodes.filter((e) => e.content.includes('Azores crossing'));
  assert.equal(note.length, 1, 'the daily note once');
  assert.ok(note[0].valid_at.startsWith('2026-03-01'), `with its date: ${note[0].valid_at}`);
  assert.ok(!episodes.some((e) => e.content.includes('<!--') || e.content.includes('derived')), 'no markers, no DREAMS.md');

  process.env.HOME = home;
  const { runner } = await loadWithOpenClaw(path.join(home, '.openclaw/extensions', PLUGIN_ID), pluginConfig());
  const ctx = { sessionKey: 'agent:main:telegram:direct:dana', agentId: 'main', senderId: 'dana', trigger: 'user', runId: 'run-after-import' };
  const prompt = 'When is the Azores crossing with Bruno?';
  const result = await runner.runBeforePromptBuild({ prompt, messages: [{ role: 'user', content: prompt }] }, ctx);
  assert.match(result.prependContext, /<graphiti-context[^>]*>[\s\S]*Dana and Bruno planned the Azores crossing for June/, 'the daily note is recalled');
});

test('openclaw graphiti import --transcripts: months-old turns once, as the dry run said, with their times, into each chat\'s group; nothing of a cron run, an expert run, a kept-out chat, a tool or a secret; the next DM turn recalls one', async () => {
  const args = ['graphiti', 'import', '--sender', 'dana', '--all-transcripts'];
  const dry = await openclaw(env, [...args, '--dry-run', '--json']);
  const plan = JSON.parse(dry.stdout.slice(dry.stdout.indexOf('{')));
  // Dana's two turns, Bruno's and Carla's DMs in the DM group; the group chat in its own.
  assert.deepEqual(plan.groups.map((g) => [g.group_id, g.items]), [['demo', 4], ['demo--100777', 1]], dry.stdout);
  const skipped = Object.fromEntries(plan.skipped.filter((s) => s.file.startsWith('session ')).map((s) => [s.file.slice('session '.length), s.why]));
  assert.deepEqual(skipped, {
    'agent:main:cron:nightly': 'a cron run: not the user\'s conversation',
    'agent:main:discord:direct:dana': 'channel discord is kept out of memory (skip.channels)',
    'agent:main:expert:ops-expert:inv-3': 'an expert run: not the user\'s conversation',
    'agent:main:telegram:group:-100999': 'chat telegram:-100999 is kept out of memory (skip.chats)',
  }, dry.stdout);
  assert.ok(plan.notes.some((n) => /a session memory-core was told to forget must be kept out with skip\.chats/.test(n)), 'the dry run says how a forgotten session is kept out');
  assert.equal(plan.estimate.episodes, 5);
  const before = { demo: (await standIn.episodes('demo')).length, group: (await standIn.episodes('demo--100777')).length };
  const run = await openclaw(env, args, { timeoutMs: 180_000 });
  assert.match(run.stdout, /import finished: 5 item\(s\) sent/, run.stdout);
  const importedTo = async (group) => (await standIn.episodes(group)).filter((e) => /^openclaw-import-/.test(e.name ?? '') && Date.parse(e.valid_at) < PAST + 10 * 60_000);
  const past = await importedTo('demo');
  const groupChat = await importedTo('demo--100777');
  assert.equal(past.length, 4, `each past DM turn once: ${JSON.stringify(past.map((e) => e.content))}`);
  assert.deepEqual(groupChat.map((e) => e.content.includes('The regatta moves to Saturday')), [true], 'the group chat\'s turn in its own group');
  assert.equal((await standIn.episodes('demo')).length - before.demo, 4, 'exactly what the dry run listed');
  assert.equal((await standIn.episodes('demo--100777')).length - before.group, 1);
  const sails = past.find((e) => e.content.includes('new mainsails'));
  assert.ok(sails && sails.valid_at.startsWith('2026-02-10'), `with its own time: ${sails?.valid_at}`);
  const everything = JSON.stringify([...past, ...groupChat].map((e) => e.content));
  for (const never of ['WEATHER-TOOL-OUTPUT', 'invoice report', 'EXPERT-RUN-ONLY', 'FORGOTTEN-CHAT', 'DISCORD-ONLY', 'sk-live-51HbQzLkT9v2XcWq8RmNp3Ys']) {
    assert.ok(!everything.includes(never), `nothing of ${never}: ${everything}`);
  }
  assert.match(everything, /the dinghy is blue/, 'the rest of the turn with the secret is kept');

  process.env.HOME = home;
  const { runner } = await loadWithOpenClaw(path.join(home, '.openclaw/extensions', PLUGIN_ID), pluginConfig());
  const ctx = { sessionKey: 'agent:main:telegram:direct:dana', agentId: 'main', senderId: 'dana', trigger: 'user', runId: 'run-after-transcripts' };
  const prompt = 'Where did I order the new mainsails from?';
  const result = await runner.runBeforePromptBuild({ prompt, messages: [{ role: 'user', content: prompt }] }, ctx);
  assert.match(result.prependContext, /<graphiti-context[^>]*>[\s\S]*Velas do Porto/, 'a fact only in an old transcript is recalled');
});

test('OpenClaw\'s before_tool_call hook enforces an expert\'s approval policy', async () => {
  process.env.HOME = home;
  fs.cpSync(path.join(REPO, 'config/experts'), path.join(home, '.openclaw/experts'), { recursive: true });
  const { runner } = await loadWithOpenClaw(path.join(home, '.openclaw/extensions', PLUGIN_ID), pluginConfig());
  const session = { sessionKey: 'agent:main:expert:trip-planner-expert', agentId: 'main', trigger: 'sub-agent' };
  const purchase = await runner.runBeforeToolCall({ toolName: 'flights_purchase', params: { offer: 'X1' } }, { ...session, toolName: 'flights_purchase' });
  assert.equal(purchase?.block, true, JSON.stringify(purchase));
  assert.match(purchase.blockReason, /draft/i);
  const search = await runner.runBeforeToolCall({ toolName: 'flights_search', params: { to: 'LIS' } }, { ...session, toolName: 'flights_search' });
  assert.notEqual(search?.block, true, 'auto operations run');
  const prompt = await runner.runBeforePromptBuild({ prompt: 'Plan my trip to Lisbon', messages: [] }, session);
  assert.match(prompt.prependSystemContext ?? '', /## Tool Approval Policy/, 'the expert session gets its prompt');
  fs.rmSync(path.join(home, '.openclaw/experts'), { recursive: true });
});

test('OpenClaw\'s hook runner under Tool Search: tool_call judged by its target, approved once with the CLI, lookups pass', async () => {
  process.env.HOME = home;
  fs.cpSync(path.join(REPO, 'config/experts'), path.join(home, '.openclaw/experts'), { recursive: true });
  try {
    const { runner } = await loadWithOpenClaw(path.join(home, '.openclaw/extensions', PLUGIN_ID), pluginConfig());
    const session = { sessionKey: 'agent:main:expert:trip-planner-expert', sessionId: 'e2e-hooks', agentId: 'main', trigger: 'user' };
    // As OpenClaw's tool wrapper calls the hook: the call id in the event and in the context.
    const hook = (toolName, params, toolCallId) => runner.runBeforeToolCall({ toolName, params, toolCallId }, { ...session, toolName, toolCallId });
    assert.notEqual((await hook('tool_search', { query: 'hold a fare' }, 'h1'))?.block, true, 'tool_search passes');
    assert.notEqual((await hook('tool_describe', { id: 'travel-booking-mcp__hold_booking' }, 'h2'))?.block, true, 'tool_describe passes');
    assert.notEqual((await hook('tool_call', { id: 'travel-booking-mcp__flights_search', args: { to: 'LIS' } }, 'h3'))?.block, true, 'AUTO through tool_call runs');

    const hold = { id: 'mcp:travel-booking-mcp:travel-booking-mcp__hold_booking', args: { offer_id: 'HOOK-1' } };
    const asked = await hook('tool_call', hold, 'h4');
    assert.equal(asked?.block, true, JSON.stringify(asked));
    const id = /approve request ([0-9a-f]{16})/.exec(asked.blockReason)?.[1];
    assert.ok(id, asked.blockReason);
    const pending = await openclaw(env, ['graphiti', 'experts', 'pending']);
    assert.match(pending.stdout, new RegExp(`${id}  trip-planner-expert  travel\\.hold_booking\\n  tool:      travel-booking-mcp__hold_booking\\n  session:   agent:main:expert:trip-planner-expert\\n  arguments: \\{"offer_id":"HOOK-1"\\}`));
    const checked = await openclaw(env, ['graphiti', 'experts', 'check-tool', 'tool_call', JSON.stringify(hold), '--session', session.sessionKey]);
    assert.match(checked.stdout, /tool:      tool_call → travel-booking-mcp__hold_booking\noperation: travel\.hold_booking\ntier:      CONFIRM\n/);
    assert.match(checked.stdout, new RegExp(`verdict:   refused until the user approves request ${id}\n`), 'the dry run names the same request');
    const approved = await openclaw(env, ['graphiti', 'experts', 'approve', id]);
    assert.match(approved.stdout, new RegExp(`approved ${id} for expert trip-planner-expert`));

    assert.notEqual((await hook('tool_call', hold, 'h5'))?.block, true, 'the approved tool_call runs');
    const target = await hook('travel-booking-mcp__hold_booking', hold.args, 'tool_search_code:h5:travel-booking-mcp__hold_booking:1');
    assert.notEqual(target?.block, true, 'and so does the target call OpenClaw makes for it');
    assert.equal((await hook('tool_call', hold, 'h6'))?.block, true, 'once: the second try is held again');
    const malformed = await hook('tool_call', { args: { offer_id: 'HOOK-1' } }, 'h7');
    assert.match(malformed?.blockReason ?? '', /^tool_call refused: it names no tool/);
  } finally {
    fs.rmSync(path.join(home, '.openclaw/experts'), { recursive: true, force: true });
  }
});

test('a real `openclaw agent --local` turn: the model sees both blocks; the turn is spooled, then sent', async () => {
  const prompt = 'Set up a lunch with the founder of Acme Robotics next week';
  const turn = await openclaw(env, ['agent', '--local', '--message', prompt, '--json'], { timeoutMs: 180_000 });
  assert.doesNotMatch(turn.stderr, /OpenClaw blocks|BLOCKED/, 'with the flag: no warning');

  const sent = model.requests.map((r) => JSON.stringify(r.body)).find((body) => body.includes('founder of Acme Robotics'));
  assert.ok(sent, `the model was asked (${model.requests.length} requests)`);
  assert.match(sent, /<graphiti-context/, 'recalled memories reached the model');
  assert.match(sent, /<pack-context intent=/, 'the workflow pack reached the model');

  const stats = JSON.parse(fs.readFileSync(path.join(home, '.openclaw', PLUGIN_ID, 'stats.json'), 'utf8'));
  assert.ok(stats.captures_spooled >= 1, `spooled: ${JSON.stringify(stats)}`);
  await eventually(async () => (await standIn.episodes('demo')).some((e) => e.content?.includes('Booked: Thursday 12:30 at Saffron Lantern')), 'the agent turn at the stand-in');
  const spool = path.join(home, '.openclaw', PLUGIN_ID, 'spool');
  assert.deepEqual(fs.readdirSync(spool).filter((f) => f.endsWith('.episode')), [], 'the spool is empty once Graphiti has it');
});

test('real agent turns with the default Tool Search: an AUTO call runs, a CONFIRM call waits for /experts approve, then runs once', async () => {
  const calls = path.join(home, 'mcp-calls.jsonl');
  const server = (name, ...tools) => ({ command: process.execPath, args: [path.join(REPO, 'tests/openclaw/fake-mcp-server.js'), name, ...tools], env: { FAKE_MCP_CALLS: calls } });
  const toolCall = (target, args) => ({ toolCall: { name: 'tool_call', arguments: { id: target, args } } });
  const hold = toolCall('travel-booking-mcp__hold_booking', { offer_id: 'X1' });
  // Each turn's script: what the model does after 0, 1, 2 … tool results in that turn.
  let script = [];
  const isPrompt = (m) => m.role === 'user' && !JSON.stringify(m.content).includes('OPENCLAW_INTERNAL_CONTEXT');
  const scripted = await startStubModel((request) => {
    const messages = request.messages ?? [];
    const results = messages.slice(messages.map(isPrompt).lastIndexOf(true)).filter((m) => m.role === 'tool').length;
    return script[results] ?? 'done';
  });
  const executed = () => executedCalls(calls).map((c) => c.tool);
  const toolResults = () => scripted.requests.at(-1).body.messages.filter((m) => m.role === 'tool').map((m) => JSON.stringify(m.content));
  const turn = (message) => openclaw(env, ['agent', '--local', '--session-key', 'agent:main:expert:trip-planner-expert', '--message', message, '--json'], { timeoutMs: 240_000 });
  fs.cpSync(path.join(REPO, 'config/experts'), path.join(home, '.openclaw/experts'), { recursive: true });
  try {
    await configSet(env, [
      {
        path: 'mcp.servers',
        value: {
          'travel-booking-mcp': server('travel-booking-mcp', 'flights_search', 'hotels_search', 'hold_booking', 'flights_purchase'),
          'team-calendar-mcp': server('team-calendar-mcp', 'get_availability', 'create_event'),
          'expense-mcp': server('expense-mcp', 'get_policy', 'submit_report'),
        },
      },
      { path: 'models.providers.mock', value: mockProvider(scripted.baseUrl) },
      { path: 'agents.defaults.model', value: 'mock/mock-1' },
    ]);

    script = [toolCall('travel-booking-mcp__flights_search', { to: 'LIS' }), hold];
    await turn('Find a flight to Lisbon and hold offer X1');
    const tools = (scripted.requests.at(-1).body.tools ?? []).map((t) => t.function?.name);
    assert.ok(tools.includes('tool_call') && !tools.includes('travel-booking-mcp__hold_booking'), `Tool Search is on: ${tools}`);
    assert.deepEqual(executed(), ['flights_search'], 'the AUTO search ran at the MCP server; the hold did not');
    const refusal = toolResults().at(-1);
    const id = /approve request ([0-9a-f]{16})/.exec(refusal)?.[1];
    assert.ok(id, `the model was told which request to ask for: ${refusal}`);

    const approved = await openclaw(env, ['graphiti', 'experts', 'approve', id]);
    assert.match(approved.stdout, /The agent may run exactly this call once/);
    script = [hold, hold];
    await turn('The user approved it: hold offer X1');
    assert.deepEqual(executed(), ['flights_search', 'hold_booking'], 'the approved hold ran once');
    assert.match(toolResults().at(-1), new RegExp(`approve request ${id}`), 'the second try in the same turn was held again');
  } finally {
    scripted.stop();
    fs.rmSync(path.join(home, '.openclaw/experts'), { recursive: true, force: true });
  }
});

test('the memory-control settings given in OpenClaw\'s plugin config are accepted and in force', async () => {
  const out = await openclaw(env, ['graphiti', 'status']);
  assert.match(out.stdout, /^memory: +kept out: channels discord; 1 listed chats$/m, out.stdout);
});

test('installed by name from a registry, set up in one command, then a turn is captured', async () => {
  const { home: setupHome, env: bareEnv } = throwawayHome();
  const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'dist/graphiti-openclaw/package.json'), 'utf8'));
  const registry = await startRegistry(packageTgz(), manifest);
  const setupEnv = { ...bareEnv, npm_config_registry: registry.url };
  try {
    await openclaw(setupEnv, ['plugins', 'install', `npm:${manifest.name}`, '--force', '--accept-capabilities']);
    assert.ok(registry.requests.includes(`GET /${manifest.name}/-/${manifest.name}-${manifest.version}.tgz`), registry.requests.join('\n'));
    assert.equal(await installedVersion(setupEnv), manifest.version);
    const configDir = path.join(setupHome, 'my-graphiti-config');
    await assert.rejects(
      openclaw(setupEnv, ['graphiti', 'setup', '--graphiti-url', 'localhost:8000']),
      /failed \(2\)[\s\S]*--graphiti-url "localhost:8000": Graphiti is reached over http or https/,
    );
    const setup = await openclaw(setupEnv, ['graphiti', 'setup', '--graphiti-url', `${standIn.url}/mcp`, '--config-dir', configDir]);
    assert.match(setup.stdout, new RegExp(`configuration: copied the example to ${configDir}`));
    assert.match(setup.stdout, /^graphiti: mcp .* — reachable/m, setup.stdout);
    assert.doesNotMatch(setup.stdout, /BLOCKED/, 'setup reports the hooks it has just allowed as allowed');
    assert.ok(fs.existsSync(path.join(configDir, 'intent_rules.yaml')));
    const hooks = await openclaw(setupEnv, ['config', 'get', `plugins.entries.${PLUGIN_ID}.hooks.allowConversationAccess`]);
    assert.match(hooks.stdout, /true/);
    const status = await openclaw(setupEnv, ['graphiti', 'status']);
    assert.doesNotMatch(status.stdout, /BLOCKED/);
    fs.writeFileSync(path.join(configDir, 'settings.yaml'), 'schema_version: 1\n# mine\n');
    const again = await openclaw(setupEnv, ['graphiti', 'setup', '--graphiti-url', `${standIn.url}/mcp`, '--config-dir', configDir]);
    assert.match(again.stdout, /configuration: kept .* as it is/);
    assert.equal(fs.readFileSync(path.join(configDir, 'settings.yaml'), 'utf8'), 'schema_version: 1\n# mine\n', 'a user\'s configuration is never overwritten');

    await configSet(setupEnv, [{ path: 'models.providers.mock', value: mockProvider(model.baseUrl) }, { path: 'agents.defaults.model', value: 'mock/mock-1' }]);
    const said = 'Remember that the registry install works on the first try';
    const turn = await openclaw(setupEnv, ['agent', '--local', '--message', said, '--json'], { timeoutMs: 180_000 });
    const stats = () => fs.readFileSync(path.join(setupHome, '.openclaw', PLUGIN_ID, 'stats.json'), 'utf8');
    try {
      await eventually(async () => (await standIn.requests()).some((r) => r.tool === 'add_memory' && r.body?.includes('registry install works')), 'the turn at the stand-in');
    } catch (error) {
      throw new Error(`${error.message}\nturn: ${turn.stdout.slice(-2000)}\n${turn.stderr.slice(-3000)}\nstats: ${stats()}`);
    }
  } finally {
    registry.stop();
    fs.rmSync(setupHome, { recursive: true, force: true });
  }
});
