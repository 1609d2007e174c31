// The memory-control commands as a user and an operator reach them in OpenClaw: `/graphiti pause`,
// `/graphiti resume` and `/graphiti memories` in a chat; `openclaw graphiti paused`, `memories` and
// `export` from the CLI; `/graphiti forget`, `forget confirm` and `correct`, and the `graphiti_forget`
// and `graphiti_correct` tools; each through the packaged plugin's registration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { register, repo, runCli } from './registered.js';

const ID = 'graphiti-openclaw';
const config = { plugins: { entries: { [ID]: { enabled: true, hooks: { allowConversationAccess: true } } } } };
const chat = (chatType, key) => ({ channel: 'telegram', senderId: 'ana', agentId: 'main', chatType, sessionKey: `agent:main:telegram:${key}` });
const dm = chat('direct', 'direct:ana');
const group = chat('group', 'group:42');

async function registered() {
  const { default: plugin } = await import(path.join(repo, 'dist/graphiti-openclaw/dist/index.js'));
  const gateway = await register(plugin, config);
  const cli = await register(plugin, config, { mode: 'cli-metadata', stateDir: gateway.stateDir });
  const slash = (args, ctx) => gateway.commands.get('graphiti').handler({ args, commandBody: `/graphiti ${args}`, ...ctx });
  const tool = (name, ctx) => gateway.tools.get(name)(ctx);
  return { slash, tool, openclaw: (...args) => runCli(cli.cli[0], ['graphiti', ...args]) };
}

test('/graphiti pause and resume act on the chat they are typed in; openclaw graphiti paused lists it', async () => {
  const { slash, openclaw } = await registered();
  assert.match((await slash('pause', dm)).text, /Memory is paused for this chat/);
  assert.match((await openclaw('paused')).stdout, /^paused: {3}main-dm-ana since \d{4}-/m);
  assert.match((await slash('pause', group)).text, /Memory is paused for this chat/);
  assert.match((await openclaw('paused')).stdout, /main-group-42/);
  assert.match((await slash('resume', dm)).text, /Memory is on again/);
  const left = (await openclaw('paused')).stdout;
  assert.ok(!left.includes('main-dm-ana') && left.includes('main-group-42'), left);
});

test('/graphiti memories is refused in a group chat; the CLI asks for exactly one chat', async () => {
  const { slash, openclaw } = await registered();
  const refused = await slash('memories where I work', group);
  assert.match(refused.text, /in a group chat everyone would read them/);
  assert.doesNotMatch(refused.text, /main-dm-ana/);
  for (const args of [['memories', 'work'], ['export', '--sender', 'ana', '--chat', '42']]) {
    const out = await openclaw(...args);
    assert.equal(out.exitCode, 2, args.join(' '));
    assert.match(out.stderr, /name one chat, --sender ID \(direct\) or --chat ID \(group\)/);
  }
});

test('/graphiti forget proposes, forget confirm takes an id, correct takes old => new; each says its usage', async () => {
  const { slash, openclaw } = await registered();
  assert.match((await slash('forget', dm)).text, /Usage: \/graphiti forget <words of what to forget>/);
  assert.match((await slash('forget confirm', dm)).text, /Usage: \/graphiti forget confirm <id>/);
  assert.match((await slash('forget confirm abc def', dm)).text, /Usage: \/graphiti forget confirm <id>/);
  assert.match((await slash('forget confirm {sender}', dm)).text, /"\{sender\}" is not a forget id/);
  assert.match((await slash('forget confirm 0123456789abcdef', dm)).text, /no forget 0123456789abcdef is waiting/);
  assert.match((await slash('correct I live in Porto', dm)).text, /Usage: \/graphiti correct <what is no longer true> => <what is true now>/);
  assert.match((await slash('forget my therapist', group)).text, /in a group chat everyone would read/);
  const cli = await openclaw('forget', '--sender', 'ana');
  assert.equal(cli.exitCode, 2);
  assert.match(cli.stderr, /give the words of what to forget, or --all/);
  assert.equal((await openclaw('confirm-forget', 'none')).exitCode, 1);
  // drop and add take a forget id and item numbers; with no id they are words to forget.
  assert.match((await slash('forget drop 0123456789abcdef', dm)).text, /Usage: \/graphiti forget drop <id> <item number>/);
  assert.match((await slash('forget add 0123456789abcdef two', dm)).text, /Usage: \/graphiti forget add <id> <item number>/);
  assert.match((await slash('forget drop 0123456789abcdef 2,3', dm)).text, /nothing changed: no forget 0123456789abcdef is waiting/);
  assert.doesNotMatch((await slash('forget add ons for my bike', dm)).text, /Usage/);
  const badNumber = await openclaw('confirm-forget', '0123456789abcdef', '--drop', '2', '--drop', 'x');
  assert.equal(badNumber.exitCode, 2);
  assert.match(badNumber.stderr, /--drop "x" is not an item number/);
});

test('graphiti_forget and graphiti_correct are registered tools; the forget tool refuses a group chat', async () => {
  const { tool } = await registered();
  const forget = tool('graphiti_forget', { sessionKey: 'agent:main:telegram:group:42', requesterSenderId: 'ana' });
  assert.deepEqual(forget.parameters.required, ['query']);
  await assert.rejects(forget.execute('call-1', { query: 'therapist' }), /in a group chat everyone would read/);
  const correct = tool('graphiti_correct', { sessionKey: 'agent:main:telegram:direct:ana', requesterSenderId: 'ana' });
  assert.deepEqual(correct.parameters.required, ['old', 'now_true']);
});
