/**
 * The `tool/invoke` requests (and MCP `tools/call`s) of this daemon that wait
 * for a decision on a call awaiting approval (contract section 17), by call.
 * Whatever ends such a call here — an approval's run, a deny, an expiry, a
 * cancel — calls `settled` once its outcome is stored; on PostgreSQL another
 * daemon's decision arrives through NOTIFY and ends the same way. A waiter
 * then reads the stored outcome: the wake-up carries no data.
 */
import type { CallKey } from './running-calls.js';

const keyOf = (k: CallKey): string => JSON.stringify([k.userId, k.threadId, k.toolCallId]);

export class ApprovalWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();

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
