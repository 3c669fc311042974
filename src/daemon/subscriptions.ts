import { DaemonError } from './errors.js';
import { toolResultsOf } from './message-views.js';
import type { Peer } from './peer.js';
import type { StoredMessageEvent, ThreadEventBus } from './thread-events.js';
import { threadKey } from './thread-key.js';
import { UiCache } from './ui-cache.js';

/** Contract section 13: subscriptions per connection are capped (`limits.max_subscriptions_per_connection`). */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION = 256;

/** Threads whose cursor a connection keeps after it stopped watching them (the latest ones). */
const KEPT_CURSORS = 256;

/**
 * Ids of the messages a connection's subscriptions sent last, kept for its
 * calls (`deliverOwn`): a caller checks them a moment after its subscription
 * sent its message, far fewer messages later than this.
 */
const KEPT_SENT = 1024;

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
 * Exactly once. A subscription hears a thread in thread order; per thread it
 * watched, a connection keeps a cursor, the last `thread_seq` its
 * subscriptions sent, so a copy the bus hands it again (after an unsubscribe
 * and a new subscribe) is dropped. The caller of a call takes another path,
 * `deliverOwn`: once the bus has delivered the call's message (or known it
 * would not), the caller is sent it unless its connection's subscriptions
 * sent this very message — each connection remembers the ids of the last
 * messages its subscriptions sent (bounded) — whether from the call's own
 * publish or from the store's copy that went out before the caller's commit
 * answered. The caller never compares against the cursor (its calls may
 * settle out of seq order) and never moves it.
 */
export class SubscriptionRegistry {
  /** connection id → `(user, thread)` key → its watch. */
  private readonly byConnection = new Map<string, Map<string, Watch>>();
  /** connection id → (session, thread) pairs it holds, for the cap. */
  private readonly perConnection = new Map<string, number>();
  /** connection id → `(user, thread)` key → the last seq of that thread its subscriptions sent (oldest thread first). */
  private readonly cursors = new Map<string, Map<string, number>>();
  /** connection id → ids of the last messages its subscriptions sent (oldest first). */
  private readonly sent = new Map<string, Set<string>>();

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
      const stop = this.bus.listen(userId, threadId, (event) => this.fromSubscription(conn, event));
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
   * The caller's path: publishes its call's stored message on the bus and,
   * once the bus has handed it to the thread's listeners (or known it would
   * not), sends the caller its `tool/result` notifications unless one of its
   * connection's subscriptions already did. Resolves once sent, before the
   * caller answers.
   */
  async deliverOwn(conn: Peer, event: StoredMessageEvent): Promise<void> {
    this.bus.publish(event);
    await this.bus.settled(event);
    if (this.sent.get(conn.id)?.delete(event.row.id)) return;
    this.send(conn, event);
  }

  /**
   * A subscription's path: the bus hands each of a thread's messages in
   * thread order; one its cursor already passed (a repeat after a new
   * subscribe) is dropped.
   */
  private fromSubscription(conn: Peer, event: StoredMessageEvent): void {
    const cursors = this.cursors.get(conn.id);
    const key = threadKey(event.userId, event.threadId);
    const seq = event.row.thread_seq;
    if (seq <= (cursors?.get(key) ?? 0)) return;
    cursors?.set(key, seq);
    if (event.row.role !== 'tool') return;
    let sent = this.sent.get(conn.id);
    if (!sent) this.sent.set(conn.id, (sent = new Set()));
    sent.add(event.row.id);
    if (sent.size > KEPT_SENT) sent.delete(sent.values().next().value!);
    this.send(conn, event);
  }

  /** A stored tool message's `tool/result` notifications (a text message has none). */
  private send(conn: Peer, event: StoredMessageEvent): void {
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
    this.sent.delete(connId);
  }
}
