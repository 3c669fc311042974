/**
 * The thread-event bus: the one place that says "a message was stored in
 * this thread". Every stored message — a tool call (`tool/invoke`, MCP
 * `tools/call`) or a text message (`message/append`) — is published once,
 * right after the commit that holds it, keyed by its thread `(user,
 * thread_id)`. Every consumer reads from here: the `thread/subscribe` fan-out
 * (`subscriptions.ts`, which turns tool messages into `tool/result`
 * notifications), the AG-UI event streams (`src/http/ag-ui-stream.ts`, which
 * encode every message) and the caller of the call itself, whose part of a
 * message's dispatch (`dispatched`) runs right after the listeners'.
 *
 * An event carries the stored row, not a ready-made notification, so a
 * consumer rebuilds what it sends from stored data only. That is what lets a
 * second publisher join: on PostgreSQL the LISTEN/NOTIFY feed
 * (`pg-fanout.ts`) reads other daemons' commits back and publishes them here.
 *
 * Order: listeners receive a thread's messages in `thread_seq` order, each
 * once, whichever publisher brought them and in whatever order they arrived.
 * Per watched thread the bus keeps a cursor (the last seq delivered); an event
 * that arrives ahead of a missing predecessor is held back until the
 * predecessor is published, or — shortly after — read from the store
 * (`ThreadEventSource.between`); what the store does not have either is known
 * missing and skipped. A thread's seq numbers are assigned in commit order and
 * a later one commits only after the earlier ones did, so once seq `s` is
 * committed every predecessor is readable.
 */
import type { MessageRow } from '../store/store.js';
import { threadKey } from './thread-key.js';

export interface StoredMessageEvent {
  userId: string;
  threadId: string;
  row: MessageRow;
  /**
   * The connection whose request stored the message, when it was this
   * daemon. Of two copies of one message, the bus keeps this one.
   */
  origin?: string;
  /**
   * The caller's part of the dispatch (subscriptions.ts `deliverOwn`):
   * called once, right after the thread's listeners were handed this
   * message in its place in the thread — or at once when the bus will not
   * hand them this copy (nobody listens, a copy went first, the position
   * already counted it, the last listener left while it was held). Never
   * throws into the bus.
   */
  dispatched?: () => void;
}

export type ThreadEventListener = (event: StoredMessageEvent) => void;

/** Where the bus learns a thread's position, fills gaps, and (PostgreSQL) hears other daemons. */
export interface ThreadEventSource {
  /**
   * A thread got its first listener on this daemon: start hearing its
   * messages from other publishers (if any) and resolve with its current last
   * `thread_seq` (0 for a thread with no message).
   */
  watch(userId: string, threadId: string): Promise<number>;
  /** The thread's last listener on this daemon left. */
  unwatch(userId: string, threadId: string): void;
  /** The thread's stored messages with `after < thread_seq < before`, oldest first. */
  between(userId: string, threadId: string, after: number, before: number): Promise<MessageRow[]>;
}

/**
 * A message's position in its thread: the SSE event id of the AG-UI stream
 * and the order every consumer relies on — the per-thread `thread_seq` the
 * store assigns (1, 2, 3… per `(user, thread_id)`), so it means the same on
 * every daemon of one database.
 */
export function threadSeqOf(row: MessageRow): number {
  return row.thread_seq;
}

/**
 * How long an event waits for a missing predecessor to be published before
 * the bus reads the gap from the store. Short: on PostgreSQL the feed usually
 * brings another daemon's message within this time, and a local call
 * published a moment late keeps its `origin`; past it, the store answers
 * (the caller's connection is not notified twice: the subscription registry
 * marks the caller's call sent when a subscription of that connection sends
 * its message).
 */
const GAP_WAIT_MS = 20;

/**
 * How long after a failed watch (the database was unreachable when the
 * thread got its first listener) the bus asks its source again: until a
 * watch succeeds, other daemons' messages of the thread are not heard.
 */
const WATCH_RETRY_MS = 1000;

/** Threads whose last locally answered seq the bus keeps after their last listener left (the latest ones). */
const KEPT_ANSWERED = 4096;

interface ThreadState {
  userId: string;
  threadId: string;
  listeners: Set<ThreadEventListener>;
  /** The last seq handed to the listeners; undefined until the thread's position is known. */
  delivered: number | undefined;
  /** Events ahead of the cursor (or before the position is known), by seq. */
  held: Map<number, StoredMessageEvent>;
  /** Resolves once the thread's position is read. */
  ready: Promise<void>;
  /** The position is being read: events wait for it. */
  positioning: boolean;
  gapTimer: NodeJS.Timeout | undefined;
  filling: boolean;
  /** The highest seq a local caller published before this watch began (`ThreadEventBus.answered`). */
  answeredBefore: number | undefined;
}

export class ThreadEventBus {
  private readonly byThread = new Map<string, ThreadState>();
  /**
   * Per thread, the highest seq a caller on this daemon published (`origin`). A call published before a
   * watch began has reached its caller already (or will, directly), so that watch never hands it, or
   * anything before it, to its listeners: the caller's connection may be one of them.
   */
  private readonly answered = new Map<string, number>();

  /**
   * Without a source (tests, tools that publish in order) the first event a
   * thread's listeners see sets its position, and a gap is delivered as it
   * is: there is nothing to fill it from.
   */
  constructor(
    private source?: ThreadEventSource,
    private readonly watchRetryMs = WATCH_RETRY_MS,
  ) {}

  /** Replaces the source (PostgreSQL's fan-out), before anyone listens. */
  useSource(source: ThreadEventSource): void {
    this.source = source;
  }

  /** Listens to one thread's stored messages; returns the function that stops (safe to call twice). */
  listen(userId: string, threadId: string, fn: ThreadEventListener): () => void {
    const key = threadKey(userId, threadId);
    let state = this.byThread.get(key);
    if (!state) this.byThread.set(key, (state = this.open(userId, threadId)));
    state.listeners.add(fn);
    const mine = state;
    return () => {
      if (!mine.listeners.delete(fn) || mine.listeners.size > 0) return;
      // The last listener of this thread left: forget it, and stop hearing it from other daemons.
      if (this.byThread.get(key) === mine) this.byThread.delete(key);
      if (mine.gapTimer) clearTimeout(mine.gapTimer);
      // Nobody is left to deliver to: a caller waiting for its held message goes on.
      for (const event of mine.held.values()) finish(event);
      mine.held.clear();
      this.source?.unwatch(userId, threadId);
    };
  }

  /**
   * Resolves once the thread's position is known (and, on PostgreSQL, other
   * daemons' messages of it are heard): a caller that awaits it after
   * `listen` — `thread/subscribe` before answering, an AG-UI stream before
   * its replay — misses nothing committed afterwards.
   */
  ready(userId: string, threadId: string): Promise<void> {
    return this.byThread.get(threadKey(userId, threadId))?.ready ?? Promise.resolve();
  }

  private open(userId: string, threadId: string): ThreadState {
    const state: ThreadState = {
      userId,
      threadId,
      listeners: new Set(),
      delivered: undefined,
      held: new Map(),
      ready: Promise.resolve(),
      positioning: this.source !== undefined,
      gapTimer: undefined,
      filling: false,
      answeredBefore: this.answered.get(threadKey(userId, threadId)),
    };
    if (this.source) {
      state.ready = this.source.watch(userId, threadId).then(
        (position) => this.positioned(state, position),
        // Position unknown (the database is unreachable): the first event sets it, and the
        // watch is asked for again, or other daemons' messages of this thread would never come.
        () => {
          this.positioned(state, undefined);
          this.rewatchLater(state);
        },
      );
    }
    return state;
  }

  /**
   * Asks the source to watch a thread again after a failed watch, while the
   * thread still has listeners; what was stored meanwhile is read from the
   * store and published in order (repeats are dropped by seq).
   */
  private rewatchLater(state: ThreadState): void {
    const key = threadKey(state.userId, state.threadId);
    const current = () => this.byThread.get(key) === state;
    const timer = setTimeout(() => {
      if (!current() || !this.source) return;
      const source = this.source;
      source.watch(state.userId, state.threadId).then(
        async (position) => {
          if (!current()) {
            // The last listener left while the watch was being made: undo it — unless a new
            // listener joined since, whose own watch is the source's now (the watch is per thread).
            if (!this.byThread.has(key)) source.unwatch(state.userId, state.threadId);
            return;
          }
          if (state.delivered === undefined) return this.positioned(state, position);
          if (position <= state.delivered) return;
          const rows = await source.between(state.userId, state.threadId, state.delivered, position + 1).catch(() => []);
          for (const row of rows) this.publish({ userId: state.userId, threadId: state.threadId, row });
        },
        () => this.rewatchLater(state),
      );
    }, this.watchRetryMs);
    timer.unref();
  }

  /**
   * The thread's position is known. Events published since the first
   * listener joined are delivered even when the position read already
   * counts them (they are after the listener joined): the cursor starts
   * just before the earliest, so the stored messages after it follow (the
   * gap is read from the store once a later one comes) — except a call
   * this daemon published before the listener joined, and what precedes it.
   */
  private positioned(state: ThreadState, position: number | undefined): void {
    state.positioning = false;
    const key = threadKey(state.userId, state.threadId);
    if (this.byThread.get(key) !== state) return;
    const earliest = Math.min(...state.held.keys());
    if (position === undefined) position = Number.isFinite(earliest) ? earliest - 1 : undefined;
    else if (Number.isFinite(earliest)) position = Math.min(position, earliest - 1);
    // Never below a call this daemon published before the watch began: its caller has it already, and a
    // late copy of it (another publisher's, held meanwhile) would reach the caller's connection a second
    // time when that connection is the new listener.
    const answered = state.answeredBefore;
    if (answered !== undefined && (position === undefined || position < answered)) position = answered;
    state.delivered = position;
    if (position === undefined) return;
    for (const seq of state.held.keys()) if (seq <= position) this.skip(state, seq);
    this.drain(state);
  }

  /** A held event the cursor already passed: dropped, and a caller waiting for it goes on. */
  private skip(state: ThreadState, seq: number): void {
    const event = state.held.get(seq);
    state.held.delete(seq);
    if (event) finish(event);
  }

  /** Remembers the latest seq a local caller published in its thread (bounded: the oldest thread is forgotten). */
  private remember(key: string, seq: number): void {
    const before = this.answered.get(key);
    if (before !== undefined) this.answered.delete(key);
    this.answered.set(key, Math.max(seq, before ?? 0));
    if (this.answered.size > KEPT_ANSWERED) this.answered.delete(this.answered.keys().next().value!);
  }

  /**
   * Hands a stored message to the thread's listeners — at once when it is the
   * next in the thread, else once its predecessors are delivered or known
   * missing. A message already delivered (a second publisher's copy) is
   * dropped. A listener that throws is skipped: a broken stream or connection
   * must never fail the call that was stored. The event's `dispatched` runs
   * once, after its listeners (at once when the thread has none).
   */
  publish(event: StoredMessageEvent): void {
    const key = threadKey(event.userId, event.threadId);
    if (event.origin !== undefined) this.remember(key, event.row.thread_seq);
    const state = this.byThread.get(key);
    if (!state) return finish(event);
    const seq = event.row.thread_seq;
    if (state.delivered === undefined && !state.positioning) state.delivered = seq - 1;
    if (state.delivered !== undefined && seq <= state.delivered) return finish(event);
    const held = state.held.get(seq);
    // The same message from two publishers: keep the copy that knows its caller (and both callers' parts).
    state.held.set(seq, held ? merged(held, event) : event);
    if (state.delivered !== undefined) this.drain(state);
  }

  /** Delivers the held events that follow the cursor; waits (then reads the store) for a gap. */
  private drain(state: ThreadState): void {
    for (;;) {
      const next = state.held.get(state.delivered! + 1);
      if (!next) break;
      state.held.delete(state.delivered! + 1);
      state.delivered! += 1;
      this.deliver(state, next);
    }
    if (state.held.size === 0) {
      if (state.gapTimer) clearTimeout(state.gapTimer);
      state.gapTimer = undefined;
      return;
    }
    if (!this.source) {
      // Nothing to fill the gap from: what is missing stays missing.
      state.delivered = Math.min(...state.held.keys()) - 1;
      return this.drain(state);
    }
    if (!state.gapTimer && !state.filling) {
      state.gapTimer = setTimeout(() => void this.fill(state), GAP_WAIT_MS);
    }
  }

  /** Reads the missing predecessors of the earliest held event from the store; what is not there is skipped. */
  private async fill(state: ThreadState): Promise<void> {
    state.gapTimer = undefined;
    if (state.held.size === 0 || state.delivered === undefined) return;
    const after = state.delivered;
    const before = Math.min(...state.held.keys());
    state.filling = true;
    let rows: MessageRow[] = [];
    try {
      rows = await this.source!.between(state.userId, state.threadId, after, before);
    } catch {
      // The store is unreachable: deliver what we hold rather than hold it hostage.
    } finally {
      state.filling = false;
    }
    if (this.byThread.get(threadKey(state.userId, state.threadId)) !== state) return;
    for (const row of rows) if (row.thread_seq > state.delivered && !state.held.has(row.thread_seq)) state.held.set(row.thread_seq, { userId: state.userId, threadId: state.threadId, row });
    // Everything below the held event that the store did not return does not exist: skip it.
    state.delivered = Math.max(state.delivered, Math.min(...state.held.keys(), before) - 1);
    this.drain(state);
  }

  private deliver(state: ThreadState, event: StoredMessageEvent): void {
    for (const fn of [...state.listeners]) {
      try {
        fn(event);
      } catch {
        /* the message is stored; one consumer's failure is its own */
      }
    }
    finish(event);
  }

  /** Listeners on one thread, or on all threads (for tests and diagnostics). */
  count(userId?: string, threadId?: string): number {
    if (userId !== undefined && threadId !== undefined) return this.byThread.get(threadKey(userId, threadId))?.listeners.size ?? 0;
    let n = 0;
    for (const state of this.byThread.values()) n += state.listeners.size;
    return n;
  }

  /** Threads this daemon watches (for tests and diagnostics). */
  watchedThreads(): number {
    return this.byThread.size;
  }
}

/** The caller's part of an event's dispatch, once; its failure is its own. */
function finish(event: StoredMessageEvent): void {
  const dispatched = event.dispatched;
  if (!dispatched) return;
  event.dispatched = undefined;
  try {
    dispatched();
  } catch {
    /* the message is stored; the caller's failure is its own */
  }
}

/** Two copies of one message: the one that knows its caller, carrying both copies' `dispatched`. */
function merged(held: StoredMessageEvent, event: StoredMessageEvent): StoredMessageEvent {
  const kept = held.origin === undefined && event.origin !== undefined ? event : held;
  // One part per caller, even when one event object is published twice.
  const parts = [...new Set([held.dispatched, event.dispatched])].filter((f) => f !== undefined);
  if (parts.length === 0) return kept;
  return {
    ...kept,
    dispatched: () => {
      for (const part of parts) {
        try {
          part();
        } catch {
          /* each caller's failure is its own */
        }
      }
    },
  };
}
