// toolgate web inspector: opens a session with a bearer token, lists threads, replays history
// with the tool UI rendered from `ui_schema`, shows `tool/result` notifications live and makes
// `project_cli` calls by hand. Served by `toolgate serve --ws` next to its JSON-RPC endpoint
// (`ws://HOST:PORT/rpc`).
//
// Rules this file keeps:
// - every string from the wire goes into the page through textContent or an attribute;
// - the bearer token lives in one variable in memory: it is never logged, stored, put back in a
//   field or shown after it was used (a `#token=…` fragment is removed from the address bar
//   before anything else runs).

import { CONNECTION_CLOSED, REQUEST_TIMEOUT, RpcClient, RpcError } from './rpc-client.js';
import { renderUiSchema } from './ui-renderer.js';

/** The action matrix of the contract, used to turn `allowed_actions` patterns into suggestions. */
const KNOWN_ACTIONS = [
  'calendar.read', 'calendar.create', 'calendar.update', 'calendar.delete', 'calendar.share',
  'calendar.accept_invite', 'calendar.reject_invite', 'contacts.read',
  'memory.update', 'memory.forget', 'memory.read',
];

/** Example inputs shown under the JSON field (never filled in without asking). */
const EXAMPLES = {
  'calendar.read': { mode: 'day', date: '2026-04-21' },
  'calendar.create': { title: 'Design review', start_at: '2026-04-21T10:00:00+08:00', end_at: '2026-04-21T11:00:00+08:00' },
  'calendar.update': { event_id: 'evt_…', title: 'New title' },
  'calendar.delete': { event_id: 'evt_…' },
  'calendar.share': { event_id: 'evt_…', user_ids: ['user_…'] },
  'calendar.accept_invite': { invite_id: 'inv_…' },
  'calendar.reject_invite': { invite_id: 'inv_…' },
  'contacts.read': { query: 'Bob' },
  'memory.update': { key: 'standup', content: 'Daily standup is at 09:30.' },
  'memory.forget': { key: 'standup' },
  'memory.read': {},
};

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

const ui = {
  connection: $('connection-status'),
  connectionText: $('connection-text'),
  headerUser: $('header-user'),
  sessionForm: /** @type {HTMLFormElement} */ ($('session-form')),
  tokenInput: /** @type {HTMLTextAreaElement} */ ($('token-input')),
  agentInput: /** @type {HTMLInputElement} */ ($('agent-input')),
  openSession: /** @type {HTMLButtonElement} */ ($('open-session')),
  sessionError: $('session-error'),
  sessionInfo: $('session-info'),
  sessionUser: $('session-user'),
  sessionSkills: $('session-skills'),
  sessionActions: $('session-actions'),
  refreshThreads: /** @type {HTMLButtonElement} */ ($('refresh-threads')),
  threadsStatus: $('threads-status'),
  threadList: $('thread-list'),
  newThreadForm: /** @type {HTMLFormElement} */ ($('new-thread-form')),
  newThreadInput: /** @type {HTMLInputElement} */ ($('new-thread-input')),
  newThreadSubmit: /** @type {HTMLButtonElement} */ ($('new-thread-submit')),
  conversationThread: $('conversation-thread'),
  loadOlder: /** @type {HTMLButtonElement} */ ($('load-older')),
  messageList: $('message-list'),
  callForm: /** @type {HTMLFormElement} */ ($('call-form')),
  callModule: /** @type {HTMLInputElement} */ ($('call-module')),
  callMethod: /** @type {HTMLInputElement} */ ($('call-method')),
  callInput: /** @type {HTMLTextAreaElement} */ ($('call-input')),
  callInputError: $('call-input-error'),
  callInputExample: $('call-input-example'),
  callThread: /** @type {HTMLInputElement} */ ($('call-thread')),
  callToolCallId: /** @type {HTMLInputElement} */ ($('call-tool-call-id')),
  callNewId: /** @type {HTMLButtonElement} */ ($('call-new-id')),
  callSubmit: /** @type {HTMLButtonElement} */ ($('call-submit')),
  callStatus: $('call-status'),
  moduleOptions: $('module-options'),
  methodOptions: $('method-options'),
  liveRegion: $('live-region'),
};

/** The bearer token, in memory only. Reused to reopen the session after a reconnect. */
let bearerToken = /** @type {string | null} */ (null);

const state = {
  /** @type {RpcClient | null} */ rpc: null,
  initialized: false,
  reconnectDelay: 500,
  /** @type {{session_id: string, user_id: string, enabled_skills: string[], allowed_actions: string[]} | null} */
  session: null,
  /** @type {Array<{thread_id: string, created_at?: string, updated_at?: string, message_count?: number}>} */
  threads: [],
  /** @type {string | null} */ selectedThread: null,
  selectedIsNew: false,
  /** @type {string | null} */ subscribedThread: null,
  /** @type {string | null} */ nextBefore: null,
  selectSeq: 0,
  /** tool cards of the selected thread, by tool_call_id */
  cards: /** @type {Map<string, ToolCard>} */ (new Map()),
  /** @type {string[]} */ allowedActions: [],
  /** @type {ReturnType<typeof setTimeout> | undefined} */ threadRefreshTimer: undefined,
};

// ---- start ---------------------------------------------------------------------------------

const fragmentToken = takeTokenFromFragment();
if (fragmentToken) bearerToken = fragmentToken;
wireEvents();
ui.callToolCallId.value = newToolCallId();
updateMethodSuggestions();
updateExample();
void connect();

function takeTokenFromFragment() {
  const hash = location.hash.startsWith('#') ? location.hash.slice(1) : '';
  if (!hash) return null;
  const params = new URLSearchParams(hash);
  if (!params.has('token')) return null;
  const token = (params.get('token') ?? '').trim();
  params.delete('token');
  const rest = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
  return token || null;
}

// ---- connection ----------------------------------------------------------------------------

function wsUrl() {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/rpc`;
}

async function connect() {
  setConnection('connecting', 'Connecting…');
  /** @type {RpcClient | null} */
  let rpc = null;
  try {
    rpc = await RpcClient.connect(wsUrl());
    rpc.on('tool/result', onToolResult);
    rpc.onClose(() => onDisconnected(rpc));
    state.rpc = rpc;
    const init = await rpc.request('initialize', {
      protocol_version: '1',
      client_info: { name: 'toolgate-inspector', version: '1' },
    }, { timeoutMs: 15_000 });
    state.initialized = true;
    state.reconnectDelay = 500;
    const server = init && typeof init === 'object' && init.server_info ? init.server_info : null;
    setConnection('connected', server ? `Connected to ${str(server.name)} ${str(server.version)}` : 'Connected');
    updateControls();
    if (bearerToken) await openSession(bearerToken, { restoring: true });
  } catch (err) {
    state.initialized = false;
    const refused = err instanceof RpcError && err.code !== CONNECTION_CLOSED && err.code !== REQUEST_TIMEOUT;
    if (refused && rpc && !rpc.closed) {
      // The daemon answered initialize with an error: reconnecting would not help.
      state.rpc = null;
      rpc.close();
      setConnection('error', `Initialize failed: ${describeError(err)}`);
      return;
    }
    if (rpc && state.rpc === rpc) state.rpc = null;
    rpc?.close();
    scheduleReconnect('Cannot reach the daemon');
  }
}

function onDisconnected(rpc) {
  if (state.rpc !== rpc) return;
  const hadSession = state.session !== null;
  state.rpc = null;
  state.initialized = false;
  state.session = null;
  state.subscribedThread = null;
  updateControls();
  if (hadSession) announce('Connection lost; the session will be reopened when the daemon is back.');
  scheduleReconnect('Disconnected');
}

function scheduleReconnect(reason) {
  const delay = state.reconnectDelay;
  state.reconnectDelay = Math.min(delay * 2, 15_000);
  setConnection('disconnected', `${reason} — retrying in ${Math.round(delay / 1000) || 1} s`);
  setTimeout(() => { void connect(); }, delay);
}

function setConnection(stateName, text) {
  ui.connection.dataset.state = stateName;
  ui.connectionText.textContent = text;
}

// ---- session -------------------------------------------------------------------------------

/**
 * @param {string} token
 * @param {{restoring?: boolean}} [opts]
 */
async function openSession(token, opts = {}) {
  hide(ui.sessionError);
  if (!state.rpc || !state.initialized) {
    bearerToken = token;
    showError(ui.sessionError, 'Not connected yet: the session opens as soon as the daemon answers.');
    return;
  }
  const params = { auth: { type: 'bearer', token } };
  const agent = ui.agentInput.value.trim();
  if (agent) params.agent = agent;
  setBusy(ui.openSession, true, 'Opening…');
  try {
    const result = await state.rpc.request('session/open', params, { timeoutMs: 20_000 });
    bearerToken = token;
    if (!opts.restoring) resetThreadView(); // a new session (maybe another user): start clean
    state.session = {
      session_id: str(result?.session_id),
      user_id: str(result?.user_id),
      enabled_skills: strArray(result?.enabled_skills),
      allowed_actions: strArray(result?.allowed_actions),
    };
    renderSession();
    announce(`Session open for ${state.session.user_id}.`);
    await refreshThreads();
    if (opts.restoring && state.selectedThread) {
      await selectThread(state.selectedThread, { isNew: state.selectedIsNew, keepScroll: true });
    }
  } catch (err) {
    if (err instanceof RpcError && err.code === -32001) bearerToken = null; // refused: do not retry it
    showError(ui.sessionError, `Could not open the session: ${describeError(err)}`);
  } finally {
    setBusy(ui.openSession, false);
    updateControls();
  }
}

function renderSession() {
  const s = state.session;
  if (!s) { ui.sessionInfo.hidden = true; ui.headerUser.hidden = true; return; }
  ui.sessionUser.textContent = s.user_id;
  ui.sessionSkills.replaceChildren(...chips(s.enabled_skills, 'No skills'));
  ui.sessionActions.replaceChildren(...chips(s.allowed_actions, 'No actions'));
  ui.sessionInfo.hidden = false;
  ui.headerUser.textContent = `Signed in as ${s.user_id}`;
  ui.headerUser.hidden = false;
  state.allowedActions = expandAllowed(s.allowed_actions);
  updateModuleSuggestions();
  updateMethodSuggestions();
}

function chips(values, emptyText) {
  if (values.length === 0) return [el('li', 'chip chip-empty', emptyText)];
  return values.map((v) => { const li = el('li', 'chip'); li.append(el('code', '', v)); return li; });
}

/** `calendar.*` → every known calendar action; exact names stay as they are. */
function expandAllowed(allowed) {
  const out = new Set();
  for (const pattern of allowed) {
    if (pattern === '*') { KNOWN_ACTIONS.forEach((a) => out.add(a)); continue; }
    if (pattern.endsWith('.*')) {
      const prefix = pattern.slice(0, -1);
      const matched = KNOWN_ACTIONS.filter((a) => a.startsWith(prefix));
      if (matched.length) matched.forEach((a) => out.add(a));
      else out.add(pattern); // unknown module: suggest the module only
      continue;
    }
    out.add(pattern);
  }
  return [...out];
}

function updateModuleSuggestions() {
  const modules = [...new Set(state.allowedActions.map((a) => a.split('.')[0]).filter(Boolean))];
  ui.moduleOptions.replaceChildren(...modules.map((m) => option(m)));
}

function updateMethodSuggestions() {
  const module = ui.callModule.value.trim();
  const source = state.allowedActions.length ? state.allowedActions : KNOWN_ACTIONS;
  const methods = source
    .filter((a) => !module || a.startsWith(`${module}.`))
    .map((a) => a.slice(a.indexOf('.') + 1))
    .filter((m) => m && m !== '*');
  ui.methodOptions.replaceChildren(...[...new Set(methods)].map((m) => option(m)));
}

function option(value) {
  const o = document.createElement('option');
  o.value = value;
  return o;
}

// ---- threads -------------------------------------------------------------------------------

async function refreshThreads() {
  if (!state.rpc || !state.session) return;
  ui.threadsStatus.textContent = 'Loading threads…';
  try {
    const result = await state.rpc.request('thread/list', { session_id: state.session.session_id }, { timeoutMs: 20_000 });
    state.threads = Array.isArray(result?.threads) ? result.threads.filter((t) => t && typeof t.thread_id === 'string') : [];
    if (state.selectedIsNew && state.threads.some((t) => t.thread_id === state.selectedThread)) state.selectedIsNew = false;
    renderThreads();
  } catch (err) {
    ui.threadsStatus.textContent = `Could not list threads: ${describeError(err)}`;
  }
}

function scheduleThreadRefresh() {
  clearTimeout(state.threadRefreshTimer);
  state.threadRefreshTimer = setTimeout(() => { void refreshThreads(); }, 250);
}

function renderThreads() {
  const items = [];
  const listed = new Set(state.threads.map((t) => t.thread_id));
  if (state.selectedThread && state.selectedIsNew && !listed.has(state.selectedThread)) {
    items.push(threadItem({ thread_id: state.selectedThread }, true));
  }
  for (const t of state.threads) items.push(threadItem(t, false));
  ui.threadList.replaceChildren(...items);
  const n = state.threads.length;
  ui.threadsStatus.textContent = n === 0 ? 'No threads yet: start one below or make a call.' : `${n} thread${n === 1 ? '' : 's'}, most recent first.`;
}

function threadItem(t, isNew) {
  const li = el('li', 'thread-row');
  const button = el('button', 'thread-item');
  button.type = 'button';
  button.dataset.testid = 'thread-item';
  button.dataset.threadId = t.thread_id;
  if (t.thread_id === state.selectedThread) button.setAttribute('aria-current', 'true');
  button.append(el('span', 'thread-id', t.thread_id));
  const meta = el('span', 'thread-meta');
  if (isNew) {
    meta.textContent = 'new — no messages yet';
  } else {
    const count = Number.isFinite(t.message_count) ? t.message_count : 0;
    meta.append(el('span', 'thread-count', `${count} message${count === 1 ? '' : 's'}`));
    if (typeof t.updated_at === 'string') {
      meta.append(document.createTextNode(' · '));
      meta.append(timeElement(t.updated_at));
    }
  }
  button.append(meta);
  button.addEventListener('click', () => { void selectThread(t.thread_id, { isNew }); });
  li.append(button);
  return li;
}

function resetThreadView() {
  const previous = state.subscribedThread;
  if (previous && state.rpc && state.session) {
    state.rpc.request('thread/unsubscribe', { session_id: state.session.session_id, thread_id: previous }).catch(() => {});
  }
  state.selectSeq++;
  state.selectedThread = null;
  state.selectedIsNew = false;
  state.subscribedThread = null;
  state.nextBefore = null;
  state.cards.clear();
  state.threads = [];
  ui.threadList.replaceChildren();
  ui.conversationThread.textContent = '';
  ui.loadOlder.hidden = true;
  ui.messageList.replaceChildren(placeholder('Select or start a thread.'));
}

/**
 * Shows a thread: its history (ui view), then live notifications through thread/subscribe.
 * @param {string} threadId
 * @param {{isNew?: boolean, keepScroll?: boolean}} [opts]
 */
async function selectThread(threadId, opts = {}) {
  if (!state.rpc || !state.session) return;
  const rpc = state.rpc;
  const sessionId = state.session.session_id;
  const seq = ++state.selectSeq;
  const previous = state.subscribedThread;
  if (previous && previous !== threadId) {
    state.subscribedThread = null;
    rpc.request('thread/unsubscribe', { session_id: sessionId, thread_id: previous }).catch(() => {});
  }
  state.selectedThread = threadId;
  state.selectedIsNew = Boolean(opts.isNew);
  state.nextBefore = null;
  state.cards.clear();
  ui.callThread.value = threadId;
  ui.conversationThread.textContent = threadId;
  ui.loadOlder.hidden = true;
  renderThreads();

  if (opts.isNew) {
    ui.messageList.replaceChildren(placeholder('New thread: make a call to start it.'));
    return;
  }
  ui.messageList.setAttribute('aria-busy', 'true');
  ui.messageList.replaceChildren(placeholder('Loading history…'));
  try {
    const page = await rpc.request('history/get', { session_id: sessionId, thread_id: threadId, view: 'ui' }, { timeoutMs: 30_000 });
    if (seq !== state.selectSeq) return;
    const messages = Array.isArray(page?.messages) ? page.messages : [];
    state.nextBefore = typeof page?.next_before === 'string' ? page.next_before : null;
    ui.loadOlder.hidden = state.nextBefore === null;
    ui.messageList.replaceChildren(...messages.map(renderMessage));
    if (messages.length === 0) ui.messageList.append(placeholder('No messages yet.'));
    scrollToBottom();
  } catch (err) {
    if (seq !== state.selectSeq) return;
    if (err instanceof RpcError && err.data?.code === 'THREAD_NOT_FOUND') {
      state.selectedIsNew = true;
      renderThreads();
      ui.messageList.replaceChildren(placeholder('No such thread yet: make a call to start it.'));
      return;
    }
    ui.messageList.replaceChildren(placeholder(`Could not load history: ${describeError(err)}`, 'error'));
    return;
  } finally {
    if (seq === state.selectSeq) ui.messageList.removeAttribute('aria-busy');
  }
  await subscribe(threadId, seq);
}

async function subscribe(threadId, seq = state.selectSeq) {
  if (!state.rpc || !state.session || state.subscribedThread === threadId) return;
  try {
    await state.rpc.request('thread/subscribe', { session_id: state.session.session_id, thread_id: threadId }, { timeoutMs: 15_000 });
    if (seq !== state.selectSeq || state.selectedThread !== threadId) {
      // The selection moved on while we waited: undo.
      state.rpc?.request('thread/unsubscribe', { session_id: state.session?.session_id, thread_id: threadId }).catch(() => {});
      return;
    }
    state.subscribedThread = threadId;
  } catch (err) {
    if (seq === state.selectSeq) announce(`Live updates unavailable for ${threadId}: ${describeError(err)}`);
  }
}

async function loadOlder() {
  if (!state.rpc || !state.session || !state.selectedThread || !state.nextBefore) return;
  const seq = state.selectSeq;
  setBusy(ui.loadOlder, true, 'Loading…');
  try {
    const page = await state.rpc.request('history/get', {
      session_id: state.session.session_id, thread_id: state.selectedThread, view: 'ui', before: state.nextBefore,
    }, { timeoutMs: 30_000 });
    if (seq !== state.selectSeq) return;
    const messages = Array.isArray(page?.messages) ? page.messages : [];
    state.nextBefore = typeof page?.next_before === 'string' ? page.next_before : null;
    ui.messageList.querySelector(':scope > .placeholder')?.remove();
    ui.messageList.prepend(...messages.map(renderMessage));
  } catch (err) {
    announce(`Could not load older messages: ${describeError(err)}`);
  } finally {
    setBusy(ui.loadOlder, false);
    ui.loadOlder.hidden = state.nextBefore === null;
  }
}

// ---- messages and tool cards ---------------------------------------------------------------

function renderMessage(m) {
  if (!m || typeof m !== 'object') return placeholder('Malformed message');
  if (m.role === 'tool') return renderHistoryToolMessage(m);
  const role = typeof m.role === 'string' ? m.role : 'unknown';
  const li = el('li', `message message-${role === 'user' || role === 'assistant' ? role : 'other'}`);
  li.dataset.testid = 'message';
  li.dataset.role = role;
  if (m.id !== undefined) li.dataset.messageId = String(m.id);
  const head = el('p', 'message-head');
  head.append(el('span', 'message-role', role));
  if (typeof m.created_at === 'string') { head.append(document.createTextNode(' · ')); head.append(timeElement(m.created_at)); }
  const bubble = el('p', 'bubble', str(m.content));
  li.append(head, bubble);
  return li;
}

/**
 * @typedef {object} ToolCard
 * @property {HTMLLIElement} li
 * @property {HTMLElement} article
 * @property {HTMLElement} title
 * @property {HTMLElement} status
 * @property {HTMLElement} main
 * @property {HTMLElement} progress
 * @property {HTMLOListElement} partials
 * @property {HTMLDetailsElement} details
 * @property {HTMLElement} rawSummary
 * @property {HTMLElement} raw
 * @property {boolean} hasContent
 */

/** @returns {ToolCard} */
function createToolCard(toolCallId) {
  const li = /** @type {HTMLLIElement} */ (el('li', 'message message-tool'));
  li.dataset.testid = 'message';
  li.dataset.role = 'tool';
  const article = el('article', 'tool-card');
  article.dataset.testid = 'tool-card';
  article.dataset.toolCallId = toolCallId;
  const header = el('header', 'tool-card-header');
  const title = el('h3', 'tool-card-title', 'project_cli');
  const titleId = `tool-card-title-${cssSafe(toolCallId)}-${Math.random().toString(36).slice(2, 8)}`;
  title.id = titleId;
  article.setAttribute('aria-labelledby', titleId);
  const status = el('span', 'tool-status', '…');
  status.dataset.testid = 'tool-status';
  const id = el('code', 'tool-card-id', toolCallId);
  id.title = 'tool_call_id';
  header.append(title, status, id);
  const main = el('div', 'tool-card-main');
  main.dataset.testid = 'tool-card-main';
  const progress = el('div', 'tool-card-progress');
  progress.hidden = true;
  const partials = /** @type {HTMLOListElement} */ (el('ol', 'tool-card-partials'));
  partials.dataset.testid = 'tool-card-partials';
  progress.append(el('p', 'tool-card-progress-head', 'Streamed items'), partials);
  const details = /** @type {HTMLDetailsElement} */ (el('details', 'tool-card-raw'));
  const rawSummary = el('summary', '', 'Raw content');
  const raw = el('pre', 'raw');
  raw.dataset.testid = 'tool-card-raw';
  raw.tabIndex = 0;
  details.append(rawSummary, raw);
  article.append(header, main, progress, details);
  li.append(article);
  const card = { li, article, title, status, main, progress, partials, details, rawSummary, raw, hasContent: false };
  state.cards.set(toolCallId, card);
  return card;
}

function setCardStatus(card, status, final) {
  const s = ['success', 'partial', 'failure'].includes(status) ? status : 'unknown';
  card.article.dataset.status = s;
  card.article.dataset.final = final ? 'true' : 'false';
  card.status.className = `tool-status tool-status-${final ? s : 'running'}`;
  card.status.textContent = final ? s : `running · ${card.partials.childElementCount} item${card.partials.childElementCount === 1 ? '' : 's'}`;
}

function setCardTitle(card, module, method) {
  if (module && method) card.title.textContent = `${module}.${method}`;
}

function setCardContent(card, text) {
  card.raw.textContent = text; // exactly the bytes the daemon stored / returned
  card.rawSummary.textContent = 'Raw content (projection text)';
  card.hasContent = true;
}

/** A `role: "tool"` message from history/get (ui view). */
function renderHistoryToolMessage(m) {
  const toolCallId = str(m.tool_call_id) || `message-${str(m.id)}`;
  const card = createToolCard(toolCallId);
  const projection = parseJson(m.content);
  setCardTitle(card, str(projection?.module ?? projection?.error?.module), str(projection?.method ?? projection?.error?.method));
  const status = str(m.status) || str(projection?.status);
  setCardStatus(card, status, true);
  const error = status === 'failure' || projection?.error ? projection?.error : undefined;
  card.main.replaceChildren(...renderOutcome(m.ui_schema, error));
  setCardContent(card, str(m.content));
  if (!m.ui_schema && !error) card.details.open = true;
  return card.li;
}

/** Main body of a tool card: error (code + message) and/or the rendered ui_schema. */
function renderOutcome(uiSchema, error) {
  const nodes = [];
  if (error && typeof error === 'object') {
    const box = el('div', 'tool-error');
    box.dataset.testid = 'tool-error';
    const code = el('strong', 'tool-error-code', str(error.code) || 'ERROR');
    code.dataset.testid = 'tool-error-code';
    const message = el('span', 'tool-error-message', str(error.message));
    message.dataset.testid = 'tool-error-message';
    box.append(code, document.createTextNode(' '), message);
    nodes.push(box);
  }
  if (uiSchema !== undefined && uiSchema !== null) {
    nodes.push(renderUiSchema(uiSchema, { headingLevel: 4 }));
  } else if (nodes.length === 0) {
    nodes.push(el('p', 'muted', 'This action has no tool UI; see the raw content.'));
  }
  return nodes;
}

/** A `tool/result` notification. */
function onToolResult(n) {
  if (!n || typeof n !== 'object' || typeof n.thread_id !== 'string' || typeof n.tool_call_id !== 'string') return;
  const args = n.tool_call_args && typeof n.tool_call_args === 'object' ? n.tool_call_args : {};
  const module = str(args.module) || str(n.result?.module) || str(n.error?.module);
  const method = str(args.method) || str(n.result?.method) || str(n.error?.method);
  const name = module && method ? `${module}.${method}` : 'project_cli';

  if (n.final) {
    const detail = n.status === 'failure' && n.error ? ` — ${str(n.error.code)}: ${str(n.error.message)}` : n.ui_schema?.title ? ` — ${str(n.ui_schema.title)}` : '';
    announce(`${name} ${str(n.status)}${detail}${n.thread_id === state.selectedThread ? '' : ` (thread ${n.thread_id})`}`);
    scheduleThreadRefresh();
  }
  if (n.thread_id !== state.selectedThread) return;

  let card = state.cards.get(n.tool_call_id);
  if (!card) {
    card = createToolCard(n.tool_call_id);
    ui.messageList.querySelectorAll(':scope > .placeholder').forEach((p) => p.remove());
    const nearBottom = isNearBottom();
    ui.messageList.append(card.li);
    if (nearBottom) scrollToBottom();
  }
  setCardTitle(card, module, method);

  if (!n.final) {
    card.progress.hidden = false;
    const item = el('li', 'partial-item');
    item.dataset.testid = 'tool-card-partial';
    if (n.ui_schema) item.append(renderUiSchema(n.ui_schema, { headingLevel: 5 }));
    else item.append(el('p', '', summarizePartial(n)));
    card.partials.append(item);
    setCardStatus(card, str(n.status) || 'partial', false);
    if (!card.main.hasChildNodes()) card.main.append(el('p', 'muted', 'Receiving items…'));
    if (!card.hasContent) { card.raw.textContent = JSON.stringify(notificationBody(n), null, 2); card.rawSummary.textContent = 'Raw notification'; }
    return;
  }

  setCardStatus(card, str(n.status), true);
  card.main.replaceChildren(...renderOutcome(n.ui_schema, n.status === 'failure' ? n.error ?? {} : n.error));
  if (card.partials.childElementCount > 0) {
    card.progress.querySelector('.tool-card-progress-head').textContent = `Streamed items (${card.partials.childElementCount})`;
  }
  if (!card.hasContent) {
    card.raw.textContent = JSON.stringify(notificationBody(n), null, 2);
    card.rawSummary.textContent = 'Raw result';
  }
  if (!n.ui_schema && n.status !== 'failure') card.details.open = true;
}

function notificationBody(n) {
  const body = { status: n.status };
  if (n.result !== undefined) body.result = n.result;
  if (n.error !== undefined) body.error = n.error;
  return body;
}

function summarizePartial(n) {
  const data = n.result?.data;
  if (data && typeof data === 'object' && 'index' in data) {
    if (data.ok) return `Item ${str(data.index)}: created${data.event?.title ? ` “${str(data.event.title)}”` : ''}`;
    return `Item ${str(data.index)}: failed — ${str(data.error?.code)} ${str(data.error?.message)}`.trim();
  }
  if (n.error) return `${str(n.error.code)}: ${str(n.error.message)}`;
  return `${str(n.status)} item`;
}

// ---- manual calls --------------------------------------------------------------------------

function newToolCallId() {
  return `insp-${Date.now()}`;
}

/** @returns {{ok: true, value: Record<string, unknown>} | {ok: false, message: string}} */
function parseCallInput() {
  const text = ui.callInput.value.trim();
  if (text === '') return { ok: false, message: 'Input is empty: write a JSON object, {} for no fields.' };
  let value;
  try { value = JSON.parse(text); } catch (err) {
    return { ok: false, message: `Input is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return { ok: false, message: `Input must be a JSON object such as {"key": "value"}, not ${kind}.` };
  }
  return { ok: true, value };
}

function validateCallInput() {
  const parsed = parseCallInput();
  if (parsed.ok) {
    ui.callInput.removeAttribute('aria-invalid');
    hide(ui.callInputError);
  } else {
    ui.callInput.setAttribute('aria-invalid', 'true');
    showError(ui.callInputError, parsed.message);
  }
  return parsed;
}

async function submitCall() {
  if (!state.rpc || !state.session) {
    setCallStatus('error', 'Open a session first.');
    ui.tokenInput.focus();
    return;
  }
  const module = ui.callModule.value.trim();
  const method = ui.callMethod.value.trim();
  markRequired(ui.callModule, module !== '');
  markRequired(ui.callMethod, method !== '');
  if (!module || !method) {
    setCallStatus('error', 'Module and method are required.');
    (module ? ui.callMethod : ui.callModule).focus();
    return;
  }
  const parsed = validateCallInput();
  if (!parsed.ok) {
    setCallStatus('error', 'Fix the input JSON first.');
    ui.callInput.focus();
    return;
  }
  let threadId = ui.callThread.value.trim() || state.selectedThread || `insp-thread-${Date.now()}`;
  ui.callThread.value = threadId;
  const toolCallId = ui.callToolCallId.value.trim() || newToolCallId();
  ui.callToolCallId.value = toolCallId;
  const known = state.threads.some((t) => t.thread_id === threadId);
  if (threadId !== state.selectedThread) await selectThread(threadId, { isNew: !known });
  if (!state.rpc || !state.session) return;

  setBusy(ui.callSubmit, true, 'Calling…');
  setCallStatus('pending', `Calling ${module}.${method} (${toolCallId})…`);
  try {
    const response = await state.rpc.request('tool/invoke', {
      session_id: state.session.session_id,
      thread_id: threadId,
      tool_call_id: toolCallId,
      args: { module, method, input: parsed.value },
    });
    const status = str(response?.status);
    const text = Array.isArray(response?.content) ? response.content.map((c) => str(c?.text)).join('') : '';
    const projection = parseJson(text);
    if (threadId === state.selectedThread) {
      let card = state.cards.get(toolCallId);
      if (!card) {
        // No notification reached us (should not happen): show the response itself.
        card = createToolCard(toolCallId);
        ui.messageList.querySelectorAll(':scope > .placeholder').forEach((p) => p.remove());
        ui.messageList.append(card.li);
        setCardTitle(card, module, method);
        setCardStatus(card, status, true);
        card.main.replaceChildren(...renderOutcome(undefined, projection?.error));
      }
      setCardContent(card, text);
    }
    const err = projection?.error;
    setCallStatus(status === 'success' ? 'success' : status === 'partial' ? 'warning' : 'error',
      `Response: ${status || 'unknown'} (${toolCallId})${status === 'failure' && err ? ` — ${str(err.code)}: ${str(err.message)}` : ''}`);
    if (!known) await refreshThreads();
    if (threadId === state.selectedThread) {
      state.selectedIsNew = false;
      renderThreads();
      await subscribe(threadId);
    }
    ui.callToolCallId.value = newToolCallId();
  } catch (err) {
    setCallStatus('error', `JSON-RPC error ${describeError(err)}`);
  } finally {
    setBusy(ui.callSubmit, false);
  }
}

function setCallStatus(kind, text) {
  ui.callStatus.dataset.state = kind;
  ui.callStatus.textContent = text;
}

function markRequired(input, ok) {
  if (ok) input.removeAttribute('aria-invalid'); else input.setAttribute('aria-invalid', 'true');
}

/** A suggested action from a rendered UI fills the form; the person still presses Call. */
function fillCallForm(detail) {
  if (!detail || typeof detail !== 'object') return;
  ui.callModule.value = str(detail.module);
  ui.callMethod.value = str(detail.method);
  ui.callInput.value = JSON.stringify(detail.input ?? {}, null, 2);
  if (state.selectedThread) ui.callThread.value = state.selectedThread;
  ui.callToolCallId.value = newToolCallId();
  markRequired(ui.callModule, true);
  markRequired(ui.callMethod, true);
  validateCallInput();
  updateMethodSuggestions();
  updateExample();
  setCallStatus('idle', `Prepared ${str(detail.module)}.${str(detail.method)} — review the input and press Call.`);
  ui.callSubmit.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  ui.callSubmit.focus({ preventScroll: true });
}

function updateExample() {
  const key = `${ui.callModule.value.trim()}.${ui.callMethod.value.trim()}`;
  const example = EXAMPLES[key];
  ui.callInputExample.textContent = example ? `Example for ${key}: ${JSON.stringify(example)}` : '';
}

// ---- events --------------------------------------------------------------------------------

function wireEvents() {
  ui.sessionForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const token = ui.tokenInput.value.trim();
    ui.tokenInput.value = ''; // never shown again once used
    if (!token) {
      showError(ui.sessionError, 'Paste a bearer token first.');
      ui.tokenInput.focus();
      return;
    }
    void openSession(token);
  });
  ui.tokenInput.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); ui.sessionForm.requestSubmit(); }
  });
  ui.refreshThreads.addEventListener('click', () => { void refreshThreads(); });
  ui.newThreadForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (!state.session) return;
    const id = ui.newThreadInput.value.trim() || `insp-thread-${Date.now()}`;
    ui.newThreadInput.value = '';
    const known = state.threads.some((t) => t.thread_id === id);
    void selectThread(id, { isNew: !known }).then(() => ui.callModule.focus());
  });
  ui.loadOlder.addEventListener('click', () => { void loadOlder(); });
  ui.callForm.addEventListener('submit', (ev) => { ev.preventDefault(); void submitCall(); });
  ui.callInput.addEventListener('input', () => { validateCallInput(); });
  ui.callModule.addEventListener('input', () => { markRequired(ui.callModule, true); updateMethodSuggestions(); updateExample(); });
  ui.callMethod.addEventListener('input', () => { markRequired(ui.callMethod, true); updateExample(); });
  ui.callNewId.addEventListener('click', () => { ui.callToolCallId.value = newToolCallId(); });
  document.addEventListener('toolgate:action', (ev) => { fillCallForm(/** @type {CustomEvent} */ (ev).detail); });
}

function updateControls() {
  const open = state.session !== null && state.rpc !== null;
  ui.refreshThreads.disabled = !open;
  ui.newThreadSubmit.disabled = !open;
  if (!open) {
    ui.sessionInfo.hidden = state.session === null;
    if (state.session === null) ui.headerUser.hidden = true;
  }
}

// ---- small helpers -------------------------------------------------------------------------

function announce(text) {
  const p = el('p', '', text);
  ui.liveRegion.append(p);
  while (ui.liveRegion.childElementCount > 5) ui.liveRegion.firstElementChild?.remove();
}

function describeError(err) {
  if (err instanceof RpcError) return err.describe();
  return err instanceof Error ? err.message : String(err);
}

function showError(node, text) { node.textContent = text; node.hidden = false; }
function hide(node) { node.hidden = true; node.textContent = ''; }

function setBusy(button, busy, busyText) {
  if (busy) {
    button.dataset.label ??= button.textContent ?? '';
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    if (busyText) button.textContent = busyText;
  } else {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    if (button.dataset.label !== undefined) { button.textContent = button.dataset.label; delete button.dataset.label; }
  }
}

function placeholder(text, kind) {
  const li = el('li', `placeholder${kind ? ` placeholder-${kind}` : ''}`, text);
  return li;
}

function timeElement(iso) {
  const t = el('time', '', iso);
  t.dateTime = iso;
  const ms = Date.parse(iso);
  if (!Number.isNaN(ms)) {
    t.textContent = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(ms);
    t.title = iso;
  }
  return t;
}

function isNearBottom() {
  const list = ui.messageList;
  return list.scrollHeight - list.scrollTop - list.clientHeight < 80;
}

function scrollToBottom() {
  ui.messageList.scrollTop = ui.messageList.scrollHeight;
}

function parseJson(text) {
  if (typeof text !== 'string' || text === '') return null;
  try { const v = JSON.parse(text); return v && typeof v === 'object' ? v : null; } catch { return null; }
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function str(v) { return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v); }
function strArray(v) { return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []; }
function cssSafe(s) { return s.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40); }
