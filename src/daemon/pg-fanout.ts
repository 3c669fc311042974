/**
 * The thread-event bus across daemons (PostgreSQL): what this daemon's
 * subscribers and AG-UI streams see of a thread is what the database says,
 * in `thread_seq` order, once — whichever daemon stored it.
 *
 * It sits between the places that publish a stored message (right after the
 * commit) and the bus's listeners:
 *  - a local commit is not handed to the listeners directly; it pokes the
 *    feed (`PgThreadFeed.poke`), which delivers every stored message of the
 *    thread up to it in order — so a local call never overtakes another
 *    daemon's earlier one;
 *  - another daemon's commit arrives as a NOTIFY and takes the same path;
 *  - the row delivered is read back from the database, never taken from
 *    memory or the notification; the `origin` connection of a local call is
 *    remembered (by message id) so the bus can skip the caller, who has its
 *    notifications already.
 */
import type { MessageRow } from '../store/store.js';
import type { PgStore } from '../store/pg/pg-store.js';
import type { PgThreadFeed, ThreadRef } from '../store/pg/thread-feed.js';
import type { Daemon } from './daemon.js';

export interface FanoutEvent {
  userId: string;
  threadId: string;
  row: MessageRow;
  origin?: string;
}

/** A local origin forgotten after this long (its echo never came: the thread was unwatched). */
const ORIGIN_TTL_MS = 60_000;

export class PgFanout {
  private feed: PgThreadFeed | undefined;
  private readonly origins = new Map<string, { origin: string; at: number }>();
  private readonly watching = new Map<string, Promise<unknown>>();

  private constructor(private readonly deliver: (e: FanoutEvent) => void) {}

  /** Starts listening on the store's database; `deliver` receives every watched thread's messages in order. */
  static async start(store: PgStore, deliver: (e: FanoutEvent) => void): Promise<PgFanout> {
    const fanout = new PgFanout(deliver);
    fanout.feed = await store.threadFeed((ref, rows) => fanout.onRows(ref, rows));
    return fanout;
  }

  private onRows(ref: ThreadRef, rows: MessageRow[]): void {
    for (const row of rows) {
      const o = this.origins.get(row.id);
      if (o) this.origins.delete(row.id);
      this.deliver({ userId: ref.userId, threadId: ref.threadId, row, ...(o ? { origin: o.origin } : {}) });
    }
  }

  /**
   * The first listener of a thread on this daemon: from now on its messages
   * are delivered. Resolves once the starting point is read, so a caller that
   * awaits it (thread/subscribe before answering, an AG-UI stream before its
   * replay) misses nothing committed afterwards.
   */
  watch(userId: string, threadId: string): Promise<unknown> {
    const k = JSON.stringify([userId, threadId]);
    let w = this.watching.get(k);
    if (!w) {
      w = this.feed!.watch({ userId, threadId }).catch(() => undefined);
      this.watching.set(k, w);
    }
    return w;
  }

  /** The last listener left. */
  unwatch(userId: string, threadId: string): void {
    this.watching.delete(JSON.stringify([userId, threadId]));
    this.feed!.unwatch({ userId, threadId });
  }

  /** This daemon committed a message: deliver it (and anything stored before it) through the ordered path. */
  localCommit(e: FanoutEvent): void {
    const now = Date.now();
    if (e.origin !== undefined) this.origins.set(e.row.id, { origin: e.origin, at: now });
    if (this.origins.size > 1_000) {
      for (const [id, o] of this.origins) if (now - o.at > ORIGIN_TTL_MS) this.origins.delete(id);
    }
    void this.feed!.poke({ userId: e.userId, threadId: e.threadId }, e.row.thread_seq);
  }
}

/**
 * What this daemon does with a message another daemon stored: it goes on
 * this daemon's thread-event bus, whose listeners are the `thread/subscribe`
 * fan-out (which rebuilds `tool/result` from the stored row) and the AG-UI
 * streams. Messages this daemon stored itself (`origin` set) were published
 * by the live path already.
 */
export function deliverFromOtherDaemons(daemon: Daemon): (e: FanoutEvent) => void {
  return (e) => {
    if (e.origin !== undefined) return;
    daemon.threadEvents.publish({ userId: e.userId, threadId: e.threadId, row: e.row });
  };
}
