import type { Connection } from './daemon.js';
import { threadKey } from './thread-key.js';

/**
 * Who watches which thread: `thread/subscribe` adds (connection, session);
 * every `tool/result` of the thread then reaches those connections, whichever
 * connection made the call. Closing a connection drops its subscriptions.
 * A thread is `(user, thread_id)`: a subscription never reaches another
 * user's thread of the same id.
 */
export class SubscriptionRegistry {
  private readonly byThread = new Map<string, Map<string, { conn: Connection; sessions: Set<string> }>>();

  subscribe(userId: string, threadId: string, conn: Connection, sessionId: string): void {
    const key = threadKey(userId, threadId);
    let conns = this.byThread.get(key);
    if (!conns) this.byThread.set(key, (conns = new Map()));
    let entry = conns.get(conn.id);
    if (!entry) conns.set(conn.id, (entry = { conn, sessions: new Set() }));
    entry.sessions.add(sessionId);
  }

  unsubscribe(userId: string, threadId: string, connId: string, sessionId: string): boolean {
    const key = threadKey(userId, threadId);
    const conns = this.byThread.get(key);
    const entry = conns?.get(connId);
    if (!entry || !entry.sessions.delete(sessionId)) return false;
    if (entry.sessions.size === 0) conns!.delete(connId);
    if (conns!.size === 0) this.byThread.delete(key);
    return true;
  }

  /** Connections subscribed to the thread (each once). */
  connectionsFor(userId: string, threadId: string): Connection[] {
    return [...(this.byThread.get(threadKey(userId, threadId))?.values() ?? [])].map((e) => e.conn);
  }

  dropConnection(connId: string): void {
    for (const [key, conns] of this.byThread) {
      conns.delete(connId);
      if (conns.size === 0) this.byThread.delete(key);
    }
  }
}
