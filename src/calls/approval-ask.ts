/**
 * The asking side of contract section 17: a valid call to an `ask` action is
 * stored `awaiting_approval` — nothing runs, no credential is issued — the
 * caller and the thread's subscribers get `tool/approval` with the
 * confirmation card, and the pending `tool/invoke` waits for the outcome:
 * the approved call's run (calls/approvals.ts), a deny, an expiry after
 * `ttl_s`, or a cancel — whichever connection or daemon decided it.
 */
import type { ToolApprovalNotification } from '../protocol/methods.js';
import { StoreConflictError, type PendingCallRow, type QuotaCounter } from '../store/store.js';
import { giveBack } from './quotas.js';
import { endPending, isExpired } from './pending-calls.js';
import { cancelCall, type CallServiceDeps } from './call-service.js';
import type { CallKey } from './running-calls.js';
import { approvalCard } from './approval-card.js';
import type { Call } from './call.js';
import { answerOf, duplicateOfPending, replay, type ToolCallAnswer } from './call-answers.js';
import type { Logger } from '../runtime/logger.js';
import { outputOf } from '../threads/message-views.js';
import { HostAsked, type Peer } from '../runtime/peer.js';
import type { Session } from '../sessions/sessions.js';
import type { OwnCall, SubscriptionRegistry } from '../threads/subscriptions.js';
import type { UiCache } from '../threads/ui-cache.js';
import { projectionOf } from '../codec/tool-output.js';
import type { UiSchema } from '../codec/ui-schema-types.js';

/** What asking for an approval needs: the pending calls' store and waiters, the running calls (a cancel), the thread's subscribers. */
export interface AskDeps extends CallServiceDeps {
  subscriptions: SubscriptionRegistry;
  uiCache: UiCache;
  /** PostgreSQL: tells the other daemons that a call began to await approval here (approval-relay.ts). */
  announceAsked?: ((key: CallKey) => Promise<void>) | undefined;
}

/**
 * How often a waiter reads the call again: on PostgreSQL in case another
 * daemon's NOTIFY was missed; on SQLite because another process sharing the
 * file (a `serve --mcp` beside a `serve --ws`) may decide it, and SQLite
 * tells no one.
 */
const POLL_MS = 1000;

type Asked =
  | { kind: 'stored'; row: import('../store/store.js').MessageRow }
  | { kind: 'pending'; row: PendingCallRow; ui: UiSchema | undefined; created: boolean };

/**
 * `counted`: the quota counts the call took before it was asked. A call that turns out stored, pending
 * already (a twin raced in with it, a retry) or an id used with other args is no call of its own: its
 * counts go back, so one call counts once.
 */
export async function askApproval(
  deps: AskDeps,
  conn: Peer,
  session: Session,
  call: Call,
  own: OwnCall,
  log: Logger,
  signal: AbortSignal,
  counted?: readonly QuotaCounter[],
  leaveRunning?: () => void,
): Promise<ToolCallAnswer> {
  const key: CallKey = { userId: call.userId, threadId: call.threadId, toolCallId: call.toolCallId };
  const asked = await storePending(deps, session, call);
  if (asked.kind === 'stored' || !asked.created) await giveBack(deps.store, call.userId, counted, log);
  // Only now does the call stop being a running call of this daemon: a retry that waits for it (a full quota
  // window, tool-invoke.ts) then finds it pending or stored, and its counts given back, when it counts again.
  leaveRunning?.();
  if (asked.kind === 'stored') return replay(deps, conn, call, asked.row);
  const { row } = asked;
  if (row.argsSha256 !== call.argsSha256) return duplicateOfPending(conn, call);
  const notification: ToolApprovalNotification = {
    thread_id: call.threadId,
    tool_call_id: call.toolCallId,
    action: row.action,
    tool_call_args: call.args,
    args_sha256: row.argsSha256,
    expires_at: row.expiresAt,
    ...(asked.ui ? { ui_schema: asked.ui } : {}),
  };
  conn.notify('tool/approval', notification);
  // A re-invocation waits again; only a new pending call is news for the thread.
  if (asked.created) {
    deps.subscriptions.notifyThread(call.userId, call.threadId, 'tool/approval', notification, conn.id);
    deps.approvals.asked(call.userId, notification);
    // The other daemons' subscribers of the thread: they read the row and hear the same value.
    deps.announceAsked?.(key).catch((err: unknown) => log.log('warn', 'other daemons could not be told of the call awaiting approval', { err: (err as Error).message }));
    log.log('info', 'tool call awaiting approval', { expires_at: row.expiresAt });
  }
  // A host that asks its own user gets its answer in a new request; the call stays pending meanwhile.
  if (row.state === 'awaiting_approval' && conn.askHost?.(notification)) throw new HostAsked(notification);

  // The caller cancelling its request cancels the call (contract section 16), as call/cancel does: awaiting
  // approval, it ends CANCELLED; approved and running by then (here, or on another daemon on PostgreSQL), it is
  // stopped — it used to be left running, its writes committed, since only the pending row was looked at.
  const cancel = () => {
    cancelCall(deps, key, 'cancel_request', call.argsSha256).catch((err: unknown) => log.log('warn', 'the call could not be cancelled', { err: (err as Error).message }));
  };
  signal.addEventListener('abort', cancel, { once: true });
  if (signal.aborted) cancel();
  try {
    const done = await outcomeOf(deps, key, log);
    if (!own.sent) return replay(deps, conn, call, done);
    const output = outputOf(done);
    if (!output) throw new Error(`stored tool message ${done.id} holds no tool output`);
    return answerOf(output, done.content, projectionOf(output));
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** Stores the call awaiting approval with its card — unless it is stored or pending already (a twin, a retry). */
async function storePending(deps: AskDeps, session: Session, call: Call): Promise<Asked> {
  const key = { userId: call.userId, threadId: call.threadId, toolCallId: call.toolCallId };
  const ttlS = session.approval!.ttlS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.store.transaction(async (tx): Promise<Asked> => {
        const stored = await tx.messages.getToolMessage(key.userId, key.threadId, key.toolCallId);
        if (stored) return { kind: 'stored', row: stored };
        const pending = await tx.pendingCalls.get(key);
        if (pending) {
          const ui = pending.argsSha256 === call.argsSha256 ? await approvalCard(tx, key.userId, call.args, pending.expiresAt) : undefined;
          return { kind: 'pending', row: pending, ui, created: false };
        }
        const now = Date.now();
        const row: PendingCallRow = {
          ...key,
          action: `${call.args.module}.${call.args.method}`,
          argsSha256: call.argsSha256,
          state: 'awaiting_approval',
          args: JSON.stringify(call.args),
          expiresAt: new Date(now + ttlS * 1000).toISOString(),
          source: session.source,
          jobId: session.jobId,
          createdAt: new Date(now).toISOString(),
          updatedAt: new Date(now).toISOString(),
        };
        await tx.pendingCalls.insert(row);
        return { kind: 'pending', row, ui: await approvalCard(tx, key.userId, call.args, row.expiresAt), created: true };
      });
    } catch (err) {
      // A twin stored it first: read it in a new unit.
      if (!(err instanceof StoreConflictError) || attempt >= 2) throw err;
    }
  }
}

/**
 * Waits until the call's outcome is stored: woken by whatever decides it
 * here (and, on PostgreSQL, by NOTIFY or a slow poll); expires it at its
 * `expires_at` if nobody decided by then.
 */
async function outcomeOf(deps: AskDeps, key: CallKey, log: Logger) {
  for (;;) {
    const wake = new AbortController();
    const next = deps.approvals.next(key, wake.signal);
    try {
      const done = await deps.store.read((tx) => tx.messages.getToolMessage(key.userId, key.threadId, key.toolCallId));
      if (done) return done;
      const pending = await deps.store.read((tx) => tx.pendingCalls.get(key));
      if (!pending) {
        // Its outcome was stored (and the row removed) between the two reads.
        const after = await deps.store.read((tx) => tx.messages.getToolMessage(key.userId, key.threadId, key.toolCallId));
        if (after) return after;
        // Neither stored nor pending: its approver died before storing the outcome. Nothing of it stands.
        throw new Error('the approved call ended without an outcome');
      }
      if (isExpired(pending)) {
        await endPending(deps, key, { decision: 'expire', surface: 'ttl' });
        continue;
      }
      const timers: NodeJS.Timeout[] = [];
      if (pending.state === 'awaiting_approval') timers.push(setTimeout(() => wake.abort(), Math.max(0, Date.parse(pending.expiresAt) - Date.now())));
      timers.push(setTimeout(() => wake.abort(), POLL_MS));
      try {
        await next;
      } finally {
        for (const t of timers) clearTimeout(t);
      }
    } finally {
      wake.abort();
    }
    if (log.enabled('debug')) log.log('debug', 'approval waiter looks again');
  }
}
