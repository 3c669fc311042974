/**
 * PostgreSQL: a call asked on another daemon reaches this daemon's
 * subscribers of its thread (contract section 17: `tool/approval` goes to
 * every subscriber of the thread, and approvals work from any daemon).
 *
 * The asking daemon tells its own subscribers directly and sends a NOTIFY
 * that names the call and itself (`SharedCalls.announceAsked`); every other
 * daemon with a listener of the thread reads the pending row and compiles
 * its card here, then sends the same `tool/approval` to its `thread/subscribe`
 * connections and the same `toolgate.approval` to its AG-UI streams. A call
 * decided or expired before the row is read is not news any more: nothing is
 * sent.
 */
import type { Store } from '../store/store.js';
import type { Logger } from '../runtime/logger.js';
import type { SubscriptionRegistry } from '../threads/subscriptions.js';
import type { ThreadEventBus } from '../threads/thread-events.js';
import { approvalOfRow } from './approval-card.js';
import type { ApprovalWaiters } from './approval-waiters.js';
import { isExpired } from './pending-calls.js';
import type { CallKey } from './running-calls.js';

/** What relaying an ask needs: the store, and the thread's listeners on this daemon. */
export interface RelayDeps {
  store: Store;
  threadEvents: ThreadEventBus;
  subscriptions: SubscriptionRegistry;
  approvals: ApprovalWaiters;
}

/** Tells this daemon's listeners of the call's thread that the call awaits approval (another daemon asked it). */
export async function relayAsked(deps: RelayDeps, key: CallKey, log: Logger): Promise<void> {
  // Nobody here listens to the thread: nothing to read (subscriptions and AG-UI streams both listen on the bus).
  if (deps.threadEvents.count(key.userId, key.threadId) === 0) return;
  try {
    const notification = await deps.store.read(async (tx) => {
      const row = await tx.pendingCalls.get(key);
      return row && row.state === 'awaiting_approval' && !isExpired(row) ? approvalOfRow(tx, row) : undefined;
    });
    if (!notification) return;
    deps.subscriptions.notifyThread(key.userId, key.threadId, 'tool/approval', notification);
    deps.approvals.asked(key.userId, notification);
  } catch (err) {
    log.log('warn', 'a call asked on another daemon could not be told to its subscribers', { err: (err as Error).message });
  }
}
