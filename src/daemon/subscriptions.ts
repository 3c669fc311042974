import type { Connection } from './daemon.js';

/**
 * Who watches which thread: `thread/subscribe` adds (connection, session);
 * every `tool/result` of the thread then reaches those connections, whichever
 * connection made the call. Closing a connection drops its subscriptions.
 */
export class SubscriptionRegistry {
  private readonly byThread = new Map<string, Map<string, { conn: Connection; sessions: Set<string> }>>();

  subscribe(threadId: string, conn: Connection, sessionId: string): void {
    let conns = this.byThread.get(threadId);
    if (!conns) this.byThread.set(threadId, (conns = new Map()));
    let entry = conns.get(conn.id);
    if (!entry) conns.set(conn.id, (entry = { conn, sessions: new Set() }));
    entry.sessions.add(sessionId);
  }

  unsubscribe(threadId: string, connId: string, sessionId: string): boolean {
    const conns = this.byThread.get(threadId);
    const entry = conns?.get(connId);
    if (!entry || !entry.sessions.delete(sessionId)) return false;
    if (entry.sessions.size === 0) conns!.delete(connId);
    if (conns!.size === 0) this.byThread.delete(threadId);
    return true;
  }

  /** Connections subscribed to the thread (each once). */
  connectionsFor(threadId: string): Connection[] {
    return [...(this.byThread.get(threadId)?.values() ?? [])].map((e) => e.conn);
  }

  dropConnection(connId: string): void {
    for (const [threadId, conns] of this.byThread) {
      conns.delete(connId);
      if (conns.size === 0) this.byThread.delete(threadId);
    }
  }
}
