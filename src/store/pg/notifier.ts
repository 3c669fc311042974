/**
 * The sending side of the cross-daemon fan-out (thread-feed.ts is the
 * receiving side): after a unit that inserted messages has COMMITTED, it
 * tells every daemon listening on the database "thread T has a message at
 * seq s", with a NOTIFY on `THREAD_EVENTS_CHANNEL`.
 *
 * Why not a `pg_notify` inside the call's own transaction: PostgreSQL takes
 * one server-wide lock before the commit of any transaction that notified
 * and holds it through that commit's WAL flush, so notifying commits go one
 * at a time — about 290/s on this machine's durable cluster, against about
 * 1,500/s for the same commits without the NOTIFY, which share their
 * flushes (bench/pg-commit-probe.ts). Here the call's commit carries no
 * NOTIFY and the notifications travel on their own, batched:
 *
 *  - A thread's pending notification keeps only its highest seq: the feed
 *    reads every message up to the seq it is told (`cursor < seq <= s`), so
 *    a later one covers the earlier ones.
 *  - One statement at a time on a connection of its own sends everything
 *    pending, with `synchronous_commit` off for that statement's
 *    transaction: the notification is a hint, the messages it names are
 *    already durable, so nothing waits for a flush while the lock is held.
 *  - A notification is sent only after its message committed, so a
 *    listener that reads up to `s` sees every message up to `s` (a thread's
 *    messages commit in seq order: the insert row-locks the thread).
 *  - While other units of this daemon are still running, a commit's
 *    notification waits for them to end — at most `MAX_WAIT_MS` — so one
 *    statement carries theirs too (Nagle's idea): under load a statement per
 *    several calls, with nothing in flight one per call, sent at once.
 *  - When the statement fails (the database went away) the batch is kept and
 *    sent again once the connection is back; `DedicatedConnection` logs the
 *    outage once. Only a daemon that dies between a commit and its
 *    notification loses one: listeners learn of that message with the
 *    thread's next one, or on their own reconnect.
 */
import { DedicatedConnection, type ConnectionLog } from './dedicated-connection.js';
import { payloadNamesThread, THREAD_EVENTS_CHANNEL, type ThreadRef } from './thread-feed.js';

/** A committed message, as the feed's payload names it. */
export interface CommittedMessage extends ThreadRef {
  messageId: string;
  seq: number;
}

/**
 * Every pending payload in one statement. `set_config(…, true)` applies to
 * the statement's own (implicit) transaction, whose commit reads it.
 */
export const NOTIFY_STATEMENT = `SELECT set_config('synchronous_commit', 'off', true) AS sync, count(pg_notify($1, p)) AS sent FROM unnest($2::text[]) AS p`;

const NOTIFY_STATEMENT_NAME = 'tg_notify_batch';

const RETRY_MS = 1_000;
/** How long a notification may wait for the units still running (fan-out latency under load). */
export const MAX_WAIT_MS = 5;

/** The payload thread-feed.ts `parsePayload` reads: `{u, t, s}`, or `{m, s}` when the ids are too long. */
export function payloadOf(m: CommittedMessage): string {
  return payloadNamesThread(m) ? JSON.stringify({ u: m.userId, t: m.threadId, s: m.seq }) : JSON.stringify({ m: m.messageId, s: m.seq });
}

export class PgThreadNotifier {
  /** The highest committed seq per thread not sent yet. */
  private pending = new Map<string, CommittedMessage>();
  private sending: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private waitTimer: NodeJS.Timeout | undefined;
  private readonly connection: DedicatedConnection;
  private closing = false;

  /**
   * `named`: the statement is prepared once on the connection (as the store's own are), so the server
   * does not parse and plan it again for every batch; off behind a pooler in transaction mode.
   */
  constructor(
    url: string,
    log: ConnectionLog,
    private readonly named = false,
  ) {
    this.connection = new DedicatedConnection({
      url,
      log,
      lost: 'sends thread events',
      back: 'for sending thread events',
      setup: async () => {},
      onReconnect: () => this.kick(),
    });
  }

  /**
   * A message committed: its listeners will hear of it (soon, batched with
   * others). `othersRunning`: other units of this daemon are running, whose
   * commits may join the statement (`idle()` ends the wait).
   */
  committed(m: CommittedMessage, othersRunning = false): void {
    if (this.closing) return;
    const k = JSON.stringify([m.userId, m.threadId]);
    const before = this.pending.get(k);
    if (!before || before.seq < m.seq) this.pending.set(k, m);
    if (!othersRunning) return this.kick();
    if (this.waitTimer) return;
    this.waitTimer = setTimeout(() => this.kick(), MAX_WAIT_MS);
    this.waitTimer.unref();
  }

  /** The daemon's running units have all ended: what waited for them goes now. */
  idle(): void {
    if (this.waitTimer) this.kick();
  }

  /** Notifications waiting to be sent (threads). */
  waiting(): number {
    return this.pending.size;
  }

  private kick(): void {
    if (this.waitTimer) clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
    if (this.sending || this.retryTimer || this.pending.size === 0) return;
    this.sending = this.sendAll().finally(() => {
      this.sending = undefined;
      // A commit told between the batch loop's last look and here found a send under way and left its
      // notification to it: it goes now, or it would wait for the thread's next commit.
      if (!this.closing) this.kick();
    });
  }

  /** Sends batches until nothing is pending; after a failure, keeps the batch and tries again later. */
  private async sendAll(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = this.pending;
      this.pending = new Map();
      try {
        const client = this.connection.current ?? (await this.connection.open());
        const values = [THREAD_EVENTS_CHANNEL, [...batch.values()].map(payloadOf)];
        await client.query(this.named ? { name: NOTIFY_STATEMENT_NAME, text: NOTIFY_STATEMENT, values } : { text: NOTIFY_STATEMENT, values });
      } catch {
        // Newer commits of the same threads arrived meanwhile: they win.
        for (const [k, m] of batch) {
          const now = this.pending.get(k);
          if (!now || now.seq < m.seq) this.pending.set(k, m);
        }
        if (!this.closing) this.retryLater();
        return;
      }
    }
  }

  private retryLater(): void {
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.kick();
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  /** Sends what is pending (one attempt), then closes the connection. */
  async close(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.kick();
    this.closing = true;
    await this.sending;
    this.pending.clear();
    await this.connection.close();
  }
}
