/**
 * What the thread-event bus reads from the store: a thread's position when
 * it gets its first listener, and the messages of a gap (an event that
 * arrived ahead of a predecessor). On PostgreSQL the fan-out (`pg-fanout.ts`)
 * wraps this to also hear other daemons' commits of watched threads.
 */
import type { MessageRow, Store } from '../store/store.js';
import type { ThreadEventSource } from './thread-events.js';

/** A gap is read in pages of this many rows, until it is filled: no message of it is ever skipped. */
const GAP_PAGE_ROWS = 1_000;

export function storeEventSource(store: Store): ThreadEventSource {
  return {
    async watch(userId, threadId) {
      const page = await store.read((tx) => tx.messages.page(userId, threadId, undefined, 1, { withMetadata: false }));
      return page.rows.at(-1)?.thread_seq ?? 0;
    },
    unwatch() {},
    async between(userId, threadId, after, before) {
      const gap: MessageRow[] = [];
      for (let from = after; before - from > 1; ) {
        const page = await store.read((tx) => tx.messages.messagesAfter(userId, threadId, from, Math.min(before - from - 1, GAP_PAGE_ROWS)));
        const rows = page.filter((r) => r.thread_seq < before);
        gap.push(...rows);
        // A short page is the end of what the store has of the gap.
        if (rows.length === 0 || page.length < Math.min(before - from - 1, GAP_PAGE_ROWS)) break;
        from = rows.at(-1)!.thread_seq;
      }
      return gap;
    },
  };
}
