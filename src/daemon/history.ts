import type { z } from 'zod';
import { claimThread, listThreads, ownsThread, type ThreadSummary } from '../store/threads.js';
import { insertMessage, pageMessages, type MessageRow } from '../store/messages.js';
import type { HistoryGetParams, MessageAppendParams, ThreadListParams } from '../rpc/methods.js';
import { threadNotFound } from '../rpc/errors.js';
import type { ToolAgentOutput } from '../codec/tool-output.js';
import { compileStoredUi } from './ui.js';
import type { Session } from './sessions.js';
import type { Daemon } from './daemon.js';
import type { HistoryMessage } from '../protocol/methods.js';

export type { HistoryMessage };

/**
 * `history/get`. The `context` view is what an agent rebuilds its context
 * from: the stored content, byte for byte. The `ui` view adds the tool UI,
 * recompiled from the stored hints — the same `ui_schema` the live
 * notification carried — and an assistant's worker output.
 */
export function getHistory(daemon: Daemon, session: Session, p: z.infer<typeof HistoryGetParams>) {
  if (!ownsThread(daemon.db, p.thread_id, session.userId)) throw threadNotFound();
  const view = p.view ?? 'ui';
  const page = pageMessages(daemon.db, p.thread_id, p.before, p.limit ?? 50);
  return { messages: page.rows.map((row) => toWire(row, view)), next_before: page.nextBefore };
}

/** Stored rows were checked when written (status, worker_output by their schemas): they are read back as typed. */
function toWire(row: MessageRow, view: 'ui' | 'context'): HistoryMessage {
  const m: HistoryMessage = { id: row.id, role: row.role, content: row.content, created_at: row.created_at };
  if (row.role === 'tool') {
    if (row.tool_call_id !== null) m.tool_call_id = row.tool_call_id;
    if (row.status !== null) m.status = row.status as HistoryMessage['status'];
    if (view === 'ui') {
      const meta = JSON.parse(row.metadata) as { tool_agent_output?: ToolAgentOutput };
      const ui = compileStoredUi(meta.tool_agent_output?.ui_hints);
      if (ui) m.ui_schema = ui as HistoryMessage['ui_schema'];
    }
  } else if (row.role === 'assistant' && view === 'ui') {
    const meta = JSON.parse(row.metadata) as { worker_output?: HistoryMessage['worker_output'] };
    if (meta.worker_output) m.worker_output = meta.worker_output;
  }
  return m;
}

/** `message/append`: a user or assistant message; claims a new thread for the session's user. */
export function appendMessage(daemon: Daemon, session: Session, p: z.infer<typeof MessageAppendParams>): { id: string } {
  const { db } = daemon;
  return db
    .transaction(() => {
      if (!claimThread(db, p.thread_id, session.userId)) throw threadNotFound();
      const metadata = p.worker_output ? { worker_output: p.worker_output } : {};
      return { id: insertMessage(db, { threadId: p.thread_id, role: p.role, content: p.content, metadata }).id };
    })
    .immediate();
}

export function threadList(daemon: Daemon, session: Session, p: z.infer<typeof ThreadListParams>): { threads: ThreadSummary[] } {
  return { threads: listThreads(daemon.db, session.userId, p.limit ?? 50) };
}
