// The feature contract's operations as the Gateway runs them: each a session action with the scope
// its kind needs, none an agent tool, each answered by the component as the CLI answers; and the
// dashboard's overview read method.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { register, repo, runCli } from './registered.js';

const ID = 'graphiti-openclaw';
const config = { plugins: { entries: { [ID]: { enabled: true, hooks: { allowConversationAccess: true } } } } };
const dist = path.join(repo, 'dist/graphiti-openclaw/dist');

async function registered() {
  const { default: plugin } = await import(path.join(dist, 'index.js'));
  const { contract } = await import(path.join(dist, 'feature-contract.js'));
  const gateway = await register(plugin, config);
  const invoke = (id, payload = {}, action = {}) => gateway.sessionActions.get(id).handler({ pluginId: ID, actionId: id, payload, ...action });
  const openclaw = async (...args) => {
    const cli = await register(plugin, config, { mode: 'cli-metadata', stateDir: gateway.stateDir });
    return runCli(cli.cli[0], ['graphiti', ...args]);
  };
  return { gateway, contract, invoke, openclaw };
}

test('every operation is a session action with the scope of its kind, and none is an agent tool', async () => {
  const { gateway, contract } = await registered();
  const operations = Object.entries(contract.operations);
  assert.deepEqual([...gateway.sessionActions.keys()].sort(), operations.map(([id]) => id).sort());
  for (const [id, operation] of operations) {
    const scope = operation.kind === 'query' ? 'operator.read' : 'operator.write';
    assert.deepEqual(gateway.sessionActions.get(id).requiredScopes, [scope], id);
    assert.equal(operation.tool, undefined, `${id} must not be an agent tool`);
    assert.ok(!gateway.tools.has(id), id);
    assert.deepEqual(gateway.sessionActions.get(id).schema, operation.input, id);
  }
  for (const id of ['forget', 'confirm-forget', 'edit-forget', 'correct', 'pause', 'resume', 'requeue', 'import', 'approve', 'reject']) {
    assert.equal(contract.operations[id].kind, 'action', `${id} changes something: an action`);
  }
});

test('an operation that names both a sender and a chat is refused, and acts on neither', async () => {
  const { invoke, openclaw } = await registered();
  for (const [id, payload] of [['pause', {}], ['forget', { query: 'therapist' }], ['memories', {}], ['correct', { old: 'a', nowTrue: 'b' }]]) {
    const answer = await invoke(id, { ...payload, sender: 'ana', chat: '42' });
    assert.equal(answer.ok, false, id);
    assert.match(answer.error, /name one chat: a sender \(a direct chat\) or a chat id \(a group chat\), not both/, id);
  }
  const paused = (await openclaw('paused')).stdout;
  assert.doesNotMatch(paused, /main-dm-ana|main-group-42/, paused);
});

test('chats lists the chats seen as JSON; confirm-forget and edit-forget take item numbers', async () => {
  const { invoke } = await registered();
  assert.deepEqual((await invoke('chats')).result.document, { chats: [] });
  const edit = await invoke('edit-forget', { id: '0123456789abcdef', drop: [2] });
  assert.equal(edit.result.exitCode, 1);
  assert.match(edit.result.text, /nothing changed: no forget 0123456789abcdef is waiting/);
  const confirm = await invoke('confirm-forget', { id: '0123456789abcdef', add: [4] });
  assert.match(confirm.result.text, /nothing deleted: no forget 0123456789abcdef is waiting/);
});

test('pause and resume act on the chat the operation names; the paused list shows it', async () => {
  const { invoke, openclaw } = await registered();
  const paused = await invoke('pause', { sender: 'ana', channel: 'telegram' });
  assert.equal(paused.ok, true);
  assert.equal(paused.result.exitCode, 0);
  assert.match(paused.result.text, /Memory is paused for this chat/);
  assert.match((await openclaw('paused')).stdout, /main-dm-ana/);
  assert.match((await invoke('resume', { sender: 'ana' })).result.text, /Memory is on again/);
});

test('memories names the chat it read, and a failed listing is an error, not an empty document', async () => {
  const { invoke } = await registered();
  const answer = await invoke('memories', { sender: 'ana' });
  assert.equal(answer.ok, true);
  assert.equal(answer.result.document, undefined);
  assert.match(answer.result.error, /group main-dm-ana failed, nothing exported/);
});

test('overview is JSON with the counters, the spool and the approvals, as a query and as the read method', async () => {
  const { gateway, invoke } = await registered();
  const { result } = await invoke('overview');
  assert.equal(result.document.turns, 0);
  assert.deepEqual(result.document.spool, { queued: 0, in_doubt: 0, set_aside: 0 });
  assert.deepEqual(result.document.approvals.waiting, []);
  assert.equal(result.document.recall.memories_per_turn, 0);
  const method = gateway.gatewayMethods.get(`${ID}.overview`);
  assert.deepEqual(method.options, { scope: 'operator.read' });
  const responses = [];
  await method.handler({ params: {}, respond: (...args) => responses.push(args) });
  assert.equal(responses.length, 1);
  assert.equal(responses[0][0], true);
  assert.deepEqual(responses[0][1].spool, result.document.spool);
  const manifest = JSON.parse(fs.readFileSync(path.join(repo, 'dist/graphiti-openclaw/openclaw.plugin.json'), 'utf8'));
  assert.deepEqual(manifest.dashboard.dataBindings.map((b) => b.method), [`${ID}.overview`]);
});

test('import-plan is the dry run as JSON, import starts it for the Gateway to carry on; one memory must be named', async () => {
  const { gateway, invoke } = await registered();
  // The registered plugin's workspace is its state directory.
  fs.writeFileSync(path.join(gateway.stateDir, 'MEMORY.md'), '# Boats\n- Ana keeps her sailboat Andorinha in Cascais\n');
  const plan = await invoke('import-plan', { sender: 'ana' });
  assert.equal(plan.ok, true, JSON.stringify(plan));
  assert.deepEqual(plan.result.document.groups.map((g) => [g.group_id, g.items]), [['main-dm-ana', 1]]);
  assert.equal(plan.result.document.daily_notes.included, false);
  const started = await invoke('import', { sender: 'ana' });
  assert.equal(started.result.exitCode, 0, started.result.text);
  assert.match(started.result.text, /import to group main-dm-ana: [\s\S]*the Gateway's sending passes carry it on/);
  const status = await invoke('status');
  assert.match(status.result.text, /import: {3}under way since .*group main-dm-ana/);
  for (const payload of [{}, { sender: 'ana', group: 'main-dm-ana' }]) {
    const refused = await invoke('import', payload);
    assert.equal(refused.ok, false, JSON.stringify(payload));
    assert.match(refused.error, /name one memory: a sender \(their direct chat\) or a Graphiti group id/);
  }
});

test('approve and reject of an id nothing waits under answer as the CLI does', async () => {
  const { invoke } = await registered();
  for (const id of ['approve', 'reject']) {
    const { result } = await invoke(id, { id: 'abcdef12' });
    assert.equal(result.exitCode, 1, id);
    assert.match(result.text, /abcdef12/, id);
  }
});

test('openclaw graphiti widget prints board.widget.put parameters for the packaged widget, declaring only the overview binding', async () => {
  const { openclaw } = await registered();
  const printed = await openclaw('widget', '--session', 'agent:main:main');
  assert.equal(printed.exitCode, 0, printed.stderr);
  const params = JSON.parse(printed.stdout);
  assert.equal(params.sessionKey, 'agent:main:main');
  assert.deepEqual(params.declared, { tools: [`${ID}.overview`] });
  assert.equal(params.content.kind, 'html');
  assert.equal(params.content.html, fs.readFileSync(path.join(repo, 'plugin/openclaw/widgets/overview.html'), 'utf8'));
  assert.ok(!/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(params.content.html), 'the widget sets text, never HTML');
  await assert.rejects(openclaw('widget'), /required option '--session <key>'/);
});
