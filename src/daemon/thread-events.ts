/**
 * The thread-event bus: the one place that says "a message was stored in
 * this thread". Every stored message — a tool call (`tool/invoke`, MCP
 * `tools/call`) or a text message (`message/append`) — is published once,
 * right after the commit that holds it, keyed by its thread `(user,
 * thread_id)`. Both consumers read from here: the `thread/subscribe` fan-out
 * (`subscriptions.ts`, which turns tool messages into `tool/result`
 * notifications) and the AG-UI event streams (`src/rpc/ag-ui-stream.ts`, which
 * encode every message).
 *
 * An event carries the stored row, not a ready-made notification, so a
 * consumer rebuilds what it sends from stored data only. That is what lets a
 * second publisher join later: a PostgreSQL worker that hears another
 * daemon's commit over LISTEN/NOTIFY reads the row back and publishes it
 * here, and neither consumer changes.
 */
import type { MessageRow } from '../store/store.js';
import { threadKey } from './thread-key.js';

export interface StoredMessageEvent {
  userId: string;
  threadId: string;
  row: MessageRow;
  /**
   * The connection whose request stored the message, when it was this
   * daemon. That caller receives its `tool/result` notifications directly,
   * before its response; the fan-out skips it so nobody gets a call twice.
   */
  origin?: string;
}

export type ThreadEventListener = (event: StoredMessageEvent) => void;

/**
 * A message's position in its thread: the SSE event id of the AG-UI stream
 * and the order every consumer relies on — the per-thread `thread_seq` the
 * store assigns (1, 2, 3… per `(user, thread_id)`), so it means the same on
 * every daemon of one database.
 */
export function threadSeqOf(row: MessageRow): number {
  return row.thread_seq;
}

/** How many recently published message ids the bus remembers to drop a second delivery of the same message. */
const RECENT_IDS = 10_000;

export class ThreadEventBus {
  private readonly byThread = new Map<string, Set<ThreadEventListener>>();
  /**
   * Message ids already published. A message can reach the bus twice on
   * PostgreSQL — from the call that stored it and from the LISTEN/NOTIFY
   * feed, when the notification is read before the local call registered it
   * as its own — and every listener must see it once.
   */
  private readonly recent = new Set<string>();

  /** Listens to one thread's stored messages; returns the function that stops (safe to call twice). */
  listen(userId: string, threadId: string, fn: ThreadEventListener): () => void {
    const key = threadKey(userId, threadId);
    let set = this.byThread.get(key);
    if (!set) this.byThread.set(key, (set = new Set()));
    set.add(fn);
    return () => {
      const current = this.byThread.get(key);
      if (!current?.delete(fn)) return;
      if (current.size === 0) this.byThread.delete(key);
    };
  }

  /**
   * Hands a stored message to the thread's listeners, synchronously and in
   * the order of publication. A listener that throws is skipped: a broken
   * stream or connection must never fail the call that was stored.
   */
  publish(event: StoredMessageEvent): void {
    // A stored message's id and sequence never change: together they name one delivery.
    const delivery = `${event.row.id}#${event.row.thread_seq}`;
    if (this.recent.has(delivery)) return;
    this.recent.add(delivery);
    if (this.recent.size > RECENT_IDS) this.recent.delete(this.recent.values().next().value as string);
    const listeners = this.byThread.get(threadKey(event.userId, event.threadId));
    if (!listeners) return;
    for (const fn of [...listeners]) {
      try {
        fn(event);
      } catch {
        /* the message is stored; one consumer's failure is its own */
      }
    }
  }

  /** Listeners on one thread, or on all threads (for tests and diagnostics). */
  count(userId?: string, threadId?: string): number {
    if (userId !== undefined && threadId !== undefined) return this.byThread.get(threadKey(userId, threadId))?.size ?? 0;
    let n = 0;
    for (const set of this.byThread.values()) n += set.size;
    return n;
  }
}
