import type { Db } from './database.js';

export interface CredentialIssuance {
  jti: string;
  subject: string;
  source: 'session' | 'automation';
  jobId: string | null;
  actions: readonly string[];
  threadId: string | null;
  toolCallId: string | null;
  issuedAt: string;
  expiresAt: string;
}

/** Audits one issuance. The token itself is never passed here. */
export function auditCredential(db: Db, c: CredentialIssuance): void {
  db.prepare(
    `INSERT INTO credential_audit (jti, subject, source, job_id, actions, thread_id, tool_call_id, issued_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(c.jti, c.subject, c.source, c.jobId, JSON.stringify(c.actions), c.threadId, c.toolCallId, c.issuedAt, c.expiresAt);
}
