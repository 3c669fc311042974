import type { CredentialAuditRepo, CredentialIssuance } from '../store.js';
import type { Statements } from './statements.js';

export function sqliteCredentialAudit(st: Statements): CredentialAuditRepo {
  return {
    async record(c: CredentialIssuance) {
      st.get(
        `INSERT INTO credential_audit (jti, subject, source, job_id, actions, thread_id, tool_call_id, issued_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(c.jti, c.subject, c.source, c.jobId, JSON.stringify(c.actions), c.threadId, c.toolCallId, c.issuedAt, c.expiresAt);
    },
  };
}
