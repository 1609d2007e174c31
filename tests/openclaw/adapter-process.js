// One OpenClaw adapter runtime in a process of its own, as a Gateway or `openclaw agent --local` has
// one: the packaged plugin loaded by OpenClaw's own loader as a Gateway registers it, its capture
// service started (ticking on its own timer), turns captured through OpenClaw's hook runner
// (`agent_end`), then `openclaw graphiti flush` through the CLI it registered, then the service
// stopped as OpenClaw stops it. Used by tests/openclaw/faults.test.js. HOME must be a throwaway one.
//
//   node tests/openclaw/adapter-process.js '{"name":"a","stateDir":"…","graphiti":{…},"turns":30,…}'
//
// Reports on stdout, one JSON object a line: {"ready": true} once loaded (it then waits for a line on
// stdin, so that processes loading at different speeds start their turns together), {"spooled":
// <episode name>} for each turn the hook put on disk (the hook has returned: the turn is durable),
// {"notSpooled": …} for one it did not, {"flush": {exitCode, output}}, then {"done": true}.

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PLUGIN_ID, REPO, loadWithOpenClaw } from './openclaw.js';

const spec = JSON.parse(process.argv[2]);
const report = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const stderrLine = (level) => (message) => process.stderr.write(`[${spec.name}] ${level}: ${message}\n`);
const logger = { debug() {}, info() {}, warn: stderrLine('warn'), error: stderrLine('error') };

const pluginConfig = {
  stateDir: spec.stateDir,
  graphiti: spec.graphiti,
  tickIntervalMs: spec.tickIntervalMs,
  recall: { enabled: false },
  capture: spec.capture,
};
const { registry, runner } = await loadWithOpenClaw(path.join(REPO, 'dist', PLUGIN_ID), pluginConfig, { full: true, logger });
const ours = (list) => list.filter((entry) => entry.pluginId === PLUGIN_ID);

// What the plugin's agent_end handler answered, by run id (OpenClaw's runner does not return it).
const outcomes = new Map();
const agentEndHook = ours(registry.typedHooks).find((h) => h.hookName === 'agent_end');
if (!agentEndHook) throw new Error(`agent_end not registered: ${JSON.stringify(registry.diagnostics)}`);
const handler = agentEndHook.handler;
agentEndHook.handler = async (event, ctx) => {
  const outcome = await handler(event, ctx);
  outcomes.set(ctx?.runId, outcome);
  return outcome;
};

const [capture] = ours(registry.services);
if (!capture) throw new Error('the capture service is not registered');
await capture.service.start({});
report({ ready: true });
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.pause();

for (let i = 0; i < spec.turns; i += 1) {
  const runId = `${spec.name}-turn-${i}`;
  const sender = `${spec.name}-${i % 3}`;
  const ctx = { sessionKey: `agent:main:telegram:direct:${sender}`, agentId: 'main', senderId: sender, trigger: 'user', runId };
  await runner.runAgentEnd({
    success: true,
    messages: [
      { role: 'user', content: `Turn ${runId}: remember that order ${i} ships on Friday` },
      { role: 'assistant', content: `Noted: order ${i} ships on Friday (${runId}).` },
    ],
  }, ctx);
  const outcome = outcomes.get(runId);
  report(outcome?.tag === 'spooled' ? { spooled: outcome.val.episode } : { notSpooled: runId, outcome: outcome ?? null });
  await pause(spec.gapMs);
}

report({ flush: await cliFlush() });
await capture.service.stop({});
report({ done: true });
process.exit(0);

/** `openclaw graphiti flush` as OpenClaw runs it: the plugin's registered CLI on a commander program. */
async function cliFlush() {
  const { Command } = await import(pathToFileURL(path.join(REPO, 'tools/node/node_modules/commander/index.js')).href);
  const program = new Command().exitOverride();
  ours(registry.cliRegistrars)[0].register({ program, config: {}, logger });
  let output = '';
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk) => { output += chunk; return true; };
  try {
    await program.parseAsync(['graphiti', 'flush'], { from: 'user' });
  } finally {
    process.stdout.write = write;
  }
  const exitCode = process.exitCode ?? 0;
  process.exitCode = 0;
  return { exitCode, output };
}
