import type { ApprovalAuditRepo, CallKeyOf, PendingCallRow, PendingCallsRepo } from '../store.js';
import { nowIso, uniquely, type Statements } from './statements.js';

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

const KEY = 'user_id = ? AND thread_id = ? AND tool_call_id = ?';
const key = (k: CallKeyOf) => [k.userId, k.threadId, k.toolCallId] as const;

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

/** Calls awaiting approval (contract section 17): each decision one conditional statement. */
export function sqlitePendingCalls(st: Statements): PendingCallsRepo {
  return {
    async insert(r) {
      uniquely('calls_pkey', () =>
        st
          .get(
            `INSERT INTO calls (user_id, thread_id, tool_call_id, action, args_sha256, state, created_at, updated_at, args, expires_at, source, job_id)
             VALUES (?, ?, ?, ?, ?, 'awaiting_approval', ?, ?, ?, ?, ?, ?)`,
          )
          .run(r.userId, r.threadId, r.toolCallId, r.action, r.argsSha256, r.createdAt, r.createdAt, r.args, r.expiresAt, r.source, r.jobId),
      );
    },
    async get(k) {
      return rowOf(st.get(`SELECT * FROM calls WHERE ${KEY} AND args IS NOT NULL`).get(...key(k)) as Raw | undefined);
    },
    async approve(k, argsSha256) {
      return rowOf(
        st
          .get(`UPDATE calls SET state = 'running', updated_at = ? WHERE ${KEY} AND state = 'awaiting_approval' AND args_sha256 = ? RETURNING *`)
          .get(nowIso(), ...key(k), argsSha256) as Raw | undefined,
      );
    },
    async take(k) {
      return rowOf(st.get(`DELETE FROM calls WHERE ${KEY} AND state = 'awaiting_approval' RETURNING *`).get(...key(k)) as Raw | undefined);
    },
    async remove(k) {
      st.get(`DELETE FROM calls WHERE ${KEY}`).run(...key(k));
    },
    async expired(now, limit) {
      const rows = st
        .get(
          `SELECT user_id, thread_id, tool_call_id FROM calls
            WHERE state = 'awaiting_approval' AND args IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
        )
        .all(now, limit) as Array<Pick<Raw, 'user_id' | 'thread_id' | 'tool_call_id'>>;
      return rows.map((r) => ({ userId: r.user_id, threadId: r.thread_id, toolCallId: r.tool_call_id }));
    },
    async orphaned(limit) {
      const rows = st
        .get(`SELECT user_id, thread_id, tool_call_id FROM calls WHERE state = 'running' AND args IS NOT NULL ORDER BY updated_at LIMIT ?`)
        .all(limit) as Array<Pick<Raw, 'user_id' | 'thread_id' | 'tool_call_id'>>;
      return rows.map((r) => ({ userId: r.user_id, threadId: r.thread_id, toolCallId: r.tool_call_id }));
    },
    async awaiting(userId, now, after, limit) {
      const rows = after
        ? st
            .get(
              `SELECT * FROM calls WHERE user_id = ? AND state = 'awaiting_approval' AND args IS NOT NULL AND expires_at > ?
                 AND (created_at, thread_id, tool_call_id) < (?, ?, ?)
               ORDER BY created_at DESC, thread_id DESC, tool_call_id DESC LIMIT ?`,
            )
            .all(userId, now, ...after, limit)
        : st
            .get(
              `SELECT * FROM calls WHERE user_id = ? AND state = 'awaiting_approval' AND args IS NOT NULL AND expires_at > ?
               ORDER BY created_at DESC, thread_id DESC, tool_call_id DESC LIMIT ?`,
            )
            .all(userId, now, limit);
      return (rows as Raw[]).map((r) => rowOf(r)!);
    },
  };
}

export function sqliteApprovalAudit(st: Statements): ApprovalAuditRepo {
  return {
    async record(d) {
      st.get(
        'INSERT INTO approval_audit (user_id, thread_id, tool_call_id, args_sha256, decision, surface, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(d.userId, d.threadId, d.toolCallId, d.argsSha256, d.decision, d.surface, nowIso());
    },
  };
}
