// `openclaw graphiti experts validate <name>`: besides the component's two validation phases, whether
// each MCP server the package is bound to answers. A server with a `command` is spawned, sent MCP's
// `initialize` over stdio and killed; one with a `url` gets the `initialize` POSTed. Each has 5 s.

import { spawn } from 'node:child_process';

export const MCP_CHECK_TIMEOUT_MS = 5_000;

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'graphiti-openclaw experts validate', version: '1' } },
};

/**
 * The MCP servers a validation report names as binding targets (`✓ All required tools bound
 * (tickets → tickets-mcp, …)`), in order, once each.
 * @param {string} report  the component's `experts validate` output
 */
export function boundServers(report) {
  const names = [];
  for (const line of report.split('\n').filter((l) => /tools bound \(/.test(l))) {
    const list = /tools bound \((.*)\)\s*$/.exec(line)?.[1] ?? '';
    for (const match of list.matchAll(/→ ([^,\s)]+)/g)) {
      if (!names.includes(match[1])) names.push(match[1]);
    }
  }
  return names;
}

/** What an `initialize` result says about the server, for the ✓ line. */
function describe(result) {
  const info = result?.serverInfo;
  return info?.name ? `${info.name}${info.version ? ` ${info.version}` : ''}` : 'answered';
}

/**
 * Spawns a stdio server, sends `initialize`, waits for its answer (at most `timeoutMs`), kills it.
 * @returns {Promise<{ ok: boolean, detail: string }>}
 */
export function checkStdioServer(entry, timeoutMs = MCP_CHECK_TIMEOUT_MS) {
  return new Promise((resolve) => {
    let child;
    let settled = false;
    let stdout = '';
    let stderr = '';
    const settle = (ok, detail) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child && child.exitCode === null) child.kill('SIGKILL');
      resolve({ ok, detail });
    };
    const timer = setTimeout(() => settle(false, `no answer to initialize within ${timeoutMs / 1000} s`), timeoutMs);
    try {
      child = spawn(entry.command, Array.isArray(entry.args) ? entry.args.map(String) : [], {
        cwd: typeof entry.cwd === 'string' ? entry.cwd : undefined,
        env: { ...process.env, ...(entry.env && typeof entry.env === 'object' ? entry.env : {}) },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    } catch (error) {
      settle(false, `cannot start ${entry.command}: ${error?.message ?? error}`);
      return;
    }
    child.on('error', (error) => settle(false, `cannot start ${entry.command}: ${error?.message ?? error}`));
    child.on('exit', (code, signal) => settle(false, `exited (${signal ?? code}) before answering${stderr.trim() ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`));
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      for (;;) {
        const end = stdout.indexOf('\n');
        if (end < 0) break;
        const line = stdout.slice(0, end).trim();
        stdout = stdout.slice(end + 1);
        if (!line) continue;
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          continue; // a log line on stdout: not the answer
        }
        if (message?.id !== INITIALIZE.id) continue;
        if (message.error) settle(false, `initialize failed: ${message.error.message ?? JSON.stringify(message.error)}`);
        else settle(true, describe(message.result));
      }
    });
    child.stdin.on('error', () => {});
    child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
  });
}

/**
 * POSTs `initialize` to a Streamable HTTP server (JSON or an event stream answer).
 * @returns {Promise<{ ok: boolean, detail: string }>}
 */
export async function checkHttpServer(entry, timeoutMs = MCP_CHECK_TIMEOUT_MS) {
  try {
    const response = await fetch(entry.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(entry.headers ?? {}) },
      body: JSON.stringify(INITIALIZE),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    const text = (await response.text()).slice(0, 1 << 20);
    if (!response.ok) return { ok: false, detail: `HTTP ${response.status} to initialize` };
    const payloads = response.headers.get('content-type')?.includes('text/event-stream')
      ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim())
      : [text];
    for (const payload of payloads) {
      try {
        const message = JSON.parse(payload);
        if (message?.error) return { ok: false, detail: `initialize failed: ${message.error.message ?? JSON.stringify(message.error)}` };
        if (message?.result) return { ok: true, detail: describe(message.result) };
      } catch {
        // not JSON: keep looking
      }
    }
    return { ok: false, detail: 'the answer to initialize has no result' };
  } catch (error) {
    const timedOut = error?.name === 'TimeoutError' || error?.name === 'AbortError';
    return { ok: false, detail: timedOut ? `no answer to initialize within ${timeoutMs / 1000} s` : String(error?.cause?.message ?? error?.message ?? error) };
  }
}

/**
 * One line per bound server: ✓ when it answered `initialize`, ✗ with why not.
 * @param {string[]} names  the servers the package is bound to
 * @param {Record<string, any> | undefined} servers  OpenClaw's `mcp.servers`
 * @returns {Promise<{ lines: string[], failed: number }>}
 */
export async function checkServers(names, servers, timeoutMs = MCP_CHECK_TIMEOUT_MS) {
  const results = await Promise.all(names.map(async (name) => {
    const entry = servers?.[name];
    if (!entry || typeof entry !== 'object') return { name, ok: false, detail: 'not in OpenClaw\'s mcp.servers' };
    if (typeof entry.command === 'string' && entry.command) return { name, ...(await checkStdioServer(entry, timeoutMs)) };
    if (typeof entry.url === 'string' && entry.url) return { name, ...(await checkHttpServer(entry, timeoutMs)) };
    return { name, ok: false, detail: 'has neither a command nor a url' };
  }));
  return {
    lines: results.map((r) => `${r.ok ? '✓' : '✗'} MCP server ${r.name}: ${r.detail}`),
    failed: results.filter((r) => !r.ok).length,
  };
}
