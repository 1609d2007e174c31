// The feature contract's operations as Gateway session actions, each answered by the same component
// command as the CLI and the slash commands, and the `overview` read method the dashboard widget's
// data binding names (openclaw.plugin.json `dashboard.dataBindings`).

import fs from 'node:fs';
import { IMPORT_UNDER_WAY, confirmForgetCommand, correctCommand, editForgetCommand, expertsCommand, forgetCommand, importCommand, memoriesCommand, queuesWork, spoolCommand } from './commands.js';
import { LEFT_TO_THE_GATEWAY } from './import-cli.js';
import { clearStaged, stageTranscripts } from './transcripts.js';
import { hookContext } from './context.js';
import { PLUGIN_ID, contract } from './feature-contract.js';

/** The Gateway method the dashboard's `overview` data binding reads. */
export const OVERVIEW_METHOD = `${PLUGIN_ID}.overview`;

/** The chat an operation names: a sender or a group chat, else the session it was asked from. */
function chatOf(input, action) {
  if (input.sender && input.chat) {
    throw new ChatError('name one chat: a sender (a direct chat) or a chat id (a group chat), not both');
  }
  return hookContext({
    sessionKey: action.sessionKey,
    agentId: input.agent ?? action.agentId ?? 'main',
    senderId: input.sender,
    chatId: input.chat,
    channel: input.channel,
    chatType: input.chat ? 'group' : input.sender ? 'direct' : undefined,
  });
}

/** An operation's input that names no chat, or two: answered as a failed operation, never run. */
class ChatError extends Error {}

const answer = (output) => ({ exitCode: output.exitCode, text: [output.stdout, output.stderr].filter(Boolean).join('') });

/** A command whose stdout is one JSON document: the document, or why there is none. */
function documentOf(output) {
  if (output.exitCode !== 0) return { error: (output.stderr || output.stdout).trim() || `exit code ${output.exitCode}` };
  try {
    return { document: JSON.parse(output.stdout) };
  } catch (error) {
    return { error: `the component's answer is not JSON: ${error.message}` };
  }
}

/** The import an operation names: a sender's memory or a group's, one of the two. */
function importOf(input, dryRun) {
  const command = importCommand(input, { dryRun, json: dryRun });
  if (!command) throw new ChatError('name one memory: a sender (their direct chat) or a Graphiti group id, not both or neither');
  return command;
}

/** An import started: under way is an answer too, the Gateway's sending passes carrying it on. */
const started = (output) => (output.exitCode === IMPORT_UNDER_WAY
  ? { exitCode: 0, text: `${output.stdout}${LEFT_TO_THE_GATEWAY}` }
  : answer(output));

/** Each operation: the component command it runs and how its output is answered. */
function handlers(runtime) {
  // The Gateway checked the operator's scope; an operator may see and forget any chat's memories.
  const operator = true;
  // What an import asks for from OpenClaw's sessions is staged for the component first.
  const staged = async (input, command) => {
    const { stateDir } = runtime.options;
    if (input.transcripts) await stageTranscripts(stateDir, { agentId: input.agent ?? 'main' });
    else clearStaged(stateDir);
    return command;
  };
  const run = async (command, shape = answer) => {
    const output = await runtime.command(command);
    if (output.exitCode === 0 && queuesWork(command)) runtime.kickRunner();
    return shape(output);
  };
  return {
    memories: (input, action) => run(memoriesCommand(input.query, chatOf(input, action), operator, 'export'), documentOf),
    overview: () => run({ tag: 'overview' }, documentOf),
    status: () => run({ tag: 'status' }),
    spool: () => run(spoolCommand('list')),
    'expert-queue': () => run(expertsCommand('queue')),
    forget: (input, action) => run(forgetCommand({ query: input.query, ids: input.ids ?? [] }, chatOf(input, action), operator)),
    'confirm-forget': (input) => run(confirmForgetCommand(input.id, hookContext({}), operator, input)),
    'edit-forget': (input) => run(editForgetCommand(input.id, hookContext({}), operator, input)),
    chats: () => run({ tag: 'memory', val: { tag: 'chats' } }, documentOf),
    correct: (input, action) => run(correctCommand(input.old, input.nowTrue, chatOf(input, action))),
    pause: (input, action) => run({ tag: 'memory', val: { tag: 'pause', val: chatOf(input, action) } }),
    resume: (input, action) => run({ tag: 'memory', val: { tag: 'resume', val: chatOf(input, action) } }),
    requeue: () => run(spoolCommand('requeue')),
    'import-plan': async (input) => run(await staged(input, importOf(input, true)), documentOf),
    import: async (input) => run(await staged(input, importOf(input, false)), started),
    approve: (input) => run(expertsCommand('approve', input.id)),
    reject: (input) => run(expertsCommand('reject', input.id)),
  };
}

/**
 * Registers every operation of the contract as a session action with its scope, and the overview
 * read method. The Gateway validates each payload against the operation's input schema and refuses
 * a connection without the scope before the handler runs.
 */
export function registerFeature(api, runtime) {
  const register = api.session?.controls?.registerSessionAction;
  if (typeof register !== 'function') {
    runtime.logger.warn('graphiti-openclaw: this OpenClaw has no plugin session actions: the Control UI operations are off');
    return;
  }
  const answers = handlers(runtime);
  for (const [id, operation] of Object.entries(contract.operations)) {
    register({
      id,
      description: operation.description,
      schema: operation.input,
      requiredScopes: [operation.kind === 'query' ? 'operator.read' : 'operator.write'],
      async handler(action) {
        try {
          return { ok: true, result: await answers[id](action.payload ?? {}, action) };
        } catch (error) {
          if (error instanceof ChatError) return { ok: false, error: `graphiti-openclaw: ${error.message}`, code: 'FAILED' };
          return { ok: false, error: `graphiti-openclaw failed: ${error?.message ?? error}`, code: 'FAILED' };
        }
      },
    });
  }
  api.registerGatewayMethod?.(OVERVIEW_METHOD, async ({ respond }) => {
    try {
      const { document, error } = await answers.overview();
      if (document) respond(true, document, undefined);
      else respond(false, undefined, { code: 'UNAVAILABLE', message: error });
    } catch (error) {
      respond(false, undefined, { code: 'UNAVAILABLE', message: `graphiti-openclaw failed: ${error?.message ?? error}` });
    }
  }, { scope: 'operator.read' });
}

/** The dashboard widget's name on a session board. */
export const WIDGET_NAME = 'graphiti-overview';

/**
 * `board.widget.put`'s parameters for the overview widget on the board of `sessionKey`: the
 * package's `widgets/overview.html`, declaring the one data binding it reads. Its height follows
 * its rows (`auto`): a board's default widget size cuts the last ones off.
 */
export function overviewWidgetParams(html, { sessionKey, agentId }) {
  return {
    sessionKey,
    ...(agentId ? { agentId } : {}),
    name: WIDGET_NAME,
    title: 'Graphiti memory',
    content: { kind: 'html', html },
    heightMode: 'auto',
    declared: { tools: [OVERVIEW_METHOD] },
  };
}

/** `openclaw graphiti widget --session KEY`: prints those parameters for `openclaw gateway call`. */
export function registerWidgetCommand(graphiti, widgetFile) {
  graphiti.command('widget').description('The parameters of board.widget.put that pins the overview widget to a session\'s dashboard (pipe them to openclaw gateway call)')
    .requiredOption('--session <key>', 'the session whose dashboard gets the widget')
    .option('--agent <id>', 'the agent that owns the session')
    .action((opts) => {
      process.stdout.write(`${JSON.stringify(overviewWidgetParams(fs.readFileSync(widgetFile, 'utf8'), { sessionKey: opts.session, agentId: opts.agent }))}\n`);
    });
}
