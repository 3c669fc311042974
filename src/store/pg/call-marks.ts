/**
 * Call marks: while a subprocess call runs, its daemon holds a session-level
 * advisory lock on the call's key, so another daemon's recovery at start
 * leaves the call alone (it takes only calls whose lock it can get). The
 * marks live on one dedicated connection per daemon; they die with it, so
 * a dead daemon's calls become recoverable.
 *
 * When the server drops that connection the marks are gone with it: the
 * connection reconnects with backoff (`DedicatedConnection`) and takes every
 * mark still held again. In between, calls run unmarked — the unique keys
 * keep them exactly-once all the same — and none waits for the outage.
 */
import type pg from 'pg';
import { CALL_LOCK_KEY } from './repos.js';
import { DedicatedConnection, type ConnectionLog } from './dedicated-connection.js';

const LOCK = `SELECT pg_try_advisory_lock(${CALL_LOCK_KEY('$1', '$2', '$3')})`;
const UNLOCK = `SELECT pg_advisory_unlock(${CALL_LOCK_KEY('$1', '$2', '$3')})`;
/** A mark's statements, on the marks' own connection: for counting a call's own waits. */
export const MARK_STATEMENTS: readonly string[] = [LOCK, UNLOCK];

interface Mark {
  key: [string, string, string];
  /** Holders in this daemon (one lock in the database). */
  holders: number;
  /** The connection the lock was taken on (a new connection has none of the old one's locks). */
  takenOn: pg.Client | undefined;
}

export class PgCallMarks {
  private readonly marks = new Map<string, Mark>();
  private readonly connection: DedicatedConnection;
  /** One statement at a time on the connection (pg wants no overlapping queries on one client). */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(url: string, log: ConnectionLog) {
    this.connection = new DedicatedConnection({
      url,
      log,
      lost: 'marks calls in progress',
      back: 'for call marks',
      setup: async (client) => {
        for (const mark of this.marks.values()) {
          // Never wait (the connection is shared by all calls): a mark another daemon holds counts as held.
          await client.query(LOCK, mark.key);
          mark.takenOn = client;
        }
      },
    });
  }

  /** Marks the call as this daemon's until the returned release runs (at most once). */
  async hold(userId: string, threadId: string, toolCallId: string): Promise<() => Promise<void>> {
    const key: Mark['key'] = [userId, threadId, toolCallId];
    const k = JSON.stringify(key);
    let mark = this.marks.get(k);
    if (!mark) {
      mark = { key, holders: 0, takenOn: undefined };
      this.marks.set(k, mark);
    }
    mark.holders++;
    const held = mark;
    await this.serially(async (client) => {
      if (held.takenOn === client || held.holders === 0) return;
      await client.query(LOCK, held.key);
      held.takenOn = client;
    });
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      if (--held.holders > 0) return;
      this.marks.delete(k);
      await this.serially(async (client) => {
        if (held.takenOn !== client) return; // taken on a connection that is gone, and the lock with it
        held.takenOn = undefined;
        await client.query(UNLOCK, held.key);
      });
    };
  }

  /**
   * Runs one statement's work on the connection, after the ones before it.
   * Never fails: without a connection (an outage, which the connection logs
   * once) the call runs unmarked.
   */
  private serially(work: (client: pg.Client) => Promise<void>): Promise<void> {
    const next = this.chain.then(async () => {
      const client = this.connection.current ?? (await this.connection.open());
      await work(client);
    });
    const settled = next.catch(() => {});
    this.chain = settled;
    return settled;
  }

  async close(): Promise<void> {
    await this.chain;
    await this.connection.close();
  }
}
