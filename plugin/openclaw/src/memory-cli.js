// `openclaw graphiti …` commands about what is remembered for one chat: paused chats, see,
// export, forget (propose, confirm) and correct. Each is a component command; this file parses the
// words and options only.

import { confirmForgetCommand, correctCommand, forgetCommand, memoriesCommand } from './commands.js';
import { hookContext } from './context.js';

/**
 * @param {import('commander').Command} graphiti  the `graphiti` command
 * @param {(command: object) => Promise<unknown>} print  runs a component command and prints its output
 */
export function registerMemoryCommands(graphiti, print) {
  graphiti.command('paused').description('The chats whose memory is paused (their Graphiti groups), and the chats the settings keep out of memory')
    .action(() => print({ tag: 'memory', val: { tag: 'paused' } }));
  const chatOptions = (command) => command
    .option('--sender <id>', 'the sender of a direct chat')
    .option('--chat <id>', 'the id of a group chat')
    .option('--channel <name>', 'the chat\'s channel')
    .option('--agent <id>', 'the agent whose memories they are', 'main')
    .option('--session <key>', 'a session of the chat: memories shows its recent turns too');
  const chatContext = (name, opts) => {
    if (!opts.sender === !opts.chat) {
      process.stderr.write(`graphiti ${name}: name one chat, --sender ID (direct) or --chat ID (group)\n`);
      process.exitCode = 2;
      return undefined;
    }
    return hookContext({ sessionKey: opts.session, agentId: opts.agent, senderId: opts.sender, chatId: opts.chat, channel: opts.channel, chatType: opts.chat ? 'group' : 'direct' });
  };
  chatOptions(graphiti.command('memories [query]'))
    .description('What Graphiti remembers for a chat: facts and entities a search returns (current and no longer true, with dates and ids), recent episodes')
    .action((query, opts) => {
      const ctx = chatContext('memories', opts);
      return ctx && print(memoriesCommand(query, ctx, true));
    });
  chatOptions(graphiti.command('export [query]'))
    .description('What Graphiti remembers for a chat as one JSON document (each list as Graphiti returned it, and whether it is complete)')
    .action((query, opts) => {
      const ctx = chatContext('export', opts);
      return ctx && print(memoriesCommand(query, ctx, true, 'export'));
    });
  chatOptions(graphiti.command('forget [query]'))
    .description("What forgetting would delete from a chat's memories, under a forget id: the facts and episodes a search finds that share a word with [query], and captures not yet sent that do")
    .option('--id <id...>', 'only these ids among the search\'s results and the recent episodes')
    .option('--all', 'everything remembered for the chat, under its earlier group id too')
    .option('--yes', 'delete at once instead of proposing')
    .action((query, opts) => {
      const ctx = chatContext('forget', opts);
      if (!ctx) return undefined;
      if (!query === !opts.all) {
        process.stderr.write('graphiti forget: give the words of what to forget, or --all\n');
        process.exitCode = 2;
        return undefined;
      }
      return print(forgetCommand({ query, ids: opts.id ?? [], everything: Boolean(opts.all), atOnce: Boolean(opts.yes) }, ctx, true));
    });
  graphiti.command('confirm-forget <id>').description('Delete what a proposed forget listed, by its id')
    .action((id) => print(confirmForgetCommand(id, hookContext({}), true)));
  chatOptions(graphiti.command('correct <old> <nowTrue>'))
    .description('Record that a fact of a chat is no longer true, and what is: a correction episode naming the old fact')
    .action((old, nowTrue, opts) => {
      const ctx = chatContext('correct', opts);
      return ctx && print(correctCommand(old, nowTrue, ctx));
    });
}
