/**
 * The thread-event bus across daemons (PostgreSQL): other daemons' commits
 * of a thread someone here listens to reach this daemon's bus.
 *
 * The bus (`thread-events.ts`) tells the fan-out when a thread gets its
 * first listener here (`watch`) and when its last one leaves (`unwatch`).
 * While watched, the LISTEN/NOTIFY feed (`PgThreadFeed`) reads every
 * committed message of the thread back from the database, in `thread_seq`
 * order, and publishes it on the bus — this daemon's own commits too: of
 * that copy and the local call's publish, the bus drops whichever comes
 * second as a repeat.
 * The bus merges the two publishers into the thread's order.
 */
import type { PgStore } from '../store/pg/pg-store.js';
import type { PgThreadFeed } from '../store/pg/thread-feed.js';
import type { CallKeyOf } from '../store/store.js';
import { storeEventSource } from './thread-event-source.js';
import type { ThreadEventBus, ThreadEventSource } from './thread-events.js';

export class PgFanout implements ThreadEventSource {
  /** The bus reads gaps from the store, like any engine's. */
  readonly between: ThreadEventSource['between'];

  private constructor(
    private readonly feed: PgThreadFeed,
    store: PgStore,
  ) {
    this.between = storeEventSource(store).between;
  }

  /** Starts listening on the store's database and becomes the bus's source. */
  static async start(store: PgStore, bus: ThreadEventBus): Promise<PgFanout> {
    const feed = await store.threadFeed((ref, rows) => {
      for (const row of rows) bus.publish({ userId: ref.userId, threadId: ref.threadId, row });
    });
    const fanout = new PgFanout(feed, store);
    bus.useSource(fanout);
    return fanout;
  }

  /** The thread's first listener here: hear its commits from now on; resolves with its position. */
  watch(userId: string, threadId: string): Promise<number> {
    return this.feed.watch({ userId, threadId });
  }

  /** The thread's last listener here left: stop reading its commits. */
  unwatch(userId: string, threadId: string): void {
    this.feed.unwatch({ userId, threadId });
  }

  /** Cancel requests from other daemons' `call/cancel` (contract §16): the call, if it runs here, is stopped. */
  onCallCancel(handler: (key: CallKeyOf) => void): void {
    this.feed.onCallCancel = handler;
  }

  /** Another daemon decided or ended a call awaiting approval (contract §17): this daemon's waiters look again. */
  onCallSettled(handler: (key: CallKeyOf) => void): void {
    this.feed.onCallSettled = handler;
  }

  /** A daemon (`origin`, this one too) stored a call awaiting approval (contract §17): its thread's subscribers here hear it. */
  onCallAsked(handler: (key: CallKeyOf, origin: string) => void): void {
    this.feed.onCallAsked = handler;
  }

  /** Threads whose commits this daemon reads (for tests and diagnostics). */
  watchedThreads(): number {
    return this.feed.watchedThreads();
  }
}

