import { ResponseError } from 'vscode-jsonrpc';
import { RpcErrorCode } from '../rpc/errors.js';
import type { Connection } from './daemon.js';

/** Contract section 13: subscriptions per connection are capped (`limits.max_subscriptions_per_connection`). */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION = 256;

interface Entry {
  conn: Connection;
  /** Session id → the session's user: only the thread owner's sessions hear its calls. */
  sessions: Map<string, string>;
}

/**
 * Who watches which thread: `thread/subscribe` adds (connection, session);
 * every `tool/result` of the thread then reaches those connections whose
 * subscribing session belongs to the thread's owner, whichever connection
 * made the call. Subscribing writes nothing (a thread may be watched before
 * its first message). Closing a connection drops its subscriptions.
 */
export class SubscriptionRegistry {
  private readonly byThread = new Map<string, Map<string, Entry>>();
  private readonly perConnection = new Map<string, number>();

  constructor(private readonly maxPerConnection = DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION) {}

  subscribe(threadId: string, conn: Connection, sessionId: string, userId = ''): void {
    let conns = this.byThread.get(threadId);
    const existing = conns?.get(conn.id);
    if (existing?.sessions.has(sessionId)) return;
    const count = this.perConnection.get(conn.id) ?? 0;
    if (count >= this.maxPerConnection) {
      throw new ResponseError(
        RpcErrorCode.Overloaded,
        `too many subscriptions on this connection (limit ${this.maxPerConnection}, limits.max_subscriptions_per_connection)`,
      );
    }
    if (!conns) this.byThread.set(threadId, (conns = new Map()));
    let entry = existing;
    if (!entry) conns.set(conn.id, (entry = { conn, sessions: new Map() }));
    entry.sessions.set(sessionId, userId);
    this.perConnection.set(conn.id, count + 1);
  }

  unsubscribe(threadId: string, connId: string, sessionId: string): boolean {
    const conns = this.byThread.get(threadId);
    const entry = conns?.get(connId);
    if (!entry || !entry.sessions.delete(sessionId)) return false;
    this.perConnection.set(connId, (this.perConnection.get(connId) ?? 1) - 1);
    if (entry.sessions.size === 0) conns!.delete(connId);
    if (conns!.size === 0) this.byThread.delete(threadId);
    return true;
  }

  /** Connections subscribed to the thread (each once); with `userId`, only through that user's sessions. */
  connectionsFor(threadId: string, userId?: string): Connection[] {
    const entries = [...(this.byThread.get(threadId)?.values() ?? [])];
    return entries.filter((e) => userId === undefined || [...e.sessions.values()].includes(userId)).map((e) => e.conn);
  }

  dropConnection(connId: string): void {
    for (const [threadId, conns] of this.byThread) {
      conns.delete(connId);
      if (conns.size === 0) this.byThread.delete(threadId);
    }
    this.perConnection.delete(connId);
  }
}
