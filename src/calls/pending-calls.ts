/**
 * A call awaiting approval (contract section 17) as its user sees it, and
 * how such a call ends without running: denied, expired or cancelled. Each
 * end is one unit of work — the conditional removal of the pending row (of
 * racing decisions exactly one finds it), the decision's audit and the
 * call's stored failure — so the call is `done` from that commit on, on
 * every connection and every daemon.
 */
import type { CallGetResult } from '../protocol/methods.js';
import type { ToolCallArgs } from '../protocol/tool.js';
import type { ApprovalDecision, PendingCallRow, Store } from '../store/store.js';
import { DaemonError } from '../runtime/errors.js';
import { storeOutcome } from './call.js';
import type { ThreadEventBus } from '../threads/thread-events.js';
import type { ApprovalWaiters } from './approval-waiters.js';
import type { CallKey } from './running-calls.js';

/** What ending a pending call needs of the daemon. */
export interface PendingDeps {
  store: Store;
  threadEvents: ThreadEventBus;
  approvals: ApprovalWaiters;
  /** PostgreSQL: tells the other daemons that the call's state changed (their waiters look again). */
  announceCall?: ((key: CallKey) => Promise<void>) | undefined;
}

export function argsMismatch(): DaemonError {
  return new DaemonError('ARGS_MISMATCH', 'args_sha256 is not the digest of this call\'s args: nothing was decided');
}

/** `call/get`'s view of a pending row. */
export function pendingCallView(row: PendingCallRow): CallGetResult {
  return {
    thread_id: row.threadId,
    tool_call_id: row.toolCallId,
    action: row.action,
    args_sha256: row.argsSha256,
    state: row.state,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function isExpired(row: PendingCallRow, now = Date.now()): boolean {
  return row.state === 'awaiting_approval' && Date.parse(row.expiresAt) <= now;
}

/** Why a pending call ended without running: the failure the model reads, and the audited decision. */
export interface PendingEnd {
  decision: Exclude<ApprovalDecision, 'approve'>;
  surface: string;
  /** A deny's reason (the approver's text). */
  reason?: string | undefined;
}

const ENDS = {
  deny: { code: 'APPROVAL_DENIED', message: 'a person denied this call; it did not run. error.reason says why: change the call or ask the user' },
  expire: { code: 'APPROVAL_EXPIRED', message: 'nobody approved this call in time; it did not run. Ask the user, then call again with a new tool_call_id' },
  cancel: { code: 'CANCELLED', message: 'the call was cancelled while it awaited approval; it did not run' },
} as const;

/**
 * Ends the call if it still awaits approval: its failure stored, the
 * decision audited, the thread's listeners and this daemon's waiters told.
 * Resolves true when this end won, false when the call was no longer pending.
 */
export async function endPending(deps: PendingDeps, key: CallKey, end: PendingEnd): Promise<boolean> {
  const how = ENDS[end.decision];
  const ended = await deps.store.transaction(async (tx) => {
    const row = await tx.pendingCalls.take(key);
    if (!row) return undefined;
    // Another call stored a tool message under this id meanwhile (one that reused it): the pending row is
    // stale — it goes, and nothing else is stored (a second message would break the id's uniqueness).
    if (await tx.messages.getToolMessage(key.userId, key.threadId, key.toolCallId)) return 'stale' as const;
    await tx.approvalAudit.record({ ...key, argsSha256: row.argsSha256, decision: end.decision, surface: end.surface });
    const args = JSON.parse(row.args) as ToolCallArgs;
    const { module, method } = args;
    const extra = end.decision === 'deny' ? { reason: end.reason ?? '' } : {};
    const doc = { ok: false as const, module, method, error: { code: how.code, message: how.message, module, method, ...extra } };
    return storeOutcome(tx, { ...key, args, argsSha256: row.argsSha256 }, doc);
  });
  if (!ended || ended === 'stale') return false;
  if (ended.kind === 'ran') deps.threadEvents.publish({ userId: key.userId, threadId: key.threadId, row: ended.row });
  await woken(deps, key);
  return true;
}

/** Every waiter of the call looks again: this daemon's at once, the other daemons' through the store. */
export async function woken(deps: PendingDeps, key: CallKey): Promise<void> {
  deps.approvals.settled(key);
  await deps.announceCall?.(key).catch(() => {});
}
