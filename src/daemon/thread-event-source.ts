/**
 * What the thread-event bus reads from the store: a thread's position when
 * it gets its first listener, and the messages of a gap (an event that
 * arrived ahead of a predecessor). On PostgreSQL the fan-out (`pg-fanout.ts`)
 * wraps this to also hear other daemons' commits of watched threads.
 */
import type { Store } from '../store/store.js';
import type { ThreadEventSource } from './thread-events.js';

/** A gap wider than this is not read in one go; the rest counts as missing (never happens in practice). */
const MAX_GAP_ROWS = 1_000;

export function storeEventSource(store: Store): ThreadEventSource {
  return {
    async watch(userId, threadId) {
      const page = await store.read((tx) => tx.messages.page(userId, threadId, undefined, 1, { withMetadata: false }));
      return page.rows.at(-1)?.thread_seq ?? 0;
    },
    unwatch() {},
    async between(userId, threadId, after, before) {
      if (before - after <= 1) return [];
      const rows = await store.read((tx) => tx.messages.messagesAfter(userId, threadId, after, Math.min(before - after - 1, MAX_GAP_ROWS)));
      return rows.filter((r) => r.thread_seq < before);
    },
  };
}
