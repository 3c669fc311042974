import { randomUUID } from 'node:crypto';

export interface Session {
  id: string;
  userId: string;
  connectionId: string;
  source: 'session' | 'automation';
  jobId: string | null;
  enabledSkills: string[];
  allowedActions: string[];
}

/**
 * Open sessions, each bound to the connection that opened it: a session id
 * presented on another connection is unknown there.
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();

  open(fields: Omit<Session, 'id'>): Session {
    const session = { id: `ses_${randomUUID()}`, ...fields };
    this.sessions.set(session.id, session);
    return session;
  }

  get(id: string, connectionId: string): Session | undefined {
    const s = this.sessions.get(id);
    return s && s.connectionId === connectionId ? s : undefined;
  }

  closeConnection(connectionId: string): void {
    for (const [id, s] of this.sessions) if (s.connectionId === connectionId) this.sessions.delete(id);
  }
}
