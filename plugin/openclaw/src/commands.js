// Slash commands, tools and `openclaw graphiti …` as the component's `run-command` variants. Parsing
// the words a user typed is the adapter's job; everything they ask for is rendered by the component.

import { chatTypeOf, hookContext } from './context.js';

export const SLASH_HELP = [
  'Usage:',
  '  /graphiti status              Graphiti reachability, recall and capture counters, spool, pack rates',
  '  /graphiti debug               what the plugin did on this conversation\'s last turn',
  '  /graphiti intent-test <text>  which workflow pack <text> would get, and why (changes nothing)',
  '  /graphiti spool [requeue]     captured turns waiting for Graphiti, in doubt or set aside; requeue the set-aside ones',
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
    case '':
    case 'help':
      return { usage: SLASH_HELP };
    default:
      return { usage: `Unknown subcommand "${word}".\n${SLASH_HELP}` };
  }
}

/** The `spool` command variant: `word` is list or requeue. */
export function spoolCommand(word) {
  return { tag: 'spool', val: { tag: word } };
}

/**
 * @param {string} prompt
 * @param {{ groupChat?: boolean, recallJson?: string, previousPack?: string, json?: boolean }} options
 */
export function intentTest(prompt, { groupChat = false, recallJson, previousPack, json = false } = {}) {
  return {
    tag: 'intent-test',
    val: [{ prompt, recallJson, groupChat, previousPack }, json ? 'json' : 'text'],
  };
}

const EXPERTS_HELP = [
  'Usage:',
  '  /experts list             installed expert packages, ready or with errors',
  '  /experts validate <name>  both validation phases of a package',
  '  /experts prompt <name>    the system prompt an expert session gets',
  '  /experts registry         EXPERTS.md, as the main agent gets it',
  '  /experts pending          tool calls waiting for your approval',
  '  /experts approve <id>     approve one of them (it may run once)',
].join('\n');

/** The `experts` command variant: `word` is list, validate, prompt, registry, pending or approve. */
export function expertsCommand(word, argument) {
  const withArgument = { validate: true, prompt: true, approve: true };
  return { tag: 'experts', val: withArgument[word] ? { tag: word, val: argument } : { tag: word } };
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
  return { tag: 'experts', val: { tag: 'check-tool', val: [expert, call, ctx] } };
}

/**
 * The `expert_knowledge` tool's command: `name` (none: the list), asked from the session of `ctx`
 * (OpenClaw's tool context); the component decides whether that session may read it.
 */
export function knowledgeCommand(name, ctx) {
  return { tag: 'experts', val: { tag: 'knowledge', val: [name, hookContext(ctx)] } };
}

/** `/experts <args>`. */
export function expertsSlashCommand(args) {
  const [word = '', argument = ''] = (args ?? '').trim().split(/\s+/, 2);
  const needsArgument = { validate: '<name>', prompt: '<name>', approve: '<id>' };
  if (['list', 'registry', 'pending'].includes(word)) return { command: expertsCommand(word) };
  if (word in needsArgument) {
    if (!argument) return { usage: `Usage: /experts ${word} ${needsArgument[word]}` };
    return { command: expertsCommand(word, argument) };
  }
  if (word === '' || word === 'help') return { usage: EXPERTS_HELP };
  return { usage: `Unknown subcommand "${word}".\n${EXPERTS_HELP}` };
}

/** `/recall <query>`: the conversation's own memories. */
export function recallSlashCommand(args, ctx) {
  const query = (args ?? '').trim();
  if (!query) return { usage: 'Usage: /recall <query>' };
  return { command: { tag: 'search', val: { query, ctx: hookContext(ctx) } } };
}

/** A command's output as one message: stdout, then stderr, and the exit code when it failed. */
export function outputText(output) {
  const parts = [output.stdout.trimEnd(), output.stderr.trimEnd()].filter(Boolean);
  if (output.exitCode !== 0) parts.push(`(exit code ${output.exitCode})`);
  return parts.join('\n') || '(no output)';
}
