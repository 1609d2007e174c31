import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expertsSlashCommand, graphitiSlashCommand, outputText, recallSlashCommand } from '../src/commands.js';

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
