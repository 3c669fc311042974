/**
 * `call/list`: the calls of the session's user that await approval (contract
 * section 17), from any connection and, on PostgreSQL, any daemon — each as
 * its `tool/approval` carries it, the confirmation card read now — so a front
 * end that opens after a call was asked still shows it. One bounded page,
 * most recently asked first; the cursor is a position in that order, not a
 * snapshot (a call decided meanwhile leaves it). Calls past their
 * `expires_at` are not listed: they end as APPROVAL_EXPIRED.
 */
import type { CallListParams, CallListResult } from '../protocol/methods.js';
import type { PendingPosition, Store } from '../store/store.js';
import { decodeCursor, isStoredTime, pageOf } from '../codec/cursor.js';
import { Id } from '../protocol/json.js';
import { DaemonError } from '../runtime/errors.js';
import { approvalOfRow } from './approval-card.js';

const DEFAULT_LIMIT = 50;

/** One page of the user's calls awaiting approval (`call/list`; `GET /calls` on the `--ws` port). */
export async function listCalls(deps: { store: Store }, userId: string, p: Omit<CallListParams, 'session_id'>): Promise<CallListResult> {
  const limit = p.limit ?? DEFAULT_LIMIT;
  let after: PendingPosition | null = null;
  if (p.cursor !== undefined) {
    const position = decodeCursor(p.cursor, isPendingPosition);
    if (!position) throw new DaemonError('INVALID_CURSOR', 'cursor is not a next_cursor call/list returned: omit it for the first page');
    after = position;
  }
  // One unit: the page and every card read at one moment. One more row than the page tells whether a next one exists.
  return deps.store.read(async (tx) => {
    const rows = await tx.pendingCalls.awaiting(userId, new Date().toISOString(), after, limit + 1);
    const { items, next_cursor } = pageOf(rows, limit, (r) => [r.createdAt, r.threadId, r.toolCallId]);
    const calls = [];
    for (const row of items) calls.push(await approvalOfRow(tx, row));
    return { calls, next_cursor };
  });
}

/** `[created_at, thread_id, tool_call_id]` as a page wrote it: a stored time and two ids a request could carry. */
const isPendingPosition = (p: unknown): p is PendingPosition =>
  Array.isArray(p) && p.length === 3 && isStoredTime(p[0]) && Id.safeParse(p[1]).success && Id.safeParse(p[2]).success;
