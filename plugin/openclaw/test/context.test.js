import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentEndEvent, chatTypeOf, hookContext, promptEvent } from '../src/context.js';

test('chat type comes from the channel when it says, else from the session key', () => {
  assert.equal(chatTypeOf({ sessionKey: 'agent:main:telegram:group:-1001' }), 'group');
  assert.equal(chatTypeOf({ sessionKey: 'agent:main:discord:channel:42' }), 'group');
  assert.equal(chatTypeOf({ sessionKey: 'agent:main:telegram:direct:alice' }), 'direct');
  assert.equal(chatTypeOf({ sessionKey: 'agent:main:main' }), 'unknown');
  assert.equal(chatTypeOf({ sessionKey: 'agent:main:main', channelContext: { chat: { chatType: 'group' } } }), 'group');
  assert.equal(chatTypeOf({}), 'unknown');
});

test('the hook context maps field by field, with fallbacks for tool contexts', () => {
  const ctx = hookContext({ sessionKey: 'agent:main:slack:group:c1', sessionId: 's', agentId: 'main', senderId: 'u1', chatId: 'c1', channel: 'slack', trigger: 'user', runId: 'r1', extra: 1 });
  assert.deepEqual(ctx, { sessionKey: 'agent:main:slack:group:c1', sessionId: 's', agentId: 'main', senderId: 'u1', senderName: undefined, chatId: 'c1', channel: 'slack', chatType: 'group', trigger: 'user', runId: 'r1', inputProvenance: undefined });
  const tool = hookContext({ agentId: 'main', requesterSenderId: 'u2', messageChannel: 'telegram', sessionKey: '  ' });
  assert.equal(tool.senderId, 'u2');
  assert.equal(tool.channel, 'telegram');
  assert.equal(tool.sessionKey, undefined, 'blank is absent');
  assert.equal(hookContext({ nativeChannelId: '-100555', requesterSenderId: 'u2' }).chatId, '-100555', "a tool's chat");
  // A command's channelId is the channel's name: it must not become the chat (and so its group).
  assert.equal(hookContext({ sessionKey: 'agent:main:telegram:group:555', channelId: 'webchat', senderId: 'u1' }).chatId, undefined);
});

test("the sender's display name comes from the channel's sender details, under the names channels use", () => {
  const named = (sender) => hookContext({ senderId: 'u1', channelContext: { sender } }).senderName;
  assert.equal(named({ id: 'u1', displayName: 'Alex Rivera', username: 'alexr' }), 'Alex Rivera');
  assert.equal(named({ id: 'u1', name: 'Priya' }), 'Priya');
  assert.equal(named({ id: 'u1', username: 'alexr' }), 'alexr');
  assert.equal(named({ id: 'u1', displayName: '  ' }), undefined, 'blank is absent');
  assert.equal(hookContext({ senderName: 'Sam', channelContext: { sender: { name: 'Other' } } }).senderName, 'Sam');
});

test('events: prompt and messages as JSON; a turn with an error is not a success', () => {
  assert.deepEqual(promptEvent({ prompt: 'hi', messages: [{ role: 'user', content: 'hi' }] }), { prompt: 'hi', messagesJson: '[{"role":"user","content":"hi"}]' });
  assert.deepEqual(promptEvent({}), { prompt: '', messagesJson: '[]' });
  const circular = { role: 'user', content: 'x' };
  circular.self = circular;
  assert.equal(promptEvent({ prompt: 'x', messages: [circular] }).messagesJson, '[{"role":"user","content":"x"}]');
  assert.equal(agentEndEvent({ success: true, messages: [] }).success, true);
  assert.equal(agentEndEvent({ success: true, error: 'boom' }).success, false);
  assert.equal(agentEndEvent({ success: true, durationMs: 12.4 }).durationMs, 12n);
});

test("the input's provenance is the kind OpenClaw classified it as, absent when it did not say", () => {
  assert.equal(hookContext({ trigger: 'user', inputProvenance: { kind: 'inter_session', sourceTool: 'sessions_send' } }).inputProvenance, 'inter_session');
  assert.equal(hookContext({ inputProvenance: { kind: 'external_user' } }).inputProvenance, 'external_user');
  assert.equal(hookContext({ trigger: 'user' }).inputProvenance, undefined);
  assert.equal(hookContext({ inputProvenance: {} }).inputProvenance, undefined);
});
