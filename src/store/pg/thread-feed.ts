/**
 * Cross-daemon fan-out on PostgreSQL: `LISTEN/NOTIFY` carries ids, the rows
 * come from the database.
 *
 * Every message insert sends, inside its transaction, a NOTIFY on
 * `THREAD_EVENTS_CHANNEL` whose payload names the message — `(user, thread,
 * thread_seq)` — never its content (payloads are small and go to every
 * listener of the database). PostgreSQL delivers notifications at COMMIT, in
 * commit order, and a thread's messages commit in `thread_seq` order (the
 * insert row-locks the thread), so each daemon learns of a thread's messages
 * in order.
 *
 * This feed keeps, per thread someone on this daemon cares about, a cursor:
 * the last `thread_seq` it delivered. A notification (`poke`) for seq `s`
 * makes it read every stored message with
 * `cursor < thread_seq <= s` and deliver them in order, once — a lost or
 * reordered notification is repaired by the next one, and after a lost
 * connection it reconnects, says so in the log, and catches every watched
 * thread up from its cursor.
 */
import pg from 'pg';
import type { MessageRow } from '../store.js';
import { clientConfig, describePgUrl } from './connect.js';

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

export function notifyPayload(m: NotifiedMessage & { messageId: string }): string {
  const full = JSON.stringify({ u: m.userId, t: m.threadId, s: m.seq });
  // Too long for NOTIFY: name the message by its (short, generated) id instead.
  return Buffer.byteLength(full) <= MAX_PAYLOAD_BYTES ? full : JSON.stringify({ m: m.messageId, s: m.seq });
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

export interface FeedLog {
  log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void;
}

export type FeedSink = (ref: ThreadRef, rows: MessageRow[]) => void;

interface Cursor {
  delivered: number;
  /** Resolves with the starting position once it is read. */
  ready: Promise<number>;
  /** Serialises this thread's reads so deliveries never interleave or repeat. */
  chain: Promise<void>;
}

const key = (r: ThreadRef) => JSON.stringify([r.userId, r.threadId]);

export class PgThreadFeed {
  private readonly cursors = new Map<string, Cursor>();
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = 100;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly storage: FeedStorage,
    private readonly sink: FeedSink,
    private readonly log: FeedLog,
  ) {}

  /** Connects and LISTENs; resolves once listening (rejects when the first connection fails). */
  async start(): Promise<void> {
    await this.connect();
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

  private async connect(): Promise<void> {
    const client = new pg.Client(clientConfig(this.url));
    client.on('notification', (n) => {
      if (n.channel === THREAD_EVENTS_CHANNEL) void this.onNotification(n.payload);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`LISTEN ${THREAD_EVENTS_CHANNEL}`);
    this.client = client;
    this.retryMs = 100;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.log.log('warn', 'lost the database connection that listens for thread events; reconnecting', { db: describePgUrl(this.url) });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.connect().then(
        () => {
          this.log.log('info', 'reconnected to the database for thread events', { db: describePgUrl(this.url) });
          void this.catchUpAll();
        },
        (err: Error) => {
          this.log.log('warn', 'reconnecting for thread events failed; retrying', { error: err.message, retry_ms: this.retryMs });
          this.retryMs = Math.min(this.retryMs * 2, 5_000);
          this.scheduleReconnect();
        },
      );
    }, this.retryMs);
    this.retryTimer.unref();
  }

  /** After a reconnect: notifications sent while we were away are gone, so read each watched thread's tail. */
  private async catchUpAll(): Promise<void> {
    for (const [k, cursor] of [...this.cursors]) {
      const [userId, threadId] = JSON.parse(k) as [string, string];
      const ref = { userId, threadId };
      const last = await this.storage.lastSeq(ref).catch(() => cursor.delivered);
      await this.poke(ref, last);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
    this.cursors.clear();
  }
}
