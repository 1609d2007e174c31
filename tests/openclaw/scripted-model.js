// A scripted stub model for the expert-run tests: it tells which session a request comes from (an
// expert invocation's, recognised by the expert's system prompt and the run's message, or the main
// session), answers what the test's script says for it (a text, a tool call, an HTTP 400, a delay,
// or no answer at all), and logs every request with its session, attempt and start and end times.

import http from 'node:http';
import { writeCompletion, writeModels } from './openclaw.js';

/** The text of an OpenAI message's content (a string, or text parts). */
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === 'string' ? part : part?.text ?? '')).join('');
  return '';
}

/**
 * What the script is told about a request.
 * @typedef {{ n: number, session: string, expert: boolean, attempt: number, prompt: string,
 *   toolResults: string[], firstOfTurn: boolean, summary?: string, system: string }} RequestInfo
 *   `session`: the invocation (`inv-3`) for an expert session, else `main`; `prompt`: the current
 *   turn's message; `toolResults`: the tool results of this turn so far
 */

/** The main-session turns in `log` that delivered something of `invocation` (their message names it). */
export function deliveries(log, invocation, what = /./) {
  return log.filter((r) => r.session === 'main' && r.firstOfTurn && r.prompt.includes(`(${invocation},`) && what.test(r.prompt));
}

/** @returns {RequestInfo} */
export function describe(request, n, persona) {
  const messages = request.messages ?? [];
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => contentText(m.content)).join('\n');
  const isPrompt = (m) => m.role === 'user' && !contentText(m.content).includes('OPENCLAW_INTERNAL_CONTEXT');
  const last = messages.map(isPrompt).lastIndexOf(true);
  const prompt = last >= 0 ? contentText(messages[last].content) : '';
  const after = messages.slice(last + 1);
  const toolResults = after.filter((m) => m.role === 'tool').map((m) => contentText(m.content));
  const expert = system.includes(persona);
  const userText = messages.filter(isPrompt).map((m) => contentText(m.content)).join('\n');
  const invocation = expert ? /invocation (inv-\d+)/.exec(userText)?.[1] : undefined;
  return {
    n,
    session: expert ? invocation ?? 'expert?' : 'main',
    expert,
    attempt: Number(/## Attempt (\d+)/.exec(prompt)?.[1] ?? 1),
    prompt,
    toolResults,
    firstOfTurn: !after.some((m) => m.role === 'assistant' || m.role === 'tool'),
    summary: /"summary": "([^"]*)"/.exec(userText)?.[1],
    system,
  };
}

/**
 * @param {(info: RequestInfo) => string | { toolCall: { name: string, arguments: object } }
 *   | { status: number, message?: string } | { hang: true } | { delayMs: number, answer: any }} script
 * @param {{ persona: string }} options  a line of the expert's system prompt that only its sessions have
 */
export async function startScriptedModel(script, { persona }) {
  /** Every completion request: its RequestInfo (without the long texts), start and end, and answer. */
  const log = [];
  const hanging = new Set();
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (req.method === 'GET') return writeModels(res);
    const request = body ? JSON.parse(body) : {};
    const info = describe(request, log.length + 1, persona);
    const entry = {
      n: info.n, session: info.session, expert: info.expert, attempt: info.attempt, firstOfTurn: info.firstOfTurn,
      toolResults: info.toolResults.length, summary: info.summary, prompt: info.prompt.slice(0, 8000),
      startMs: Date.now(), endMs: undefined, answer: undefined,
    };
    log.push(entry);
    let action = script(info);
    if (action && typeof action === 'object' && 'delayMs' in action) {
      await new Promise((resolve) => setTimeout(resolve, action.delayMs));
      action = action.answer;
    }
    if (action && typeof action === 'object' && action.hang) {
      // No answer until the connection goes (the Gateway is killed) or the test lets go.
      entry.answer = 'hang';
      await new Promise((resolve) => {
        const done = () => { hanging.delete(done); resolve(); };
        hanging.add(done);
        res.on('close', done);
      });
      entry.endMs = Date.now();
      if (!res.writableEnded && !res.destroyed) writeCompletion(res, request, 'Released.', info.n);
      return undefined;
    }
    if (action && typeof action === 'object' && 'status' in action) {
      entry.answer = String(action.status);
      res.writeHead(action.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: action.message ?? `stub: HTTP ${action.status} on demand`, type: action.status === 400 ? 'invalid_request_error' : 'server_error' } }));
      entry.endMs = Date.now();
      return undefined;
    }
    entry.answer = typeof action === 'object' ? `tool ${action.toolCall.name}` : 'text';
    writeCompletion(res, request, action, info.n);
    entry.endMs = Date.now();
    return undefined;
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    log,
    /** Answers every request left hanging. */
    release: () => { for (const done of [...hanging]) done(); },
    stop: () => {
      for (const done of [...hanging]) done();
      server.closeAllConnections?.();
      server.close();
    },
  };
}
