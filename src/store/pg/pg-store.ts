/**
 * The PostgreSQL engine of the store boundary. One unit of work = one
 * transaction on one pooled connection (`store.pool_size` connections per
 * daemon); PostgreSQL batches WAL flushes of concurrent commits itself, so
 * there is no group commit here. Correctness across daemons comes from the
 * database: unique keys answer races (`StoreConflictError`, then the caller
 * re-reads the winner), row locks order a thread's messages.
 */
import { createHash } from 'node:crypto';
import pgDriver from 'pg';
import type pg from 'pg';
import type { CommitListener, PoolUse, Store, StoreDescription, StoreOptions, Tx } from '../store.js';
import { StoreConflictError } from '../store.js';
import { migratePg } from './migrate.js';
import { clientConfig, openPgPool, pgOpenError } from './connect.js';
import {
  CALL_LOCK_KEY,
  messagesAfter,
  PgAutomationJobs,
  PgContacts,
  PgCredentialAudit,
  PgCredentialKeys,
  PgEvents,
  PgInvites,
  PgMemories,
  PgMessages,
  PgThreads,
  PgToolCalls,
  PgUsers,
  type Query,
} from './repos.js';
import { PgThreadFeed, type FeedLog, type FeedSink, type FeedStorage, type ThreadRef } from './thread-feed.js';

/** Statements are prepared once per connection, under a name derived from their text. */
function statementName(text: string): string {
  return `tg_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
}

function queryOn(client: pg.ClientBase): Query {
  return async <R>(text: string, values: readonly unknown[] = []) => {
    try {
      const res = await client.query({ name: statementName(text), text, values: values as unknown[] });
      return res.rows as R[];
    } catch (err) {
      throw storeError(err);
    }
  };
}

/** A unique violation becomes the boundary's conflict; everything else passes through. */
function storeError(err: unknown): unknown {
  const e = err as { code?: string; constraint?: string };
  if (e.code === '23505') return new StoreConflictError(e.constraint ?? 'unique');
  return err;
}

class PgTx implements Tx {
  readonly users;
  readonly threads;
  readonly messages;
  readonly toolCalls;
  readonly credentialAudit;
  readonly credentialKeys;
  readonly automationJobs;
  readonly events;
  readonly invites;
  readonly memories;
  readonly contacts;
  private depth = 0;

  constructor(private readonly q: Query) {
    this.users = new PgUsers(q);
    this.threads = new PgThreads(q);
    this.messages = new PgMessages(q);
    this.toolCalls = new PgToolCalls(q);
    this.credentialAudit = new PgCredentialAudit(q);
    this.credentialKeys = new PgCredentialKeys(q);
    this.automationJobs = new PgAutomationJobs(q);
    this.events = new PgEvents(q);
    this.invites = new PgInvites(q);
    this.memories = new PgMemories(q);
    this.contacts = new PgContacts(q);
  }

  async savepoint<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const name = `sp_${++this.depth}`;
    await this.q(`SAVEPOINT ${name}`);
    try {
      const value = await work(this);
      await this.q(`RELEASE SAVEPOINT ${name}`);
      return value;
    } catch (err) {
      await this.q(`ROLLBACK TO SAVEPOINT ${name}`);
      await this.q(`RELEASE SAVEPOINT ${name}`);
      throw err;
    } finally {
      this.depth--;
    }
  }
}

export interface PgStoreOptions extends StoreOptions {
  log?: FeedLog | undefined;
}

export class PgStore implements Store {
  readonly engine = 'postgres' as const;
  private readonly pending = new Set<Promise<unknown>>();
  private closing = false;
  private feed: PgThreadFeed | undefined;

  constructor(
    readonly url: string,
    private readonly pool: pg.Pool,
    private readonly schemaVersion: number,
    private readonly log: FeedLog | undefined,
  ) {}

  onCommit?: CommitListener;

  poolUse(): PoolUse {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.track(this.runTransaction(work));
  }

  private async runTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.closing) throw new Error('the store is closed');
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const started = performance.now();
      await client.query('BEGIN');
      const value = await work(new PgTx(queryOn(client)));
      await client.query('COMMIT');
      this.onCommit?.((performance.now() - started) / 1000, 1);
      return value;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => {
        broken = e;
      });
      throw storeError(err);
    } finally {
      // A connection that could not even roll back is dropped, not reused.
      client.release(broken);
    }
  }

  read<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.track(this.runRead(work));
  }

  private runRead<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new Error('the store is closed'));
    return this.withQuery((q) => work(new PgTx(q)));
  }

  /** Statements outside a transaction (each its own snapshot) on one pooled connection. */
  private async withQuery<T>(work: (q: Query) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      return await work(queryOn(client));
    } finally {
      client.release();
    }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const done = () => this.pending.delete(p);
    p.then(done, done);
    return p;
  }

  async describe(): Promise<StoreDescription> {
    return { engine: 'postgres', schemaVersion: this.schemaVersion };
  }

  /**
   * The cross-daemon fan-out of this database (started on first use): every
   * watched thread's committed messages, in thread order, once, to `sink`.
   */
  async threadFeed(sink: FeedSink): Promise<PgThreadFeed> {
    if (this.feed) return this.feed;
    const storage: FeedStorage = {
      messagesAfter: (ref, after, upTo) => this.withQuery((q) => messagesAfter(q, ref.userId, ref.threadId, after, upTo)),
      lastSeq: async (ref: ThreadRef) => {
        const rows = await this.pool.query<{ last_seq: number }>('SELECT last_seq FROM threads WHERE user_id = $1 AND id = $2', [ref.userId, ref.threadId]);
        return rows.rows[0]?.last_seq ?? 0;
      },
      threadOf: async (messageId) => {
        const rows = await this.pool.query<{ user_id: string; thread_id: string }>('SELECT user_id, thread_id FROM messages WHERE id = $1', [messageId]);
        const r = rows.rows[0];
        return r && { userId: r.user_id, threadId: r.thread_id };
      },
    };
    const feed = new PgThreadFeed(this.url, storage, sink, this.log ?? { log: () => {} });
    await feed.start();
    this.feed = feed;
    return feed;
  }

  private locks: Promise<pg.Client> | undefined;

  /** The session that holds this daemon's call marks: one dedicated connection, opened on first use. */
  private lockClient(): Promise<pg.Client> {
    if (!this.locks) {
      const client = new pgDriver.Client(clientConfig(this.url));
      const lost = () => {
        // Its locks are gone with it; the next call opens a new one.
        this.locks = undefined;
        this.log?.log('warn', 'lost the database connection that marks calls in progress; reopening on the next call');
      };
      client.on('error', lost);
      this.locks = client.connect().then(() => client);
      this.locks.catch(() => {
        this.locks = undefined;
      });
    }
    return this.locks;
  }

  /** One statement at a time on the lock connection (pg wants no overlapping queries on one client). */
  private lockChain: Promise<unknown> = Promise.resolve();

  private onLockClient(sql: string, values: unknown[]): Promise<void> {
    const next = this.lockChain.then(async () => {
      const client = await this.lockClient();
      await client.query(sql, values);
    });
    this.lockChain = next.catch(() => {});
    return next;
  }

  async holdCall(userId: string, threadId: string, toolCallId: string): Promise<() => Promise<void>> {
    const key = [userId, threadId, toolCallId];
    try {
      // Never wait (the lock connection is shared by all calls): when another daemon racing on the
      // same call holds the mark already, the call is marked as in progress all the same.
      await this.onLockClient(`SELECT pg_try_advisory_lock(${CALL_LOCK_KEY('$1', '$2', '$3')})`, key);
    } catch (err) {
      // Without the mark the call still runs: the unique keys keep it exactly-once.
      this.log?.log('warn', 'could not mark a call in progress', { error: (err as Error).message });
      return async () => {};
    }
    return () => this.onLockClient(`SELECT pg_advisory_unlock(${CALL_LOCK_KEY('$1', '$2', '$3')})`, key).catch(() => {});
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.pending]);
    await this.feed?.close();
    const locks = this.locks;
    this.locks = undefined;
    await locks?.then((c) => c.end()).catch(() => {});
    await this.pool.end();
  }
}

/** Opens the pool, proves the URL works, migrates (or refuses a newer schema). */
export async function openPgStore(url: string, opts: PgStoreOptions = {}): Promise<PgStore> {
  const pool = await openPgPool(url, {
    poolSize: opts.poolSize,
    onIdleError: (err) => opts.log?.log('warn', 'an idle database connection failed; the pool replaces it', { error: err.message }),
  });
  try {
    const client = await pool.connect();
    let version: number;
    try {
      version = await migratePg(client, undefined, opts.checkRows);
    } finally {
      client.release();
    }
    return new PgStore(url, pool, version, opts.log);
  } catch (err) {
    await pool.end().catch(() => {});
    if ((err as Error).name === 'DatabaseOpenError') throw err;
    throw pgOpenError(url, err);
  }
}
