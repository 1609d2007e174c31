// Helpers for the end-to-end tests and the benchmark: a throwaway OpenClaw home, the Graphiti stand-in,
// a stub OpenAI-compatible model, and OpenClaw's own plugin loader and hook runner (not public API:
// located by export name in the pinned OpenClaw's dist/, never by hashed file name).

import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const PLUGIN_ID = 'graphiti-openclaw';
export const TOOLS_BIN = path.join(REPO, 'tools/node/bin');
const OPENCLAW_DIST = path.join(REPO, 'tools/node/node_modules/openclaw/dist');

export function packageTgz() {
  const version = JSON.parse(fs.readFileSync(path.join(REPO, 'plugin/openclaw/package.json'), 'utf8')).version;
  const tgz = path.join(REPO, `dist/${PLUGIN_ID}-${version}.tgz`);
  if (!fs.existsSync(tgz)) throw new Error(`${tgz} is missing: run scripts/package-openclaw.sh first`);
  return tgz;
}

/** The calls tests/openclaw/fake-mcp-server.js executed and logged to `file` (FAKE_MCP_CALLS), oldest first. */
export function executedCalls(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/** Waits until `check` returns something truthy, polling every `pollMs`; its value. */
export async function eventually(check, what, timeoutMs = 60_000, pollMs = 200) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * A fresh HOME for OpenClaw, and the environment its CLI runs with: no update check or automatic
 * update of the pinned OpenClaw (which CI=true alone turns off only in part).
 */
export function throwawayHome() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'openclaw-home-'));
  const env = { ...process.env, HOME: home, PATH: `${TOOLS_BIN}:${process.env.PATH}`, NO_COLOR: '1', OPENCLAW_STATE_DIR: '', OPENCLAW_NO_AUTO_UPDATE: '1' };
  delete env.OPENCLAW_STATE_DIR;
  return { home, env };
}

/** Runs the pinned `openclaw` CLI; rejects with its output when it fails. */
export async function openclaw(env, args, { timeoutMs = 120_000, cwd } = {}) {
  try {
    return await promisify(execFile)(path.join(TOOLS_BIN, 'openclaw'), args, { env, cwd, timeout: timeoutMs, maxBuffer: 64 << 20 });
  } catch (error) {
    throw new Error(`openclaw ${args.join(' ')} failed (${error.code}):\n${error.stdout}\n${error.stderr}`);
  }
}

/** The plugin's installed version, from `plugins list --json` (a fifth of `plugins inspect`'s CPU: it loads no plugin). */
export async function installedVersion(env) {
  const { stdout } = await openclaw(env, ['plugins', 'list', '--json']);
  const listed = JSON.parse(stdout.slice(stdout.indexOf('{'))).plugins.find((plugin) => plugin.id === PLUGIN_ID);
  if (!listed) throw new Error(`plugins list does not list ${PLUGIN_ID}:\n${stdout}`);
  return listed.version;
}

/** Sets OpenClaw config `entries` (`{ path, value }`) with one `config set --batch-json`: each CLI start costs seconds of CPU. */
export async function configSet(env, entries) {
  return openclaw(env, ['config', 'set', '--batch-json', JSON.stringify(entries)]);
}

/**
 * The Graphiti stand-in (both APIs) seeded with the demo group; `url` is its base URL. `args`: more
 * of its flags (tests/graphiti-standin/README.md), e.g. `--latency-ms 30`.
 */
export async function startStandIn({ args = [] } = {}) {
  const binary = path.join(REPO, 'target/release/graphiti-standin');
  const child = spawn(binary, ['--port', '0', '--seed', path.join(REPO, 'tests/graphiti-standin/seed/demo.json'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(seen);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`graphiti-standin exited (${code}); build it with scripts/build.sh`)));
  });
  return {
    url,
    async episodes(group, lastN = 10_000) {
      const response = await fetch(`${url}/episodes/${encodeURIComponent(group)}?last_n=${lastN}`);
      return response.json();
    },
    /** Every send it accepted (`name, group_id, via, at, request, episode_uuid`). */
    async sends() {
      return (await fetch(`${url}/__standin/sends`)).json();
    },
    /** Every Graphiti API request so far (`method, path, tool, body`). */
    async requests() {
      return (await fetch(`${url}/__standin/requests`)).json();
    },
    /** Lost, duplicated and unexpected episodes against the names expected (REST's two messages of one send count once). */
    async delivery(expected) {
      const response = await fetch(`${url}/__standin/delivery`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ expected }) });
      return response.json();
    },
    stop: () => child.kill(),
  };
}

/**
 * Writes a chat-completions answer (streamed when the request asked for it): `answer` is a text or
 * `{ toolCall: { name, arguments } }` (one tool call, its arguments an object).
 */
export function writeCompletion(res, request, answer, callNumber) {
  const base = { id: 'chatcmpl-stub', created: Math.floor(Date.now() / 1000), model: request.model ?? 'mock-1' };
  const toolCalls = typeof answer === 'object' ? [{
    id: `call_stub_${callNumber}`,
    type: 'function',
    function: { name: answer.toolCall.name, arguments: JSON.stringify(answer.toolCall.arguments) },
  }] : undefined;
  const message = toolCalls ? { role: 'assistant', content: null, tool_calls: toolCalls } : { role: 'assistant', content: answer };
  const finish = toolCalls ? 'tool_calls' : 'stop';
  if (request.stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta, finishReason) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
    res.write(chunk(toolCalls ? { role: 'assistant', tool_calls: toolCalls.map((c, index) => ({ index, ...c })) } : message, null));
    res.write(chunk({}, finish));
    res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`);
    return res.end('data: [DONE]\n\n');
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  return res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
}

/** The model list the provider's `GET …/models` gets. */
export function writeModels(res) {
  res.writeHead(200, { 'content-type': 'application/json' });
  return res.end(JSON.stringify({ object: 'list', data: [{ id: 'mock-1', object: 'model' }] }));
}

/**
 * An OpenAI-compatible chat-completions server on loopback that records every request body and
 * answers `reply` (streamed when asked to): a text, or a function of the request body returning a
 * text or `{ toolCall: { name, arguments } }` (one tool call, its arguments an object).
 */
export async function startStubModel(reply) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (req.method === 'GET' && req.url.endsWith('/models')) return writeModels(res);
    const request = body ? JSON.parse(body) : {};
    requests.push({ url: req.url, body: request });
    const answer = typeof reply === 'function' ? reply(request) : reply;
    return writeCompletion(res, request, answer, requests.length);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${server.address().port}/v1`, requests, stop: () => server.close() };
}

/** An export of OpenClaw's dist/ by its function name. */
async function openclawExport(name) {
  const declares = new RegExp(`\\b${name} as \\w+\\b|export \\{[^}]*\\b${name}\\b`);
  for (const file of fs.readdirSync(OPENCLAW_DIST).filter((f) => f.endsWith('.mjs')).sort()) {
    if (!declares.test(fs.readFileSync(path.join(OPENCLAW_DIST, file), 'utf8'))) continue;
    const module = await import(path.join(OPENCLAW_DIST, file));
    const found = Object.values(module).find((value) => typeof value === 'function' && value.name === name);
    if (found) return found;
  }
  throw new Error(`OpenClaw ${OPENCLAW_DIST} exports no ${name}: was the pinned version changed?`);
}

/**
 * Loads the plugin from `pluginDir` with OpenClaw's real loader (in this process; HOME must already
 * be the throwaway one) and returns OpenClaw's hook runner for it. `entries`: the whole
 * `plugins.entries` instead of the plugin's with `hooks.allowConversationAccess`; `full`: register as a
 * Gateway does (the capture service is registered, the component starts loading; OpenClaw starts no
 * service here); `logger`: what OpenClaw hands the plugin as `api.logger`.
 */
export async function loadWithOpenClaw(pluginDir, pluginConfig, { entries, full = false, logger } = {}) {
  const config = { plugins: { load: { paths: [pluginDir] }, entries: entries ?? { [PLUGIN_ID]: { enabled: true, hooks: { allowConversationAccess: true }, config: pluginConfig } } } };
  return loadConfiguredWithOpenClaw(config, { full, logger });
}

/**
 * The same with a whole OpenClaw config (e.g. a HOME's `openclaw.json`: installed plugins are found
 * through OpenClaw's install records) and the plugins `pluginIds`, each activated or not as OpenClaw
 * decides from that config.
 */
export async function loadConfiguredWithOpenClaw(config, { pluginIds = [PLUGIN_ID], full = false, logger } = {}) {
  const loadOpenClawPlugins = await openclawExport('loadOpenClawPlugins');
  const createHookRunner = await openclawExport('createHookRunner');
  const registry = loadOpenClawPlugins({
    config,
    onlyPluginIds: pluginIds,
    activate: false,
    ...(full ? { runtimeSideEffects: true } : {}),
    ...(logger ? { logger } : {}),
    cache: false,
  });
  return { registry, runner: createHookRunner(registry) };
}

/**
 * Past sessions in OpenClaw's own store under `home`, made as an older installation's would be
 * migrated: the harness writes a legacy `sessions.json` and JSONL transcripts, and OpenClaw's
 * Doctor (`openclaw doctor --fix`) imports them into its SQLite store.
 * @param {{ key: string, chatType?: string, turns: { at: number, user: string, reply: string, toolResult?: string }[] }[]} sessions
 */
export async function sessionStoreByDoctor(home, sessions) {
  const dir = path.join(home, '.openclaw/agents/main/sessions');
  fs.mkdirSync(dir, { recursive: true });
  const index = {};
  sessions.forEach(({ key, chatType = 'direct', turns }, s) => {
    const sessionId = `00000000-0000-4000-8000-${String(s).padStart(12, '0')}`;
    const first = turns[0]?.at ?? Date.now();
    index[key] = { sessionId, updatedAt: turns.at(-1)?.at ?? first, chatType, sessionFile: path.join(dir, `${sessionId}.jsonl`) };
    const rows = [{ type: 'session', version: 3, id: sessionId, timestamp: new Date(first).toISOString(), cwd: home }];
    let parentId = null;
    const row = (id, at, message) => {
      const made = { type: 'message', id, parentId, timestamp: new Date(at).toISOString(), message: { ...message, timestamp: at } };
      parentId = id;
      rows.push(made);
    };
    turns.forEach(({ at, user, reply, toolResult }, t) => {
      row(`u-${s}-${t}`, at, { role: 'user', content: user });
      if (toolResult) row(`t-${s}-${t}`, at + 500, { role: 'toolResult', toolCallId: `call-${t}`, content: [{ type: 'text', text: toolResult }] });
      row(`a-${s}-${t}`, at + 1000, { role: 'assistant', content: [{ type: 'text', text: reply }] });
    });
    fs.writeFileSync(path.join(dir, `${sessionId}.jsonl`), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  });
  fs.writeFileSync(path.join(dir, 'sessions.json'), JSON.stringify(index));
  const env = { ...process.env, HOME: home, NO_COLOR: '1', OPENCLAW_NO_AUTO_UPDATE: '1' };
  delete env.OPENCLAW_STATE_DIR;
  await openclaw(env, ['doctor', '--fix', '--non-interactive'], { timeoutMs: 600_000 });
}
