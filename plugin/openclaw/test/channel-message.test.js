// `message_received` as the WIT `channel-message`: the session the message is in and whether OpenClaw
// takes its text for a command, by OpenClaw's own helpers (the component decides what fires).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commandClassifier, messageReceived } from '../src/index.js';

function logger() {
  const lines = [];
  const log = (level) => (message) => lines.push(`${level}: ${message}`);
  return { lines, info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
}

/** A runtime that records the messages passed to the component. */
function recording(isCommand) {
  const messages = [];
  return {
    messages,
    logger: logger(),
    isCommand,
    async channelMessage(message) {
      messages.push(message);
      return { start: [], deliver: [], notes: [], tickInMs: undefined };
    },
    kickRunner() {},
  };
}

test('a channel message carries its session and OpenClaw\'s command classification to the component', async () => {
  const rt = recording(async (text) => text.startsWith('/experts'));
  await messageReceived(rt, { content: '/experts list', senderId: 'u-1', sessionKey: 'agent:main:telegram:direct:u-1' }, { channelId: 'telegram', conversationId: 'c-1' });
  await messageReceived(rt, { content: 'Any update?', senderId: 'u-1' }, { channelId: 'webchat', sessionKey: 'agent:main:expert:ops-expert:inv-3' });
  await messageReceived(rt, { content: 'Where is my order?' }, { channelId: 'telegram', senderId: 'u-2', sessionKey: '' });
  assert.deepEqual(rt.messages, [
    { channelName: 'telegram', senderId: 'u-1', messageText: '/experts list', chatId: 'c-1', sessionKey: 'agent:main:telegram:direct:u-1', command: true },
    { channelName: 'webchat', senderId: 'u-1', messageText: 'Any update?', chatId: undefined, sessionKey: 'agent:main:expert:ops-expert:inv-3', command: false },
    { channelName: 'telegram', senderId: 'u-2', messageText: 'Where is my order?', chatId: undefined, sessionKey: undefined, command: false },
  ]);
});

test('a command is what OpenClaw says is one: its own or an abort word, or a registered plugin command', async () => {
  const seen = [];
  const config = { commands: {} };
  const api = {
    config,
    runtime: { channel: { commands: { isControlCommandMessage: (text, cfg) => { seen.push(cfg); return text === '/status' || text === 'stop'; } } } },
  };
  const sdk = { matchPluginCommand: (body) => (body.startsWith('/experts') ? { command: { name: 'experts' }, args: 'list' } : null) };
  const log = logger();
  const isCommand = commandClassifier(api, log, async () => sdk);
  assert.equal(await isCommand('/status'), true);
  assert.equal(await isCommand('stop'), true, 'an abort word, as OpenClaw classifies it');
  assert.equal(await isCommand('  /experts list'), true, 'a plugin\'s command');
  assert.equal(await isCommand('/nosuchcommand please'), false, 'a slash alone is not a command to OpenClaw');
  assert.equal(await isCommand('Where is my order?'), false);
  assert.ok(seen.every((cfg) => cfg === config), 'with OpenClaw\'s config (disabled commands are not commands)');
  assert.deepEqual(log.lines, []);
});

test('without OpenClaw\'s helpers a leading slash counts as a command, said once', async () => {
  const log = logger();
  const isCommand = commandClassifier({ config: {}, runtime: {} }, log, async () => { throw new Error('Cannot find package \'openclaw\''); });
  assert.equal(await isCommand('/experts list'), true);
  assert.equal(await isCommand('Where is my order?'), false);
  const warnings = log.lines.filter((l) => l.startsWith('warn:'));
  assert.ok(warnings.length >= 1 && warnings.every((w) => w.includes('taken for one')), log.lines.join('\n'));

  const noSdk = logger();
  const partial = commandClassifier({ config: {}, runtime: { channel: { commands: { isControlCommandMessage: () => false } } } }, noSdk, async () => { throw new Error('Cannot find package \'openclaw\''); });
  assert.equal(await partial('/experts list'), true);
  assert.ok(noSdk.lines.some((l) => l.startsWith('warn:') && l.includes('Cannot find package')), noSdk.lines.join('\n'));
});
