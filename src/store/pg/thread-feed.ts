/**
 * Cross-daemon fan-out on PostgreSQL: `LISTEN/NOTIFY` carries ids, the rows
 * come from the database.
 *
 * After a unit that inserted messages commits, its daemon sends a NOTIFY on
 * `THREAD_EVENTS_CHANNEL` (notifier.ts, batched, never inside the call's
 * transaction) whose payload names the thread's newest committed message —
 * `(user, thread, thread_seq)` — never its content (payloads are small and
 * go to every listener of the database). A thread's messages commit in
 * `thread_seq` order (the insert row-locks the thread), so when a listener
 * hears of seq `s`, every message up to `s` is committed. Notifications of
 * different daemons may arrive in any order; the cursor makes that harmless.
 *
 * This feed keeps, per thread someone on this daemon cares about, a cursor:
 * the last `thread_seq` it delivered. A notification (`poke`) for seq `s`
 * makes it read every stored message with
 * `cursor < thread_seq <= s` and deliver them in order, once — a lost or
 * reordered notification is repaired by the next one, and after a lost
 * connection it reconnects, says so in the log, and catches every watched
 * thread up from its cursor.
 */
import type { MessageRow } from '../store.js';
import { DedicatedConnection, type ConnectionLog } from './dedicated-connection.js';
import { CALL_ASKED_CHANNEL, CALL_CANCEL_CHANNEL, CALL_SETTLED_CHANNEL, askedPayload, cancelPayloadKey } from './call-states.js';
import type { CallKeyOf } from '../store.js';

export const THREAD_EVENTS_CHANNEL = 'toolgate_thread_events';

/** NOTIFY payloads must stay under 8000 bytes; ids chosen by hosts can be long. */
const MAX_PAYLOAD_BYTES = 7_000;

export interface ThreadRef {
  userId: string;
  threadId: string;
}

export interface NotifiedMessage extends ThreadRef {
  seq: number;
}

/**
 * Whether a thread's NOTIFY payload can name it, `{u, t, s}` (at any seq);
 * else it names the message by its short generated id, `{m, s}` — payloads
 * must stay small, and ids chosen by hosts can be long.
 */
export function payloadNamesThread(ref: ThreadRef): boolean {
  return Buffer.byteLength(JSON.stringify({ u: ref.userId, t: ref.threadId, s: Number.MAX_SAFE_INTEGER })) <= MAX_PAYLOAD_BYTES;
}

export type ParsedPayload = NotifiedMessage | { messageId: string; seq: number };

export function parsePayload(text: string | undefined): ParsedPayload | undefined {
  try {
    const p = JSON.parse(text ?? '') as { u?: unknown; t?: unknown; s?: unknown; m?: unknown };
    if (typeof p.s !== 'number' || !Number.isSafeInteger(p.s)) return undefined;
    if (typeof p.u === 'string' && typeof p.t === 'string') return { userId: p.u, threadId: p.t, seq: p.s };
    if (typeof p.m === 'string') return { messageId: p.m, seq: p.s };
  } catch {
    // not ours: ignore
  }
  return undefined;
}

export interface FeedStorage {
  /** The thread's messages with `afterSeq < thread_seq <= upToSeq`, oldest first. */
  messagesAfter(ref: ThreadRef, afterSeq: number, upToSeq: number): Promise<MessageRow[]>;
  /** The thread's current last sequence number (0 when it has no message or does not exist). */
  lastSeq(ref: ThreadRef): Promise<number>;
  /** Which thread a message belongs to (for payloads that carry only its id). */
  threadOf(messageId: string): Promise<ThreadRef | undefined>;
}

export type FeedLog = ConnectionLog;

export type FeedSink = (ref: ThreadRef, rows: MessageRow[]) => void;

interface Cursor {
  delivered: number;
  /** Resolves with the starting position once it is read. */
  ready: Promise<number>;
  /** Serialises this thread's reads so deliveries never interleave or repeat. */
  chain: Promise<void>;
}

/** How soon a catch-up after a reconnect that could not read the store is tried again. */
const CATCH_UP_RETRY_MS = 1_000;

const key = (r: ThreadRef) => JSON.stringify([r.userId, r.threadId]);

export class PgThreadFeed {
  private readonly cursors = new Map<string, Cursor>();
  private readonly connection: DedicatedConnection;
  private closed = false;
  private catchUpTimer: NodeJS.Timeout | undefined;
  /** Told of every cancel request another daemon sent (call-states.ts), on the same connection. */
  onCallCancel: ((key: CallKeyOf) => void) | undefined;
  /** Told when another daemon decided or ended a call awaiting approval (call-states.ts), on the same connection. */
  onCallSettled: ((key: CallKeyOf) => void) | undefined;
  /** Told when a daemon (`origin`) stored a call awaiting approval (call-states.ts), on the same connection. */
  onCallAsked: ((key: CallKeyOf, origin: string) => void) | undefined;

  constructor(
    url: string,
    private readonly storage: FeedStorage,
    private readonly sink: FeedSink,
    private readonly log: FeedLog,
  ) {
    this.connection = new DedicatedConnection({
      url,
      log,
      lost: 'listens for thread events',
      back: 'for thread events',
      setup: async (client) => {
        client.on('notification', (n) => {
          if (n.channel === THREAD_EVENTS_CHANNEL) void this.onNotification(n.payload);
          else if (n.channel === CALL_CANCEL_CHANNEL) {
            const k = cancelPayloadKey(n.payload);
            if (k) this.onCallCancel?.(k);
          } else if (n.channel === CALL_SETTLED_CHANNEL) {
            const k = cancelPayloadKey(n.payload);
            if (k) this.onCallSettled?.(k);
          } else if (n.channel === CALL_ASKED_CHANNEL) {
            const asked = askedPayload(n.payload);
            if (asked) this.onCallAsked?.(asked.key, asked.origin);
          }
        });
        await client.query(`LISTEN ${THREAD_EVENTS_CHANNEL}`);
        await client.query(`LISTEN ${CALL_CANCEL_CHANNEL}`);
        await client.query(`LISTEN ${CALL_SETTLED_CHANNEL}`);
        await client.query(`LISTEN ${CALL_ASKED_CHANNEL}`);
      },
      // Notifications sent while the connection was down are gone: read each watched thread's tail.
      onReconnect: () => void this.catchUpAll(),
    });
  }

  /** Connects and LISTENs; resolves once listening (rejects when the first connection fails). */
  async start(): Promise<void> {
    try {
      await this.connection.open();
    } catch (err) {
      await this.connection.close();
      throw err;
    }
  }

  /**
   * Starts delivering a thread's messages committed from now on (or after
   * `fromSeq` when given: a resume). Resolves with the cursor it starts from.
   * The cursor exists at once, so a notification that arrives while the
   * position is read waits for it rather than being lost.
   */
  watch(ref: ThreadRef, fromSeq?: number): Promise<number> {
    const k = key(ref);
    const existing = this.cursors.get(k);
    if (existing) return existing.ready;
    const cursor: Cursor = { delivered: 0, chain: Promise.resolve(), ready: Promise.resolve(0) };
    this.cursors.set(k, cursor);
    cursor.ready = (fromSeq !== undefined ? Promise.resolve(fromSeq) : this.storage.lastSeq(ref)).then(
      (start) => {
        cursor.delivered = start;
        return start;
      },
      (err: unknown) => {
        // Not watched after all (the position could not be read): a later watch tries again.
        if (this.cursors.get(k) === cursor) this.cursors.delete(k);
        throw err;
      },
    );
    cursor.chain = cursor.ready.then(
      () => {},
      () => {},
    );
    return cursor.ready;
  }

  /** Stops tracking a thread no one here listens to any more (a read in flight for it delivers nothing). */
  unwatch(ref: ThreadRef): void {
    this.cursors.delete(key(ref));
  }

  /** Threads this feed tracks. */
  watchedThreads(): number {
    return this.cursors.size;
  }

  /**
   * A message of this thread committed with this seq (a NOTIFY, or a
   * caller that knows of a commit). Delivers every watched message up to it,
   * in order, once.
   */
  poke(ref: ThreadRef, seq: number): Promise<void> {
    const cursor = this.cursors.get(key(ref));
    if (!cursor || seq <= cursor.delivered) return Promise.resolve();
    cursor.chain = cursor.chain.then(() => this.catchUp(ref, cursor, seq));
    return cursor.chain;
  }

  private async catchUp(ref: ThreadRef, cursor: Cursor, upTo: number): Promise<void> {
    if (upTo <= cursor.delivered || this.cursors.get(key(ref)) !== cursor) return;
    let rows: MessageRow[];
    try {
      rows = await this.storage.messagesAfter(ref, cursor.delivered, upTo);
    } catch (err) {
      // The next notification, or the reconnect's catch-up, retries from the same cursor.
      this.log.log('warn', 'thread fan-out: could not read stored messages', { error: (err as Error).message });
      return;
    }
    if (this.cursors.get(key(ref)) !== cursor) return; // unwatched meanwhile
    // Deliver only a gapless prefix: a missing number is a commit not visible yet.
    const inOrder: MessageRow[] = [];
    for (const row of rows) {
      if (row.thread_seq !== cursor.delivered + inOrder.length + 1) break;
      inOrder.push(row);
    }
    if (inOrder.length === 0) return;
    cursor.delivered += inOrder.length;
    try {
      this.sink(ref, inOrder);
    } catch (err) {
      this.log.log('error', 'thread fan-out: subscriber sink threw', { error: (err as Error).message });
    }
  }

  private async onNotification(payload: string | undefined): Promise<void> {
    const p = parsePayload(payload);
    if (!p) return;
    let ref: ThreadRef | undefined;
    if ('messageId' in p) {
      if (this.cursors.size === 0) return;
      ref = await this.storage.threadOf(p.messageId).catch(() => undefined);
      if (!ref) return;
    } else {
      ref = p;
    }
    await this.poke(ref, p.seq);
  }

  /**
   * After a reconnect: notifications sent while we were away are gone, so
   * read each watched thread's tail. The pool may still be failing while the
   * server comes back: a read that fails is tried again a second later, as
   * long as the thread is watched.
   */
  private async catchUpAll(): Promise<void> {
    let failed = false;
    for (const [k, cursor] of [...this.cursors]) {
      const [userId, threadId] = JSON.parse(k) as [string, string];
      const ref = { userId, threadId };
      try {
        const last = await this.storage.lastSeq(ref);
        if (!(await this.pokeOk(ref, cursor, last))) failed = true;
      } catch {
        failed = true;
      }
    }
    if (failed && !this.closed) {
      this.catchUpTimer = setTimeout(() => void this.catchUpAll(), CATCH_UP_RETRY_MS);
      this.catchUpTimer.unref();
    }
  }

  /** `poke`, telling whether the cursor reached `seq` (false: the read failed, or a commit is not visible yet). */
  private async pokeOk(ref: ThreadRef, cursor: Cursor, seq: number): Promise<boolean> {
    await this.poke(ref, seq);
    return this.cursors.get(key(ref)) !== cursor || cursor.delivered >= seq;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.catchUpTimer) clearTimeout(this.catchUpTimer);
    await this.connection.close();
    this.cursors.clear();
  }
}
