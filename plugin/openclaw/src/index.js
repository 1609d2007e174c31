// The OpenClaw entry of graphiti-openclaw: registers hooks, a capture service, slash commands, tools
// and `openclaw graphiti …`, all answered by the component (`plugin.wasm`, transpiled by jco). This
// file only moves data between OpenClaw and the component.
//
// `register` stays synchronous (OpenClaw requires it): the component is instantiated on first use
// and every handler awaits it.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ComponentPool } from './component.js';
import { agentEndEvent, hookContext, promptEvent } from './context.js';
import { checkToolCommand, expertsCommand, expertsSlashCommand, graphitiSlashCommand, intentTest, knowledgeCommand, outputText, recallSlashCommand, spoolCommand } from './commands.js';
import { defaultOpenclawStateDir, resolveOptions } from './options.js';
import { blockedTurnHooks, describeBlockedHooks, hookStatusLines } from './hook-access.js';

export const PLUGIN_ID = 'graphiti-openclaw';

/** The package root: this file is `<root>/dist/index.js`. */
const PLUGIN_ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/**
 * Everything the registrations share: the options and the (lazily created) component pool.
 * @param {any} api  OpenClaw's plugin API
 */
export function createRuntime(api, { componentDir = path.join(PLUGIN_ROOT, 'dist', 'component') } = {}) {
  const logger = api.logger ?? console;
  const openclawStateDir = safe(() => api.runtime?.state?.resolveStateDir?.()) ?? defaultOpenclawStateDir();
  const mcpServers = api.config?.mcp?.servers && typeof api.config.mcp.servers === 'object' ? Object.keys(api.config.mcp.servers) : undefined;
  const workspaceDir = typeof api.config?.agents?.defaults?.workspace === 'string' ? api.config.agents.defaults.workspace : undefined;
  const options = resolveOptions(api.pluginConfig, { pluginRoot: PLUGIN_ROOT, openclawStateDir, workspaceDir, mcpServers });
  const blocked = blockedTurnHooks(api.config, PLUGIN_ID);
  let pool;
  let flushPending = false;
  let sending = Promise.resolve();
  /** Runs a call that sends on the pool's sending instance, after every earlier one: in one process,
   * two at once could send the same turn twice (other processes are kept out by the send lock). */
  const serialised = (what, call) => {
    const next = sending.catch(() => {}).then(async () => (await runtime.pool()).runSending(what, call));
    sending = next;
    return next;
  };
  const runtime = {
    options,
    logger,
    /** Said when OpenClaw blocks the turn hooks (every turn then does nothing), with the fix. */
    hookWarning: blocked ? describeBlockedHooks(blocked) : undefined,
    /** The component pool, created on first use; a failure is retried on the next use. */
    pool() {
      pool ??= ComponentPool.create(componentDir, options, logger).catch((error) => {
        pool = undefined;
        throw error;
      });
      return pool;
    },
    /** Runs a `run-command` variant and returns its output. Those on the spool go with the ticks. */
    async command(command) {
      if (SPOOL_COMMANDS.has(command.tag)) return serialised(command.tag, (plugin) => plugin.runCommand(command));
      const ready = await runtime.pool();
      const output = await ready.run(command.tag, (plugin) => plugin.runCommand(command));
      if (command.tag !== 'status') return output;
      // The component cannot know what OpenClaw blocked: its status would look healthy.
      const hooks = hookStatusLines(api.config, safe(() => api.runtime?.config?.current?.()), PLUGIN_ID);
      return hooks.length ? { ...output, stdout: `${hooks.join('\n')}\n${output.stdout}` } : output;
    },
    /** Sends spooled turns, one tick at a time. */
    tick() {
      return serialised('tick', (plugin) => plugin.tick());
    },
    /** Gives up the locks the component instances still hold (the service stops). */
    async releaseLocks() {
      const ready = await pool?.catch(() => undefined);
      await ready?.releaseLocks();
    },
    /** One background `tick` after the current call; captures arriving meanwhile share it. */
    flushSoon() {
      if (flushPending) return;
      flushPending = true;
      new Promise((resolve) => setImmediate(resolve)).then(async () => {
        flushPending = false;
        const report = await runtime.tick();
        if (report.error) runtime.logger.warn(`graphiti-openclaw: ${report.pending} captured turn(s) waiting for Graphiti, will retry: ${report.error}`);
      }).catch((error) => runtime.logger.error(`graphiti-openclaw: sending captured turns failed: ${error?.message ?? error}`));
    },
  };
  return runtime;
}

/** Commands that send or change the capture spool: they run with the ticks, never beside one. */
const SPOOL_COMMANDS = new Set(['flush', 'spool']);

/** Warnings already logged by this process, shared by every copy of this module in it: OpenClaw may
 * register the plugin more than once, from a fresh copy each time. */
const loggedOnce = (globalThis[Symbol.for('graphiti-openclaw.logged-once')] ??= new Set());

function warnOnce(logger, message) {
  if (loggedOnce.has(message)) return;
  loggedOnce.add(message);
  logger.warn(message);
}

function safe(read) {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** `before_prompt_build` → `before-agent-start`: the injected context, or nothing. Never throws. */
export async function beforePromptBuild(runtime, event, ctx) {
  try {
    const pool = await runtime.pool();
    const injection = await pool.run('before-agent-start', (plugin) => plugin.beforeAgentStart(promptEvent(event), hookContext(ctx)));
    const result = {
      prependContext: injection.prependContext,
      prependSystemContext: injection.systemContext,
      appendSystemContext: injection.appendSystemContext,
    };
    return Object.values(result).some(Boolean) ? result : undefined;
  } catch (error) {
    runtime.logger.error(`graphiti-openclaw: no injection for this turn: ${error?.message ?? error}`);
    return undefined;
  }
}

/**
 * `agent_end` → `agent-end` (the turn is on disk when this returns), then a `tick` in the background
 * so it reaches Graphiti without waiting for the timer.
 */
export async function agentEnd(runtime, event, ctx) {
  try {
    const pool = await runtime.pool();
    const outcome = await pool.run('agent-end', (plugin) => plugin.agentEnd(agentEndEvent(event), hookContext(ctx)));
    if (outcome.tag === 'dropped') {
      runtime.logger.error(`graphiti-openclaw: turn NOT captured: ${outcome.val}`);
    } else if (outcome.tag === 'spooled') {
      runtime.flushSoon();
    }
    return outcome;
  } catch (error) {
    runtime.logger.error(`graphiti-openclaw: capture failed for this turn: ${error?.message ?? error}`);
    return undefined;
  }
}

/**
 * `before_tool_call` → `before-tool-call`: an expert session's approval policy. Fails closed: when the
 * component cannot answer, the call is refused (the instance is replaced; the next call is checked).
 */
export async function beforeToolCall(runtime, event, ctx) {
  try {
    const pool = await runtime.pool();
    const call = toolCall(event, ctx);
    const verdict = await pool.run('before-tool-call', (plugin) => plugin.beforeToolCall(call, hookContext(ctx)));
    return verdict.tag === 'block' ? { block: true, blockReason: verdict.val } : undefined;
  } catch (error) {
    runtime.logger.error(`graphiti-openclaw: tool call refused, the approval check failed: ${error?.message ?? error}`);
    return { block: true, blockReason: 'graphiti-openclaw could not check this tool call against the approval policy; try again' };
  }
}

/**
 * OpenClaw's `before_tool_call` event as the WIT `tool-call`. The call id links a Tool Search
 * `tool_call` to the target call OpenClaw then makes (its id is derived from the parent's).
 */
export function toolCall(event, ctx) {
  const callId = event?.toolCallId ?? ctx?.toolCallId;
  return {
    toolName: String(event?.toolName ?? ctx?.toolName ?? ''),
    argumentsJson: JSON.stringify(event?.params ?? {}),
    callId: typeof callId === 'string' && callId !== '' ? callId : undefined,
  };
}

function textResult(text, details = {}) {
  return { content: [{ type: 'text', text }], details };
}

function registerTools(api, runtime) {
  api.registerTool((toolCtx) => ({
    name: 'graphiti_search',
    label: 'Graphiti search',
    description: 'Search long-term memory (the Graphiti knowledge graph) of this conversation for facts and entities. Use it when the injected <graphiti-context> does not answer the question.',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to look for, in a few words.' } },
      required: ['query'],
      additionalProperties: false,
    },
    resultContentSource: 'network',
    async execute(_toolCallId, params) {
      const output = await runtime.command({ tag: 'search', val: { query: String(params?.query ?? ''), ctx: hookContext(toolCtx) } });
      if (output.exitCode !== 0) throw new Error(outputText(output));
      return textResult(output.stdout);
    },
  }), { name: 'graphiti_search' });
  api.registerTool((toolCtx) => ({
    name: 'graphiti_ingest',
    label: 'Graphiti ingest',
    description: 'Store a fact or note in long-term memory (Graphiti) for this conversation, e.g. a preference the user stated. It is queued durably and sent in the background.',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string', description: 'The fact or note, as a complete sentence.' } },
      required: ['text'],
      additionalProperties: false,
    },
    async execute(_toolCallId, params) {
      const output = await runtime.command({ tag: 'ingest', val: { text: String(params?.text ?? ''), source: 'OpenClaw agent (graphiti_ingest tool)', ctx: hookContext(toolCtx) } });
      if (output.exitCode !== 0) throw new Error(outputText(output));
      runtime.flushSoon();
      return textResult(output.stdout);
    },
  }), { name: 'graphiti_ingest' });
  // The calling session comes from OpenClaw's tool context; the component answers only an expert's
  // own session, with that expert's knowledge (private knowledge is in no file an agent can read).
  api.registerTool((toolCtx) => ({
    name: 'expert_knowledge',
    label: 'Expert knowledge',
    description: 'In an expert session: list the knowledge of your expert package, or read one file by name (private knowledge included; it stays in this session). Other sessions are refused.',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', description: 'The knowledge file to read; leave out to list them.' } },
      additionalProperties: false,
    },
    async execute(_toolCallId, params) {
      const name = typeof params?.name === 'string' && params.name.trim() ? params.name.trim() : undefined;
      const output = await runtime.command(knowledgeCommand(name, toolCtx));
      if (output.exitCode !== 0) throw new Error(outputText(output));
      return textResult(output.stdout);
    },
  }), { name: 'expert_knowledge' });
}

function registerSlashCommands(api, runtime) {
  const reply = async (parsed) => {
    if ('usage' in parsed) return { text: parsed.usage };
    try {
      return { text: outputText(await runtime.command(parsed.command)) };
    } catch (error) {
      return { text: `graphiti-openclaw failed: ${error?.message ?? error}` };
    }
  };
  api.registerCommand({
    name: 'graphiti',
    description: 'Graphiti memory and workflow routing: status, debug, intent-test <text>, spool [list|requeue]',
    acceptsArgs: true,
    handler: (ctx) => reply(graphitiSlashCommand(ctx.args, ctx)),
  });
  api.registerCommand({
    name: 'experts',
    description: 'Expert packages: list, validate <name>, prompt <name>, registry, pending, approve <id>',
    acceptsArgs: true,
    handler: (ctx) => reply(expertsSlashCommand(ctx.args)),
  });
  api.registerCommand({
    name: 'recall',
    description: 'Search this conversation\'s memories in Graphiti: /recall <query>',
    acceptsArgs: true,
    handler: (ctx) => reply(recallSlashCommand(ctx.args, ctx)),
  });
}

const CLI_DESCRIPTOR = { name: 'graphiti', description: 'Graphiti memory and workflow routing (graphiti-openclaw)', hasSubcommands: true };

function registerCliCommands(api, runtime) {
  api.registerCli(({ program }) => {
    const print = async (command) => {
      const output = await runtime.command(command);
      if (output.stdout) process.stdout.write(output.stdout);
      if (output.stderr) process.stderr.write(output.stderr);
      process.exitCode = output.exitCode;
    };
    const graphiti = program.command('graphiti').description(CLI_DESCRIPTOR.description);
    graphiti.command('status').description('Graphiti reachability, counters, spool depth, pack rates')
      .action(() => print({ tag: 'status' }));
    graphiti.command('intent-test <prompt>').description('Which workflow pack a prompt gets, and why (a dry run)')
      .option('--group', 'route as in a group chat')
      .option('--previous-pack <id>', 'the previous turn\'s pack')
      .option('--json', 'print JSON')
      .action((prompt, opts) => print(intentTest(prompt, { groupChat: Boolean(opts.group), previousPack: opts.previousPack, json: Boolean(opts.json) })));
    graphiti.command('recall <query>').description('Search Graphiti as recall does')
      .option('--group-id <id>', 'the Graphiti group to search')
      .action((query, opts) => print({ tag: 'recall', val: [query, opts.groupId] }));
    graphiti.command('debug').description('The last turn of a session: recall, decision trace, injection')
      .option('--session <key>', 'session key (default: the most recent turn)')
      .action((opts) => print({ tag: 'debug', val: opts.session }));
    graphiti.command('check-config').description('Load the configuration and report what was read')
      .action(() => print({ tag: 'check-config' }));
    graphiti.command('lint-rules').description('Fail when two rules share more than half of their keywords')
      .action(() => print({ tag: 'lint-rules' }));
    const experts = graphiti.command('experts').description('Expert packages');
    experts.command('list').description('Installed packages').action(() => print(expertsCommand('list')));
    experts.command('validate <name>').description('Both validation phases (exit 1 on errors)').action((name) => print(expertsCommand('validate', name)));
    experts.command('prompt <name>').description('The assembled system prompt').action((name) => print(expertsCommand('prompt', name)));
    experts.command('registry').description('EXPERTS.md, as the main agent gets it').action(() => print(expertsCommand('registry')));
    experts.command('pending').description('Tool calls waiting for approval').action(() => print(expertsCommand('pending')));
    experts.command('approve <id>').description('Approve one pending tool call').action((id) => print(expertsCommand('approve', id)));
    experts.command('check-tool <tool> [arguments]').description('What the approval check would decide for a tool call (a dry run: records and uses nothing)')
      .option('--session <key>', 'the session the call is made in')
      .option('--expert <name>', 'judge the call as this expert\'s (approvals apply only with --session)')
      .option('--agent <id>', 'the calling agent\'s id')
      .action((tool, args, opts) => {
        if (!opts.session && !opts.expert) {
          process.stderr.write('graphiti experts check-tool: give --session <key> or --expert <name>\n');
          process.exitCode = 2;
          return undefined;
        }
        return print(checkToolCommand(tool, args, opts));
      });
    graphiti.command('flush').description('Send spooled turns to Graphiti now (exit 1 when some are left)')
      .action(() => print({ tag: 'flush' }));
    graphiti.command('spool [action]')
      .description('The capture spool: list (the default: what waits, is in doubt or was set aside, and why) or requeue (set-aside entries back in the queue)')
      .action((action = 'list') => {
        if (action !== 'list' && action !== 'requeue') {
          process.stderr.write(`graphiti spool: unknown action "${action}"; use list or requeue\n`);
          process.exitCode = 2;
          return undefined;
        }
        return print(spoolCommand(action));
      });
  }, { descriptors: [CLI_DESCRIPTOR] });
}

function registerCaptureService(api, runtime) {
  let timer;
  const tick = () => runtime.tick().then((report) => {
    if (report.error) runtime.logger.warn(`graphiti-openclaw: ${report.pending} turn(s) waiting for Graphiti: ${report.error}`);
  }).catch((error) => runtime.logger.error(`graphiti-openclaw: tick failed: ${error?.message ?? error}`));
  api.registerService({
    id: `${PLUGIN_ID}-capture`,
    start() {
      timer = setInterval(tick, runtime.options.tickIntervalMs);
      timer.unref?.();
      void tick();
    },
    async stop() {
      clearInterval(timer);
      await tick();
      await runtime.releaseLocks();
    },
  });
}

const plugin = {
  id: PLUGIN_ID,
  name: 'Graphiti memory and workflow routing',
  description: 'Recalls facts from a Graphiti knowledge graph before every turn, injects the matching workflow pack, and captures every exchange back into Graphiti without losing one.',
  register(api) {
    const runtime = createRuntime(api);
    const mode = api.registrationMode ?? 'full';
    registerCliCommands(api, runtime);
    if (mode === 'cli-metadata') return;
    api.on('before_prompt_build', (event, ctx) => beforePromptBuild(runtime, event, ctx));
    api.on('agent_end', (event, ctx) => agentEnd(runtime, event, ctx));
    api.on('before_tool_call', (event, ctx) => beforeToolCall(runtime, event, ctx));
    registerSlashCommands(api, runtime);
    registerTools(api, runtime);
    if (mode === 'full') {
      if (runtime.hookWarning) warnOnce(runtime.logger, `graphiti-openclaw: ${runtime.hookWarning}`);
      registerCaptureService(api, runtime);
      // Start loading now (register itself stays synchronous), so the first turn finds it ready.
      runtime.pool().catch((error) => runtime.logger.error(`graphiti-openclaw: cannot load the component: ${error?.stack ?? error}`));
    }
  },
};

export default plugin;
