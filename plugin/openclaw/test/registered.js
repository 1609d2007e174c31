// The packaged plugin (scripts/package-openclaw.sh) registered against a stand-in of OpenClaw's
// plugin API, and its CLI run through commander from tools/node (scripts/node-tools.sh), as OpenClaw
// runs it: for tests of what the registered slash commands and CLI commands answer.
import { after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const made = [];
after(() => { for (const dir of made) fs.rmSync(dir, { recursive: true, force: true }); });

/** A fresh directory removed after the tests. */
export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function quietLogger() {
  const lines = [];
  const log = (level) => (message) => lines.push(`${level}: ${message}`);
  return { lines, info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') };
}

/**
 * `plugin` registered as OpenClaw would in `mode`, on the example configuration with recall off, in
 * `stateDir` (a fresh one when not given).
 */
export async function register(plugin, config, { mode = 'full', logger = quietLogger(), liveConfig, stateDir = tempDir('adapter-state-') } = {}) {
  const configDir = path.join(repo, 'config');
  const commands = new Map();
  const cli = [];
  const services = [];
  const tools = new Map();
  const sessionActions = new Map();
  const gatewayMethods = new Map();
  const api = {
    logger,
    registrationMode: mode,
    config,
    ...(liveConfig ? { runtime: { config: { current: () => liveConfig } } } : {}),
    pluginConfig: { configDir, stateDir, workspaceDir: stateDir, expertsDir: path.join(configDir, 'experts'), recall: { enabled: false } },
    on() {},
    registerCommand(command) { commands.set(command.name, command); },
    registerCli(registrar) { cli.push(registrar); },
    registerService(service) { services.push(service); },
    registerTool(factory, options) { tools.set(options?.name, factory); },
    registerHttpRoute() {},
    session: { controls: { registerSessionAction(action) { sessionActions.set(action.id, action); } } },
    registerGatewayMethod(name, handler, options) { gatewayMethods.set(name, { handler, options }); },
  };
  plugin.register(api);
  return { commands, cli, services, tools, sessionActions, gatewayMethods, logger, stateDir };
}

/** `openclaw <args…>` through a registered CLI registrar: what it printed and its exit code. */
export async function runCli(registrar, args) {
  const { Command } = await import(pathToFileURL(path.join(repo, 'tools/node/node_modules/commander/index.js')).href);
  const program = new Command().exitOverride();
  registrar({ program });
  let stdout = '';
  let stderr = '';
  const [write, writeError] = [process.stdout.write, process.stderr.write];
  // The test runner reports through stdout too, in Buffers: those go on to it.
  process.stdout.write = (chunk, ...rest) => { if (typeof chunk !== 'string') return write.call(process.stdout, chunk, ...rest); stdout += chunk; return true; };
  process.stderr.write = (chunk, ...rest) => { if (typeof chunk !== 'string') return writeError.call(process.stderr, chunk, ...rest); stderr += chunk; return true; };
  let exitCode;
  try {
    await program.parseAsync(args, { from: 'user' });
  } finally {
    [process.stdout.write, process.stderr.write] = [write, writeError];
    exitCode = process.exitCode ?? 0;
    process.exitCode = undefined;
  }
  return { stdout, stderr, exitCode };
}
