// The Control UI of graphiti-openclaw: a Memory page (what is remembered for a chat, forget with a
// confirmation, the spool, expert runs and approvals) and a session panel (each recent turn: what
// recall injected, the packs, the rules' scores, the trace, the capture's fate). Every operation goes
// through the feature contract over the operator's own Gateway connection; every text from Graphiti,
// a package or a prompt is set as text, never parsed as HTML.
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

const day = (value) => (typeof value === 'string' && value.length >= 10 ? value.slice(0, 10) : '?');
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

/** The facts apart: current, then no longer true. */
function factsSection(document, actions) {
  const facts = Array.isArray(document.facts?.items) ? document.facts.items : [];
  const current = facts.filter((f) => !superseded(f));
  const past = facts.filter(superseded);
  const list = (items) => (items.length ? el('ul', 'facts', items.map((f) => factRow(f, actions))) : el('p', 'none', 'none'));
  return el('section', 'memories',
    el('h3', '', `Facts (${facts.length}) of group ${document.group_id}`),
    el('p', 'note', String(document.facts?.note ?? '')),
    el('h4', '', 'Current'), list(current),
    el('h4', '', 'No longer true'), list(past),
    el('h4', '', 'Recent episodes'),
    el('ul', 'episodes', (document.episodes?.items ?? []).map((e) => el('li', 'episode', el('code', 'id', String(e.uuid ?? '')), ' ', String(e.name ?? ''), ': ', String(e.content ?? '').slice(0, 300)))),
  );
}

/** Forget one fact: propose, show what would go, delete only on confirmation. */
function forgetFlow(feature, host, chat, fact, out) {
  return async () => {
    try {
      const proposal = await feature.invoke('forget', { ...chat, query: String(fact.fact ?? fact.uuid).slice(0, 500), ids: [String(fact.uuid)] });
      const forgetId = /forget id ([0-9a-f]{16})/.exec(proposal.text)?.[1];
      const content = el('div', 'dialog', el('pre', 'answer', proposal.text));
      const dialog = { handle: undefined };
      const close = () => dialog.handle?.dispose();
      if (forgetId) {
        content.append(button('Forget it', async () => {
          try {
            const done = await feature.invoke('confirm-forget', { id: forgetId });
            out.replaceChildren(el('pre', 'answer', done.text));
          } catch (error) {
            failure(out, error);
          }
          close();
        }, { danger: true }));
      }
      content.append(button('Keep it', close));
      const holder = el('div', 'dialog-holder');
      out.replaceChildren(holder);
      dialog.handle = host.components.mountDialog(holder, { label: 'Forget this memory?', content, onCancel: close });
    } catch (error) {
      failure(out, error);
    }
  };
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
  form.append(...inputs, el('button', 'button', 'Show'));
  const results = el('div', 'results');
  const answer = el('div', 'answer-holder');
  const operations = el('div', 'operations');
  const chatOf = () => Object.fromEntries(inputs.filter((i) => i.name !== 'query' && i.value.trim()).map((i) => [i.name, i.value.trim()]));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const query = inputs[3].value.trim();
    try {
      const { document, error } = await feature.invoke('memories', { ...chatOf(), ...(query ? { query } : {}) });
      signal.throwIfAborted();
      if (!document) return failure(results, error);
      const actions = (fact) => (canWrite() ? [' ', button('Forget', forgetFlow(feature, host, chatOf(), fact, answer), { danger: true })] : []);
      results.replaceChildren(factsSection(document, actions));
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
        approvalsSection(feature, doc, canWrite(), refresh, answer),
        el('section', 'spool', el('h3', '', 'Capture spool'), el('pre', 'answer', spool.text),
          canWrite() && button('Requeue set-aside entries', () => feature.invoke('requeue', {}).then(refresh, (e) => failure(answer, e)))),
        el('section', 'runs', el('h3', '', 'Expert runs'), el('pre', 'answer', queue.text)),
      );
    } catch (error) {
      failure(operations, error);
    }
  };
  container.replaceChildren(el('div', 'page', el('h2', '', 'Memory'), form, results, answer, operations));
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
    el('h4', '', `${turn.at}: ${turn.prompt}`),
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
