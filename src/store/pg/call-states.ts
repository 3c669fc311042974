/**
 * Calls that are not done yet, as every daemon on the database sees them
 * (contract §16): the `calls` table on PostgreSQL. A daemon writes a row
 * while it holds the call's mark (call-marks.ts) and deletes it once the
 * call's tool message — its `done` state — is stored. A row whose daemon
 * died outlives it; the mark died with that daemon's connection, so a
 * reader that can take the mark knows the row is stale and removes it.
 *
 * `call/cancel` on one daemon reaches the daemon running the call through
 * NOTIFY on CALL_CANCEL_CHANNEL (the payload names the call, never a token).
 */
import type { Query } from './unit.js';
import { CALL_LOCK_KEY } from './repos.js';
import type { CallKeyOf, SharedCallRow, SharedCalls } from '../store.js';

export const CALL_CANCEL_CHANNEL = 'toolgate_call_cancel';
/** A call awaiting approval was decided or ended (contract section 17): the daemons' waiters look again. */
export const CALL_SETTLED_CHANNEL = 'toolgate_call_settled';
/**
 * A call began to await approval (contract section 17): the other daemons tell their subscribers of its
 * thread. The payload names the call and the daemon that asked (which told its own subscribers already);
 * receivers read the pending row for the rest — never args or a token in the payload.
 */
export const CALL_ASKED_CHANNEL = 'toolgate_call_asked';

/** One statement on a pooled connection; `transaction` runs a short unit (the liveness check's xact lock). */
export interface CallStatesDeps {
  query: <R>(text: string, values: readonly unknown[]) => Promise<R[]>;
  transaction: <T>(work: (q: Query) => Promise<T>) => Promise<T>;
}

const KEY = [`user_id = $1`, `thread_id = $2`, `tool_call_id = $3`].join(' AND ');

const RUNNING_ROW_INSERT = `INSERT INTO calls (user_id, thread_id, tool_call_id, action, args_sha256, state, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'running', $6, $6) ON CONFLICT DO NOTHING`;
const RUNNING_ROW_DELETE = `DELETE FROM calls WHERE ${KEY} AND state = 'running'`;
/** The statements that share a running call (off the call's path, beside it): for counting a call's own waits. */
export const RUNNING_ROW_STATEMENTS: readonly string[] = [RUNNING_ROW_INSERT, RUNNING_ROW_DELETE];

export class PgCallStates implements SharedCalls {
  constructor(private readonly deps: CallStatesDeps) {}

  async running(c: SharedCallRow): Promise<void> {
    await this.deps.query(
      RUNNING_ROW_INSERT,
      [c.userId, c.threadId, c.toolCallId, c.action, c.argsSha256, c.createdAt],
    );
  }

  async ended(k: CallKeyOf): Promise<void> {
    await this.deps.query(RUNNING_ROW_DELETE, [k.userId, k.threadId, k.toolCallId]);
  }

  async find(k: CallKeyOf): Promise<SharedCallRow | undefined> {
    return this.deps.transaction(async (q) => {
      // Taking the call's mark for the length of this transaction succeeds only when no daemon holds it.
      const rows = await q<{ action: string; args_sha256: string; created_at: string; stale: boolean }>(
        `SELECT action, args_sha256, created_at, pg_try_advisory_xact_lock(${CALL_LOCK_KEY('user_id', 'thread_id', 'tool_call_id')}) AS stale
           FROM calls WHERE ${KEY} AND state = 'running'`,
        [k.userId, k.threadId, k.toolCallId],
      );
      const row = rows[0];
      // A row nobody marks is a dead daemon's (reaped at the next start): not running.
      if (!row || row.stale) return undefined;
      return { ...k, action: row.action, argsSha256: row.args_sha256, createdAt: row.created_at };
    });
  }

  async ofUser(userId: string): Promise<SharedCallRow[]> {
    return this.deps.transaction(async (q) => {
      const rows = await q<{ thread_id: string; tool_call_id: string; action: string; args_sha256: string; created_at: string; stale: boolean }>(
        `SELECT thread_id, tool_call_id, action, args_sha256, created_at, pg_try_advisory_xact_lock(${CALL_LOCK_KEY('user_id', 'thread_id', 'tool_call_id')}) AS stale
           FROM calls WHERE user_id = $1 AND state = 'running' ORDER BY created_at DESC`,
        [userId],
      );
      return rows
        .filter((r) => !r.stale)
        .map((r) => ({ userId, threadId: r.thread_id, toolCallId: r.tool_call_id, action: r.action, argsSha256: r.args_sha256, createdAt: r.created_at }));
    });
  }

  /**
   * At start: removes the running rows whose mark no daemon holds (their daemon died). An approved call's
   * row (it holds its args) is left to the recovery of approved calls (calls/recovery.ts), which stores
   * its outcome first.
   */
  async reap(): Promise<number> {
    return this.deps.transaction(async (q) => {
      const rows = await q<{ n: string }>(
        `WITH gone AS (DELETE FROM calls WHERE state = 'running' AND args IS NULL AND pg_try_advisory_xact_lock(${CALL_LOCK_KEY('user_id', 'thread_id', 'tool_call_id')}) RETURNING 1)
         SELECT count(*) AS n FROM gone`,
        [],
      );
      return Number(rows[0]?.n ?? 0);
    });
  }

  async announce(k: CallKeyOf): Promise<void> {
    await this.deps.query('SELECT pg_notify($1, $2)', [CALL_SETTLED_CHANNEL, JSON.stringify([k.userId, k.threadId, k.toolCallId])]);
  }

  async announceAsked(k: CallKeyOf, origin: string): Promise<void> {
    await this.deps.query('SELECT pg_notify($1, $2)', [CALL_ASKED_CHANNEL, JSON.stringify([k.userId, k.threadId, k.toolCallId, origin])]);
  }

  async requestCancel(k: CallKeyOf): Promise<void> {
    await this.deps.query('SELECT pg_notify($1, $2)', [CALL_CANCEL_CHANNEL, JSON.stringify([k.userId, k.threadId, k.toolCallId])]);
  }
}

/** The call a cancel notification names, or undefined for a payload that is not one. */
export function cancelPayloadKey(payload: string | undefined): CallKeyOf | undefined {
  try {
    const v = JSON.parse(payload ?? '') as unknown;
    if (Array.isArray(v) && v.length === 3 && v.every((s) => typeof s === 'string')) {
      const [userId, threadId, toolCallId] = v as [string, string, string];
      return { userId, threadId, toolCallId };
    }
  } catch {
    /* not ours */
  }
  return undefined;
}

/** The call an asked notification names and the daemon that asked it, or undefined for a payload that is not one. */
export function askedPayload(payload: string | undefined): { key: CallKeyOf; origin: string } | undefined {
  try {
    const v = JSON.parse(payload ?? '') as unknown;
    if (Array.isArray(v) && v.length === 4 && v.every((s) => typeof s === 'string')) {
      const [userId, threadId, toolCallId, origin] = v as [string, string, string, string];
      return { key: { userId, threadId, toolCallId }, origin };
    }
  } catch {
    /* not ours */
  }
  return undefined;
}
