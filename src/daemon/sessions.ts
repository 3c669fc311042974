import { randomUUID } from 'node:crypto';
import { DaemonError } from './errors.js';

export interface Session {
  id: string;
  userId: string;
  connectionId: string;
  source: 'session' | 'automation';
  jobId: string | null;
  enabledSkills: string[];
  allowedActions: string[];
}

/** Contract section 13: sessions per connection are capped (`limits.max_sessions_per_connection`). */
export const DEFAULT_MAX_SESSIONS_PER_CONNECTION = 64;

/**
 * Open sessions, each bound to the connection that opened it: a session id
 * presented on another connection is unknown there. At most
 * `maxPerConnection` per connection (OVERLOADED past it); a connection's
 * sessions are forgotten when it closes.
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private readonly byConnection = new Map<string, Set<string>>();

  constructor(private readonly maxPerConnection = DEFAULT_MAX_SESSIONS_PER_CONNECTION) {}

  open(fields: Omit<Session, 'id'>): Session {
    let ids = this.byConnection.get(fields.connectionId);
    if (ids && ids.size >= this.maxPerConnection) {
      throw new DaemonError(
        'OVERLOADED',
        `too many sessions on this connection (limit ${this.maxPerConnection}, limits.max_sessions_per_connection)`,
      );
    }
    const session = { id: `ses_${randomUUID()}`, ...fields };
    this.sessions.set(session.id, session);
    if (!ids) this.byConnection.set(fields.connectionId, (ids = new Set()));
    ids.add(session.id);
    return session;
  }

  get(id: string, connectionId: string): Session | undefined {
    const s = this.sessions.get(id);
    return s && s.connectionId === connectionId ? s : undefined;
  }

  /** Sessions open now, all connections together (metrics). */
  get size(): number {
    return this.sessions.size;
  }

  /** Sessions open on a connection. */
  countFor(connectionId: string): number {
    return this.byConnection.get(connectionId)?.size ?? 0;
  }

  closeConnection(connectionId: string): void {
    for (const id of this.byConnection.get(connectionId) ?? []) this.sessions.delete(id);
    this.byConnection.delete(connectionId);
  }
}
