import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkToolCommand, expertsSlashCommand, graphitiSlashCommand, knowledgeCommand, outputText, recallSlashCommand } from '../src/commands.js';
import { toolCall } from '../src/index.js';

const ctx = { sessionKey: 'agent:main:telegram:group:7', agentId: 'main', senderId: 'u' };

test('/graphiti subcommands become component commands', () => {
  assert.deepEqual(graphitiSlashCommand('status', ctx), { command: { tag: 'status' } });
  assert.deepEqual(graphitiSlashCommand(' debug ', ctx), { command: { tag: 'debug', val: 'agent:main:telegram:group:7' } });
  const test = graphitiSlashCommand('intent-test  dinner with the founder', ctx).command;
  assert.equal(test.tag, 'intent-test');
  assert.equal(test.val[0].prompt, 'dinner with the founder');
  assert.equal(test.val[0].groupChat, true, 'routes as the chat it was asked in');
});

test('usage for help, unknown subcommands and missing arguments', () => {
  assert.match(graphitiSlashCommand('', ctx).usage, /\/graphiti status/);
  assert.match(graphitiSlashCommand('frobnicate', ctx).usage, /Unknown subcommand "frobnicate"/);
  assert.match(graphitiSlashCommand('intent-test', ctx).usage, /Usage: \/graphiti intent-test <text>/);
  assert.match(recallSlashCommand('  ', ctx).usage, /Usage: \/recall <query>/);
});

test('/recall searches the conversation\'s own group', () => {
  const { command } = recallSlashCommand('who is the CEO', ctx);
  assert.equal(command.tag, 'search');
  assert.equal(command.val.query, 'who is the CEO');
  assert.equal(command.val.ctx.chatType, 'group');
});

test('command output: stdout, stderr and a failing exit code', () => {
  assert.equal(outputText({ exitCode: 0, stdout: 'ok\n', stderr: '' }), 'ok');
  assert.equal(outputText({ exitCode: 2, stdout: '', stderr: 'bad\n' }), 'bad\n(exit code 2)');
});

test('/experts subcommands become component commands; missing names are usage errors', () => {
  assert.deepEqual(expertsSlashCommand('list').command, { tag: 'experts', val: { tag: 'list' } });
  assert.deepEqual(expertsSlashCommand('approve 1a2b3c4d').command, { tag: 'experts', val: { tag: 'approve', val: '1a2b3c4d' } });
  assert.match(expertsSlashCommand('prompt').usage, /Usage: \/experts prompt <name>/);
  assert.match(expertsSlashCommand('nope').usage, /Unknown subcommand "nope"/);
});

test('/graphiti spool lists by default, requeues on request, and names what it takes', () => {
  assert.deepEqual(graphitiSlashCommand('spool', ctx), { command: { tag: 'spool', val: { tag: 'list' } } });
  assert.deepEqual(graphitiSlashCommand('spool list', ctx), { command: { tag: 'spool', val: { tag: 'list' } } });
  assert.deepEqual(graphitiSlashCommand('spool Requeue', ctx), { command: { tag: 'spool', val: { tag: 'requeue' } } });
  assert.equal(graphitiSlashCommand('spool everything', ctx).usage, 'Usage: /graphiti spool [list|requeue]');
  assert.match(graphitiSlashCommand('help', ctx).usage, /\/graphiti spool \[requeue\]/);
});

test('experts check-tool: the call, the session and the expert as the component\'s command', () => {
  const { val } = checkToolCommand('tool_call', '{"id":"hold_booking"}', { session: 'agent:main:expert:x', agent: 'main' });
  assert.equal(val.tag, 'check-tool');
  const [expert, call, ctx] = val.val;
  assert.equal(expert, undefined);
  assert.deepEqual(call, { toolName: 'tool_call', argumentsJson: '{"id":"hold_booking"}', callId: undefined });
  assert.equal(ctx.sessionKey, 'agent:main:expert:x');
  assert.equal(ctx.agentId, 'main');
  assert.equal(checkToolCommand('read', undefined, { expert: 'x' }).val.val[1].argumentsJson, '{}');
  assert.equal(checkToolCommand('read', undefined, { expert: 'x' }).val.val[0], 'x');
});

test('expert_knowledge asks with the calling session\'s context', () => {
  const command = knowledgeCommand('negotiated-rates', { sessionKey: 'agent:main:expert:x', agentId: 'main' });
  assert.equal(command.val.tag, 'knowledge');
  assert.equal(command.val.val[0], 'negotiated-rates');
  assert.equal(command.val.val[1].sessionKey, 'agent:main:expert:x');
});

test('before_tool_call: the call id comes from the event, else the context', () => {
  assert.equal(toolCall({ toolName: 'tool_call', params: { id: 'x' }, toolCallId: 'call-1' }, {}).callId, 'call-1');
  assert.equal(toolCall({ toolName: 'x', params: {} }, { toolCallId: 'call-2' }).callId, 'call-2');
  assert.equal(toolCall({ toolName: 'x' }, {}).callId, undefined);
  assert.equal(toolCall({ toolName: 'x' }, {}).argumentsJson, '{}');
});
