// The OpenClaw entry of graphiti-openclaw: registers hooks, a capture service, slash commands, tools
// and `openclaw graphiti …`, all answered by the component (`plugin.wasm`, transpiled by jco). This
// file only moves data between OpenClaw and the component.
//
// `register` stays synchronous (OpenClaw requires it): the component is instantiated on first use
// and every handler awaits it.

import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ComponentPool } from './component.js';
import { agentEndEvent, hookContext, promptEvent } from './context.js';
import { registerMemoryCommands } from './memory-cli.js';
import { registerImportCommand } from './import-cli.js';
import { registerSetupCommand } from './setup-cli.js';
import { checkToolCommand, dueMoment, expertsCommand, expertsSlashCommand, graphitiSlashCommand, intentTest, manualRun, outputText, queuesWork, recallSlashCommand, spoolCommand } from './commands.js';
import { defaultOpenclawStateDir, resolveOptions } from './options.js';
import { blockedTurnHooks, describeBlockedHooks, hookStatusLines } from './hook-access.js';
import { memoryCoreState, slotStatusLines, slotWarning } from './memory-slot.js';
import { ExpertRunner, expertRunners } from './expert-runner.js';
import { registerTools } from './tools.js';
import { registerFeature, registerWidgetCommand } from './feature.js';
import { PLUGIN_ID } from './feature-contract.js';
import { WEBHOOK_PREFIX, webhookHandler } from './webhook.js';
import { boundServers, checkServers } from './mcp-check.js';

export { PLUGIN_ID };

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
  // Without OpenClaw's config (not loaded by OpenClaw), the component's default stands.
  const fallbackTools = api.config && typeof api.config === 'object' ? memoryCoreState(api.config).tools : undefined;
  const options = resolveOptions(api.pluginConfig, { pluginRoot: PLUGIN_ROOT, openclawStateDir, workspaceDir, mcpServers, fallbackTools });
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
    /** OpenClaw's `mcp.servers` (for `experts validate`'s server check). */
    mcpServers: api.config?.mcp?.servers,
    /** Said when OpenClaw blocks the turn hooks (every turn then does nothing), with the fix. */
    hookWarning: blocked ? describeBlockedHooks(blocked) : undefined,
    /** Said when the memory slot names this plugin (memory-core is then off), with the fix. */
    slotWarning: slotWarning(api.config),
    /** The component pool, created on first use; a failure is retried on the next use. */
    pool() {
      pool ??= ComponentPool.create(componentDir, options, logger).catch((error) => {
        pool = undefined;
        throw error;
      });
      return pool;
    },
    /**
     * Runs a `run-command` variant and returns its output. Those on the spool go with the ticks;
     * `experts install|bind|remove` get an instance of their own with the experts directory
     * writable (and `installDir`, a package directory, at `/install`).
     */
    async command(command, { installDir } = {}) {
      if (SPOOL_COMMANDS.has(command.tag)) return serialised(command.tag, (plugin) => plugin.runCommand(command));
      const ready = await runtime.pool();
      if (command.tag === 'experts' && MANAGING_COMMANDS.has(command.val.tag)) {
        fs.mkdirSync(options.expertsDir, { recursive: true });
        return ready.runOneOff(`experts ${command.val.tag}`, { expertsWritable: true, installDir }, (plugin) => plugin.runCommand(command));
      }
      const output = await ready.run(command.tag, (plugin) => plugin.runCommand(command));
      if (command.tag !== 'status') return output;
      // The component cannot know what OpenClaw blocked or switched off: its status would look healthy.
      const live = safe(() => api.runtime?.config?.current?.());
      const lines = [...hookStatusLines(api.config, live, PLUGIN_ID), ...slotStatusLines(api.config, live)];
      return lines.length ? { ...output, stdout: `${lines.join('\n')}\n${output.stdout}` } : output;
    },
    /** Sends spooled turns, one tick at a time. */
    tick() {
      return serialised('tick', (plugin) => plugin.tick());
    },
    /**
     * The expert runtime's calls that start runs, on the sending instance (it holds the runner lock
     * across ticks), one at a time with the capture ticks.
     */
    experts: {
      tick: (nowMs) => serialised('expert-tick', (plugin) => plugin.expertTick(nowMs)),
      runEnded: (report, nowMs) => serialised('expert-run-ended', (plugin) => plugin.expertRunEnded(report, nowMs)),
      delivered: (runIds, nowMs) => serialised('expert-delivered', (plugin) => plugin.expertDelivered(runIds, nowMs)),
      async queue() {
        const output = await runtime.command(expertsCommand('queue'));
        if (output.exitCode !== 0) throw new Error(outputText(output));
        return output.stdout;
      },
    },
    /** A webhook request (`expert-webhook`), on any instance. */
    async webhook(request) {
      const ready = await runtime.pool();
      return ready.run('expert-webhook', (plugin) => plugin.expertWebhook(request, BigInt(Date.now())));
    },
    /** Whether OpenClaw takes a message's text for a command. */
    isCommand: commandClassifier(api, logger),
    /** An inbound channel message (`expert-channel-message`), on any instance. */
    async channelMessage(message) {
      const ready = await runtime.pool();
      return ready.run('expert-channel-message', (plugin) => plugin.expertChannelMessage(message, BigInt(Date.now())));
    },
    /** Asks this process's expert runner (whichever copy of this module started it) to tick now. */
    kickRunner() {
      expertRunners.get(options.stateDir)?.kick();
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
const SPOOL_COMMANDS = new Set(['flush', 'spool', 'import-memory']);

/** `experts` commands that change the experts directory (mounted writable for them only). */
const MANAGING_COMMANDS = new Set(['install', 'bind', 'remove']);

/** Largest package archive `experts install` reads (as the shim). */
const MAX_ARCHIVE_BYTES = 16 << 20;


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

function registerSlashCommands(api, runtime) {
  const reply = async (parsed) => {
    if ('usage' in parsed) return { text: parsed.usage };
    try {
      const output = await runtime.command(parsed.command);
      // An approval, a replay or a run queued something: the runner looks now, not at its next tick.
      if (output.exitCode === 0 && queuesWork(parsed.command)) runtime.kickRunner();
      return { text: outputText(output) };
    } catch (error) {
      return { text: `graphiti-openclaw failed: ${error?.message ?? error}` };
    }
  };
  api.registerCommand({
    name: 'graphiti',
    description: 'Graphiti memory and workflow routing: status, debug, intent-test <text>, spool [list|requeue], pause, resume',
    acceptsArgs: true,
    handler: (ctx) => reply(graphitiSlashCommand(ctx.args, ctx)),
  });
  api.registerCommand({
    name: 'experts',
    description: 'Expert packages and runs: list, validate <name>, prompt <name>, registry, queue, pending, approve <id>, reject <id>, dead-letters, replay <id>, run <expert> <message>',
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
    const printWith = async (command, how) => {
      const output = await runtime.command(command, how);
      if (output.stdout) process.stdout.write(output.stdout);
      if (output.stderr) process.stderr.write(output.stderr);
      process.exitCode = output.exitCode;
    };
    const print = (command) => printWith(command);
    const graphiti = program.command('graphiti').description(CLI_DESCRIPTOR.description);
    registerSetupCommand(graphiti, api, { pluginId: PLUGIN_ID, pluginRoot: PLUGIN_ROOT, createRuntime });
    graphiti.command('status').description('Graphiti reachability, counters, spool depth, pack rates')
      .action(() => print({ tag: 'status' }));
    graphiti.command('overview').description('The Control UI\'s figures as JSON: counters, memories per turn, pack rates, spool depth, approvals waiting')
      .action(() => print({ tag: 'overview' }));
    registerWidgetCommand(graphiti, path.join(PLUGIN_ROOT, 'widgets', 'overview.html'));
    graphiti.command('intent-test <prompt>').description('Which workflow pack a prompt gets, and why (a dry run)')
      .option('--group', 'route as in a group chat')
      .option('--previous-pack <id>', 'the previous turn\'s pack')
      .option('--json', 'print JSON')
      .action((prompt, opts) => print(intentTest(prompt, { groupChat: Boolean(opts.group), previousPack: opts.previousPack, json: Boolean(opts.json) })));
    graphiti.command('recall <query>').description('Search a Graphiti group as recall does (group-ids lists recent ones)')
      .requiredOption('--group-id <id>', 'the Graphiti group to search')
      .action((query, opts) => print({ tag: 'recall', val: { query, groupId: opts.groupId } }));
    graphiti.command('debug').description('The last turn of a session: recall, decision trace, injection')
      .option('--session <key>', 'session key (default: the most recent turn)')
      .action((opts) => print({ tag: 'debug', val: opts.session }));
    graphiti.command('check-config').description('Load the configuration and report what was read')
      .action(() => print({ tag: 'check-config' }));
    graphiti.command('lint-rules').description('Fail when two rules share more than half of their keywords')
      .action(() => print({ tag: 'lint-rules' }));
    graphiti.command('audit-boundary').description('Fail when the config directory holds anything that looks private (e-mail, phone, token, an overlay term)')
      .action(() => print({ tag: 'audit-boundary' }));
    const fail = (text) => {
      process.stderr.write(`${text}\n`);
      process.exitCode = 2;
      return undefined;
    };
    const experts = graphiti.command('experts').description('Expert packages and their runs');
    experts.command('list').description('Installed packages').action(() => print(expertsCommand('list')));
    experts.command('validate <name>').description('Both validation phases, and whether each bound MCP server answers (exit 1 on errors)')
      .action((name) => validateExpert(runtime, name));
    experts.command('prompt <name>').description('The assembled system prompt').action((name) => print(expertsCommand('prompt', name)));
    experts.command('registry').description('EXPERTS.md, as the main agent gets it').action(() => print(expertsCommand('registry')));
    experts.command('pending').description('Tool calls and learnings waiting for approval').action(() => print(expertsCommand('pending')));
    experts.command('approve <id>').description('Approve a pending tool call (it may run once; its run resumes) or learning').action((id) => print(expertsCommand('approve', id)));
    experts.command('reject <id>').description('Reject a pending tool call (its step fails) or learning').action((id) => print(expertsCommand('reject', id)));
    experts.command('queue').description('Expert runs queued, running, or waiting for an approval or a retry').action(() => print(expertsCommand('queue')));
    experts.command('dead-letters').description('Runs set aside by on_failure: dead_letter, with why').action(() => print(expertsCommand('dead-letters')));
    experts.command('replay <id>').description('Queue a dead-lettered or failed run again (the Gateway\'s runner starts it)').action((id) => print(expertsCommand('replay', id)));
    experts.command('run <expert> [message]').description('Queue a run of an expert with a message, or of one of its processes (the Gateway\'s runner starts it)')
      .option('--process <name>', 'run this process of the expert\'s package')
      .option('--inputs <json>', 'the process\'s inputs, a JSON object')
      .option('--dry-run', 'execute only AUTO operations, record every other call; the result is the run\'s planned-execution report')
      .action((expert, message, opts) => {
        if (!message && !opts.process) return fail('experts run: give a message, or a process with --process');
        if (opts.inputs !== undefined && !opts.process) return fail('experts run: --inputs are a process\'s: name it with --process');
        return print(expertsCommand('run', manualRun(expert, message, opts)));
      });
    experts.command('fire <expert> <trigger>').description('Dry run of a trigger with a payload: the process, its inputs, its queue, whether it is a duplicate, the run\'s message')
      .requiredOption('--payload <file>', 'the event\'s payload, a JSON file (a webhook\'s body)')
      .action((expert, trigger, opts) => {
        let payload;
        try {
          payload = fs.readFileSync(opts.payload, 'utf8');
        } catch (error) {
          return fail(`graphiti experts fire: ${opts.payload}: ${error.message}`);
        }
        return print(expertsCommand('fire', { expert, trigger, payloadJson: payload }));
      });
    experts.command('due').description('Cron slots due from the last check up to a moment (a dry run of the schedule)')
      .option('--at <time>', 'RFC 3339 (2026-11-23T07:00:00+01:00) or epoch milliseconds (default: now)')
      .action((opts) => {
        let at;
        try {
          at = dueMoment(opts.at);
        } catch (error) {
          return fail(`graphiti experts due: ${error.message}`);
        }
        return print(expertsCommand('due', at));
      });
    experts.command('install <source>').description('Install a package (a directory or a .tgz), validated before anything is copied into the experts directory')
      .action((source) => {
        let install;
        try {
          install = installSource(source);
        } catch (error) {
          return fail(`graphiti experts install: ${error.message}`);
        }
        return printWith(install.command, { installDir: install.installDir });
      });
    experts.command('bind <expert> <tool> <server>').description('Bind a package\'s abstract tool to an MCP server (writes its bindings.yaml)')
      .action((expert, tool, server) => print(expertsCommand('bind', { expert, tool, server })));
    experts.command('remove <expert>').description('Remove an installed package (its runtime state and workspace stay)')
      .action((expert) => print(expertsCommand('remove', expert)));
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
    graphiti.command('group-ids').description("Recent sessions' Graphiti groups their conversations no longer map to (old -> new)")
      .action(() => print({ tag: 'group-ids' }));
    registerMemoryCommands(graphiti, print);
    registerImportCommand(graphiti, (command) => runtime.command(command), runtime.options.stateDir);
    const spool = graphiti.command('spool').description('The capture spool: list (the default) or requeue');
    spool.command('list', { isDefault: true }).description('What waits, is in doubt or was set aside, and why')
      .action(() => print(spoolCommand('list')));
    spool.command('requeue').description('Set-aside entries back at the end of the queue, in their original order')
      .action(() => print(spoolCommand('requeue')));
  }, { descriptors: [CLI_DESCRIPTOR] });
}

/**
 * `experts install <source>`: a package directory (mounted read-only at `/install`, named as the user
 * named it) or a `.tgz` archive's bytes.
 * @returns {{ command: object, installDir?: string }}
 */
export function installSource(source) {
  let stat;
  try {
    stat = fs.statSync(source);
  } catch (error) {
    throw new Error(`${source}: ${error.code === 'ENOENT' ? 'no such file or directory' : error.message}`);
  }
  if (stat.isDirectory()) {
    return { command: expertsCommand('install', { tag: 'directory', val: source }), installDir: path.resolve(source) };
  }
  if (!stat.isFile()) throw new Error(`${source} is neither a package directory nor a .tgz archive`);
  if (stat.size > MAX_ARCHIVE_BYTES) throw new Error(`${source} has ${stat.size} bytes; a package archive may have at most ${MAX_ARCHIVE_BYTES}`);
  return { command: expertsCommand('install', { tag: 'archive', val: { name: source, bytes: new Uint8Array(fs.readFileSync(source)) } }) };
}

/**
 * `experts validate <name>`: the component's report, then one ✓/✗ line per MCP server the package
 * is bound to (from OpenClaw's `mcp.servers`: spawned or POSTed an `initialize`, 5 s each).
 */
async function validateExpert(runtime, name) {
  const output = await runtime.command(expertsCommand('validate', name));
  if (output.stdout) process.stdout.write(output.stdout);
  if (output.stderr) process.stderr.write(output.stderr);
  let exitCode = output.exitCode;
  const servers = boundServers(output.stdout);
  if (servers.length) {
    const checked = await checkServers(servers, runtime.mcpServers);
    process.stdout.write(`\nMCP servers:\n${checked.lines.map((l) => `  ${l}`).join('\n')}\n`);
    if (checked.failed) exitCode = 1;
  }
  process.exitCode = exitCode;
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

/**
 * `message_received` → `expert-channel-message`: channel triggers bound to the message's channel
 * (`experts.channels`) queue an invocation; the runner is woken to start it. The component decides
 * what fires; this passes the session the message is in and whether OpenClaw takes it for a command.
 */
export async function messageReceived(runtime, event, ctx) {
  const channelName = typeof ctx?.channelId === 'string' && ctx.channelId ? ctx.channelId : event?.metadata?.provider;
  const messageText = event?.content;
  if (typeof channelName !== 'string' || !channelName || typeof messageText !== 'string') return;
  const senderId = event?.senderId ?? ctx?.senderId;
  const chatId = ctx?.conversationId;
  const sessionKey = ctx?.sessionKey ?? event?.sessionKey;
  try {
    const work = await runtime.channelMessage({
      channelName,
      senderId: typeof senderId === 'string' ? senderId : String(senderId ?? ''),
      messageText,
      chatId: typeof chatId === 'string' && chatId ? chatId : undefined,
      sessionKey: typeof sessionKey === 'string' && sessionKey ? sessionKey : undefined,
      command: await runtime.isCommand(messageText),
    });
    // Its notes are logged by the component.
    if (work?.tickInMs !== undefined && work?.tickInMs !== null) runtime.kickRunner();
  } catch (error) {
    runtime.logger.error(`graphiti-openclaw: experts: a channel message was not passed to the expert runtime: ${error?.message ?? error}`);
  }
}

/**
 * OpenClaw's answer to whether a message's text is a command (`message_received` carries no flag):
 * one of its own or an abort word (`runtime.channel.commands.isControlCommandMessage`), or a
 * plugin's (`matchPluginCommand` of its plugin SDK). Without those helpers (another OpenClaw), a
 * text that starts with `/`, as OpenClaw writes a command, counts as one; that is warned about once.
 * @returns {(text: string) => Promise<boolean>}
 */
export function commandClassifier(api, logger, loadSdk = () => import('openclaw/plugin-sdk/plugin-runtime')) {
  let sdk;
  const byItsSlash = (text, why) => {
    warnOnce(logger, `graphiti-openclaw: experts: OpenClaw cannot tell this plugin which messages are commands (${why}); a message starting with "/" is taken for one and fires no channel trigger`);
    return /^\s*\//.test(text);
  };
  return async (text) => {
    sdk ??= loadSdk().catch((error) => ({ error }));
    const loaded = await sdk;
    const own = api.runtime?.channel?.commands?.isControlCommandMessage;
    if (typeof own !== 'function') return byItsSlash(text, 'no runtime.channel.commands.isControlCommandMessage');
    if (typeof loaded?.matchPluginCommand !== 'function') return byItsSlash(text, `no matchPluginCommand in its plugin SDK: ${loaded?.error?.message ?? 'not exported'}`);
    try {
      return Boolean(own(text, api.config) || loaded.matchPluginCommand(text.trim()));
    } catch (error) {
      return byItsSlash(text, error?.message ?? String(error));
    }
  };
}

/**
 * The expert runtime in a Gateway: a service whose runner ticks the component, starts the runs it
 * asks for and posts its deliveries; the webhook route; `gateway_start` says runs may start.
 */
function registerExpertRunner(api, runtime) {
  const { options, logger } = runtime;
  const subagent = api.runtime?.subagent;
  const runner = new ExpertRunner({
    component: runtime.experts,
    subagent,
    system: api.runtime?.system,
    logger,
    intervalMs: options.tickIntervalMs,
  });
  api.registerService({
    id: `${PLUGIN_ID}-experts`,
    async start() {
      if (!fs.existsSync(options.expertsDir)) {
        logger.info(`graphiti-openclaw: experts: ${options.expertsDir} does not exist: no expert runs (install a package, then restart the Gateway)`);
        return;
      }
      if (!options.expertsEnabled) return;
      expertRunners.set(options.stateDir, runner);
      // Every run, wait and delivery happens in this context: subagent runs started from an HTTP
      // request's scope would carry (and outlive) that request's authority.
      await runner.start(AsyncLocalStorage.snapshot());
    },
    stop() {
      runner.stop();
      if (expertRunners.get(options.stateDir) === runner) expertRunners.delete(options.stateDir);
    },
  });
  api.on('gateway_start', () => runner.gatewayReady());
  if (typeof api.registerHttpRoute !== 'function') {
    logger.warn('graphiti-openclaw: experts: this OpenClaw has no plugin HTTP routes: webhook triggers are off');
    return;
  }
  api.registerHttpRoute({
    path: WEBHOOK_PREFIX,
    match: 'prefix',
    // The component checks the bearer token (experts.webhook_token) and answers every request.
    auth: 'plugin',
    handler: webhookHandler({
      maxBytes: options.webhookMaxBytes,
      webhook: (request) => runtime.webhook(request),
      afterAccept: (work) => runner.context(() => runner.handle(work)),
      logger,
    }),
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
    registerFeature(api, runtime);
    if (mode === 'full') {
      if (runtime.hookWarning) warnOnce(runtime.logger, `graphiti-openclaw: ${runtime.hookWarning}`);
      if (runtime.slotWarning) warnOnce(runtime.logger, `graphiti-openclaw: ${runtime.slotWarning}`);
      registerCaptureService(api, runtime);
      registerExpertRunner(api, runtime);
      // Observed to fire from this registration only (a second one would queue a message twice).
      api.on('message_received', (event, ctx) => messageReceived(runtime, event, ctx));
      // Start loading now (register itself stays synchronous), so the first turn finds it ready.
      runtime.pool().catch((error) => runtime.logger.error(`graphiti-openclaw: cannot load the component: ${error?.stack ?? error}`));
    }
  },
};

export default plugin;
