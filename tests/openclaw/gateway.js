// A real OpenClaw Gateway for the end-to-end tests: on loopback, on a free port, with a token, its
// output kept (OpenClaw's file log is shared by every HOME: /tmp/openclaw/openclaw-<date>.log).
// Ready when it prints `[gateway] ready`. Always stopped with SIGKILL: after a crash recovery a
// SIGTERM may drain for minutes.

import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PLUGIN_ID, REPO, configSet, openclaw, packageTgz } from './openclaw.js';

const OPENCLAW = path.join(REPO, 'tools/node/bin/openclaw');
const load = (name) => import(pathToFileURL(createRequire(path.join(REPO, 'tools/node/package.json')).resolve(name)).href);

export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts `openclaw gateway run` and waits until it is ready.
 * @param {NodeJS.ProcessEnv} env  the throwaway HOME's environment
 * @returns {Promise<{ child: import('node:child_process').ChildProcess, output: () => string,
 *   readyMs: number, url: string, kill: () => Promise<void> }>}
 */
export async function startGateway(env, { port, token, timeoutMs = 120_000 }) {
  const child = spawn(OPENCLAW, ['gateway', 'run', '--port', String(port), '--bind', 'loopback', '--auth', 'token', '--token', token, '--allow-unconfigured'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks = [];
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => chunks.push(String(chunk)));
  const output = () => chunks.join('');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Gateway exited (${child.exitCode}):\n${output()}`);
    if (output().includes('[gateway] ready')) break;
    if (Date.now() - started > timeoutMs) {
      await kill();
      throw new Error(`the Gateway was not ready within ${timeoutMs} ms:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { child, output, readyMs: Date.now() - started, url: `http://127.0.0.1:${port}`, kill };
}

/**
 * A Gateway connection as a CLI client with only `scopes` (the Gateway honours the scopes a
 * loopback CLI client asks for with the shared token); `call` answers `{ ok, payload | error }`.
 */
export async function scopedClient(port, token, scopes) {
  const { default: WebSocket } = await load('ws');
  const socket = new WebSocket(`ws://127.0.0.1:${port}`);
  const waiting = new Map();
  let challenge;
  const challenged = new Promise((resolve) => { challenge = resolve; });
  socket.on('message', (data) => {
    const message = JSON.parse(String(data));
    if (message.type === 'event' && message.event === 'connect.challenge') challenge();
    if (message.type === 'res' && waiting.has(message.id)) {
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    }
  });
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
  const call = (method, params) => new Promise((resolve) => {
    const id = crypto.randomUUID();
    waiting.set(id, resolve);
    socket.send(JSON.stringify({ type: 'req', id, method, params }));
  });
  await challenged;
  const hello = await call('connect', {
    minProtocol: 4,
    maxProtocol: 4,
    client: { id: 'cli', version: '0.0.1', platform: 'linux', mode: 'cli' },
    role: 'operator',
    scopes,
    caps: [],
    auth: { token },
  });
  if (!hello.ok) throw new Error(`connect refused: ${JSON.stringify(hello.error)}`);
  return { scopes: hello.payload?.auth?.scopes, call, close: () => socket.close() };
}

/** The scopes a loopback `openclaw gateway call` may use with the shared token. */
const CLI_SCOPES = ['operator.admin', 'operator.read', 'operator.write', 'operator.approvals', 'operator.questions', 'operator.pairing', 'operator.talk.secrets'];
/** A call the Gateway has not answered in this long fails. */
const CALL_TIMEOUT_MS = 60_000;

/**
 * One Gateway RPC as the CLI's `openclaw gateway call` makes it (a loopback client with the shared
 * token), on a connection of its own, from this process: spawning the CLI costs a second of CPU.
 */
export async function gatewayCall({ port, token }, method, params) {
  const client = await scopedClient(port, token, CLI_SCOPES);
  let timer;
  try {
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${method}: no answer from the Gateway within ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
    });
    const answer = await Promise.race([client.call(method, params), late]);
    if (!answer.ok) throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
    return answer.payload;
  } finally {
    clearTimeout(timer);
    client.close();
  }
}

/** The stub model at `baseUrl` as OpenClaw's provider `mock`, model `mock-1`. */
export function mockProvider(baseUrl) {
  return { baseUrl, apiKey: 'dummy', api: 'openai-completions', models: [{ id: 'mock-1', name: 'Mock 1', reasoning: false, input: ['text'], contextWindow: 32000, maxTokens: 1024 }] };
}

/**
 * Configures the plugin installed in the throwaway HOME of `env`: its turn hooks allowed,
 * `pluginConfig`, the stub model at `modelUrl` as the agents' model, and `more` config entries
 * (`{ path, value }`).
 */
export async function configurePlugin(env, { pluginConfig, modelUrl, more = [] }) {
  await configSet(env, [
    { path: `plugins.entries.${PLUGIN_ID}.hooks.allowConversationAccess`, value: true },
    { path: `plugins.entries.${PLUGIN_ID}.config`, value: pluginConfig },
    { path: 'models.providers.mock', value: mockProvider(modelUrl) },
    { path: 'agents.defaults.model', value: 'mock/mock-1' },
    ...more,
  ]);
}

/**
 * The plugins a test Gateway loads: this one and memory-core, beside which it is meant to run. A
 * Gateway otherwise loads every bundled plugin (providers, browser, canvas, …), which no test here
 * uses and which costs each Gateway start CPU the two-core test machine does not have to spare.
 */
export const GATEWAY_PLUGINS = [PLUGIN_ID, 'memory-core'];

/**
 * Installs the packaged plugin in the throwaway HOME of `env` (unless `install` is false: one
 * installed already), configures it as {@link configurePlugin} does with the Gateway in local mode
 * and only {@link GATEWAY_PLUGINS} allowed, then starts a Gateway on a free port.
 * @returns {Promise<{ gateway: Awaited<ReturnType<typeof startGateway>>, port: number }>}
 */
export async function gatewayWithPlugin(env, { token, pluginConfig, modelUrl, more = [], install = true }) {
  const port = await freePort();
  if (install) await openclaw(env, ['plugins', 'install', packageTgz(), '--force', '--accept-capabilities']);
  await configurePlugin(env, {
    pluginConfig,
    modelUrl,
    more: [{ path: 'gateway.mode', value: 'local' }, { path: 'plugins.allow', value: GATEWAY_PLUGINS }, ...more],
  });
  return { gateway: await startGateway(env, { port, token }), port };
}
