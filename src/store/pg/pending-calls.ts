/**
 * Calls awaiting approval on PostgreSQL (contract section 17), in `calls`
 * beside the running calls other daemons see (call-states.ts): each decision
 * is one conditional statement, so of racing decisions — on any daemon —
 * exactly one changes the row.
 */
import { nowIso } from '../database.js';
import type { ApprovalAuditRepo, CallKeyOf, PendingCallRow, PendingCallsRepo, PendingPosition } from '../store.js';
import type { Query } from './unit.js';
import { CALL_LOCK_KEY } from './repos.js';

interface Raw {
  user_id: string;
  thread_id: string;
  tool_call_id: string;
  action: string;
  args_sha256: string;
  state: PendingCallRow['state'];
  args: string;
  expires_at: string;
  source: PendingCallRow['source'];
  job_id: string | null;
  created_at: string;
  updated_at: string;
}

const KEY = 'user_id = $1 AND thread_id = $2 AND tool_call_id = $3';
const key = (k: CallKeyOf) => [k.userId, k.threadId, k.toolCallId];

function rowOf(r: Raw | undefined): PendingCallRow | undefined {
  if (!r) return undefined;
  return {
    userId: r.user_id,
    threadId: r.thread_id,
    toolCallId: r.tool_call_id,
    action: r.action,
    argsSha256: r.args_sha256,
    state: r.state,
    args: r.args,
    expiresAt: r.expires_at,
    source: r.source,
    jobId: r.job_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class PgPendingCalls implements PendingCallsRepo {
  constructor(private readonly q: Query) {}

  async insert(r: Omit<PendingCallRow, 'state' | 'updatedAt'>): Promise<void> {
    await this.q(
      `INSERT INTO calls (user_id, thread_id, tool_call_id, action, args_sha256, state, created_at, updated_at, args, expires_at, source, job_id)
       VALUES ($1, $2, $3, $4, $5, 'awaiting_approval', $6, $6, $7, $8, $9, $10)`,
      [r.userId, r.threadId, r.toolCallId, r.action, r.argsSha256, r.createdAt, r.args, r.expiresAt, r.source, r.jobId],
    );
  }

  async get(k: CallKeyOf): Promise<PendingCallRow | undefined> {
    return rowOf((await this.q<Raw>(`SELECT * FROM calls WHERE ${KEY} AND args IS NOT NULL`, key(k)))[0]);
  }

  async approve(k: CallKeyOf, argsSha256: string): Promise<PendingCallRow | undefined> {
    const rows = await this.q<Raw>(
      `UPDATE calls SET state = 'running', updated_at = $5 WHERE ${KEY} AND state = 'awaiting_approval' AND args_sha256 = $4 RETURNING *`,
      [...key(k), argsSha256, nowIso()],
    );
    return rowOf(rows[0]);
  }

  async take(k: CallKeyOf): Promise<PendingCallRow | undefined> {
    return rowOf((await this.q<Raw>(`DELETE FROM calls WHERE ${KEY} AND state = 'awaiting_approval' RETURNING *`, key(k)))[0]);
  }

  async remove(k: CallKeyOf): Promise<void> {
    await this.q(`DELETE FROM calls WHERE ${KEY}`, key(k));
  }

  async expired(now: string, limit: number): Promise<CallKeyOf[]> {
    const rows = await this.q<Pick<Raw, 'user_id' | 'thread_id' | 'tool_call_id'>>(
      `SELECT user_id, thread_id, tool_call_id FROM calls
        WHERE state = 'awaiting_approval' AND args IS NOT NULL AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => ({ userId: r.user_id, threadId: r.thread_id, toolCallId: r.tool_call_id }));
  }

  async orphaned(limit: number): Promise<CallKeyOf[]> {
    // Taking the call's mark for the length of this unit succeeds only when no daemon holds it (call-marks.ts).
    const rows = await this.q<Pick<Raw, 'user_id' | 'thread_id' | 'tool_call_id'>>(
      `SELECT user_id, thread_id, tool_call_id FROM calls
        WHERE state = 'running' AND args IS NOT NULL AND pg_try_advisory_xact_lock(${CALL_LOCK_KEY('user_id', 'thread_id', 'tool_call_id')})
        ORDER BY updated_at LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({ userId: r.user_id, threadId: r.thread_id, toolCallId: r.tool_call_id }));
  }

  async awaiting(userId: string, now: string, after: PendingPosition | null, limit: number): Promise<PendingCallRow[]> {
    const rows = after
      ? await this.q<Raw>(
          `SELECT * FROM calls WHERE user_id = $1 AND state = 'awaiting_approval' AND args IS NOT NULL AND expires_at > $2
             AND (created_at, thread_id, tool_call_id) < ($3, $4, $5)
           ORDER BY created_at DESC, thread_id DESC, tool_call_id DESC LIMIT $6`,
          [userId, now, ...after, limit],
        )
      : await this.q<Raw>(
          `SELECT * FROM calls WHERE user_id = $1 AND state = 'awaiting_approval' AND args IS NOT NULL AND expires_at > $2
           ORDER BY created_at DESC, thread_id DESC, tool_call_id DESC LIMIT $3`,
          [userId, now, limit],
        );
    return rows.map((r) => rowOf(r)!);
  }
}

export class PgApprovalAudit implements ApprovalAuditRepo {
  constructor(private readonly q: Query) {}

  async record(d: Parameters<ApprovalAuditRepo['record']>[0]): Promise<void> {
    await this.q(
      'INSERT INTO approval_audit (user_id, thread_id, tool_call_id, args_sha256, decision, surface, decided_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [d.userId, d.threadId, d.toolCallId, d.argsSha256, d.decision, d.surface, nowIso()],
    );
  }
}
