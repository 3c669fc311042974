/**
 * toolgate web inspector: opens a session with a bearer token, lists
 * threads, replays history with the tool UI rendered from `ui_schema`, shows
 * `tool/result` notifications live and makes `project_cli` calls by hand.
 * Served by `toolgate serve --ws` next to its JSON-RPC endpoint
 * (`ws://HOST:PORT/rpc`); an ordinary, untrusted client of it.
 *
 * This file only wires the parts together; each concern lives in its own
 * module and owns its own state: connection, session, threads,
 * conversation (with its tool cards), call form.
 */
import { CallForm } from './call-form.js';
import { Connection } from './connection.js';
import { Conversation } from './conversation.js';
import { Announcer, byId, str } from './dom.js';
import { SessionPanel } from './session.js';
import { ThreadList } from './threads.js';
import type { ToolResultNotification } from './wire.js';

const announcer = new Announcer(byId('live-region'));

let connection: Connection;
const rpc = () => connection.rpc;
const session = () => sessionPanel.session;

const conversation = new Conversation(rpc, session, () => {
  threads.render();
  const selected = conversation.selection.threadId;
  if (selected) callForm.setThread(selected);
}, announcer);

const threads = new ThreadList(rpc, session, () => conversation.selection, (threadId, isNew) => {
  void conversation.select(threadId, { isNew }).then(() => {
    if (isNew) callForm.focus();
  });
}, announcer);

const sessionPanel: SessionPanel = new SessionPanel(rpc, {
  async opened(s, restoring) {
    if (!restoring) conversation.reset(); // a new session (maybe another user): start clean
    callForm.setAllowed(s.allowed_actions);
    threads.setEnabled(true);
    await threads.refresh();
    if (restoring) await conversation.restore();
  },
  signedOut() {
    conversation.reset();
    threads.clear();
    threads.setEnabled(false);
    callForm.setAllowed([]);
    // Sessions are bound to the connection: closing it is how the daemon forgets this one.
    connection.restart();
  },
}, announcer);

const callForm = new CallForm(rpc, session, conversation, threads, () => byId('token-input').focus());

connection = new Connection(Connection.urlOf(location), {
  async ready(client) {
    client.on('tool/result', (params) => onToolResult(params as ToolResultNotification));
    await sessionPanel.reopen();
  },
  lost() {
    sessionPanel.connectionLost();
    conversation.connectionLost();
    threads.setEnabled(false);
  },
});

function onToolResult(n: ToolResultNotification): void {
  if (!n || typeof n !== 'object' || typeof n.thread_id !== 'string' || typeof n.tool_call_id !== 'string') return;
  if (n.final) {
    const args = n.tool_call_args ?? {};
    const module = str(args.module) || str(n.result?.module) || str(n.error?.module);
    const method = str(args.method) || str(n.result?.method) || str(n.error?.method);
    const name = module && method ? `${module}.${method}` : 'project_cli';
    const title = (n.ui_schema as { title?: unknown } | undefined)?.title;
    const detail = n.status === 'failure' && n.error ? ` — ${str(n.error.code)}: ${str(n.error.message)}` : title ? ` — ${str(title)}` : '';
    const elsewhere = n.thread_id === conversation.selection.threadId ? '' : ` (thread ${n.thread_id})`;
    announcer.say(`${name} ${str(n.status)}${detail}${elsewhere}`);
    threads.refreshSoon();
  }
  conversation.onToolResult(n);
}

// The fragment goes first: nothing may see the token in the address bar.
sessionPanel.takeTokenFromFragment(location, history);
document.body.dataset['session'] = 'none';
void connection.connect();
