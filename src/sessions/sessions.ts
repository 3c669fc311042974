import { randomUUID } from 'node:crypto';
import { DaemonError } from '../runtime/errors.js';
import { MAX_TIMER_MS } from '../protocol/limits.js';
import type { QuotaSet } from '../config/config.js';
import type { ApprovalPolicy } from '../config/config.js';

export interface Session {
  id: string;
  userId: string;
  connectionId: string;
  source: 'session' | 'automation';
  jobId: string | null;
  /** Live: a configuration reload replaces it for sessions of a profile (`agent`). */
  enabledSkills: string[];
  /** Live, as `enabledSkills`. */
  allowedActions: string[];
  /** The agent profile the lists come from (`session/open`, MCP); absent: not a profile's (automation, AG-UI). */
  agent?: string | undefined;
  /** The skills the host narrowed the profile's to (`session/open`'s `enabled_skills`); a reload narrows the new ones alike. */
  requestedSkills?: readonly string[] | undefined;
  /** The quotas its calls count against (its profile's, or its job's); absent: none. Live for a profile's. */
  quotas?: QuotaSet | undefined;
  /** Which of those actions wait for a person's approval (contract section 17); absent: none. */
  approval?: ApprovalPolicy | undefined;
  /** When the bearer token it was opened with expires (ms since the epoch); absent or null: no token (automation). */
  expiresAt?: number | null | undefined;
}

/** Contract section 13: sessions per connection are capped (`limits.max_sessions_per_connection`). */
export const DEFAULT_MAX_SESSIONS_PER_CONNECTION = 64;

/** Contract section 13 (N2): connections one user's `session/open` sessions may hold at once (`limits.max_connections_per_user`). */
export const DEFAULT_MAX_CONNECTIONS_PER_USER = 64;

/** What a reservation counts besides the connection's own cap and its pool. */
export interface ReserveOptions {
  /**
   * The session makes its connection count for its user (`session/open`):
   * at most `maxConnectionsPerUser` connections hold such sessions of one
   * user. Checked when the slot opens (the user is known only then), which
   * is synchronous, so concurrent opens cannot pass it together.
   */
  perUserConnection?: boolean;
  /**
   * The session ends after this long unused (MCP over HTTP, whose sessions
   * no connection holds open): from its open, and from the end of each
   * `hold`; never while a hold is on.
   */
  idleMs?: number;
  /**
   * The session's id, chosen elsewhere: an MCP session kept in the database,
   * which every daemon serving it registers under the id its client holds.
   * An id already registered here is refused.
   */
  id?: string;
}

/** A cap shared by one user's sessions of one kind, whatever connection holds them (MCP sessions, AG-UI streams). */
export interface UserPool {
  /** The pool's name, as the refusal says it. */
  name: string;
  userId: string;
  max: number;
  /** Said after the limit when the cap is hit, e.g. "; DELETE one first". */
  hint?: string;
}

/**
 * A place held under the caps before anything is awaited: `open` fills it
 * with the session, `release` gives it back. Exactly one of the two counts;
 * a second call does nothing.
 */
export interface SessionSlot {
  open(fields: Omit<Session, 'id' | 'connectionId'>): Session;
  release(): void;
}

/** Why `require` refuses a session id: it never existed here, or it lived past its token. */
const UNKNOWN_SESSION = 'unknown session';
const EXPIRED_SESSION = 'session expired: its bearer token has passed its exp; open a new session with a fresh token';

// Later expiries than the longest Node timer (MAX_TIMER_MS) are re-armed in steps.
/** Expired session ids remembered, so their requests say "expired" rather than "unknown". */
const REMEMBERED_EXPIRED = 4096;

interface Entry {
  session: Session | null;
  connectionId: string;
  pool: string | null;
  /** Counted in `byUser` (its connection holds a place for its user). */
  userKey: string | null;
  timer: NodeJS.Timeout | null;
  ends: Array<() => void>;
  /** Ends unused sessions (`ReserveOptions.idleMs`); null for sessions their connection holds. */
  idle: { ms: number; holds: number; timer: NodeJS.Timeout | null } | null;
}

/**
 * Every session the daemon holds — `session/open`'s, MCP's and the AG-UI
 * streams' — with one mechanism for their caps and their end:
 *
 * - caps are counted by reservation (`reserve`, synchronous), so concurrent
 *   opens that await the store in between cannot pass a cap together: at
 *   most `maxPerConnection` per connection, and at most `pool.max` per
 *   (pool, user) — OVERLOADED past either;
 * - a session bound to a token ends at the token's `exp`: its end callbacks
 *   run (streams close, subscriptions drop), its place is freed, and its id
 *   answers EXPIRED_SESSION from then on;
 * - a session no connection holds (MCP over HTTP) also ends once unused for
 *   its `idleMs` (`hold` marks a request in progress);
 * - a session is bound to the connection that opened it: its id presented
 *   on another connection is unknown there. Closing a connection ends its
 *   sessions.
 */
export class SessionRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly byConnection = new Map<string, Set<string>>();
  private readonly byPool = new Map<string, Set<string>>();
  /** User → connection → its counted sessions for that user. */
  private readonly byUser = new Map<string, Map<string, number>>();
  /** Expired session id → its connection. */
  private readonly expired = new Map<string, string>();
  private readonly expiryListeners: Array<(s: Session) => void> = [];
  private readonly idleListeners: Array<(s: Session) => void> = [];
  private readonly reloadListeners = new Set<() => void>();

  constructor(
    private readonly maxPerConnection = DEFAULT_MAX_SESSIONS_PER_CONNECTION,
    private readonly maxConnectionsPerUser = DEFAULT_MAX_CONNECTIONS_PER_USER,
  ) {}

  /** Holds a place for a session on `connectionId` (and in `pool`), or throws OVERLOADED. Never awaits. */
  reserve(connectionId: string, pool?: UserPool, opts: ReserveOptions = {}): SessionSlot {
    const ids = this.byConnection.get(connectionId);
    if (ids && ids.size >= this.maxPerConnection) {
      throw new DaemonError('OVERLOADED', `too many sessions on this connection (limit ${this.maxPerConnection}, limits.max_sessions_per_connection)`);
    }
    const poolKey = pool ? `${pool.name}\u0000${pool.userId}` : null;
    const pooled = poolKey ? this.byPool.get(poolKey) : undefined;
    if (pool && pooled && pooled.size >= pool.max) {
      throw new DaemonError('OVERLOADED', `too many open ${pool.name} (at most ${pool.max} per user)${pool.hint ?? ''}`);
    }
    if (opts.id !== undefined && this.entries.has(opts.id)) throw new Error(`session ${opts.id} is already registered`);
    const id = opts.id ?? `ses_${randomUUID()}`;
    const idle = opts.idleMs === undefined ? null : { ms: opts.idleMs, holds: 0, timer: null };
    this.entries.set(id, { session: null, connectionId, pool: poolKey, userKey: null, timer: null, ends: [], idle });
    addTo(this.byConnection, connectionId, id);
    if (poolKey) addTo(this.byPool, poolKey, id);
    let settled = false;
    return {
      open: (fields) => {
        if (settled) throw new Error('a session slot is opened once, before it is released');
        const entry = this.entries.get(id);
        // Its connection closed while the open awaited: nobody is left to use the session.
        if (!entry) throw new DaemonError('UNAUTHORIZED', 'the connection closed before the session opened');
        if (opts.perUserConnection) this.countForUser(entry, fields.userId);
        settled = true;
        entry.session = { id, connectionId, ...fields };
        if (typeof fields.expiresAt === 'number') this.arm(id, entry, fields.expiresAt);
        this.armIdle(id, entry);
        return entry.session;
      },
      release: () => {
        if (settled) return;
        settled = true;
        this.forget(id);
      },
    };
  }

  /** Connections holding `session/open` sessions of one user. */
  connectionsOf(userId: string): number {
    return this.byUser.get(userId)?.size ?? 0;
  }

  /** Counts the entry's connection for `userId`, or throws OVERLOADED when that would pass the per-user cap. */
  private countForUser(entry: Entry, userId: string): void {
    let conns = this.byUser.get(userId);
    const held = conns?.get(entry.connectionId) ?? 0;
    if (held === 0 && conns && conns.size >= this.maxConnectionsPerUser) {
      throw new DaemonError('OVERLOADED', `too many connections for this user (limit ${this.maxConnectionsPerUser}, limits.max_connections_per_user); close one first`);
    }
    if (!conns) this.byUser.set(userId, (conns = new Map()));
    conns.set(entry.connectionId, held + 1);
    entry.userKey = userId;
  }

  /** Reserves and opens at once (nothing to await in between). */
  open(fields: Omit<Session, 'id'>): Session {
    const { connectionId, ...rest } = fields;
    return this.reserve(connectionId).open(rest);
  }

  get(id: string, connectionId: string): Session | undefined {
    const entry = this.entries.get(id);
    const s = entry?.session;
    if (!s || s.connectionId !== connectionId) return undefined;
    // The timer may run late (a busy event loop): a request never gets past `exp`.
    if (typeof s.expiresAt === 'number' && s.expiresAt <= Date.now()) {
      this.expire(id);
      return undefined;
    }
    return s;
  }

  /** The session, or DaemonError UNAUTHORIZED saying whether it is unknown here or expired. */
  require(id: string | undefined, connectionId: string): Session {
    const s = id === undefined ? undefined : this.get(id, connectionId);
    if (s) return s;
    const expired = id !== undefined && this.expired.get(id) === connectionId;
    throw new DaemonError('UNAUTHORIZED', expired ? EXPIRED_SESSION : UNKNOWN_SESSION);
  }

  /**
   * Moves a session's end to a later `exp` (MCP over HTTP: each request
   * brings its own token, and the session lives as long as the latest).
   */
  extend(id: string, expiresAt: number): void {
    const entry = this.entries.get(id);
    const s = entry?.session;
    if (!entry || !s || typeof s.expiresAt !== 'number' || expiresAt <= s.expiresAt) return;
    s.expiresAt = expiresAt;
    this.arm(id, entry, expiresAt);
  }

  /** Runs `fn` when the session ends (expiry, close, its connection closing); at once if it already has. */
  onEnd(id: string, fn: () => void): void {
    const entry = this.entries.get(id);
    if (entry) entry.ends.push(fn);
    else fn();
  }

  /** Called with every session that reaches its token's `exp` (after its own end callbacks). */
  onExpire(fn: (s: Session) => void): void {
    this.expiryListeners.push(fn);
  }

  /**
   * Called after each configuration reload has given the open sessions of a profile their new lists
   * (profile-reload.ts): what shows a session's lists elsewhere (an MCP server's) looks again. Returns the
   * unsubscribe.
   */
  onReload(fn: () => void): () => void {
    this.reloadListeners.add(fn);
    return () => this.reloadListeners.delete(fn);
  }

  /** Tells the `onReload` listeners that the open sessions have their new lists. */
  reloaded(): void {
    for (const fn of [...this.reloadListeners]) {
      try {
        fn();
      } catch {
        // Each listener reports its own failures; the others still hear of the reload, and the reload stands.
      }
    }
  }

  /** Called with every session that ends unused for its `idleMs` (before its end callbacks); returns the unsubscribe. */
  onIdle(fn: (s: Session) => void): () => void {
    this.idleListeners.push(fn);
    return () => {
      const at = this.idleListeners.indexOf(fn);
      if (at >= 0) this.idleListeners.splice(at, 1);
    };
  }

  /**
   * Marks the session in use until the returned function is called (a
   * request in progress): it does not end idle meanwhile, and its idle time
   * counts from the release. A session without `idleMs` is not affected.
   */
  hold(id: string): () => void {
    const entry = this.entries.get(id);
    const idle = entry?.idle;
    if (!entry || !idle) return () => {};
    idle.holds++;
    if (idle.timer) clearTimeout(idle.timer);
    idle.timer = null;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      idle.holds--;
      if (this.entries.get(id) === entry) this.armIdle(id, entry);
    };
  }

  /** Ends one session now (MCP DELETE, a stream that closed). */
  close(id: string): void {
    this.forget(id);
  }

  /** Every open session (a configuration reload updates their profile's lists in place). */
  *openSessions(): IterableIterator<Session> {
    for (const entry of this.entries.values()) if (entry.session) yield entry.session;
  }

  /** Sessions open now, all connections together (metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Sessions open on a connection. */
  countFor(connectionId: string): number {
    return this.byConnection.get(connectionId)?.size ?? 0;
  }

  /** Open sessions in a pool for one user. */
  countInPool(name: string, userId: string): number {
    return this.byPool.get(`${name}\u0000${userId}`)?.size ?? 0;
  }

  closeConnection(connectionId: string): void {
    for (const id of [...(this.byConnection.get(connectionId) ?? [])]) this.forget(id);
    this.byConnection.delete(connectionId);
    for (const [id, conn] of this.expired) if (conn === connectionId) this.expired.delete(id);
  }

  private arm(id: string, entry: Entry, expiresAt: number): void {
    if (entry.timer) clearTimeout(entry.timer);
    const delay = expiresAt - Date.now();
    const step = () => {
      entry.timer = null;
      if (this.entries.get(id) !== entry) return;
      if (expiresAt - Date.now() > 0) this.arm(id, entry, expiresAt);
      else this.expire(id);
    };
    entry.timer = setTimeout(step, Math.max(0, Math.min(delay, MAX_TIMER_MS)));
    entry.timer.unref();
  }

  /** Starts the idle countdown of a session not in use (`hold`). */
  private armIdle(id: string, entry: Entry): void {
    const idle = entry.idle;
    if (!idle || idle.holds > 0) return;
    if (idle.timer) clearTimeout(idle.timer);
    idle.timer = setTimeout(() => {
      idle.timer = null;
      const s = entry.session;
      if (this.entries.get(id) !== entry || !s || idle.holds > 0) return;
      for (const fn of this.idleListeners) fn(s);
      this.forget(id);
    }, Math.min(idle.ms, MAX_TIMER_MS));
    idle.timer.unref();
  }

  private expire(id: string): void {
    const entry = this.entries.get(id);
    const s = entry?.session;
    if (!entry || !s) return;
    this.expired.set(id, entry.connectionId);
    if (this.expired.size > REMEMBERED_EXPIRED) this.expired.delete(this.expired.keys().next().value!);
    this.forget(id);
    for (const fn of this.expiryListeners) fn(s);
  }

  private forget(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    if (entry.idle?.timer) clearTimeout(entry.idle.timer);
    removeFrom(this.byConnection, entry.connectionId, id);
    if (entry.pool) removeFrom(this.byPool, entry.pool, id);
    if (entry.userKey !== null) {
      const conns = this.byUser.get(entry.userKey);
      const held = (conns?.get(entry.connectionId) ?? 1) - 1;
      if (held > 0) conns!.set(entry.connectionId, held);
      else conns?.delete(entry.connectionId);
      if (conns?.size === 0) this.byUser.delete(entry.userKey);
    }
    for (const fn of entry.ends) fn();
  }
}

function addTo(index: Map<string, Set<string>>, key: string, id: string): void {
  let ids = index.get(key);
  if (!ids) index.set(key, (ids = new Set()));
  ids.add(id);
}

function removeFrom(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key);
  if (!ids) return;
  ids.delete(id);
  if (ids.size === 0) index.delete(key);
}
