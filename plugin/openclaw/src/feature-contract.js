// The operations the Control UI (and any Gateway client) may call, one contract for the backend
// (feature.js registers each as a Gateway session action) and the browser (control-ui/ builds a
// typed client on it). Browser-safe: no imports. Queries need `operator.read`, actions
// `operator.write`; no operation is an agent tool (the model's only forget is `graphiti_forget`,
// which proposes).

const text = (maxLength) => ({ type: 'string', minLength: 1, maxLength });
const chat = {
  sender: { ...text(200), description: 'The sender of a direct chat' },
  chat: { ...text(200), description: 'The id of a group chat' },
  channel: { ...text(100), description: "The chat's channel" },
  agent: { ...text(100), description: 'The agent whose memories they are (main when not given)' },
};
const input = (properties = {}, required = []) => ({ type: 'object', additionalProperties: false, properties, required });
/** A component command's answer as the CLI prints it. */
const answer = {
  type: 'object',
  additionalProperties: false,
  properties: { exitCode: { type: 'integer', minimum: 0, maximum: 255 }, text: { type: 'string' } },
  required: ['exitCode', 'text'],
};
/** A component command's JSON document, or why there is none. */
const documentOrError = {
  type: 'object',
  additionalProperties: false,
  properties: { document: { type: 'object' }, error: { type: 'string' } },
};
const id = (what) => ({ type: 'string', pattern: '^[A-Za-z0-9_-]{1,120}$', description: what });
const numbers = (what) => ({ type: 'array', maxItems: 200, items: { type: 'integer', minimum: 1, maximum: 1000 }, description: what });
/** Whose memory an import fills, and with what. */
const importInput = input({
  sender: { ...text(200), description: 'The sender the workspace belongs to: their direct chat\'s group' },
  group: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,200}$', description: 'The Graphiti group to import into instead' },
  agent: chat.agent,
  dailyNotes: { type: 'boolean', description: 'Import the daily notes (memory/YYYY-MM-DD*.md) too' },
  transcripts: { type: 'boolean', description: 'Import the past conversations of the last 30 days too, each turn into its own chat\'s group' },
});
/** Which items of a proposed forget to leave out or add, by the numbers it shows. */
const choice = { drop: numbers('Numbers of proposed items to leave out'), add: numbers('Numbers of left-out items to add') };

export const PLUGIN_ID = 'graphiti-openclaw';

export const contract = {
  pluginId: PLUGIN_ID,
  operations: {
    memories: {
      kind: 'query',
      description: 'What Graphiti remembers for a chat (named by sender or chat, else the session asked from): the facts a search returns, current and no longer true with their dates, entities, recent episodes, and the session\'s recent turns with what each injected and why',
      input: input({ query: text(500), ...chat }),
      output: documentOrError,
    },
    overview: {
      kind: 'query',
      description: 'Turns routed, memories recalled per turn, recall fallbacks, each pack\'s injection rate, the capture spool\'s depth and the expert tool calls waiting for approval',
      input: input(),
      output: documentOrError,
    },
    status: { kind: 'query', description: 'Graphiti reachability, counters, spool depth, pack rates (the status command)', input: input(), output: answer },
    spool: { kind: 'query', description: 'The capture spool: what waits, what is in doubt, what was set aside and why', input: input(), output: answer },
    'expert-queue': { kind: 'query', description: 'Expert runs queued, running, or waiting for an approval or a retry', input: input(), output: answer },
    forget: {
      kind: 'action',
      description: 'Propose forgetting what a search of a chat\'s memories finds (or those ids among its results): lists it under a forget id, deletes nothing',
      input: input({ query: text(500), ids: { type: 'array', maxItems: 50, items: id('A fact or episode id') }, ...chat }, ['query']),
      output: answer,
    },
    'confirm-forget': {
      kind: 'action',
      description: 'Delete what a proposed forget proposes, by its forget id, with the items numbered in `drop` left out and those in `add` added first',
      input: input({ id: id('The forget id'), ...choice }, ['id']),
      output: answer,
    },
    'edit-forget': {
      kind: 'action',
      description: 'Leave items of a proposed forget out (`drop`) or add left-out ones (`add`), by their numbers, and show it as it now stands; deletes nothing',
      input: input({ id: id('The forget id'), ...choice }, ['id']),
      output: answer,
    },
    chats: {
      kind: 'query',
      description: 'The chats the plugin has seen (its recent turn records): each one\'s session, kind, sender or chat id, channel, Graphiti group and last turn',
      input: input(),
      output: documentOrError,
    },
    correct: {
      kind: 'action',
      description: 'Record that a fact of a chat is no longer true, and what is',
      input: input({ old: text(500), nowTrue: text(500), ...chat }, ['old', 'nowTrue']),
      output: answer,
    },
    pause: { kind: 'action', description: 'Stop capturing a chat until it resumes', input: input(chat), output: answer },
    resume: { kind: 'action', description: 'Capture a paused chat again', input: input(chat), output: answer },
    requeue: { kind: 'action', description: 'Put every set-aside spool entry back in the queue', input: input(), output: answer },
    'import-plan': {
      kind: 'query',
      description: 'What importing memory-core\'s workspace files (MEMORY.md, USER.md, imported notes, with dailyNotes the daily notes) and, with transcripts, past conversations would send: items per group and kind of source, what is skipped and why, and Graphiti\'s work; sends nothing',
      input: importInput,
      output: documentOrError,
    },
    import: {
      kind: 'action',
      description: 'Import memory-core\'s workspace files into a sender\'s (or a group\'s) memory and, with transcripts, past conversations into their own chats\' memories, each item once, at capture.import_per_minute; the Gateway\'s sending passes carry it on, and status says how far it is',
      input: importInput,
      output: answer,
    },
    approve: { kind: 'action', description: 'Approve a pending expert tool call (it may run once) or learning', input: input({ id: id('The approval id') }, ['id']), output: answer },
    reject: { kind: 'action', description: 'Reject a pending expert tool call (its step fails) or learning', input: input({ id: id('The approval id') }, ['id']), output: answer },
  },
  events: {},
};
