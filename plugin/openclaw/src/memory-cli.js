// `openclaw graphiti …` commands about what is remembered for one chat: pause, resume and the
// paused chats, memories, export, forget (propose, confirm) and correct. Each is a component
// command; this file parses the words and options only.

import { confirmForgetCommand, correctCommand, editForgetCommand, forgetCommand, itemNumbers, memoriesCommand } from './commands.js';
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
  for (const [name, what] of [['pause', 'Capture nothing from a chat until it resumes (what was remembered is still recalled)'], ['resume', 'Capture a paused chat again']]) {
    chatOptions(graphiti.command(name)).description(what)
      .action((opts) => {
        const ctx = chatContext(name, opts);
        return ctx && print({ tag: 'memory', val: { tag: name, val: ctx } });
      });
  }
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
    .description("What forgetting would delete from a chat's memories, under a forget id: the facts, episodes and captures not yet sent that have most of [query]'s words, numbered, and the weaker matches apart")
    .option('--id <id...>', 'only these ids among the search\'s results and the recent episodes')
    .option('--all', 'everything remembered for the chat')
    .option('--earlier-groups', 'with --all, also the groups its memories went to under earlier group-id rules (other ids may map there too)')
    .option('--yes', 'delete at once instead of proposing')
    .action((query, opts) => {
      const ctx = chatContext('forget', opts);
      if (!ctx) return undefined;
      if (!query === !opts.all) {
        process.stderr.write('graphiti forget: give the words of what to forget, or --all\n');
        process.exitCode = 2;
        return undefined;
      }
      if (opts.earlierGroups && !opts.all) {
        process.stderr.write('graphiti forget: --earlier-groups goes with --all\n');
        process.exitCode = 2;
        return undefined;
      }
      const request = { query, ids: opts.id ?? [], everything: Boolean(opts.all), earlierGroups: Boolean(opts.earlierGroups), atOnce: Boolean(opts.yes) };
      return print(forgetCommand(request, ctx, true));
    });
  const collect = (value, previous = []) => [...previous, value];
  const choiceOptions = (command) => command
    .option('--drop <n>', 'leave the proposed item numbered <n> out (repeatable)', collect)
    .option('--add <n>', 'add the left-out item numbered <n> (repeatable)', collect);
  /** The items chosen by number, or undefined (said, exit code 2) when one is not a number. */
  const choiceOf = (name, opts) => {
    const choice = {};
    for (const key of ['drop', 'add']) {
      if (!opts[key]) continue;
      choice[key] = itemNumbers(opts[key]);
      if (!choice[key]) {
        const bad = opts[key].find((word) => !itemNumbers([word]));
        process.stderr.write(`graphiti ${name}: --${key} ${JSON.stringify(bad)} is not an item number (1, 2, …, as the proposal numbers them)\n`);
        process.exitCode = 2;
        return undefined;
      }
    }
    return choice;
  };
  choiceOptions(graphiti.command('confirm-forget <id>')).description('Delete what a proposed forget proposes, by its id (--drop and --add change its items first)')
    .action((id, opts) => {
      const choice = choiceOf('confirm-forget', opts);
      return choice && print(confirmForgetCommand(id, hookContext({}), true, choice));
    });
  choiceOptions(graphiti.command('edit-forget <id>')).description('Leave items of a proposed forget out or add left-out ones, and show it as it now stands (nothing is deleted)')
    .action((id, opts) => {
      const choice = choiceOf('edit-forget', opts);
      return choice && print(editForgetCommand(id, hookContext({}), true, choice));
    });
  graphiti.command('chats').description('The chats the plugin has seen (its recent turn records), as JSON: session, sender or chat id, channel, Graphiti group, last turn')
    .action(() => print({ tag: 'memory', val: { tag: 'chats' } }));
  chatOptions(graphiti.command('correct <old> <nowTrue>'))
    .description('Record that a fact of a chat is no longer true, and what is: a correction episode naming the old fact')
    .action((old, nowTrue, opts) => {
      const ctx = chatContext('correct', opts);
      return ctx && print(correctCommand(old, nowTrue, ctx));
    });
}
