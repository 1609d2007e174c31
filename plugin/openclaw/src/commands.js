// Slash commands, tools and `openclaw graphiti …` as the component's `run-command` variants. Parsing
// the words a user typed is the adapter's job; everything they ask for is rendered by the component.

import { chatTypeOf, hookContext } from './context.js';

export const SLASH_HELP = [
  'Usage:',
  '  /graphiti status              Graphiti reachability, recall and capture counters, spool, pack rates',
  '  /graphiti debug               what the plugin did on this conversation\'s last turn',
  '  /graphiti intent-test <text>  which workflow pack <text> would get, and why (changes nothing)',
  '  /graphiti spool [requeue]     captured turns waiting for Graphiti, in doubt or set aside; requeue the set-aside ones',
  '  /graphiti memories [query]    what is remembered for this chat (a direct chat): facts a search returns, recent episodes',
  '  /graphiti pause               remember nothing said in this chat until /graphiti resume',
  '  /graphiti resume              remember this chat again',
  '  /graphiti forget <words>      what forgetting <words> would delete from this chat\'s memories (nothing goes yet)',
  '  /graphiti forget drop <id> <n>...  leave the items numbered <n> out of that forget',
  '  /graphiti forget add <id> <n>...   add left-out items numbered <n> to it',
  '  /graphiti forget confirm <id> delete what that forget proposes',
  '  /graphiti correct <old> => <now true>  record that a remembered fact is no longer true',
  '  /recall <query>               search this conversation\'s memories in Graphiti',
].join('\n');

/**
 * The `run-command` variant for `/graphiti <args>`, or a usage error.
 * @param {string | undefined} args  what follows `/graphiti`
 * @param {Record<string, any>} ctx  OpenClaw's command context
 * @returns {{ command: object } | { usage: string }}
 */
export function graphitiSlashCommand(args, ctx) {
  const [word = ''] = (args ?? '').trim().split(/\s+/);
  const remainder = (args ?? '').trim().slice(word.length).trim();
  switch (word.toLowerCase()) {
    case 'status':
      return { command: { tag: 'status' } };
    case 'debug':
      return { command: { tag: 'debug', val: hookContext(ctx).sessionKey } };
    case 'intent-test':
      if (!remainder) return { usage: 'Usage: /graphiti intent-test <text>' };
      return { command: intentTest(remainder, { groupChat: chatTypeOf(ctx) === 'group' }) };
    case 'spool':
      if (!['', 'list', 'requeue'].includes(remainder.toLowerCase())) return { usage: 'Usage: /graphiti spool [list|requeue]' };
      return { command: spoolCommand(remainder.toLowerCase() || 'list') };
    case 'memories':
      return { command: memoriesCommand(remainder || undefined, hookContext(ctx), false) };
    case 'pause':
    case 'resume':
      if (remainder) return { usage: `Usage: /graphiti ${word.toLowerCase()} (it acts on this chat)` };
      return { command: { tag: 'memory', val: { tag: word.toLowerCase(), val: hookContext(ctx) } } };
    case 'forget': {
      const [first = '', id = '', ...extra] = remainder.split(/\s+/);
      const verb = first.toLowerCase();
      if (verb === 'confirm') {
        if (!id || extra.length) return { usage: 'Usage: /graphiti forget confirm <id> (the id the forget listed)' };
        return { command: confirmForgetCommand(id, hookContext(ctx), false) };
      }
      // `drop` and `add` take a forget id, so "forget add-ons" is still a forget of those words.
      if ((verb === 'drop' || verb === 'add') && FORGET_ID.test(id)) {
        const numbers = itemNumbers(extra);
        if (!numbers) return { usage: `Usage: /graphiti forget ${verb} <id> <item number>... (the numbers the forget listed)` };
        return { command: editForgetCommand(id, hookContext(ctx), false, verb === 'drop' ? { drop: numbers } : { add: numbers }) };
      }
      if (!remainder) return { usage: 'Usage: /graphiti forget <words of what to forget>, then /graphiti forget confirm <id>' };
      return { command: forgetCommand({ query: remainder }, hookContext(ctx), false) };
    }
    case 'correct': {
      const [old, nowTrue] = remainder.split('=>').map((part) => part.trim());
      if (!old || !nowTrue) return { usage: 'Usage: /graphiti correct <what is no longer true> => <what is true now>' };
      return { command: correctCommand(old, nowTrue, hookContext(ctx)) };
    }
    case '':
    case 'help':
      return { usage: SLASH_HELP };
    default:
      return { usage: `Unknown subcommand "${word}".\n${SLASH_HELP}` };
  }
}

/**
 * `memories`: what is remembered for the chat of `ctx`; `operator` for a CLI (a group chat's
 * memories are shown to an operator only).
 */
export function memoriesCommand(query, ctx, operator, tag = 'see') {
  return { tag: 'memory', val: { tag, val: { query, ctx, operator } } };
}

/** A forget id as a proposal shows it. */
const FORGET_ID = /^[0-9a-f]{16}$/i;

/** Item numbers as typed (`2 3`, `2,3`), or undefined when one is not a number from 1. */
export function itemNumbers(words) {
  const numbers = words.flatMap((w) => String(w).split(',')).filter(Boolean).map((w) => (/^\d{1,6}$/.test(w) ? Number(w) : NaN));
  return numbers.length && numbers.every((n) => n >= 1) ? numbers : undefined;
}

/**
 * `forget`: what forgetting would delete in the chat of `ctx`, under a forget id (nothing is
 * deleted). `ids`: only these among the search's results; `everything`, `earlierGroups`,
 * `atOnce`: an operator's.
 */
export function forgetCommand({ query, ids = [], everything = false, earlierGroups = false, atOnce = false }, ctx, operator) {
  const request = { query: query || undefined, ids: ids.map(String), everything, earlierGroups, ctx, operator, atOnce };
  return { tag: 'memory', val: { tag: 'forget', val: request } };
}

const forgetChoice = (id, ctx, operator, { drop = [], add = [] } = {}) => ({
  id: String(id), ctx, operator, drop: drop.map(Number), add: add.map(Number),
});

/**
 * `confirm-forget`: carries a proposed forget out (only its sender in its chat, or an
 * operator), with the items numbered `drop` left out and `add` added first.
 */
export function confirmForgetCommand(id, ctx, operator, choice) {
  return { tag: 'memory', val: { tag: 'confirm-forget', val: forgetChoice(id, ctx, operator, choice) } };
}

/** `edit-forget`: leaves items of a proposed forget out or adds left-out ones; deletes nothing. */
export function editForgetCommand(id, ctx, operator, choice) {
  return { tag: 'memory', val: { tag: 'edit-forget', val: forgetChoice(id, ctx, operator, choice) } };
}

/** `correct`: a correction episode naming the old fact. */
export function correctCommand(old, nowTrue, ctx) {
  return { tag: 'memory', val: { tag: 'correct', val: { old: String(old), nowTrue: String(nowTrue), ctx } } };
}

/** The `spool` command variant: `word` is list or requeue. */
/** The component's exit code while an import is under way (the host calls again after a pause). */
export const IMPORT_UNDER_WAY = 75;

/**
 * `import-memory` for the memory of `sender` (their direct chat) or of the Graphiti group `group`,
 * never both; undefined when the request names both or neither.
 */
export function importCommand({ sender, group, agent, dailyNotes, runId }, { dryRun = false, json = false } = {}) {
  if (!sender === !group) return undefined;
  return {
    tag: 'import-memory',
    val: {
      ctx: hookContext({ agentId: agent ?? 'main', senderId: sender, chatType: 'direct', runId }),
      groupId: group,
      dailyNotes: Boolean(dailyNotes),
      dryRun,
      json,
    },
  };
}

export function spoolCommand(word) {
  return { tag: 'spool', val: { tag: word } };
}

/**
 * The host passes its clock: the component's routing reads none. The previous pack counts as just
 * injected (the CLI's --previous-at and --carried-turns describe an older one).
 * @param {string} prompt
 * @param {{ groupChat?: boolean, recallJson?: string, previousPack?: string, json?: boolean, now?: () => number }} options
 */
export function intentTest(prompt, { groupChat = false, recallJson, previousPack, json = false, now = Date.now } = {}) {
  return {
    tag: 'intent-test',
    val: { request: { prompt, recallJson, groupChat, previousPack, nowMs: BigInt(now()) }, format: json ? 'json' : 'text' },
  };
}

const EXPERTS_HELP = [
  'Usage:',
  '  /experts list                   installed expert packages, ready or with errors',
  '  /experts validate <name>        both validation phases of a package',
  '  /experts prompt <name>          the system prompt an expert session gets',
  '  /experts registry               EXPERTS.md, as the main agent gets it',
  '  /experts queue                  expert runs queued, running, or waiting for an approval or a retry',
  '  /experts pending                tool calls and learnings waiting for your approval',
  '  /experts approve <id>           approve one of them (a tool call may then run once)',
  '  /experts reject <id>            reject one of them',
  '  /experts dead-letters           runs set aside after failing, with why',
  '  /experts replay <id>            queue a dead-lettered or failed run again',
  '  /experts run <expert> <message> queue a run of an expert with a message',
  '  /experts run <expert> --process <name> [--inputs <json>] [--dry-run]',
  '                                  queue a run of one of its processes; --dry-run executes only AUTO operations',
].join('\n');

/** Subcommands that name one thing, and what (for the usage line). */
const EXPERTS_ARGUMENT = { validate: '<name>', prompt: '<name>', approve: '<id>', reject: '<id>', replay: '<id>', remove: '<expert>' };

/**
 * An `experts` command variant (WIT `experts-command`): `word` is the subcommand; `argument` its
 * one argument (a name or an id), or its record (`run`, `fire`, `bind`, `step`, `learn`,
 * `function`), or the epoch milliseconds of `due`, or the `install-source`.
 */
export function expertsCommand(word, argument) {
  if (word in EXPERTS_ARGUMENT || ['run', 'fire', 'bind', 'step', 'learn', 'function', 'function-ended', 'due', 'install'].includes(word)) {
    return { tag: 'experts', val: { tag: word, val: argument } };
  }
  return { tag: 'experts', val: { tag: word } };
}

/**
 * `--at TIME` of `experts due`: RFC 3339 (2026-11-23T07:00:00+01:00) or epoch milliseconds; now
 * when absent. Returns the WIT u64, or throws an Error naming what is wrong.
 * @param {string | undefined} text
 * @param {() => number} now
 */
export function dueMoment(text, now = Date.now) {
  if (text === undefined || text === null || text === '') return BigInt(now());
  const trimmed = String(text).trim();
  if (/^\d+$/.test(trimmed)) return BigInt(trimmed);
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(trimmed) ? Date.parse(trimmed) : NaN;
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`--at ${JSON.stringify(trimmed)} is neither RFC 3339 (2026-11-23T07:00:00+01:00) nor epoch milliseconds`);
  return BigInt(ms);
}

/** The `expert_step` tool: marks a step of the calling session's invocation complete. */
export function stepCommand(step, ctx) {
  return expertsCommand('step', { step: String(step ?? ''), ctx: hookContext(ctx) });
}

/** The `expert_function` tool: an isolated function's name and inputs, from the calling session. */
export function functionCommand(name, inputs, ctx) {
  return expertsCommand('function', { name: String(name ?? ''), inputsJson: JSON.stringify(inputs ?? {}), ctx: hookContext(ctx) });
}

/** An isolated function's child session ended with `reply`: the component says what the caller gets. */
export function functionEndedCommand(name, reply, ctx) {
  return expertsCommand('function-ended', { name: String(name ?? ''), reply: String(reply ?? ''), ctx: hookContext(ctx) });
}

/** The `expert_learning` tool: the proposal (the tool's parameters) as JSON, from the calling session. */
export function learnCommand(params, ctx) {
  return expertsCommand('learn', { proposalJson: JSON.stringify(params ?? {}), ctx: hookContext(ctx) });
}

/**
 * `experts check-tool`: the approval check's dry run for a call in a session (`session`), or as an
 * expert (`expert`).
 * @param {string} tool  the tool as called (`tool_call` for a call through Tool Search)
 * @param {string | undefined} argumentsJson  its arguments as JSON (none: `{}`)
 * @param {{ session?: string, expert?: string, agent?: string }} options
 */
export function checkToolCommand(tool, argumentsJson, { session, expert, agent } = {}) {
  const ctx = hookContext({ sessionKey: session, agentId: agent, channel: 'cli' });
  const call = { toolName: tool, argumentsJson: argumentsJson ?? '{}', callId: undefined };
  return { tag: 'experts', val: { tag: 'check-tool', val: { expert, call, ctx } } };
}

/**
 * The `expert_knowledge` tool's command: `name` (none: the list), asked from the session of `ctx`
 * (OpenClaw's tool context); the component decides whether that session may read it.
 */
export function knowledgeCommand(name, ctx) {
  return { tag: 'experts', val: { tag: 'knowledge', val: { file: name, ctx: hookContext(ctx) } } };
}

const RUN_USAGE = 'Usage: /experts run <expert> [--process <name> [--inputs <json object>]] [--dry-run] [<message>]';

/**
 * The WIT `manual-run` record, from the CLI's parts: the message, or a process with its inputs
 * (JSON text), as a dry run when asked.
 */
export function manualRun(expert, message, { process, inputs, dryRun } = {}) {
  return { expert, message: message ?? '', process: process || undefined, inputsJson: inputs ?? '', dryRun: Boolean(dryRun) };
}

/** `/experts run <expert> [--process NAME [--inputs JSON]] [--dry-run] [message]`. */
function manualRunCommand(text) {
  const [expert = ''] = text.split(/\s+/, 1);
  let rest = text.slice(expert.length).trim();
  const options = {};
  for (;;) {
    const flag = /^--(dry-run|process|inputs)(?=\s|$)/.exec(rest);
    if (!flag) break;
    rest = rest.slice(flag[0].length).trim();
    if (flag[1] === 'dry-run') {
      options.dryRun = true;
    } else if (flag[1] === 'process') {
      const [name = ''] = rest.split(/\s+/, 1);
      if (!name || name.startsWith('--')) return { usage: `--process needs a process name.\n${RUN_USAGE}` };
      options.process = name;
      rest = rest.slice(name.length).trim();
    } else {
      const inputs = leadingJsonObject(rest);
      if (inputs === undefined) return { usage: `--inputs needs a JSON object, such as {"destination": "Lisbon"}.\n${RUN_USAGE}` };
      options.inputs = inputs;
      rest = rest.slice(inputs.length).trim();
    }
  }
  if (!expert || (!rest && !options.process)) return { usage: RUN_USAGE };
  if (options.inputs !== undefined && !options.process) return { usage: `--inputs are a process's: name it with --process.\n${RUN_USAGE}` };
  return { command: expertsCommand('run', manualRun(expert, rest, options)) };
}

/** The JSON object that `text` starts with, as written; undefined when it starts with none. */
function leadingJsonObject(text) {
  if (!text.startsWith('{')) return undefined;
  for (let end = text.indexOf('}'); end !== -1; end = text.indexOf('}', end + 1)) {
    const candidate = text.slice(0, end + 1);
    try {
      const value = JSON.parse(candidate);
      if (value && typeof value === 'object' && !Array.isArray(value)) return candidate;
    } catch {
      // Not closed yet: a brace inside a string or a nested object.
    }
  }
  return undefined;
}

/** `/experts <args>`. */
export function expertsSlashCommand(args) {
  const text = (args ?? '').trim();
  const [word = ''] = text.split(/\s+/, 1);
  const rest = text.slice(word.length).trim();
  if (['list', 'registry', 'pending', 'queue', 'dead-letters'].includes(word)) return { command: expertsCommand(word) };
  if (word === 'run') return manualRunCommand(rest);
  if (word in EXPERTS_ARGUMENT && word !== 'remove') {
    const [argument = ''] = rest.split(/\s+/, 1);
    if (!argument) return { usage: `Usage: /experts ${word} ${EXPERTS_ARGUMENT[word]}` };
    return { command: expertsCommand(word, argument) };
  }
  if (word === '' || word === 'help') return { usage: EXPERTS_HELP };
  return { usage: `Unknown subcommand "${word}".\n${EXPERTS_HELP}` };
}

/** Chat commands after which the runner should look at the queue at once (they may queue a run). */
export function queuesWork(command) {
  return command?.tag === 'experts' && ['approve', 'reject', 'replay', 'run'].includes(command.val?.tag);
}

/** `/recall <query>`: the conversation's own memories. */
export function recallSlashCommand(args, ctx) {
  const query = (args ?? '').trim();
  if (!query) return { usage: 'Usage: /recall <query>' };
  return { command: { tag: 'search', val: { query, ctx: hookContext(ctx) } } };
}

/**
 * A command's output as one chat message: stdout, then stderr. A chat is not a shell: the text says
 * what went wrong, never an exit code.
 */
export function outputText(output) {
  const parts = [output.stdout.trimEnd(), output.stderr.trimEnd()].filter(Boolean);
  return parts.join('\n') || (output.exitCode === 0 ? '(no output)' : '(failed, with no message)');
}
