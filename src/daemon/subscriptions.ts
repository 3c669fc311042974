import { ResponseError } from 'vscode-jsonrpc';
import { RpcErrorCode } from '../rpc/errors.js';
import type { Connection } from './daemon.js';
import { threadKey } from './thread-key.js';

/** Contract section 13: subscriptions per connection are capped (`limits.max_subscriptions_per_connection`). */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION = 256;

/**
 * Who watches which thread: `thread/subscribe` adds (connection, session);
 * every `tool/result` of the thread then reaches those connections, whichever
 * connection made the call. A thread is `(user, thread_id)`: a subscription
 * never reaches another user's thread of the same id, so a subscriber hears
 * only its own user's calls. Subscribing writes nothing (a thread may be
 * watched before its first message). Closing a connection drops its
 * subscriptions.
 */
export class SubscriptionRegistry {
  private readonly byThread = new Map<string, Map<string, { conn: Connection; sessions: Set<string> }>>();
  private readonly perConnection = new Map<string, number>();

  constructor(private readonly maxPerConnection = DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION) {}

  subscribe(userId: string, threadId: string, conn: Connection, sessionId: string): void {
    const key = threadKey(userId, threadId);
    let conns = this.byThread.get(key);
    const existing = conns?.get(conn.id);
    if (existing?.sessions.has(sessionId)) return;
    const count = this.perConnection.get(conn.id) ?? 0;
    if (count >= this.maxPerConnection) {
      throw new ResponseError(
        RpcErrorCode.Overloaded,
        `too many subscriptions on this connection (limit ${this.maxPerConnection}, limits.max_subscriptions_per_connection)`,
      );
    }
    if (!conns) this.byThread.set(key, (conns = new Map()));
    let entry = existing;
    if (!entry) conns.set(conn.id, (entry = { conn, sessions: new Set() }));
    entry.sessions.add(sessionId);
    this.perConnection.set(conn.id, count + 1);
  }

  unsubscribe(userId: string, threadId: string, connId: string, sessionId: string): boolean {
    const key = threadKey(userId, threadId);
    const conns = this.byThread.get(key);
    const entry = conns?.get(connId);
    if (!entry || !entry.sessions.delete(sessionId)) return false;
    this.perConnection.set(connId, (this.perConnection.get(connId) ?? 1) - 1);
    if (entry.sessions.size === 0) conns!.delete(connId);
    if (conns!.size === 0) this.byThread.delete(key);
    return true;
  }

  /** Connections subscribed to the user's thread (each once). */
  connectionsFor(userId: string, threadId: string): Connection[] {
    return [...(this.byThread.get(threadKey(userId, threadId))?.values() ?? [])].map((e) => e.conn);
  }

  dropConnection(connId: string): void {
    for (const [key, conns] of this.byThread) {
      conns.delete(connId);
      if (conns.size === 0) this.byThread.delete(key);
    }
    this.perConnection.delete(connId);
  }
}
