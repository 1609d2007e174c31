import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkToolCommand, dueMoment, expertsCommand, expertsSlashCommand, graphitiSlashCommand, knowledgeCommand, learnCommand, outputText, queuesWork, recallSlashCommand, stepCommand } from '../src/commands.js';
import { installSource, toolCall } from '../src/index.js';

const ctx = { sessionKey: 'agent:main:telegram:group:7', agentId: 'main', senderId: 'u' };

test('/graphiti subcommands become component commands', () => {
  assert.deepEqual(graphitiSlashCommand('status', ctx), { command: { tag: 'status' } });
  assert.deepEqual(graphitiSlashCommand(' debug ', ctx), { command: { tag: 'debug', val: 'agent:main:telegram:group:7' } });
  const test = graphitiSlashCommand('intent-test  dinner with the founder', ctx).command;
  assert.equal(test.tag, 'intent-test');
  assert.equal(test.val.request.prompt, 'dinner with the founder');
  assert.equal(test.val.format, 'text');
  assert.equal(test.val.request.groupChat, true, 'routes as the chat it was asked in');
});

test('/graphiti pause and resume act on the chat the command came from', () => {
  const paused = graphitiSlashCommand('pause', ctx).command;
  assert.equal(paused.tag, 'memory');
  assert.equal(paused.val.tag, 'pause');
  assert.equal(paused.val.val.sessionKey, 'agent:main:telegram:group:7');
  assert.equal(paused.val.val.senderId, 'u');
  assert.equal(graphitiSlashCommand(' Resume ', ctx).command.val.tag, 'resume');
  assert.match(graphitiSlashCommand('pause everything', ctx).usage, /it acts on this chat/);
  assert.match(graphitiSlashCommand('help', ctx).usage, /\/graphiti pause/);
});

test('/graphiti memories asks for this chat, as the chat (not an operator)', () => {
  const { command } = graphitiSlashCommand('memories where I work', ctx);
  assert.deepEqual(command.val.tag, 'see');
  assert.equal(command.val.val.query, 'where I work');
  assert.equal(command.val.val.operator, false);
  assert.equal(command.val.val.ctx.sessionKey, 'agent:main:telegram:group:7');
  assert.equal(graphitiSlashCommand('memories', ctx).command.val.val.query, undefined);
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

test('a command answers a chat in words, never with an exit code', () => {
  assert.equal(outputText({ exitCode: 0, stdout: 'ok\n', stderr: '' }), 'ok');
  assert.equal(outputText({ exitCode: 1, stdout: 'Forget 0123 (group g):\n', stderr: 'Still said in a summary\n' }), 'Forget 0123 (group g):\nStill said in a summary');
  assert.equal(outputText({ exitCode: 2, stdout: '', stderr: '' }), '(failed, with no message)');
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
  const { expert, call, ctx } = val.val;
  assert.equal(expert, undefined);
  assert.deepEqual(call, { toolName: 'tool_call', argumentsJson: '{"id":"hold_booking"}', callId: undefined });
  assert.equal(ctx.sessionKey, 'agent:main:expert:x');
  assert.equal(ctx.agentId, 'main');
  assert.equal(checkToolCommand('read', undefined, { expert: 'x' }).val.val.call.argumentsJson, '{}');
  assert.equal(checkToolCommand('read', undefined, { expert: 'x' }).val.val.expert, 'x');
});

test('expert_knowledge asks with the calling session\'s context', () => {
  const command = knowledgeCommand('negotiated-rates', { sessionKey: 'agent:main:expert:x', agentId: 'main' });
  assert.equal(command.val.tag, 'knowledge');
  assert.equal(command.val.val.file, 'negotiated-rates');
  assert.equal(command.val.val.ctx.sessionKey, 'agent:main:expert:x');
});

test('before_tool_call: the call id comes from the event, else the context', () => {
  assert.equal(toolCall({ toolName: 'tool_call', params: { id: 'x' }, toolCallId: 'call-1' }, {}).callId, 'call-1');
  assert.equal(toolCall({ toolName: 'x', params: {} }, { toolCallId: 'call-2' }).callId, 'call-2');
  assert.equal(toolCall({ toolName: 'x' }, {}).callId, undefined);
  assert.equal(toolCall({ toolName: 'x' }, {}).argumentsJson, '{}');
});

test('/experts for runs: queue, dead-letters, reject, replay and run with a message of several words', () => {
  const command = (args) => expertsSlashCommand(args).command?.val;
  assert.deepEqual(command('queue'), { tag: 'queue' });
  assert.deepEqual(command('dead-letters'), { tag: 'dead-letters' });
  assert.deepEqual(command('reject 9f8e'), { tag: 'reject', val: '9f8e' });
  assert.deepEqual(command('replay inv-12'), { tag: 'replay', val: 'inv-12' });
  const run = (fields) => ({ tag: 'run', val: { process: undefined, inputsJson: '', dryRun: false, ...fields } });
  assert.deepEqual(command('run ops-expert  Summarise today\'s  tickets '), run({ expert: 'ops-expert', message: 'Summarise today\'s  tickets' }));
  assert.match(expertsSlashCommand('run ops-expert').usage, /^Usage: \/experts run <expert> \[--process <name> \[--inputs <json object>\]\] \[--dry-run\] \[<message>\]$/);
  assert.equal(expertsSlashCommand('replay').usage, 'Usage: /experts replay <id>');
  assert.match(expertsSlashCommand('remove ops-expert').usage, /Unknown subcommand "remove"/, 'changing the experts directory is the CLI\'s');
  assert.match(expertsSlashCommand('help').usage, /\/experts run <expert> <message>/);
  assert.ok(queuesWork(expertsSlashCommand('approve ab').command) && queuesWork(expertsSlashCommand('run a b').command));
  assert.ok(!queuesWork(expertsSlashCommand('queue').command));
});

test('/experts run of a process: its inputs a JSON object with spaces and braces in strings, a dry run, a note', () => {
  const command = (args) => expertsSlashCommand(args).command?.val?.val;
  const inputs = '{"ticket_id": "T-9", "summary": "a } brace", "nested": {"a": 1}}';
  assert.deepEqual(command(`run ops-expert --process triage --inputs ${inputs} --dry-run check the refund`), {
    expert: 'ops-expert', message: 'check the refund', process: 'triage', inputsJson: inputs, dryRun: true,
  });
  assert.deepEqual(command('run ops-expert --dry-run --process triage'), { expert: 'ops-expert', message: '', process: 'triage', inputsJson: '', dryRun: true });
  assert.match(expertsSlashCommand('run ops-expert --process triage --inputs {"a": ').usage, /^--inputs needs a JSON object/);
  assert.match(expertsSlashCommand('run ops-expert --inputs {} hi').usage, /^--inputs are a process's/);
  assert.match(expertsSlashCommand('run ops-expert --process --dry-run').usage, /^--process needs a process name/);
  assert.match(expertsSlashCommand('run ops-expert --dry-run').usage, /^Usage: \/experts run/, 'a dry run of nothing');
});

test('openclaw graphiti experts: fire, due, bind, remove and install as the component\'s commands', (t) => {
  assert.deepEqual(expertsCommand('fire', { expert: 'ops-expert', trigger: 'new_ticket', payloadJson: '{}' }).val, { tag: 'fire', val: { expert: 'ops-expert', trigger: 'new_ticket', payloadJson: '{}' } });
  assert.deepEqual(expertsCommand('bind', { expert: 'ops-expert', tool: 'tickets', server: 'tickets-mcp' }).val, { tag: 'bind', val: { expert: 'ops-expert', tool: 'tickets', server: 'tickets-mcp' } });
  assert.deepEqual(expertsCommand('remove', 'ops-expert').val, { tag: 'remove', val: 'ops-expert' });
  assert.equal(dueMoment('2026-11-23T07:00:00+01:00'), BigInt(Date.parse('2026-11-23T06:00:00Z')));
  assert.equal(dueMoment('1795392000000'), 1795392000000n);
  assert.equal(dueMoment(undefined, () => 42), 42n);
  assert.throws(() => dueMoment('tomorrow'), /neither RFC 3339/);
  assert.throws(() => dueMoment('2026-11-23'), /neither RFC 3339/, 'a date without a time and zone is ambiguous');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'install-source-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'pkg'));
  fs.writeFileSync(path.join(dir, 'pkg.tgz'), Buffer.from([0x1f, 0x8b, 0]));
  const fromDir = installSource(path.join(dir, 'pkg'));
  assert.deepEqual(fromDir.command.val, { tag: 'install', val: { tag: 'directory', val: path.join(dir, 'pkg') } });
  assert.equal(fromDir.installDir, path.join(dir, 'pkg'), 'mounted at /install');
  const fromArchive = installSource(path.join(dir, 'pkg.tgz'));
  assert.equal(fromArchive.command.val.val.tag, 'archive');
  assert.equal(fromArchive.command.val.val.val.name, path.join(dir, 'pkg.tgz'));
  assert.deepEqual([...fromArchive.command.val.val.val.bytes], [0x1f, 0x8b, 0]);
  assert.equal(fromArchive.installDir, undefined);
  assert.throws(() => installSource(path.join(dir, 'missing')), /no such file or directory/);
});

test('expert_step and expert_learning carry the calling session\'s context', () => {
  const session = { sessionKey: 'agent:main:expert:ops-expert:inv-3', agentId: 'main' };
  const step = stepCommand('Read the ticket', session).val;
  assert.equal(step.tag, 'step');
  assert.equal(step.val.step, 'Read the ticket');
  assert.equal(step.val.ctx.sessionKey, 'agent:main:expert:ops-expert:inv-3');
  const proposal = { scope: 'classify', title: 't', observation: 'o', correction: 'c', confidence: 'high' };
  const learn = learnCommand(proposal, session).val;
  assert.equal(learn.tag, 'learn');
  assert.deepEqual(JSON.parse(learn.val.proposalJson), proposal);
});
