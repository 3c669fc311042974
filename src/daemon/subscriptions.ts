import { DaemonError } from './errors.js';
import { toolResultsOf } from './message-views.js';
import type { Peer } from './peer.js';
import type { StoredMessageEvent, ThreadEventBus } from './thread-events.js';
import { threadKey } from './thread-key.js';
import { UiCache } from './ui-cache.js';

/** Contract section 13: subscriptions per connection are capped (`limits.max_subscriptions_per_connection`). */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION = 256;

/** Threads whose cursor a connection keeps after it stopped watching them (the latest ones; see `deliver`). */
const KEPT_CURSORS = 256;

interface Watch {
  userId: string;
  threadId: string;
  sessions: Set<string>;
  stop: () => void;
}

/**
 * Who watches which thread, and the one path by which a connection gets a
 * stored tool message's `tool/result` notifications — as a subscriber or as
 * the caller that made the call.
 *
 * `thread/subscribe` adds (connection, session). Each watching connection
 * listens on the thread-event bus once, however many of its sessions
 * subscribed, and is handed every message stored in the thread, in thread
 * order — whichever connection, or daemon, made the call, its own included.
 * A thread is `(user, thread_id)`: a subscriber hears only its own user's
 * calls. Subscribing writes nothing. Closing a connection drops its
 * subscriptions.
 *
 * Exactly once: each connection holds one cursor per thread it watched, the
 * last `thread_seq` it was sent. The caller of a call, once the bus has
 * delivered the call's message (or known it would not), is `deliver`ed the
 * same message: its cursor says whether its subscription sent it already —
 * through the call's own publish or a copy the bus read from the store
 * first, before or after the caller unsubscribed. A cursor is kept after
 * its watch ends (bounded) for exactly that case.
 */
export class SubscriptionRegistry {
  /** connection id → `(user, thread)` key → its watch. */
  private readonly byConnection = new Map<string, Map<string, Watch>>();
  /** connection id → (session, thread) pairs it holds, for the cap. */
  private readonly perConnection = new Map<string, number>();
  /** connection id → `(user, thread)` key → the last seq of that thread sent to it (oldest thread first). */
  private readonly cursors = new Map<string, Map<string, number>>();

  constructor(
    private readonly bus: ThreadEventBus,
    private readonly maxPerConnection = DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION,
    /** The daemon's UI cache: a notification's `ui_schema` is the one history serves. */
    private readonly uiCache = new UiCache(),
  ) {}

  /** Subscriptions held now, all connections together (metrics). */
  count(): number {
    let n = 0;
    for (const c of this.perConnection.values()) n += c;
    return n;
  }

  subscribe(userId: string, threadId: string, conn: Peer, sessionId: string): void {
    let watches = this.byConnection.get(conn.id);
    const key = threadKey(userId, threadId);
    const existing = watches?.get(key);
    if (existing?.sessions.has(sessionId)) return;
    const count = this.perConnection.get(conn.id) ?? 0;
    if (count >= this.maxPerConnection) {
      throw new DaemonError(
        'OVERLOADED',
        `too many subscriptions on this connection (limit ${this.maxPerConnection}, limits.max_subscriptions_per_connection)`,
      );
    }
    if (!watches) this.byConnection.set(conn.id, (watches = new Map()));
    let watch = existing;
    if (!watch) {
      this.cursorsOf(conn.id, key);
      const stop = this.bus.listen(userId, threadId, (event) => this.deliver(conn, event));
      watches.set(key, (watch = { userId, threadId, sessions: new Set(), stop }));
    }
    watch.sessions.add(sessionId);
    this.perConnection.set(conn.id, count + 1);
  }

  unsubscribe(userId: string, threadId: string, connId: string, sessionId: string): boolean {
    const watches = this.byConnection.get(connId);
    const key = threadKey(userId, threadId);
    const watch = watches?.get(key);
    if (!watch || !watch.sessions.delete(sessionId)) return false;
    this.perConnection.set(connId, (this.perConnection.get(connId) ?? 1) - 1);
    if (watch.sessions.size === 0) {
      watch.stop();
      watches!.delete(key);
    }
    if (watches!.size === 0) {
      this.byConnection.delete(connId);
      this.perConnection.delete(connId);
    }
    return true;
  }

  /**
   * Sends a stored tool message's `tool/result` notifications to a
   * connection unless its cursor of the thread already counts the message
   * (text messages have none). A connection that never watched the thread
   * has no cursor: the caller's own delivery, once.
   */
  deliver(conn: Peer, event: StoredMessageEvent): void {
    const key = threadKey(event.userId, event.threadId);
    const cursors = this.cursors.get(conn.id);
    const cursor = cursors?.get(key);
    const seq = event.row.thread_seq;
    if (cursor !== undefined && seq <= cursor) return;
    if (cursor !== undefined) cursors!.set(key, seq);
    for (const n of toolResultsOf(this.uiCache, event.threadId, event.row)) conn.notify('tool/result', n);
  }

  /**
   * Gives the connection a cursor for this thread (at 0 when new). Past
   * `KEPT_CURSORS`, the cursor of the thread it stopped watching longest ago
   * is forgotten — never one it still watches.
   */
  private cursorsOf(connId: string, key: string): void {
    let cursors = this.cursors.get(connId);
    if (!cursors) this.cursors.set(connId, (cursors = new Map()));
    const at = cursors.get(key) ?? 0;
    cursors.delete(key);
    cursors.set(key, at);
    if (cursors.size <= KEPT_CURSORS) return;
    const watched = this.byConnection.get(connId);
    for (const old of cursors.keys()) {
      if (old === key || watched?.has(old)) continue;
      cursors.delete(old);
      return;
    }
  }

  /** Drops every subscription one session holds on a connection (the session ended: its token expired). */
  dropSession(connId: string, sessionId: string): void {
    for (const watch of [...(this.byConnection.get(connId)?.values() ?? [])]) {
      if (watch.sessions.has(sessionId)) this.unsubscribe(watch.userId, watch.threadId, connId, sessionId);
    }
  }

  dropConnection(connId: string): void {
    for (const watch of this.byConnection.get(connId)?.values() ?? []) watch.stop();
    this.byConnection.delete(connId);
    this.perConnection.delete(connId);
    this.cursors.delete(connId);
  }
}
