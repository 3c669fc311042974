/**
 * The PostgreSQL engine of the store boundary. One unit of work = one
 * transaction on one pooled connection (`store.pool_size` connections per
 * daemon); PostgreSQL batches WAL flushes of concurrent commits itself, so
 * there is no group commit here. Correctness across daemons comes from the
 * database: unique keys answer races (`StoreConflictError`, then the caller
 * re-reads the winner), row locks order a thread's messages.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { CommitListener, PoolUse, Store, StoreDescription, StoreOptions, Tx, UnitOptions } from '../store.js';
import { StoreConflictError, StoreUnavailableError } from '../store.js';
import { asUnavailable, isConnectionError } from './connection-errors.js';
import { migratePg } from './migrate.js';
import { failureOf, openPgPool, pgOpenError } from './connect.js';
import { PgCallMarks } from './call-marks.js';
import { PgMcpSessions } from './mcp-sessions.js';
import { PgCallStates } from './call-states.js';
import { PgApprovalAudit, PgPendingCalls } from './pending-calls.js';
import { PgUnit, type Query } from './unit.js';
import { PgQuotas } from './quotas.js';
import {
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
  CallLookup,
} from './repos.js';
import { PgThreadNotifier, type CommittedMessage } from './notifier.js';
import { PgThreadFeed, type FeedLog, type FeedSink, type FeedStorage, type ThreadRef } from './thread-feed.js';

/** Names already derived (a call sends the same few texts over and over); bounded, as `combine`'s texts are. */
const NAMES = new Map<string, string>();
const NAMES_MAX = 512;

/** Statements are prepared once per connection, under a name derived from their text. */
function statementName(text: string): string {
  let name = NAMES.get(text);
  if (name === undefined) {
    name = `tg_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    if (NAMES.size >= NAMES_MAX) NAMES.clear();
    NAMES.set(text, name);
  }
  return name;
}

/**
 * Statements on one connection. Named: prepared once per connection (the
 * default). Unnamed: parsed each time, which keeps no session state — what a
 * pooler in transaction mode needs (the next transaction may run on another
 * server connection, where the name was never prepared).
 */
function queryOn(client: pg.ClientBase, named: boolean): Query {
  return async <R>(text: string, values: readonly unknown[] = []) => {
    try {
      const res = await client.query(named ? { name: statementName(text), text, values: values as unknown[] } : { text, values: values as unknown[] });
      return res.rows as R[];
    } catch (err) {
      throw storeError(err);
    }
  };
}

/** A unique violation becomes the boundary's conflict, a dropped connection `StoreUnavailableError`; everything else passes through. */
function storeError(err: unknown): unknown {
  const e = err as { code?: string; constraint?: string };
  if (e.code === '23505') return new StoreConflictError(e.constraint ?? 'unique');
  return asUnavailable(err);
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
  readonly quotas;
  readonly pendingCalls;
  readonly approvalAudit;
  readonly mcpSessions;

  /**
   * `unit`: a transaction's statement scheduler (unit.ts); without one
   * (`read()`), every statement runs at once. `inserted`: each message
   * inserted (the store notifies listeners once it is committed).
   */
  constructor(
    q: Query,
    inserted: (m: CommittedMessage) => void,
    private readonly unit?: PgUnit,
  ) {
    const lookup = unit ? new CallLookup() : undefined;
    this.lookup = lookup;
    this.users = new PgUsers(q);
    this.threads = new PgThreads(q);
    this.messages = new PgMessages(q, lookup, inserted);
    this.toolCalls = new PgToolCalls(q, lookup);
    this.credentialAudit = new PgCredentialAudit(q);
    this.credentialKeys = new PgCredentialKeys(q);
    this.automationJobs = new PgAutomationJobs(q);
    this.events = new PgEvents(q);
    this.invites = new PgInvites(q);
    this.memories = new PgMemories(q);
    this.contacts = new PgContacts(q);
    this.quotas = new PgQuotas(q);
    this.pendingCalls = new PgPendingCalls(q);
    this.approvalAudit = new PgApprovalAudit(q);
    this.mcpSessions = new PgMcpSessions(q);
  }

  savepoint<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    if (!this.unit) throw new Error('a savepoint needs a transaction');
    return this.unit.savepoint(() => work(this));
  }

  private readonly lookup: CallLookup | undefined;

  assumeNewCall(userId: string, threadId: string, toolCallId: string): void {
    if (!this.lookup) throw new Error('assuming a new call needs a transaction');
    this.lookup.assumeNone(userId, threadId, toolCallId);
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
  /** Tells the database's listeners (every daemon's feed) of committed messages. */
  private readonly notifier: PgThreadNotifier;
  /** Transactions between their start and their end (the notifier batches what commits meanwhile). */
  private unitsRunning = 0;

  /** Where the connections that keep session state (LISTEN, call marks) go: `store.listen_url`, else the main URL. */
  private readonly directUrl: string;
  private readonly namedStatements: boolean;

  constructor(
    readonly url: string,
    private readonly pool: pg.Pool,
    private readonly schemaVersion: number,
    private readonly log: FeedLog | undefined,
    opts: Pick<PgStoreOptions, 'listenUrl' | 'namedStatements'> = {},
  ) {
    this.directUrl = opts.listenUrl ?? url;
    this.namedStatements = opts.namedStatements ?? opts.listenUrl === undefined;
    this.notifier = new PgThreadNotifier(url, log ?? { log: () => {} }, this.namedStatements);
  }

  onCommit?: CommitListener;

  poolUse(): PoolUse {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  transaction<T>(work: (tx: Tx) => Promise<T>, opts?: UnitOptions): Promise<T> {
    this.unitsRunning++;
    const ended = () => {
      if (--this.unitsRunning === 0) this.notifier.idle();
    };
    const unit = this.runTransaction(work, opts?.signal);
    unit.then(ended, ended);
    return this.track(unit);
  }

  private async runTransaction<T>(work: (tx: Tx) => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    if (this.closing) throw new Error('the store is closed');
    signal?.throwIfAborted();
    return this.withClient(async (_client, q, drop) => {
      const unit = new PgUnit(q, signal);
      const inserted: CommittedMessage[] = [];
      try {
        const started = performance.now();
        const value = await work(new PgTx(unit.query, (m) => inserted.push(m), unit));
        await unit.commit();
        this.onCommit?.((performance.now() - started) / 1000, 1);
        for (const m of inserted) this.notifier.committed(m, this.unitsRunning > 1);
        return value;
      } catch (err) {
        // A connection that cannot even roll back is broken: withClient drops it.
        await unit.rollback().catch(drop);
        // A stopped call's reason goes up as it is (the call service turns it into the call's outcome).
        if (signal?.aborted && err === signal.reason) throw err;
        throw storeError(err);
      }
    });
  }

  read<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.track(this.runRead(work));
  }

  private runRead<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new Error('the store is closed'));
    return this.withQuery((q) => work(new PgTx(q, (m) => this.notifier.committed(m))));
  }

  /** Statements outside a transaction (each its own snapshot) on one pooled connection. */
  private withQuery<T>(work: (q: Query) => Promise<T>): Promise<T> {
    return this.withClient((_client, q) => work(q));
  }

  /**
   * Checks a connection out of the pool for `work` and gives it back. While
   * it is out, the pool does not watch it: an `'error'` the driver emits
   * (the server ended the session) is caught here, and a connection that
   * failed that way — or whose statement failed as a dead connection does —
   * is released as broken, so the pool closes it and opens a fresh one. A
   * dropped database reaches the caller as `StoreUnavailableError`.
   */
  private async withClient<T>(work: (client: pg.PoolClient, q: Query, drop: (err: Error) => void) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw asUnavailable(err);
    }
    let broken: Error | undefined = failureOf(client);
    // Also how `work` says the connection must not be reused (a ROLLBACK that failed).
    const onError = (err: Error) => {
      broken ??= err;
    };
    client.on('error', onError);
    try {
      return await work(client, queryOn(client, this.namedStatements), onError);
    } catch (err) {
      if (isConnectionError(err) || err instanceof StoreUnavailableError) broken ??= err as Error;
      // A conflict is an answer even if the connection died after it; any other failure on a dead connection is the outage.
      throw isConnectionError(broken) && !(err instanceof StoreConflictError) ? asUnavailable(broken) : asUnavailable(err);
    } finally {
      client.removeListener('error', onError);
      client.release(broken ?? failureOf(client));
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
        const rows = await this.withQuery((q) => q<{ last_seq: number }>('SELECT last_seq FROM threads WHERE user_id = $1 AND id = $2', [ref.userId, ref.threadId]));
        return rows[0]?.last_seq ?? 0;
      },
      threadOf: async (messageId) => {
        const rows = await this.withQuery((q) => q<{ user_id: string; thread_id: string }>('SELECT user_id, thread_id FROM messages WHERE id = $1', [messageId]));
        const r = rows[0];
        return r && { userId: r.user_id, threadId: r.thread_id };
      },
    };
    const feed = new PgThreadFeed(this.directUrl, storage, sink, this.log ?? { log: () => {} });
    await feed.start();
    this.feed = feed;
    return feed;
  }

  private marks: PgCallMarks | undefined;

  /** Marks a call as this daemon's while it runs (`call-marks.ts`); the connection opens on first use. */
  async endSessionsNamed(applicationName: string): Promise<void> {
    const deadline = performance.now() + 5_000;
    for (;;) {
      const rows = await this.track(
        this.withQuery((q) =>
          q<{ pid: number }>('SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()', [applicationName]),
        ),
      );
      if (rows.length === 0) return;
      if (performance.now() > deadline) throw new StoreUnavailableError('a stopped call\'s database session did not end');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Calls not done yet, as every daemon sees them (call-states.ts). */
  readonly sharedCalls: PgCallStates = new PgCallStates({
    query: (text, values) => this.track(this.withQuery((q) => q(text, values))),
    transaction: (work) =>
      this.track(
        this.withClient(async (_client, q, drop) => {
          await q('BEGIN');
          try {
            const value = await work(q);
            await q('COMMIT');
            return value;
          } catch (err) {
            await q('ROLLBACK').catch(drop);
            throw storeError(err);
          }
        }),
      ),
  });

  holdCall(userId: string, threadId: string, toolCallId: string): Promise<() => Promise<void>> {
    this.marks ??= new PgCallMarks(this.directUrl, this.log ?? { log: () => {} });
    return this.marks.hold(userId, threadId, toolCallId);
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.pending]);
    await this.notifier.close();
    await this.feed?.close();
    await this.marks?.close();
    await this.pool.end();
  }
}

/** Opens the pool, proves the URL works, migrates (or refuses a newer schema). */
export async function openPgStore(url: string, opts: PgStoreOptions = {}): Promise<PgStore> {
  const pool = await openPgPool(url, {
    poolSize: opts.poolSize,
    onIdleError: (err) => opts.log?.log('debug', 'an idle database connection failed; the pool replaces it', { error: err.message }),
  });
  try {
    const client = await pool.connect();
    // Out of the pool nothing watches it: a server that ends the session now fails the start, never the process.
    let broken: Error | undefined = failureOf(client);
    const onError = (err: Error) => {
      broken ??= err;
    };
    client.on('error', onError);
    let version: number;
    try {
      version = await migratePg(client, undefined, opts.checkRows);
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
    return new PgStore(url, pool, version, opts.log, opts);
  } catch (err) {
    await pool.end().catch(() => {});
    if ((err as Error).name === 'DatabaseOpenError') throw err;
    throw pgOpenError(url, err);
  }
}
