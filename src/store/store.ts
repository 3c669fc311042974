/**
 * The store boundary: everything above it (daemon, CLI core, action
 * handlers) sees one async API whatever engine sits below. SQLite resolves
 * its promises synchronously underneath; PostgreSQL (async-only driver, many
 * daemons on one database) runs the same calls over a pool.
 *
 * The unit the rest of the daemon sees is ONE TRANSACTION PER CALL:
 * `store.transaction(work)`. How an engine makes that durable is its own
 * concern:
 *  - SQLite (one connection per process) commits the units that arrive
 *    together in one transaction — one fsync — each unit inside its own
 *    savepoint, so a unit that throws takes none of the others down (group
 *    commit). The promise of a unit settles only after the COMMIT that holds
 *    its writes.
 *  - PostgreSQL runs each unit as one transaction on a pooled connection
 *    (the server batches WAL flushes across sessions itself).
 *
 * Rules for `work` (both engines rely on them):
 *  1. Await only this transaction's own repository methods (and do plain
 *     synchronous computation). Never await a child process, a timer, the
 *     network or another unit: SQLite may be holding other callers' writes
 *     open in the same transaction, and a PostgreSQL unit holds a pooled
 *     connection and row locks.
 *  2. Treat a thrown `StoreConflictError` as final for this unit: let it
 *     propagate (PostgreSQL has aborted the transaction) and re-read the
 *     winner's row in a new unit.
 *  3. Everything `work` wrote commits together or not at all.
 *
 * All ids and keys are plain strings; timestamps are ISO-8601 UTC strings
 * chosen by the engine at write time. Rows are JSON-native objects in the
 * wire's snake_case where they reach the wire unchanged.
 */
import type { Contact, Event, InviteStatus, Memory } from '../protocol/actions.js';
import type { HistoryMessage, ThreadSummary } from '../protocol/methods.js';
import type { ApprovalConfig, QuotaLimits, SynchronousMode } from '../protocol/config.js';
import type { RateLimitedError } from '../protocol/tool.js';
import type { StoredRowCheck } from './row-check.js';

export type { StoredRowCheck };

// ---------------------------------------------------------------- the boundary

export interface Store {
  readonly engine: 'sqlite' | 'postgres';
  /**
   * Runs `work` as one unit of work (one transaction). Resolves with its
   * value once the commit holding its writes is durable (per the engine's
   * `synchronous` setting); rejects with the error `work` threw, after
   * undoing exactly its writes.
   *
   * `signal` (a call's, src/calls): once it aborts, the unit does not start,
   * or stops before its next statement or its commit, undoes its writes and
   * rejects with `signal.reason`. A unit whose commit began ends as committed.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>, opts?: UnitOptions): Promise<T>;
  /**
   * Reads committed data (no writes). May run outside any transaction; sees
   * every unit whose `transaction()` promise has resolved.
   */
  read<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** Engine facts for diagnostics and tests (e.g. the live `synchronous` pragma). */
  describe(): Promise<StoreDescription>;
  /** Waits for pending units to commit, then closes the connection(s). */
  close(): Promise<void>;
  /**
   * Engines shared by several daemons (PostgreSQL): marks a call this daemon
   * is finishing outside a unit (a child process runs it, then the tool
   * message commits), so another daemon's recovery at start leaves it alone.
   * The mark dies with this daemon's connection. Resolves with its release.
   */
  holdCall?(userId: string, threadId: string, toolCallId: string): Promise<() => Promise<void>>;
  /**
   * Told of every commit once it is durable: how long the transaction took
   * (seconds, from its start to the end of COMMIT) and how many units of work
   * it carried (SQLite's group commit; 1 on PostgreSQL). Set by the daemon
   * for its metrics; must not throw.
   */
  onCommit?: CommitListener;
  /** PostgreSQL: the pool's connections now (metrics). */
  poolUse?(): PoolUse;
  /**
   * PostgreSQL: ends the server sessions another process opened under this
   * `application_name` (a stopped project-cli child's) and resolves once they
   * are gone, so a statement the child left waiting for a lock can no longer
   * commit after the call was answered as stopped.
   */
  endSessionsNamed?(applicationName: string): Promise<void>;
  /**
   * Engines shared by several daemons (PostgreSQL): the calls not done yet,
   * as every daemon sees them, and cancel requests between daemons
   * (contract §16). Absent where one daemon serves the database (SQLite):
   * its running calls are all in its own memory.
   */
  sharedCalls?: SharedCalls;
}

export interface CallKeyOf {
  userId: string;
  threadId: string;
  toolCallId: string;
}

export interface SharedCallRow extends CallKeyOf {
  action: string;
  argsSha256: string;
  createdAt: string;
}

export interface SharedCalls {
  /** Records a call as running (the caller holds its mark: `holdCall`). */
  running(c: SharedCallRow): Promise<void>;
  /** Its outcome is stored: the row goes. */
  ended(k: CallKeyOf): Promise<void>;
  /** A call some live daemon is running; a row left by a dead daemon is removed (undefined). */
  find(k: CallKeyOf): Promise<SharedCallRow | undefined>;
  /** The user's calls some live daemon is running (rows of dead daemons left out), newest first. */
  ofUser(userId: string): Promise<SharedCallRow[]>;
  /** Asks every daemon to stop this call (the one running it does). */
  requestCancel(k: CallKeyOf): Promise<void>;
  /** Tells every daemon that a call awaiting approval was decided or ended (their waiters look again). */
  announce(k: CallKeyOf): Promise<void>;
  /** Tells every daemon that a call began to await approval here (`origin` names this daemon; see CALL_ASKED_CHANNEL). */
  announceAsked(k: CallKeyOf, origin: string): Promise<void>;
  /** At start: removes the rows of calls whose daemon died; resolves with how many. */
  reap(): Promise<number>;
}

export interface UnitOptions {
  signal?: AbortSignal | undefined;
}

export type CommitListener = (seconds: number, units: number) => void;

export interface PoolUse {
  /** Connections open. */
  total: number;
  /** Open but not lent to a unit of work. */
  idle: number;
  /** Units of work waiting for a connection. */
  waiting: number;
}

export interface StoreDescription {
  engine: 'sqlite' | 'postgres';
  /** SQLite: the live connection's `PRAGMA synchronous` as a name. */
  synchronous?: 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';
  /** SQLite: `PRAGMA journal_mode`. */
  journalMode?: string;
  /** Schema version (number of applied migrations). */
  schemaVersion: number;
}

export interface StoreOptions {
  /** Contract §8 `store.synchronous`; `FULL` unless configured. Ignored by PostgreSQL. */
  synchronous?: SynchronousMode;
  /** Contract §8 `store.pool_size` (PostgreSQL only). */
  poolSize?: number;
  /**
   * PostgreSQL only, `store.listen_url`: the main URL goes through a pooler in
   * transaction mode, and this one reaches the server directly. The
   * connections that keep session state (LISTEN, call marks) use it, and the
   * pooled ones keep none: no named prepared statements.
   */
  listenUrl?: string | undefined;
  /**
   * PostgreSQL only: prepare each statement once per connection under a name
   * (default true, false when `listenUrl` is set). A one-shot process
   * (project-cli) gains nothing from it and may sit behind a pooler.
   */
  namedStatements?: boolean;
  /**
   * Checks every stored message and call record when a migration runs, inside
   * its transaction: rows the protocol does not allow refuse the migration
   * (row-check.ts). The daemon passes `STORED_ROW_CHECK` (stored-rows.ts).
   */
  checkRows?: StoredRowCheck;
}

/** The repositories one unit of work may use. */
export interface Tx {
  readonly users: UsersRepo;
  readonly threads: ThreadsRepo;
  readonly messages: MessagesRepo;
  readonly toolCalls: ToolCallsRepo;
  readonly credentialAudit: CredentialAuditRepo;
  readonly credentialKeys: CredentialKeysRepo;
  readonly automationJobs: AutomationJobsRepo;
  readonly events: EventsRepo;
  readonly invites: InvitesRepo;
  readonly memories: MemoriesRepo;
  readonly contacts: ContactsRepo;
  readonly quotas: QuotasRepo;
  readonly pendingCalls: PendingCallsRepo;
  readonly approvalAudit: ApprovalAuditRepo;
  readonly mcpSessions: McpSessionsRepo;
  /**
   * Runs `work` inside a savepoint of this transaction: when it throws, its
   * writes are undone and the error propagates; the enclosing unit goes on
   * (a failing handler leaves no writes; a failing batch item fails alone).
   * Nested strictly — never two savepoints of one transaction at once.
   */
  savepoint<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * The unit assumes the call `(user, thread, tool_call_id)` was never
   * stored — no tool message and no call record — instead of reading it
   * first (on PostgreSQL a round trip; on SQLite two statements). If it was,
   * the unit's write of the call record or tool message fails with
   * StoreConflictError (the unique keys), so nothing of it commits and the
   * caller answers from the store. Absent where a unit cannot be undone so.
   */
  assumeNewCall?(userId: string, threadId: string, toolCallId: string): void;
}

/**
 * A unique key of the schema was already taken (an idempotency key raced:
 * `(user, thread, tool_call_id)` in messages or tool_calls). Engines throw
 * this, never their driver's error, so callers can answer with the stored
 * winner.
 */
export class StoreConflictError extends Error {
  override name = 'StoreConflictError';
  constructor(readonly constraint: string) {
    super(`unique constraint ${constraint} already holds this key`);
  }
}

/**
 * The database could not be reached or dropped the connection while a unit
 * ran (a restart, `pg_terminate_backend`, a failover). The unit's outcome is
 * unknown to the caller only in one case — the connection died during
 * `COMMIT` — and either way a retry of the same call is safe: a committed
 * call answers from the store, an uncommitted one runs. Engines throw this,
 * never their driver's error, so callers can tell a passing outage from a bug.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  constructor(readonly reason: string) {
    super(`database unavailable (${reason})`);
  }
}

/** What a host is told when a call met a database outage. */
export const DATABASE_UNAVAILABLE_MESSAGE = 'database unavailable: the call was not completed; retry it with the same tool_call_id (safe: a call that was stored answers from the store)';

// ---------------------------------------------------------------- users

export interface UserRow {
  id: string;
  name: string | null;
  phone: string | null;
  role: string | null;
}

export interface UserClaims {
  name?: string | undefined;
  phone?: string | undefined;
  role?: string | undefined;
}

export interface UsersRepo {
  /**
   * Provisions a first-seen user from token claims; a known user's claims
   * refresh their profile. A phone already held by another user stays with them.
   */
  provision(id: string, claims: UserClaims): Promise<UserRow>;
  /** Makes sure a user row exists (subjects of controlled credentials). */
  ensure(id: string): Promise<void>;
  get(id: string): Promise<UserRow | undefined>;
  findByPhone(phone: string): Promise<UserRow | undefined>;
  exists(id: string): Promise<boolean>;
}

// ---------------------------------------------------------------- threads

/**
 * Threads are a per-user namespace (contract §3): a thread is
 * `(user_id, thread_id)`. Every method takes both; another user's thread id
 * is indistinguishable from an unused one.
 */
/** The wire shape of `thread/list`, declared once in src/protocol. */
export type { ThreadSummary };

/** Where a page of threads ended: the last thread's `updated_at` and id. */
export interface ThreadPosition {
  updatedAt: string;
  threadId: string;
}

export interface ThreadsRepo {
  /** Creates the user's thread if it does not exist yet (idempotent). */
  claim(userId: string, threadId: string): Promise<void>;
  exists(userId: string, threadId: string): Promise<boolean>;
  /**
   * The user's threads, most recently updated first (then by id, descending):
   * at most `limit`, those after `after` (the last thread of the page before) when given.
   */
  list(userId: string, after: ThreadPosition | null, limit: number): Promise<ThreadSummary[]>;
}

// ---------------------------------------------------------------- messages

/** A stored message's role, as `history/get` shows it. */
export type MessageRole = HistoryMessage['role'];

export interface MessageRow {
  id: string;
  user_id: string;
  thread_id: string;
  /**
   * Position in the thread: 1, 2, 3… per `(user_id, thread_id)`, assigned at
   * insert, unique, never reused. The order of a thread's events across
   * daemons (AG-UI `Last-Event-ID`, subscription order).
   */
  thread_seq: number;
  role: MessageRole;
  /** The text the model saw (never JSON-typed). */
  content: string;
  /** JSON text (`jsonb` on PostgreSQL, returned as text). `'{}'` when the page was read without it. */
  metadata: string;
  tool_call_id: string | null;
  status: string | null;
  created_at: string;
  /**
   * Set on a row read under a byte budget that it alone exceeds: `content`
   * is its start and a note (byte-budget.ts), `metadata` is `'{}'`.
   */
  cut?: true;
}

export interface NewMessage {
  userId: string;
  threadId: string;
  role: MessageRole;
  content: string;
  /** Already-serialized JSON text: callers serialize once. */
  metadataJson: string;
  toolCallId?: string | undefined;
  status?: string | undefined;
}

export interface MessagePage {
  /** Oldest first within the page. */
  rows: MessageRow[];
  /** Id of the oldest row on this page when older rows exist, else null. */
  nextBefore: string | null;
}

export interface MessagesRepo {
  /**
   * Inserts one message into the user's thread — creating the thread when
   * needed — assigns its `thread_seq` and bumps the thread's `updated_at`.
   * A second tool message for the same `(user, thread, tool_call_id)` throws
   * StoreConflictError.
   *
   * `last`: nothing follows this insert in the unit — `work` returns right
   * after it. An engine may then commit the unit with this statement
   * (PostgreSQL: the unit's held writes and this insert are one statement,
   * no BEGIN, no COMMIT).
   */
  insert(m: NewMessage, opts?: { last?: boolean }): Promise<MessageRow>;
  getToolMessage(userId: string, threadId: string, toolCallId: string): Promise<MessageRow | undefined>;
  /**
   * The user's tool messages (their done calls) in every thread, newest
   * first: at most `limit`, those before `after` (the `[created_at, id]` of
   * the last one of the previous page) when given.
   */
  toolMessages(userId: string, after: readonly [string, string] | undefined, limit: number): Promise<MessageRow[]>;
  /**
   * Newest-first paging, returned oldest-first within the page. `before` is a
   * message id of the same thread; an id from elsewhere yields an empty page.
   * `withMetadata: false` skips reading `metadata` (returned as `'{}'`).
   * `maxBytes`: the page also ends before the rows' content and metadata
   * would exceed that many bytes (at least one row; one too large is cut).
   */
  page(userId: string, threadId: string, before: string | undefined, limit: number, opts?: { withMetadata?: boolean; maxBytes?: number }): Promise<MessagePage>;
  /** Metadata JSON text of these messages of the thread, by id (for rows paged without it). */
  metadataOf(userId: string, threadId: string, ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * The thread's messages (every role) with `thread_seq > afterSeq`, oldest
   * first: AG-UI replays page by page. With `maxBytes`, bounded like `page`.
   */
  messagesAfter(userId: string, threadId: string, afterSeq: number, limit: number, maxBytes?: number): Promise<MessageRow[]>;
  /** The `thread_seq` of a message of this thread, or undefined. */
  seqOf(userId: string, threadId: string, messageId: string): Promise<number | undefined>;
}

// ---------------------------------------------------------------- tool calls

/** The record that a call ran, written in the same transaction as the action's writes. */
export interface ToolCallRecord {
  user_id: string;
  thread_id: string;
  tool_call_id: string;
  action: string;
  /** `{module, method, input}` as the model wrote them (JSON text). */
  args: string;
  args_sha256: string;
  /** The CLI document (JSON text), exactly as project-cli prints it. */
  outcome: string;
  exit_code: number;
  created_at: string;
}

export interface ToolCallsRepo {
  get(userId: string, threadId: string, toolCallId: string): Promise<ToolCallRecord | undefined>;
  /** Throws StoreConflictError when `(user, thread, tool_call_id)` is already recorded. */
  record(r: Omit<ToolCallRecord, 'created_at'>): Promise<void>;
  /** Calls that committed their effect but whose tool message was never stored (recovery at start). */
  withoutMessage(): Promise<ToolCallRecord[]>;
}

// ---------------------------------------------------------------- calls awaiting approval

/**
 * A call to an `ask` action (contract section 17), stored `awaiting_approval`
 * in `calls` until a person decides; an approved one is `running` there until
 * its tool message is stored. Every state change is one conditional
 * statement, so of any number of racing decisions exactly one changes it.
 */
export interface PendingCallRow extends CallKeyOf {
  action: string;
  argsSha256: string;
  state: 'awaiting_approval' | 'running';
  /** `{module, method, input}` as the model wrote them (JSON text): what an approval runs. */
  args: string;
  expiresAt: string;
  /** Who the credential is issued for once approved. */
  source: 'session' | 'automation';
  jobId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface PendingCallsRepo {
  /** Stores a call awaiting approval; StoreConflictError when the key holds a row already. */
  insert(r: Omit<PendingCallRow, 'state' | 'updatedAt'>): Promise<void>;
  /** The call's row when it awaits approval or runs approved (never a plain running call's). */
  get(k: CallKeyOf): Promise<PendingCallRow | undefined>;
  /** `awaiting_approval` → `running` when it still awaits approval with this digest: the row, else undefined. */
  approve(k: CallKeyOf, argsSha256: string): Promise<PendingCallRow | undefined>;
  /** Removes it when it still awaits approval (deny, expiry, cancel): the row, else undefined. */
  take(k: CallKeyOf): Promise<PendingCallRow | undefined>;
  /** The approved call's outcome is stored: its row goes. */
  remove(k: CallKeyOf): Promise<void>;
  /** Up to `limit` calls still awaiting approval whose `expires_at` is at or before `now` (ISO), soonest first. */
  expired(now: string, limit: number): Promise<CallKeyOf[]>;
  /**
   * Up to `limit` of the user's calls awaiting approval that expire after `now` (ISO), most recently asked
   * first (`created_at`, then thread and call id, descending), after `after` in that order when given.
   */
  awaiting(userId: string, now: string, after: PendingPosition | null, limit: number): Promise<PendingCallRow[]>;
  /**
   * Up to `limit` approved calls (`running`, with their args) whose runner is gone: on SQLite every one —
   * read at start, before this daemon runs any — and on PostgreSQL those whose call mark no daemon holds.
   */
  orphaned(limit: number): Promise<CallKeyOf[]>;
}

/** A position in the order of `PendingCallsRepo.awaiting`: a call's `created_at`, thread and call id. */
export type PendingPosition = readonly [createdAt: string, threadId: string, toolCallId: string];

export type ApprovalDecision = 'approve' | 'deny' | 'expire' | 'cancel';

export interface ApprovalAuditRepo {
  /** Audits one decision: who, when, what, from which surface, on which args digest. */
  record(d: CallKeyOf & { argsSha256: string; decision: ApprovalDecision; surface: string }): Promise<void>;
}

// ---------------------------------------------------------------- credential audit

export interface CredentialIssuance {
  jti: string;
  subject: string;
  source: 'session' | 'automation';
  jobId: string | null;
  actions: readonly string[];
  threadId: string | null;
  toolCallId: string | null;
  issuedAt: string;
  expiresAt: string;
}

export interface CredentialAuditRepo {
  /** Audits one issuance. The token itself is never passed here. */
  record(c: CredentialIssuance): Promise<void>;
}

// ---------------------------------------------------------------- credential keys

/**
 * The trust anchor of project-cli (contract §6, §7): the public halves of the
 * keys the daemon signs controlled credentials with, recorded by `serve` in
 * the database it serves. A rotated key stays until its row is deleted.
 * `kid` is the key's RFC 7638 thumbprint; only public JWKs are kept.
 */
export interface RecordedKey {
  kid: string;
  publicJwk: Record<string, unknown>;
}

export interface CredentialKeysRepo {
  /**
   * Records a public key (idempotent: a known `kid` only refreshes its
   * last-used time). Throws on a JWK carrying a private part (`d`).
   */
  record(kid: string, publicJwk: Record<string, unknown>): Promise<void>;
  /** Every recorded key, most recently used first. */
  list(): Promise<RecordedKey[]>;
}

// ---------------------------------------------------------------- automation jobs

export interface AutomationJob {
  id: string;
  ownerId: string;
  enabledSkills: string[];
  allowedActions: string[];
  /** `{"<pattern>": {per_minute?, per_hour?, per_day?}}` as given (`automation add --quota`); absent: none. */
  quotas?: Record<string, QuotaLimitsRow> | undefined;
  /** The job's own approval policy: exact `module.method` names that ask, and the wait in seconds. */
  approval?: ApprovalConfig | null;
}

/** One quota as stored with a job: calls per window. */
export type QuotaLimitsRow = QuotaLimits;

export interface AutomationJobsRepo {
  create(job: Omit<AutomationJob, 'id'>): Promise<AutomationJob>;
  get(id: string): Promise<AutomationJob | undefined>;
}

// ---------------------------------------------------------------- quotas

/** A quota's window: as RATE_LIMITED names it. */
export type QuotaPeriod = RateLimitedError['quota']['period'];

/** One window a call counts against: the quota's scope, its period, the window's start (ms, UTC-aligned) and its limit. */
export interface QuotaCounter {
  scope: string;
  period: QuotaPeriod;
  windowStart: number;
  allowed: number;
}

/** A counter's row as stored. */
export interface QuotaUse {
  scope: string;
  period: QuotaPeriod;
  windowStart: number;
  used: number;
}

export type QuotaTake =
  /** Counted once against every counter. */
  | 'counted'
  /** The call's tool message is stored (a replay, or its id used before): nothing counted. */
  | 'stored'
  /** A window already holds `allowed` calls: nothing counted. */
  | 'full';

/**
 * Per-user call quotas (contract §20), counted in the store so that every
 * daemon sharing it counts once: the counters are rows, and one call is
 * counted against all of its counters by ONE statement that either counts
 * it everywhere or nowhere.
 */
export interface QuotasRepo {
  /**
   * Counts the call `key` once against every counter, or against none: when
   * its tool message is stored already, or the same call (same args digest)
   * is not done yet (awaiting approval, or running: the `calls` row) —
   * `stored`, so a replay or a re-invocation of a pending call never counts;
   * another call reusing the id is counted — or when any counter's window is full (`full`). Calls raced from any
   * number of processes past a limit of n: exactly n are `counted`. In a
   * unit, it must be the unit's only statement (it is sent as the unit).
   */
  take(key: CallKeyOf & { argsSha256: string }, counters: readonly QuotaCounter[]): Promise<QuotaTake>;
  /** Takes one count back off each counter whose window is still the one counted (a counted call that turned out stored). */
  giveBack(userId: string, counters: readonly QuotaCounter[]): Promise<void>;
  /** The stored rows of these counters for the user (to tell which window is full, and until when). */
  usage(userId: string, counters: readonly QuotaCounter[]): Promise<QuotaUse[]>;
}

// ---------------------------------------------------------------- calendar

/** The wire shapes of contract §10, declared once in src/protocol. */
export type { Contact, Event, InviteStatus, Memory };

export interface EventFields {
  title: string;
  start_at: string;
  end_at: string;
  location?: string | null | undefined;
  description?: string | null | undefined;
}

/** Where a page of events ended: the last event's start (ms) and id. */
export interface EventPosition {
  startMs: number;
  id: string;
}

/** Every read is scoped: a user sees the events they own and those whose invite they accepted. */
export interface EventsRepo {
  create(ownerId: string, f: EventFields): Promise<Event>;
  getVisible(userId: string, eventId: string): Promise<Event | undefined>;
  getOwned(ownerId: string, eventId: string): Promise<Event | undefined>;
  /**
   * Events visible to the user that overlap [fromMs, toMs), by start then id:
   * at most `limit`, those after `after` (the last event of the page before) when given.
   */
  listVisible(userId: string, fromMs: number, toMs: number, after: EventPosition | null, limit: number): Promise<Event[]>;
  /**
   * Updates an event the user owns; undefined when it is not theirs.
   * `seen`: the row as this unit just read it (an owned event). An engine may
   * then answer from it rather than from the write — PostgreSQL holds the
   * write back to the unit's last statement (pg/unit.ts).
   */
  updateOwned(ownerId: string, eventId: string, f: EventFields, seen?: Event): Promise<Event | undefined>;
  /** Deletes an event the user owns; false when it is not theirs. `seen`: as for `updateOwned` (the answer is then true). */
  deleteOwned(ownerId: string, eventId: string, seen?: Event): Promise<boolean>;
}

export interface InviteRow {
  invite_id: string;
  event_id: string;
  inviter_id: string;
  invitee_id: string;
  status: InviteStatus;
}

export interface InvitesRepo {
  /** Re-inviting returns the existing invite; a rejected one goes back to pending. */
  upsert(eventId: string, inviterId: string, inviteeId: string): Promise<InviteRow>;
  /** An invite addressed to this user; undefined for anyone else's. */
  getFor(inviteeId: string, inviteId: string): Promise<InviteRow | undefined>;
  /** `seen`: the invite as this unit just read it (`getFor`); an engine may answer from it, as `EventsRepo.updateOwned`. */
  setStatus(inviteeId: string, inviteId: string, status: InviteStatus, seen?: InviteRow): Promise<InviteRow | undefined>;
}

// ---------------------------------------------------------------- memories and contacts

export interface MemoriesRepo {
  upsert(userId: string, key: string, content: string): Promise<Memory>;
  forget(userId: string, key: string): Promise<boolean>;
  /** The memory under one key (none or one). */
  read(userId: string, key: string): Promise<Memory[]>;
  /** The user's memories by key (byte order): at most `limit`, those after the key `after` when given. */
  page(userId: string, after: string | null, limit: number): Promise<Memory[]>;
}

export interface ContactsRepo {
  /**
   * People the user knows (invited by or inviting them). `query` matches
   * name or phone as a substring (bound, escaped — never spliced into SQL).
   */
  list(userId: string, query: string | undefined, limit: number): Promise<Contact[]>;
}

// ---------------------------------------------------------------- MCP HTTP sessions

/**
 * An MCP 2025-11-25 HTTP session as every daemon on the database sees it
 * (contract §11, §20). Times are milliseconds since the epoch.
 */
export interface McpSessionRow {
  id: string;
  user_id: string;
  /** The agent profile it serves. */
  agent: string;
  /** JSON text: the client's `initialize` params, replayed to restore the session on another daemon. */
  client: string;
  /** The `exp` of the latest bearer token used on it. */
  expires_ms: number;
  /** It ends once unused for this long. */
  idle_ms: number;
  /** Its last use (a request, or an open stream of it). */
  used_ms: number;
}

export interface McpSessionsRepo {
  /**
   * Opens a session unless its user already holds `maxPerUser` live ones
   * (false then). The count and the insert run under a lock of the user's
   * sessions (PostgreSQL: a transaction-scoped advisory lock), so concurrent
   * opens on any number of daemons cannot pass the cap together. The
   * user's ended sessions (past `exp`, or idle) are removed first.
   */
  open(row: McpSessionRow, maxPerUser: number, nowMs: number): Promise<boolean>;
  /**
   * One request of `userId` on the session: the live session (not past its
   * `exp`, not idle, the same user) with its use refreshed and its `exp`
   * moved to `expiresMs` when that is later; undefined for any other —
   * another user's session answers exactly as one that does not exist.
   */
  use(id: string, userId: string, nowMs: number, expiresMs: number): Promise<McpSessionRow | undefined>;
  /** The live session of this user, read only (as `use` finds it, nothing refreshed): a request needs no write. */
  get(id: string, userId: string, nowMs: number): Promise<McpSessionRow | undefined>;
  /** Ends a session (DELETE); false when there was none. */
  close(id: string): Promise<boolean>;
  /** Of these ids, the sessions still live; `inUse` of them count as used now (their streams are open). */
  live(ids: readonly string[], inUse: readonly string[], nowMs: number): Promise<string[]>;
}

// ---------------------------------------------------------------- opening

/**
 * How a store is opened (`src/store/open-store.ts`): a `postgres://` or
 * `postgresql://` URL selects the PostgreSQL engine, anything else is a
 * SQLite file path. Creates and migrates the schema when needed; throws
 * `DatabaseOpenError` (src/store/database.ts) when it cannot.
 */
export type OpenStore = (target: string, opts?: StoreOptions) => Promise<Store>;
