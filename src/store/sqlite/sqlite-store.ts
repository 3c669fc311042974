import { sqliteApprovalAudit, sqlitePendingCalls } from './pending-calls.js';
import type { Db } from '../database.js';
import { openDatabase } from '../database.js';
import type { CommitListener, Store, StoreDescription, StoreOptions, Tx, UnitOptions } from '../store.js';
import { StoreUnavailableError } from '../store.js';
import { Statements } from './statements.js';
import { sqliteUsers } from './users.js';
import { sqliteThreads } from './threads.js';
import { sqliteMessages } from './messages.js';
import { sqliteToolCalls, type AssumedCall } from './tool-calls.js';
import { sqliteCredentialAudit } from './credential-audit.js';
import { sqliteCredentialKeys } from './credential-keys.js';
import { sqliteMcpSessions } from './mcp-sessions.js';
import { sqliteAutomationJobs } from './automation-jobs.js';
import { sqliteEvents } from './events.js';
import { sqliteInvites } from './invites.js';
import { sqliteMemories } from './memories.js';
import { sqliteContacts } from './contacts.js';
import { sqliteQuotas } from './quotas.js';
import type { Checkpointer } from './checkpointer.js';

interface Unit {
  work: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** A call's signal: an aborted unit never runs, or is rolled back to its savepoint (src/calls). */
  signal: AbortSignal | undefined;
  /** Whether an abort takes the unit out of the queue at once (`watchAbort`). */
  watched: boolean;
}

/** A group once its transaction has ended: what is left is settling its units. */
interface EndedGroup {
  /** Settles every unit: the committed ones resolve, the failed ones reject. */
  settle(): void;
  /** BEGIN found the write lock held by another process: the units are queued again, to try later. */
  busy?: boolean;
  /** Tells the commit listener and the checkpointer that the group is durable. */
  durable(): void;
}

/** Units committed together at most; past it the next ones start the next group. */
const MAX_GROUP = 128;
/** Turns of the event loop a group waits for more units (each a few microseconds when idle). */
const MAX_WAIT_TURNS = 64;
const SYNCHRONOUS_NAMES = ['OFF', 'NORMAL', 'FULL', 'EXTRA'] as const;
/** With a checkpoint thread, the connection's own auto-checkpoint is only the safety net (pages of WAL). */
const SAFETY_NET_CHECKPOINT_PAGES = 10_000;
/**
 * Another process holds the write lock (a project-cli child committing, a
 * backup, an operator's sqlite3): the group waits on timers, never in SQLite's
 * busy handler, so the event loop keeps serving every connection meanwhile.
 * Past this long the queued units fail as SQLite's own busy timeout did.
 */
const BUSY_LIMIT_MS = 5_000;
/** SQLite's own busy wait per statement: short enough not to stall the event loop, long enough for a checkpoint's brief lock. */
const STATEMENT_BUSY_MS = 20;
const BUSY_FIRST_WAIT_MS = 1;
const BUSY_MAX_WAIT_MS = 25;

/**
 * The SQLite engine: one connection, group commit.
 *
 * Units (`transaction()`) queue up; once a turn of the event loop passes
 * without a new one — every message that arrived together has been read — one
 * `BEGIN IMMEDIATE` opens a group, each unit runs in its own SAVEPOINT
 * (a unit that throws is rolled back to it and fails alone), one COMMIT —
 * one fsync under `synchronous=FULL` — makes all of them durable, and only
 * then does each unit's promise settle. Units queued while a group runs join
 * it (up to MAX_GROUP).
 *
 * The repositories answer synchronously underneath (better-sqlite3), so a
 * group is held open only for the CPU time of its units — never across a
 * child process, timer or socket (the boundary's rule 1): project-cli
 * processes writing to the same file wait for a lock at most that long.
 */
export class SqliteStore implements Store {
  readonly engine = 'sqlite' as const;
  private readonly tx: Tx;
  private readonly queue: Unit[] = [];
  private scheduled = false;
  /** Set while a group transaction is open; reads wait for it to end. */
  private group: Promise<void> | null = null;
  private savepointDepth = 0;
  /** The running unit's `assumeNewCall`, cleared at the unit's end. */
  private readonly assumed: AssumedCall = { key: undefined };
  private closed = false;
  private readonly control: Statements;
  private checkpointer: Checkpointer | undefined;
  /** Whether this connection copies the checkpoint thread's tail (`useCheckpointer`). */
  private copiesTail = false;
  /** When BEGIN first met another process's lock, while the queue waits for it (undefined otherwise). */
  private busySince: number | undefined;
  private busyWaitMs = BUSY_FIRST_WAIT_MS;
  onCommit?: CommitListener;

  constructor(readonly connection: Db) {
    // Waits for another process's lock happen on timers (BUSY_LIMIT_MS): SQLite's own busy handler may
    // hold this thread at most a few milliseconds per statement (a read or COMMIT that meets a checkpoint's
    // brief lock), never the 5 s it used to.
    connection.pragma(`busy_timeout = ${STATEMENT_BUSY_MS}`);
    const st = new Statements(connection);
    this.control = st;
    const tx: Tx = {
      users: sqliteUsers(st),
      threads: sqliteThreads(st),
      messages: sqliteMessages(st),
      toolCalls: sqliteToolCalls(st, this.assumed),
      credentialAudit: sqliteCredentialAudit(st),
      credentialKeys: sqliteCredentialKeys(st),
      automationJobs: sqliteAutomationJobs(st),
      events: sqliteEvents(st),
      invites: sqliteInvites(st),
      memories: sqliteMemories(st),
      contacts: sqliteContacts(st),
      quotas: sqliteQuotas(st),
      pendingCalls: sqlitePendingCalls(st),
      approvalAudit: sqliteApprovalAudit(st),
      mcpSessions: sqliteMcpSessions(st),
      savepoint: (work) => this.savepoint(work),
      // Two reads a new call skips (its tool message, its call record): a call stored before fails the unit's
      // record or message write on the unique keys instead (StoreConflictError), and the caller answers
      // from the store — the rare retry pays for the work undone.
      assumeNewCall: (userId, threadId, toolCallId) => {
        // Only a unit may assume: the key lives until the unit's end (runGroup), never into a read.
        if (!this.group) throw new Error('assuming a new call needs a transaction');
        this.assumed.key = { userId, threadId, toolCallId };
      },
    };
    this.tx = tx;
  }

  transaction<T>(work: (tx: Tx) => Promise<T>, opts?: UnitOptions): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    const signal = opts?.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const unit: Unit = { work, resolve: resolve as (v: unknown) => void, reject, signal, watched: false };
      this.queue.push(unit);
      if (this.busySince !== undefined) this.watchAbort(unit);
      this.schedule();
    });
  }

  /**
   * While the queue waits for another process's lock (timers, up to
   * BUSY_LIMIT_MS), a unit aborted meanwhile leaves it at once. Otherwise a
   * unit waits a turn or two of the event loop for its group, which drops it
   * if it was aborted by then (runGroup) — no listener per call: adding one
   * (and the closure it holds) was measurable on every call.
   */
  private watchAbort(unit: Unit): void {
    const { signal } = unit;
    if (!signal || unit.watched) return;
    unit.watched = true;
    signal.addEventListener(
      'abort',
      () => {
        const i = this.queue.indexOf(unit);
        if (i >= 0) {
          this.queue.splice(i, 1);
          unit.reject(signal.reason);
        }
      },
      { once: true },
    );
  }

  async read<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    // Inside an open group the connection would show uncommitted writes: wait for its commit.
    while (this.group) await this.group;
    return work(this.tx);
  }

  async describe(): Promise<StoreDescription> {
    const db = this.connection;
    const sync = db.pragma('synchronous', { simple: true }) as number;
    return {
      engine: 'sqlite',
      synchronous: SYNCHRONOUS_NAMES[sync] ?? 'FULL',
      journalMode: String(db.pragma('journal_mode', { simple: true })),
      schemaVersion: db.pragma('user_version', { simple: true }) as number,
    };
  }

  /**
   * Hands WAL checkpoints to a checkpoint thread (checkpointer.ts): told of
   * every commit, it checkpoints off this thread; the connection's own
   * auto-checkpoint stays as the safety net, at a higher threshold.
   */
  useCheckpointer(checkpointer: Checkpointer): void {
    this.checkpointer = checkpointer;
    this.connection.pragma(`wal_autocheckpoint = ${SAFETY_NET_CHECKPOINT_PAGES}`);
    // The tail (checkpointer.ts, `takeTail`) costs this thread the checkpoint's two fsyncs and the WAL
    // header's at the restart. It pays off only where every COMMIT fsyncs the WAL (FULL): there an
    // appending commit measured ~1.05 ms against ~0.4-0.67 ms. At NORMAL a commit has no fsync to
    // shorten, and the WAL is left to the safety net.
    const sync = this.connection.pragma('synchronous', { simple: true }) as number;
    this.copiesTail = sync >= 2;
  }

  async close(): Promise<void> {
    while (this.group || this.queue.length > 0 || this.scheduled) {
      if (this.group) await this.group;
      // Waiting for another process's lock: no need to spin while the retry timer runs.
      else await new Promise((r) => setTimeout(r, this.busySince === undefined ? 0 : BUSY_FIRST_WAIT_MS));
    }
    this.closed = true;
    await this.checkpointer?.stop();
    this.connection.close();
  }

  private schedule(): void {
    if (this.scheduled || this.group) return;
    this.scheduled = true;
    // Wait while units keep arriving: JSON-RPC connections hand over one request per turn of the
    // event loop (setImmediate), so a burst already read from the sockets queues one unit per
    // turn. The group opens after a whole turn in which no unit arrived (at most MAX_WAIT_TURNS).
    // A lone unit so waits two turns (microseconds when idle): the connection's next message is
    // handled in an immediate queued after this one, so the first tick cannot see its unit yet —
    // opening the group there was measured to halve the groups at concurrency 8.
    let seen = -1;
    let turns = 0;
    const tick = () => {
      const n = this.queue.length;
      if (n !== seen && n < MAX_GROUP && turns < MAX_WAIT_TURNS) {
        seen = n;
        turns++;
        setImmediate(tick);
        return;
      }
      this.scheduled = false;
      let done!: () => void;
      this.group = new Promise<void>((r) => (done = r));
      void this.runGroup().then((ended) => {
        ended.durable();
        ended.settle();
        this.group = null;
        done();
        if (ended.busy) this.waitForLock();
        else if (this.queue.length > 0) this.schedule();
      });
    };
    setImmediate(tick);
  }

  /**
   * BEGIN met another process's write lock: try again on a timer (backing
   * off). Past BUSY_LIMIT_MS the units without a call's signal fail as the
   * database being unavailable (a retry with the same ids is safe); a call's
   * own units wait on, bounded by its signal (its time limit, a cancel).
   */
  private waitForLock(): void {
    const now = performance.now();
    this.busySince ??= now;
    for (const unit of this.queue) this.watchAbort(unit);
    if (now - this.busySince >= BUSY_LIMIT_MS) {
      const err = new StoreUnavailableError(`another process has held the database's write lock for ${BUSY_LIMIT_MS / 1000} s`);
      const bounded = this.queue.filter((u) => u.signal !== undefined);
      for (const unit of this.queue.filter((u) => u.signal === undefined)) unit.reject(err);
      this.queue.splice(0, this.queue.length, ...bounded);
      this.busySince = bounded.length > 0 ? now : undefined;
      if (bounded.length === 0) {
        this.busyWaitMs = BUSY_FIRST_WAIT_MS;
        return;
      }
    }
    this.scheduled = true;
    const wait = this.busyWaitMs;
    this.busyWaitMs = Math.min(wait * 2, BUSY_MAX_WAIT_MS);
    setTimeout(() => {
      this.scheduled = false;
      if (this.queue.length > 0) this.schedule();
      else {
        this.busySince = undefined;
        this.busyWaitMs = BUSY_FIRST_WAIT_MS;
      }
    }, wait);
  }

  /** Transaction control as prepared statements: parsed once per connection, like every query. */
  private run(sql: string): void {
    this.control.get(sql).run();
  }

  /** Runs one group's transaction; never rejects (every failure lands on its unit). */
  private async runGroup(): Promise<EndedGroup> {
    const db = this.connection;
    const failed: Array<() => void> = [];
    let committed: Array<{ unit: Unit; value: unknown }> = [];
    let open = false;
    let n = 0;
    if (this.checkpointer?.takeTail() && this.copiesTail) this.checkpointTail();
    // Timed only for a commit listener (the daemon's metrics): in a project-cli process the first
    // read of the `performance` global loads node:perf_hooks, ~1.5 ms of its start-up.
    const started = this.onCommit ? performance.now() : undefined;
    let busy = false;
    while (this.queue.length > 0 && n < MAX_GROUP) {
      const unit = this.queue.shift()!;
      n++;
      if (unit.signal?.aborted) {
        failed.push(() => unit.reject(unit.signal!.reason));
        continue;
      }
      if (!open) {
        try {
          this.run('BEGIN IMMEDIATE');
          open = true;
          this.busySince = undefined;
          this.busyWaitMs = BUSY_FIRST_WAIT_MS;
        } catch (err) {
          if (String((err as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY')) {
            // Another process holds the write lock: back to the head of the queue, tried again on a timer.
            this.queue.unshift(unit);
            busy = true;
            break;
          }
          unit.reject(err);
          continue;
        }
      }
      // A lone unit needs no savepoint of its own: when it fails, rolling back the whole transaction
      // undoes exactly its writes (a lone call pays for no savepoint). With units queued behind it the
      // first takes one too, so that its failure (a retried call's unique key, in process) keeps the
      // transaction and its write lock for them instead of beginning again.
      const lone = committed.length === 0 && this.queue.length === 0;
      if (!lone) this.run('SAVEPOINT unit');
      try {
        const value = await unit.work(this.tx);
        // Stopped while it ran: its writes are undone like a failed unit's (its commit has not begun).
        unit.signal?.throwIfAborted();
        if (!lone) this.run('RELEASE unit');
        committed.push({ unit, value });
      } catch (err) {
        failed.push(() => unit.reject(err));
        if (!db.inTransaction) {
          // SQLite gave up the whole transaction (I/O error, disk full): nothing of it survives.
          for (const c of committed) c.unit.reject(err);
          committed = [];
          open = false;
        } else if (lone) {
          this.run('ROLLBACK');
          open = false;
        } else {
          this.run('ROLLBACK TO unit');
          this.run('RELEASE unit');
        }
      } finally {
        this.savepointDepth = 0;
        this.assumed.key = undefined;
      }
    }
    if (open) {
      try {
        this.run('COMMIT');
      } catch (err) {
        if (db.inTransaction) this.run('ROLLBACK');
        for (const c of committed) c.unit.reject(err);
        committed = [];
      }
    }
    const wrote = open && committed.length > 0;
    return {
      busy,
      durable: () => {
        if (!wrote) return;
        // After the commit's outcome is settled: a checkpointer that fails to start (no thread to
        // be had) must not turn a durable group into failed calls.
        // A listener set while this group ran has no start to measure from.
        if (started !== undefined) this.onCommit?.((performance.now() - started) / 1000, committed.length);
        try {
          this.checkpointer?.committed();
        } catch {
          /* the auto-checkpoint safety net still runs (useCheckpointer) */
        }
      },
      settle: () => {
        for (const c of committed) c.unit.resolve(c.value);
        for (const f of failed) f();
      },
    };
  }

  /**
   * Copies the frames the checkpoint thread's last checkpoint left behind, so
   * that the next write starts the WAL over (checkpointer.ts, `takeTail`).
   * Between groups: never inside a transaction. PASSIVE never waits for a lock.
   */
  private checkpointTail(): void {
    try {
      this.run('PRAGMA wal_checkpoint(PASSIVE)');
    } catch (err) {
      // The next due checkpoint tries again; the auto-checkpoint safety net still runs.
      this.checkpointer?.failed(`WAL tail checkpoint failed: ${(err as Error).message}`);
    }
  }

  private async savepoint<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const name = `nested_${++this.savepointDepth}`;
    this.run(`SAVEPOINT ${name}`);
    try {
      const value = await work(this.tx);
      this.run(`RELEASE ${name}`);
      return value;
    } catch (err) {
      if (this.connection.inTransaction) {
        this.run(`ROLLBACK TO ${name}`);
        this.run(`RELEASE ${name}`);
      }
      throw err;
    } finally {
      this.savepointDepth--;
    }
  }
}

/** Opens (creating and migrating when needed) a SQLite file as a Store. */
export function openSqliteStore(file: string, opts: StoreOptions = {}): SqliteStore {
  const db = openDatabase(file, { synchronous: opts.synchronous ?? 'FULL', checkRows: opts.checkRows });
  return new SqliteStore(db);
}
