import { DaemonError } from '../runtime/errors.js';
import { toolResultsOf } from './message-views.js';
import type { Peer } from '../runtime/peer.js';
import type { StoredMessageEvent, ThreadEventBus } from './thread-events.js';
import { threadKey } from './thread-key.js';
import { UiCache } from './ui-cache.js';

/** Contract section 13: subscriptions per connection are capped (`limits.max_subscriptions_per_connection`). */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION = 256;

/** Threads whose cursor a connection keeps when it no longer watches them (the latest ones). */
const KEPT_CURSORS = 256;

/**
 * A call of a connection, from its admission until it is answered or fails
 * (`SubscriptionRegistry.expect`, `done`). Its one fact, `sent`, is whether
 * a subscription of the connection sent the call's stored message in the
 * thread's order; if not, the caller sends it.
 */
export interface OwnCall {
  readonly connId: string;
  /** Its key among the connection's calls: thread and `tool_call_id`. */
  readonly key: string;
  sent: boolean;
}

interface Watch {
  conn: Peer;
  userId: string;
  threadId: string;
  sessions: Set<string>;
  stop: () => void;
}

/**
 * Who watches which thread, and the one path by which a connection gets a
 * stored tool message's `tool/result` notifications — as a subscriber or as
 * the caller that made the call. (A stored call answered again stores
 * nothing, so its replay is sent to its caller directly: tool-invoke.ts.)
 *
 * `thread/subscribe` adds (connection, session). Each watching connection
 * listens on the thread-event bus once, however many of its sessions
 * subscribed, and is handed every message stored in the thread, in thread
 * order — whichever connection, or daemon, made the call, its own included.
 * A thread is `(user, thread_id)`: a subscriber hears only its own user's
 * calls. Subscribing writes nothing. Closing a connection drops its
 * subscriptions.
 *
 * Exactly once, in one delivery path. Every message reaches a connection
 * through the bus's ordered dispatch. A subscription hears a thread in
 * thread order; per thread it watched, a connection keeps one cursor, the
 * last `thread_seq` its subscriptions sent, so a copy the bus hands it again
 * (after an unsubscribe and a new subscribe) is dropped. A caller's call is
 * an `OwnCall` from its admission on: when the bus hands the call's stored
 * message — its own publish, or the store's copy that came first — to a
 * subscription of the caller's connection, that subscription sends it in
 * its place in the thread and marks the call `sent`. The caller's own part
 * of the dispatch runs right after the thread's listeners (or at once when
 * the bus will not hand them this copy: nobody listens, a copy went first,
 * the position already counted it) and sends the message only if no
 * subscription did (`deliverOwn`). Nothing is remembered of a message
 * once its caller is answered: the mark lives as long as the call, and a
 * connection's calls may settle out of seq order without one hiding another.
 */
export class SubscriptionRegistry {
  /** connection id → `(user, thread)` key → its watch. */
  private readonly byConnection = new Map<string, Map<string, Watch>>();
  /** connection id → (session, thread) pairs it holds, for the cap. */
  private readonly perConnection = new Map<string, number>();
  /** connection id → `(user, thread)` key → the last seq of that thread its subscriptions sent (oldest thread first). */
  private readonly cursors = new Map<string, Map<string, number>>();
  /** connection id → its calls in flight, by thread and `tool_call_id` (twins share a key). */
  private readonly calls = new Map<string, Map<string, OwnCall[]>>();

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
      watches.set(key, (watch = { conn, userId, threadId, sessions: new Set(), stop }));
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
   * A call of this connection is admitted: from now until `done`, a
   * subscription of the connection that sends the call's stored message
   * marks it sent (whichever publisher brought it, before or after the
   * call's commit answered).
   */
  expect(connId: string, userId: string, threadId: string, toolCallId: string): OwnCall {
    const call: OwnCall = { connId, key: ownCallKey(threadKey(userId, threadId), toolCallId), sent: false };
    let calls = this.calls.get(connId);
    if (!calls) this.calls.set(connId, (calls = new Map()));
    const twins = calls.get(call.key);
    if (twins) twins.push(call);
    else calls.set(call.key, [call]);
    return call;
  }

  /** The call is answered (or failed): nothing of it is kept. */
  done(call: OwnCall): void {
    const calls = this.calls.get(call.connId);
    const twins = calls?.get(call.key);
    if (!twins) return;
    const at = twins.indexOf(call);
    if (at >= 0) twins.splice(at, 1);
    if (twins.length > 0) return;
    calls!.delete(call.key);
    if (calls!.size === 0) this.calls.delete(call.connId);
  }

  /** Calls admitted and not yet answered, all connections together (tests and diagnostics). */
  callsInFlight(): number {
    let n = 0;
    for (const calls of this.calls.values()) for (const twins of calls.values()) n += twins.length;
    return n;
  }

  /**
   * The caller's path: publishes its call's stored message on the bus, and
   * the caller's part of its dispatch — right after the thread's listeners,
   * in the message's place in the thread, or at once when the bus will not
   * hand them this copy (`dispatched`) — sends the caller its `tool/result`
   * notifications unless a subscription of its connection sent them
   * (`call.sent`: in this dispatch, or in the store's copy's before it).
   * Resolves once that part ran, before the caller answers.
   */
  deliverOwn(conn: Peer, call: OwnCall, event: StoredMessageEvent): Promise<void> {
    return new Promise((resolve) => {
      const dispatched = () => {
        try {
          if (!call.sent) this.send(conn, event);
        } finally {
          resolve();
        }
      };
      this.bus.publish({ ...event, dispatched });
    });
  }

  /**
   * A subscription's path: the bus hands each of a thread's messages in
   * thread order; one its cursor already passed (a repeat after a new
   * subscribe) is dropped. A message that answers one of the connection's
   * calls in flight marks that call sent.
   */
  private fromSubscription(conn: Peer, event: StoredMessageEvent): void {
    const cursors = this.cursors.get(conn.id);
    const key = threadKey(event.userId, event.threadId);
    const { row } = event;
    if (row.thread_seq <= (cursors?.get(key) ?? 0)) return;
    cursors?.set(key, row.thread_seq);
    if (row.role !== 'tool') return;
    const calls = this.calls.get(conn.id);
    if (calls && row.tool_call_id !== null) for (const call of calls.get(ownCallKey(key, row.tool_call_id)) ?? []) call.sent = true;
    this.send(conn, event);
  }

  /** A stored tool message's `tool/result` notifications (a text message has none). */
  private send(conn: Peer, event: StoredMessageEvent): void {
    for (const n of toolResultsOf(this.uiCache, event.threadId, event.row)) conn.notify('tool/result', n);
  }

  /**
   * Gives the connection a cursor for this thread (at 0 when new). Past
   * `KEPT_CURSORS`, the cursor of the thread it subscribed to longest ago
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

  /**
   * Sends a notification that is no stored message (`tool/approval`) to every
   * connection of this daemon subscribed to the thread, except `exceptConnId`
   * (the caller, told directly).
   */
  notifyThread(userId: string, threadId: string, method: string, params: unknown, exceptConnId?: string): void {
    const key = threadKey(userId, threadId);
    for (const [connId, watches] of this.byConnection) {
      if (connId === exceptConnId) continue;
      watches.get(key)?.conn.notify(method, params);
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

/** A call's key among its connection's calls: the thread's key and the `tool_call_id`, unambiguous (length first). */
function ownCallKey(threadKey: string, toolCallId: string): string {
  return `${toolCallId.length}:${toolCallId}${threadKey}`;
}
