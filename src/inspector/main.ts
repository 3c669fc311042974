/**
 * toolgate web inspector: opens a session with a bearer token, lists
 * threads, replays history with the tool UI rendered from `ui_schema`, shows
 * `tool/result` notifications live, lists the calls awaiting the user's
 * approval (Approve / Deny) and makes `project_cli` calls by hand.
 * Served by `toolgate serve --ws` next to its JSON-RPC endpoint
 * (`ws://HOST:PORT/rpc`); an ordinary, untrusted client of it.
 *
 * This file only wires the parts together; each concern lives in its own
 * module and owns its own state: connection, session, threads,
 * watched threads, conversation (with its tool cards), approvals, call form.
 */
import { ApprovalList } from './approvals.js';
import { CallForm } from './call-form.js';
import { Connection } from './connection.js';
import { Conversation } from './conversation.js';
import { Announcer, byId, str } from './dom.js';
import { SessionPanel } from './session.js';
import { ThreadList } from './threads.js';
import { ThreadWatches } from './watches.js';
import type { ToolApprovalNotification, ToolResultNotification } from './wire.js';

const announcer = new Announcer(byId('live-region'));

let connection: Connection;
const rpc = () => connection.rpc;
const session = () => sessionPanel.session;

const watches = new ThreadWatches(rpc, session, (threadId, reason) => announcer.say(`Live updates unavailable for ${threadId}: ${reason}`));
const approvals = new ApprovalList(rpc, session, announcer);

const conversation = new Conversation(rpc, session, watches, () => {
  threads.render();
  const selected = conversation.selection.threadId;
  if (selected) callForm.setThread(selected);
}, announcer);

const threads = new ThreadList(rpc, session, () => conversation.selection, (threadId, isNew) => {
  void conversation.select(threadId, { isNew }).then(() => {
    if (isNew) callForm.focus();
  });
}, watches, announcer);

const sessionPanel: SessionPanel = new SessionPanel(rpc, {
  async opened(s, restoring) {
    if (!restoring) {
      // A new session (maybe another user): start clean.
      watches.reset();
      conversation.reset();
      approvals.clear();
    }
    callForm.setAllowed(s.allowed_actions);
    threads.setEnabled(true);
    // The calls already awaiting approval, wherever they were asked; tool/approval keeps the list live.
    approvals.setEnabled(true);
    await threads.refresh();
    if (restoring) await conversation.restore();
  },
  signedOut() {
    watches.reset();
    conversation.reset();
    approvals.clear();
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
    client.on('tool/approval', (params) => approvals.onApproval(params as ToolApprovalNotification));
    await sessionPanel.reopen();
  },
  lost() {
    sessionPanel.connectionLost();
    watches.connectionLost();
    threads.setEnabled(false);
    approvals.setEnabled(false);
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
  approvals.onToolResult(n);
}

// The fragment goes first: nothing may see the token in the address bar.
sessionPanel.takeTokenFromFragment(location, history);
document.body.dataset['session'] = 'none';
void connection.connect();
