/**
 * The `tool/invoke` requests (and MCP `tools/call`s) of this daemon that wait
 * for a decision on a call awaiting approval (contract section 17), by call.
 * Whatever ends such a call here — an approval's run, a deny, an expiry, a
 * cancel — calls `settled` once its outcome is stored; on PostgreSQL another
 * daemon's decision arrives through NOTIFY and ends the same way. A waiter
 * then reads the stored outcome: the wake-up carries no data.
 */
import type { CallKey } from './running-calls.js';
import type { ToolApprovalNotification } from '../protocol/methods.js';

const keyOf = (k: CallKey): string => JSON.stringify([k.userId, k.threadId, k.toolCallId]);

/** Hears the calls of one thread that begin to await approval (AG-UI streams): the `tool/approval` params. */
export type AskedListener = (notification: ToolApprovalNotification) => void;

export class ApprovalWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly askedListeners = new Map<string, Set<AskedListener>>();

  /** Listens for calls of the user's thread asked on this daemon from now on; returns the stop. */
  listenAsked(userId: string, threadId: string, listener: AskedListener): () => void {
    const k = JSON.stringify([userId, threadId]);
    let set = this.askedListeners.get(k);
    if (!set) this.askedListeners.set(k, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.askedListeners.get(k) === set) this.askedListeners.delete(k);
    };
  }

  /** A call of the user's thread now awaits approval. */
  asked(userId: string, notification: ToolApprovalNotification): void {
    for (const l of [...(this.askedListeners.get(JSON.stringify([userId, notification.thread_id])) ?? [])]) l(notification);
  }

  /**
   * Resolves at the next `settled` of this call (or once `signal` aborts).
   * Called before the state it waits on is read, so no wake-up falls between.
   */
  next(key: CallKey, signal?: AbortSignal): Promise<void> {
    const k = keyOf(key);
    return new Promise<void>((resolve) => {
      let set = this.waiting.get(k);
      if (!set) this.waiting.set(k, (set = new Set()));
      const wake = () => {
        set.delete(wake);
        if (set.size === 0 && this.waiting.get(k) === set) this.waiting.delete(k);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      set.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  /** The call's state changed (its outcome is stored, or it was approved): every waiter looks again. */
  settled(key: CallKey): void {
    for (const wake of [...(this.waiting.get(keyOf(key)) ?? [])]) wake();
  }

  /** Calls someone here waits on (tests and diagnostics). */
  get size(): number {
    return this.waiting.size;
  }
}
