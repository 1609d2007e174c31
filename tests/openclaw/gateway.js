// A real OpenClaw Gateway for the end-to-end tests: on loopback, on a free port, with a token, its
// output kept (OpenClaw's file log is shared by every HOME: /tmp/openclaw/openclaw-<date>.log).
// Ready when it prints `[gateway] ready`. Always stopped with SIGKILL: after a crash recovery a
// SIGTERM may drain for minutes.

import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { REPO, openclaw } from './openclaw.js';

const OPENCLAW = path.join(REPO, 'tools/node/bin/openclaw');

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

/** One Gateway RPC through the CLI (another process, as a user's `openclaw gateway call`). */
export async function gatewayCall(env, { port, token }, method, params) {
  const { stdout } = await openclaw(env, ['gateway', 'call', method, '--url', `ws://127.0.0.1:${port}`, '--token', token, '--json', '--params', JSON.stringify(params)]);
  return JSON.parse(stdout.slice(stdout.indexOf('{')));
}
