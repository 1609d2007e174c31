// The agent tools of graphiti-openclaw (graphiti_search, graphiti_ingest, the experts' tools), each
// answered by the component; registered by index.js.

import { hookContext } from './context.js';
import { correctCommand, forgetCommand, functionCommand, functionEndedCommand, knowledgeCommand, learnCommand, outputText, stepCommand } from './commands.js';
import { expertRunners } from './expert-runner.js';

function textResult(text, details = {}) {
  return { content: [{ type: 'text', text }], details };
}

export function registerTools(api, runtime) {
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
  // The model only proposes: the user confirms with the slash command the answer names.
  api.registerTool((toolCtx) => ({
    name: 'graphiti_forget',
    label: 'Graphiti forget',
    description: 'When the user asks to forget something: list what long-term memory of this chat holds about it, under a forget id. Nothing is deleted until the user sends the confirmation command the answer names; tell them what would go and how to confirm. This turn is not remembered.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'The words of what to forget, e.g. "therapist".' },
        ids: { type: 'array', items: { type: 'string' }, description: 'Only these ids, from an earlier answer of this tool or of /graphiti memories.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    resultContentSource: 'network',
    async execute(_toolCallId, params) {
      const ids = Array.isArray(params?.ids) ? params.ids : [];
      const output = await runtime.command(forgetCommand({ query: String(params?.query ?? ''), ids }, hookContext(toolCtx), false));
      if (output.exitCode !== 0) throw new Error(outputText(output));
      return textResult(output.stdout);
    },
  }), { name: 'graphiti_forget' });
  api.registerTool((toolCtx) => ({
    name: 'graphiti_correct',
    label: 'Graphiti correct',
    description: 'When the user says something remembered is no longer true: record a correction naming the old fact and what is true now, so the knowledge graph can supersede it.',
    parameters: {
      type: 'object',
      properties: {
        old: { type: 'string', description: 'What is no longer true, in a few words.' },
        now_true: { type: 'string', description: 'What is true now, as a complete sentence.' },
      },
      required: ['old', 'now_true'],
      additionalProperties: false,
    },
    async execute(_toolCallId, params) {
      const output = await runtime.command(correctCommand(String(params?.old ?? ''), String(params?.now_true ?? ''), hookContext(toolCtx)));
      if (output.exitCode !== 0) throw new Error(outputText(output));
      runtime.flushSoon();
      return textResult(output.stdout);
    },
  }), { name: 'graphiti_correct' });
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
  // An expert run's progress and proposals: the component finds the invocation and the expert from
  // the calling session (OpenClaw's tool context) and refuses other sessions.
  api.registerTool((toolCtx) => ({
    name: 'expert_step',
    label: 'Expert step',
    description: 'In an expert process run: mark one checklist step of your process complete (its text as in the checklist), so that a retry resumes after it.',
    parameters: {
      type: 'object',
      properties: { step: { type: 'string', description: 'The step completed, as the process\'s checklist names it.' } },
      required: ['step'],
      additionalProperties: false,
    },
    async execute(_toolCallId, params) {
      const output = await runtime.command(stepCommand(params?.step, toolCtx));
      if (output.exitCode !== 0) throw new Error(outputText(output));
      return textResult(output.stdout);
    },
  }), { name: 'expert_step' });
  // spec §6: a function with `session: isolated` runs in a child session of its own; the caller gets
  // only the reply. The component names the session and writes the message; the Gateway's runner runs it.
  api.registerTool((toolCtx) => ({
    name: 'expert_function',
    label: 'Expert function',
    description: 'In an expert session: run one of your functions marked isolated in a fresh child session, with its inputs; you get its outputs back.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The function, as your prompt lists it.' },
        inputs: { type: 'object', description: 'Its inputs, by name.' },
      },
      required: ['name'],
      additionalProperties: false,
    },
    async execute(_toolCallId, params) {
      const output = await runtime.command(functionCommand(params?.name, params?.inputs ?? {}, toolCtx));
      if (output.exitCode !== 0) throw new Error(outputText(output));
      const runner = expertRunners.get(runtime.options.stateDir);
      if (!runner) throw new Error('isolated functions run in the OpenClaw Gateway only (no expert runner in this process)');
      const reply = await runner.runFunction(JSON.parse(output.stdout));
      // The component hands the caller the outputs only, or tells it to stop on a low confidence.
      const ended = await runtime.command(functionEndedCommand(params?.name, reply, toolCtx));
      if (ended.exitCode !== 0) throw new Error(outputText(ended));
      return textResult(ended.stdout);
    },
  }), { name: 'expert_function' });
  api.registerTool((toolCtx) => ({
    name: 'expert_learning',
    label: 'Expert learning',
    description: 'In an expert session: propose a learning for your expert package (a correction to apply next time). The package\'s learning policy decides whether it is kept at once or waits for the user\'s approval.',
    parameters: {
      type: 'object',
      properties: {
        scope: { type: 'string', description: '"package", or the name of one of your functions.' },
        title: { type: 'string', description: 'A short title.' },
        observation: { type: 'string', description: 'What happened.' },
        correction: { type: 'string', description: 'What to do instead next time.' },
        confidence: { type: 'string', enum: ['high', 'medium', 'low'] },
        source: { type: 'string', description: 'Where it was learned (default: this invocation).' },
      },
      required: ['scope', 'title', 'observation', 'correction', 'confidence'],
      additionalProperties: false,
    },
    async execute(_toolCallId, params) {
      const output = await runtime.command(learnCommand(params, toolCtx));
      if (output.exitCode !== 0) throw new Error(outputText(output));
      return textResult(output.stdout);
    },
  }), { name: 'expert_learning' });
}
