import type { z } from 'zod';
import type { MessageRow, ThreadPosition, ThreadSummary } from '../store/store.js';
import { decodeCursor, isStoredTime, pageOf } from '../codec/cursor.js';
import { Id } from '../protocol/json.js';
import type { HistoryGetParams, MessageAppendParams, ThreadListParams } from '../protocol/methods.js';
import { DaemonError, threadNotFound } from '../runtime/errors.js';
import type { ToolAgentOutput } from '../codec/tool-output.js';
import { compileStoredUi } from './ui.js';
import type { UiCache, UiExtras } from './ui-cache.js';
import type { Session } from '../sessions/sessions.js';
import type { Store } from '../store/store.js';
import type { ThreadEventBus } from './thread-events.js';
import type { HistoryMessage } from '../protocol/methods.js';

export type { HistoryMessage };

/** What history and appended messages need: the store, the UI cache, the bus a new message is published on. */
export interface HistoryDeps {
  store: Store;
  uiCache: UiCache;
  threadEvents: ThreadEventBus;
  /** `limits.max_result_bytes`: a page holds about this much. */
  maxResultBytes: number;
}

/**
 * `history/get` of the session user's thread. The `context` view is what an
 * agent rebuilds its context from: the stored content, byte for byte (the
 * metadata is not even read). The `ui` view adds the tool UI — the same
 * `ui_schema` the live notification carried, compiled once per message and
 * cached (ui-cache.ts) — and an assistant's worker output. A thread this
 * user does not have is THREAD_NOT_FOUND, whatever other users have. A page
 * holds at most `limit` messages and about `limits.max_result_bytes` of
 * them: it ends early (`next_before` goes on from there), and a message
 * larger than that alone comes cut, without its UI (byte-budget.ts).
 */
export async function getHistory(deps: HistoryDeps, session: Session, p: z.infer<typeof HistoryGetParams>) {
  const view = p.view ?? 'ui';
  const userId = session.userId;
  const { page, metadata } = await deps.store.read(async (tx) => {
    if (!(await tx.threads.exists(userId, p.thread_id))) throw threadNotFound();
    // A page ends early rather than exceed `limits.max_result_bytes` (a message too large alone comes cut).
    const page = await tx.messages.page(userId, p.thread_id, p.before, p.limit ?? 50, { withMetadata: false, maxBytes: deps.maxResultBytes });
    // Only messages whose extras were never computed need their metadata read (a cut one's is never read).
    const missing = view === 'ui' ? page.rows.filter((r) => r.role !== 'user' && !r.cut && !deps.uiCache.get(r.id)).map((r) => r.id) : [];
    const metadata = missing.length > 0 ? await tx.messages.metadataOf(userId, p.thread_id, missing) : new Map<string, string>();
    return { page, metadata };
  });
  return { messages: page.rows.map((row) => toWire(deps, row, view, metadata)), next_before: page.nextBefore };
}

/** Stored rows were checked when written (status, worker_output by their schemas): they are read back as typed. */
function toWire(deps: HistoryDeps, row: MessageRow, view: 'ui' | 'context', metadata: Map<string, string>): HistoryMessage {
  const m: HistoryMessage = { id: row.id, role: row.role, content: row.content, created_at: row.created_at };
  if (row.role === 'tool') {
    if (row.tool_call_id !== null) m.tool_call_id = row.tool_call_id;
    if (row.status !== null) m.status = row.status as HistoryMessage['status'];
  }
  if (view === 'ui' && row.role !== 'user' && !row.cut) {
    const extras = extrasOf(deps, row, metadata);
    if (extras.ui_schema !== undefined) m.ui_schema = extras.ui_schema as HistoryMessage['ui_schema'];
    if (extras.worker_output !== undefined) m.worker_output = extras.worker_output as HistoryMessage['worker_output'];
  }
  return m;
}

/** A message's ui-view extras: from the cache, or parsed and compiled once and cached. */
function extrasOf(deps: HistoryDeps, row: MessageRow, metadata: Map<string, string>): UiExtras {
  const cached = deps.uiCache.get(row.id);
  if (cached) return cached;
  const extras: UiExtras = {};
  const text = metadata.get(row.id);
  if (text !== undefined) {
    try {
      const meta = JSON.parse(text) as { tool_agent_output?: ToolAgentOutput; worker_output?: unknown };
      if (row.role === 'tool') {
        const ui = compileStoredUi(meta.tool_agent_output?.ui_hints);
        if (ui) extras.ui_schema = ui;
      } else if (meta.worker_output) {
        extras.worker_output = meta.worker_output;
      }
    } catch {
      /* a broken row yields no extras rather than an error */
    }
  }
  deps.uiCache.set(row.id, extras);
  return extras;
}

/** `message/append`: a user or assistant message in the session user's thread (created when new). */
export async function appendMessage(deps: HistoryDeps, session: Session, p: z.infer<typeof MessageAppendParams>): Promise<{ id: string }> {
  // Stored as checked: `worker_output` is the dispatcher's zod-parsed WorkerOutput, so the row is TextMessageMetadata (stored-rows.ts).
  const metadataJson = JSON.stringify(p.worker_output ? { worker_output: p.worker_output } : {});
  const row = await deps.store.transaction((tx) =>
    tx.messages.insert({ userId: session.userId, threadId: p.thread_id, role: p.role, content: p.content, metadataJson }, { last: true }),
  );
  // Committed: the thread's AG-UI streams show it live (in thread order).
  deps.threadEvents.publish({ userId: session.userId, threadId: p.thread_id, row });
  return { id: row.id };
}

/**
 * `thread/list`: a page of the user's threads, most recently updated first.
 * The cursor is a position in that order (the last thread's `updated_at`
 * and id), not a snapshot: a thread updated meanwhile moves to the front.
 */
export async function threadList(
  deps: HistoryDeps,
  session: Session,
  p: z.infer<typeof ThreadListParams>,
): Promise<{ threads: ThreadSummary[]; next_cursor: string | null }> {
  const limit = p.limit ?? 50;
  let after: ThreadPosition | null = null;
  if (p.cursor !== undefined) {
    const position = decodeCursor(p.cursor, isThreadPosition);
    if (!position) throw new DaemonError('INVALID_CURSOR', 'cursor is not a next_cursor thread/list returned: omit it for the first page');
    after = { updatedAt: position[0], threadId: position[1] };
  }
  // One more than the page: whether a next page exists, without counting.
  const rows = await deps.store.read((tx) => tx.threads.list(session.userId, after, limit + 1));
  const { items, next_cursor } = pageOf(rows, limit, (t) => [t.updated_at, t.thread_id]);
  return { threads: items, next_cursor };
}

/** `[updated_at, thread_id]` as a page wrote it: a stored time and an id a request could carry. */
const isThreadPosition = (p: unknown): p is [string, string] => Array.isArray(p) && p.length === 2 && isStoredTime(p[0]) && Id.safeParse(p[1]).success;
