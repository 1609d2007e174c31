// The Control UI of graphiti-openclaw: a Memory page (the chats the plugin has seen, what is
// remembered for one with its entities, forget with a confirmation whose items the operator picks,
// importing memory-core's files, the spool, expert runs and approvals) and a session panel (each recent turn: what recall
// injected, the packs, the rules' scores, the trace, the capture's fate). Every operation goes
// through the feature contract over the operator's own Gateway connection; every text from
// Graphiti, a package or a prompt is set as text, never parsed as HTML. Times are the browser's.
import { createFeatureClient, defineFeatureContract } from 'openclaw/plugin-sdk/feature-contract';
import { defineControlUiPlugin } from 'openclaw/plugin-sdk/control-ui';
import { PLUGIN_ID, contract } from '../src/feature-contract.js';
import './index.css';

const CSS_PREFIX = 'graphiti-openclaw';

/** An element with a class, and children: strings become text nodes. */
function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = `${CSS_PREFIX}-${className}`;
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

function button(label, onClick, { danger = false } = {}) {
  const node = el('button', danger ? 'danger' : 'button', label);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/** A date or time from Graphiti or the plugin (ISO 8601, UTC), in the browser's own time zone. */
function local(value, { withTime = false } = {}) {
  const when = typeof value === 'string' ? new Date(value) : undefined;
  if (!when || Number.isNaN(when.getTime())) return '?';
  return withTime ? when.toLocaleString() : when.toLocaleDateString();
}
const day = (value) => local(value);
const superseded = (fact) => Boolean(fact.invalid_at || fact.expired_at);

/** Shows an operation's failure where its result would be. */
function failure(target, error) {
  target.replaceChildren(el('p', 'error', `Failed: ${error?.message ?? error}`));
}

function factRow(fact, actions) {
  const dates = superseded(fact)
    ? `${day(fact.valid_at)} to ${day(fact.invalid_at ?? fact.expired_at)}`
    : `since ${day(fact.valid_at)}`;
  return el('li', 'fact', el('span', 'fact-text', String(fact.fact ?? '')), ' ', el('span', 'dates', `(${dates})`), ' ', el('code', 'id', String(fact.uuid ?? '')), actions(fact));
}

/** The facts apart (current, then no longer true), the entities, and the recent episodes. */
function factsSection(document, actions) {
  const facts = Array.isArray(document.facts?.items) ? document.facts.items : [];
  const entities = Array.isArray(document.entities?.items) ? document.entities.items : [];
  const current = facts.filter((f) => !superseded(f));
  const past = facts.filter(superseded);
  const list = (items) => (items.length ? el('ul', 'facts', items.map((f) => factRow(f, actions))) : el('p', 'none', 'none'));
  return el('section', 'memories',
    el('h3', '', `Facts (${facts.length}) of group ${document.group_id}`),
    el('p', 'note', String(document.facts?.note ?? '')),
    el('h4', '', 'Current'), list(current),
    el('h4', '', 'No longer true'), list(past),
    el('h4', '', `Entities (${entities.length})`),
    el('p', 'note', `${String(document.entities?.note ?? '')}. A forget deletes facts and episodes; an entity's summary stays as Graphiti wrote it unless the MCP server rebuilds it (graphiti-core 0.31.2 and later, when an episode that fed it goes).`),
    entities.length
      ? el('ul', 'entities', entities.map((n) => el('li', 'entity', el('span', 'entity-name', String(n.name ?? '')), ': ', el('span', 'entity-summary', String(n.summary ?? '')))))
      : el('p', 'none', 'none'),
    el('h4', '', 'Recent episodes'),
    el('ul', 'episodes', (document.episodes?.items ?? []).map((e) => el('li', 'episode', el('span', 'dates', local(e.created_at, { withTime: true })), ' ', el('code', 'id', String(e.uuid ?? '')), ' ', String(e.name ?? ''), ': ', String(e.content ?? '').slice(0, 300)))),
  );
}

/** The numbered items of a proposal's text: those proposed, then the weaker ones it left out. */
function proposalItems(text) {
  const items = [];
  let leftOut = false;
  for (const line of String(text).split('\n')) {
    if (/^Left out, matching fewer/.test(line)) leftOut = true;
    const item = /^\s+(\d+)\s+(fact|episode|capture)\s+(.*)$/.exec(line);
    if (item) items.push({ number: Number(item[1]), kind: item[2], text: item[3].trim(), proposed: !leftOut });
  }
  return items;
}

/** A proposal's items as checkboxes, checked when proposed: the operator's choice. */
function itemChoices(items) {
  const boxes = items.map((item) => {
    const box = el('input', 'item-box');
    box.type = 'checkbox';
    box.checked = item.proposed;
    box.dataset.number = String(item.number);
    return { item, box, row: el('label', 'item', box, ` ${item.number}  ${item.kind}  `, el('span', 'item-text', item.text)) };
  });
  const chosen = () => ({
    drop: boxes.filter((b) => b.item.proposed && !b.box.checked).map((b) => b.item.number),
    add: boxes.filter((b) => !b.item.proposed && b.box.checked).map((b) => b.item.number),
  });
  return { list: el('div', 'items', boxes.map((b) => b.row)), chosen };
}

/** Propose a forget (`request`), show what would go with a box per item, delete only what is checked, on confirmation. */
function forgetFlow(feature, host, chat, request, out) {
  return async () => {
    try {
      const proposal = await feature.invoke('forget', { ...chat, ...request });
      const forgetId = /forget id ([0-9a-f]{16})/.exec(proposal.text)?.[1];
      const items = proposalItems(proposal.text);
      const choices = itemChoices(items);
      const content = el('div', 'dialog', items.length ? choices.list : null, el('pre', 'answer', proposal.text));
      const dialog = { handle: undefined };
      const close = () => dialog.handle?.dispose();
      if (forgetId) {
        content.append(button('Forget the checked items', async () => {
          try {
            const done = await feature.invoke('confirm-forget', { id: forgetId, ...choices.chosen() });
            out.replaceChildren(el('pre', 'answer', done.text));
          } catch (error) {
            failure(out, error);
          }
          close();
        }, { danger: true }));
      }
      content.append(button('Keep everything', close));
      const holder = el('div', 'dialog-holder');
      out.replaceChildren(holder);
      dialog.handle = host.components.mountDialog(holder, { label: 'Forget these memories?', content, onCancel: close });
    } catch (error) {
      failure(out, error);
    }
  };
}

/** A chat the plugin has seen, as the picker shows it: its session, who, where, its group, when. */
function chatLabel(chat) {
  const who = chat.kind === 'group' ? `group chat ${chat.chat ?? '?'}` : `direct chat with ${chat.sender ?? '?'}`;
  return `${chat.session} · ${who}${chat.channel ? ` on ${chat.channel}` : ''} · group ${chat.group_id ?? '?'} · last turn ${local(chat.last_turn, { withTime: true })}`;
}

/** The approvals waiting; an answer goes to `out`, which outlives the refresh it triggers. */
function approvalsSection(feature, overview, canWrite, refresh, out) {
  const waiting = overview.approvals?.waiting ?? [];
  const rows = waiting.map((a) => el('li', 'approval',
    el('code', 'id', String(a.id)), ` ${a.expert}: ${a.operation} (tool ${a.tool}) `, el('code', 'arguments', String(a.arguments)),
    canWrite && button('Approve', () => feature.invoke('approve', { id: String(a.id) }).then((r) => { out.replaceChildren(el('pre', 'answer', r.text)); refresh(); }, (e) => failure(out, e))),
    canWrite && button('Reject', () => feature.invoke('reject', { id: String(a.id) }).then((r) => { out.replaceChildren(el('pre', 'answer', r.text)); refresh(); }, (e) => failure(out, e)), { danger: true }),
  ));
  return el('section', 'approvals', el('h3', '', `Approvals waiting (${waiting.length})`), rows.length ? el('ul', '', rows) : el('p', 'none', 'none'));
}

/** The last import's progress, from the overview. */
function importProgress(job) {
  if (!job) return 'No import yet.';
  const what = `${job.fed} of ${job.items - job.imported_before} item(s) for group ${job.group_id}`;
  return job.finished_at
    ? `Import finished ${local(job.finished_at, { withTime: true })}: ${what} sent (${job.imported_before} imported before).`
    : `Import under way since ${local(job.started_at, { withTime: true })}: ${what} fed to the spool, ${job.to_go} to go.`;
}

/** The dry run's document as the operator reads it: items per group and kind of source, what is skipped, the work. */
function importPlanView(plan) {
  const groups = plan.groups ?? [];
  const estimate = plan.estimate ?? {};
  const minutes = Math.ceil((estimate.seconds_at_pace ?? 0) / 60);
  const source = (f) => `${f.items} from ${f.what} (${f.sessions ?? f.files} ${f.sessions === undefined ? 'file(s)' : 'session(s)'})`;
  const headline = groups.length === 1
    ? `${groups[0].items} item(s) for group ${groups[0].group_id}`
    : `${estimate.episodes ?? 0} item(s) for ${groups.length} groups`;
  return el('div', 'import-plan',
    el('p', '', `${headline}; ${plan.already_imported ?? 0} imported before.`),
    el('ul', '', groups.flatMap((g) => (g.from ?? []).map((f) => el('li', '', groups.length === 1 ? source(f) : `group ${g.group_id}: ${source(f)}`)))),
    plan.daily_notes?.included ? null : el('p', 'note', `Daily notes left out: ${plan.daily_notes?.entries_left_out ?? 0} entries in ${plan.daily_notes?.files_left_out ?? 0} file(s).`),
    (plan.skipped ?? []).length ? el('ul', 'skipped', plan.skipped.map((s) => el('li', '', `${s.file}: ${s.entries ? `${s.entries} ${s.entries === 1 ? 'entry' : 'entries'}: ` : ''}${s.why}`))) : null,
    ...(plan.notes ?? []).map((note) => el('p', 'note', note)),
    el('p', 'note', `Graphiti's work: ${estimate.episodes ?? 0} episode(s), ${estimate.llm_calls?.[0] ?? 0} to ${estimate.llm_calls?.[1] ?? 0} calls to its LLM provider, about ${minutes} min at ${estimate.episodes_per_minute ?? '?'} a minute.`),
  );
}

/** Import memory-core's files for the sender in the form, and past conversations when asked: the dry run, then (with write) the import. */
function importSection(feature, job, canWrite, senderOf, refresh, out) {
  const notes = el('input', 'daily-notes');
  notes.type = 'checkbox';
  const transcripts = el('input', 'transcripts');
  transcripts.type = 'checkbox';
  const request = () => {
    const sender = senderOf();
    if (!sender) throw new Error('fill in the sender id whose memory the files are');
    return { sender, ...(notes.checked ? { dailyNotes: true } : {}), ...(transcripts.checked ? { transcripts: true } : {}) };
  };
  const preview = async () => {
    try {
      const { document, error } = await feature.invoke('import-plan', request());
      if (!document) return failure(out, error);
      out.replaceChildren(importPlanView(document));
    } catch (error) {
      failure(out, error);
    }
  };
  const start = async () => {
    try {
      const started = await feature.invoke('import', request());
      out.replaceChildren(el('pre', 'answer', started.text));
      refresh();
    } catch (error) {
      failure(out, error);
    }
  };
  return el('section', 'import',
    el('h3', '', 'Import what OpenClaw remembers'),
    el('p', 'import-progress', importProgress(job)),
    el('label', 'item', notes, ' with the daily notes'),
    el('label', 'item', transcripts, " with the last 30 days of conversations, each into its own chat's memory"),
    button('Preview the import', preview),
    canWrite && button('Import', start),
  );
}

function mountMemoryPage(container, { host, signal }) {
  const feature = createFeatureClient(defineFeatureContract(contract), host);
  const canWrite = () => host.connection.canWrite;
  const form = el('form', 'search');
  const field = (name, label) => {
    const input = el('input', 'field');
    input.name = name;
    input.placeholder = label;
    input.setAttribute('aria-label', label);
    return input;
  };
  const inputs = [field('sender', 'Sender id (direct chat)'), field('chat', 'Chat id (group chat)'), field('channel', 'Channel'), field('query', 'Search what is remembered')];
  const byName = Object.fromEntries(inputs.map((i) => [i.name, i]));
  form.append(...inputs, el('button', 'button', 'Show'));
  const results = el('div', 'results');
  const answer = el('div', 'answer-holder');
  const operations = el('div', 'operations');
  const chatOf = () => Object.fromEntries(inputs.filter((i) => i.name !== 'query' && i.value.trim()).map((i) => [i.name, i.value.trim()]));
  // The chats seen: picking one fills the fields, so nobody needs to know a client's id.
  const picker = el('select', 'chats');
  picker.setAttribute('aria-label', 'Chats the plugin has seen');
  const placeholder = el('option', '', 'Chats the plugin has seen…');
  placeholder.value = '';
  picker.append(placeholder);
  const chats = [];
  // The session picked: its recent turns are shown with the chat's memories.
  let session;
  picker.addEventListener('change', () => {
    const chat = chats[Number(picker.value)];
    if (!chat) return;
    byName.sender.value = chat.kind === 'group' ? '' : String(chat.sender ?? '');
    byName.chat.value = chat.kind === 'group' ? String(chat.chat ?? '') : '';
    byName.channel.value = String(chat.channel ?? '');
    session = { sessionKey: chat.session, agentId: chat.agent ?? undefined };
    form.requestSubmit();
  });
  for (const input of inputs.slice(0, 3)) input.addEventListener('input', () => { session = undefined; });
  feature.invoke('chats', {}).then(({ document }) => {
    for (const chat of document?.chats ?? []) {
      const option = el('option', '', chatLabel(chat));
      option.value = String(chats.length);
      chats.push(chat);
      picker.append(option);
    }
  }, (error) => failure(answer, error));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const query = byName.query.value.trim();
    try {
      const { document, error } = await feature.invoke('memories', { ...chatOf(), ...(query ? { query } : {}) }, session);
      signal.throwIfAborted();
      if (!document) return failure(results, error);
      const forgetFact = (fact) => ({ query: String(fact.fact ?? fact.uuid).slice(0, 500), ids: [String(fact.uuid)] });
      const actions = (fact) => (canWrite() ? [' ', button('Forget', forgetFlow(feature, host, chatOf(), forgetFact(fact), answer), { danger: true })] : []);
      const forgetWords = query && canWrite()
        ? button(`Forget what matches "${query}"…`, forgetFlow(feature, host, chatOf(), { query }, answer), { danger: true })
        : null;
      results.replaceChildren(factsSection(document, actions), ...(forgetWords ? [forgetWords] : []));
    } catch (error) {
      failure(results, error);
    }
  });
  const refresh = async () => {
    try {
      const [overview, spool, queue] = await Promise.all([feature.invoke('overview', {}), feature.invoke('spool', {}), feature.invoke('expert-queue', {})]);
      signal.throwIfAborted();
      const doc = overview.document ?? {};
      operations.replaceChildren(
        importSection(feature, doc.import, canWrite(), () => byName.sender.value.trim(), refresh, answer),
        approvalsSection(feature, doc, canWrite(), refresh, answer),
        el('section', 'spool', el('h3', '', 'Capture spool'), el('pre', 'answer', spool.text),
          canWrite() && button('Requeue set-aside entries', () => feature.invoke('requeue', {}).then(refresh, (e) => failure(answer, e)))),
        el('section', 'runs', el('h3', '', 'Expert runs'), el('pre', 'answer', queue.text)),
      );
    } catch (error) {
      failure(operations, error);
    }
  };
  container.replaceChildren(el('div', 'page', el('h2', '', 'Memory'), picker, form, results, answer, operations));
  refresh();
  return { dispose: () => container.replaceChildren() };
}

/** The rules' scores against their floors, as bars. */
function scoreBars(scores) {
  if (!scores?.length) return el('p', 'none', 'no rule matched');
  const top = Math.max(...scores.map((s) => s.score), ...scores.map((s) => s.min_confidence), 1e-9);
  return el('ul', 'scores', scores.map((s) => {
    const bar = el('span', 'bar');
    bar.style.width = `${Math.round((100 * s.score) / top)}%`;
    const floor = el('span', 'floor');
    floor.style.left = `${Math.round((100 * s.min_confidence) / top)}%`;
    return el('li', 'score', el('span', 'rule', String(s.rule)), el('span', 'track', bar, floor), el('span', 'value', `${Number(s.score).toFixed(2)}${s.suppressed_by ? ` (suppressed by ${s.suppressed_by})` : ''}`));
  }));
}

function turnBlock(turn) {
  return el('article', 'turn',
    el('h4', '', `${local(turn.at, { withTime: true })}: ${turn.prompt}`),
    el('p', 'recall', `Recall: ${turn.recall}`),
    el('p', 'packs', `Packs: ${turn.packs?.length ? turn.packs.join(' + ') : 'none'}`),
    scoreBars(turn.scores),
    el('ol', 'trace', (turn.trace ?? []).map((line) => el('li', '', String(line)))),
    turn.injected ? el('details', 'injected', el('summary', '', 'Injected'), el('pre', 'answer', String(turn.injected))) : el('p', 'none', 'Nothing injected'),
    el('p', 'capture', `Capture: ${turn.capture}`),
  );
}

function mountSessionPanel(container, { host, props, signal }) {
  const feature = createFeatureClient(defineFeatureContract(contract), host);
  const body = el('div', 'panel', el('p', 'loading', 'Loading…'));
  container.replaceChildren(body);
  const load = async (session) => {
    try {
      const { document, error } = await feature.invoke('memories', {}, { sessionKey: session.sessionKey, agentId: session.agentId });
      signal.throwIfAborted();
      if (!document) return failure(body, error);
      const turns = document.recent_turns?.items ?? [];
      body.replaceChildren(el('h3', '', `Recent turns of ${session.sessionKey} (${turns.length})`), ...(turns.length ? turns.slice().reverse().map(turnBlock) : [el('p', 'none', 'No turn of this session is kept.')]));
    } catch (error) {
      failure(body, error);
    }
  };
  load(props);
  return { update: (context) => load(context.props), dispose: () => container.replaceChildren() };
}

export default defineControlUiPlugin({
  id: PLUGIN_ID,
  activate(host) {
    const disposers = [
      host.ui.registerPage({ id: 'memory', label: 'Memory', mount: mountMemoryPage }),
      host.ui.registerNavigation({ id: 'memory', label: 'Memory', page: { id: 'memory' }, icon: 'brain' }),
      host.ui.registerPanel({ id: 'turns', label: 'Why this context', mount: mountSessionPanel }),
    ];
    return () => disposers.forEach((dispose) => dispose());
  },
});
