import type { CallKeyOf, QuotaCounter, QuotaTake, QuotaUse, QuotasRepo, QuotaPeriod } from '../store.js';
import type { Statements } from './statements.js';

/**
 * The quota counters (contract §20) on SQLite. One statement counts a call
 * against all of its counters: an upsert of each counter's row whose
 * `CHECK (used <= allowed)` fails the whole statement when one window is
 * full (SQLite undoes exactly that statement), and which inserts nothing
 * when the call's tool message is stored or the call is not done yet (a
 * replay, a re-invocation of a call awaiting approval: never counted).
 * SQLite writers are serialised by the file lock, so this is exact across
 * the processes sharing the file too.
 */
export function sqliteQuotas(st: Statements): QuotasRepo {
  return {
    async take(key: CallKeyOf & { argsSha256: string }, counters: readonly QuotaCounter[]): Promise<QuotaTake> {
      if (counters.length === 0) return 'counted';
      const rows = counters.map(() => '(?, ?, ?, ?)').join(', ');
      const sql = `WITH v(scope, period, window_start, allowed) AS (VALUES ${rows})
        INSERT INTO quota_counts (user_id, scope, period, window_start, used, allowed)
          SELECT ?, v.scope, v.period, v.window_start, 1, v.allowed FROM v
           WHERE NOT EXISTS (SELECT 1 FROM messages WHERE user_id = ? AND thread_id = ? AND tool_call_id = ?)
             AND NOT EXISTS (SELECT 1 FROM calls WHERE user_id = ? AND thread_id = ? AND tool_call_id = ? AND args_sha256 = ?)
        ON CONFLICT (user_id, scope, period) DO UPDATE SET
          used = CASE WHEN excluded.window_start > quota_counts.window_start THEN 1 ELSE quota_counts.used + 1 END,
          window_start = max(quota_counts.window_start, excluded.window_start),
          allowed = excluded.allowed`;
      const values = [...counters.flatMap((c) => [c.scope, c.period, c.windowStart, c.allowed]), key.userId, key.userId, key.threadId, key.toolCallId, key.userId, key.threadId, key.toolCallId, key.argsSha256];
      try {
        const { changes } = st.get(sql).run(...values);
        return changes === 0 ? 'stored' : 'counted';
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_CHECK') return 'full';
        throw err;
      }
    },

    async giveBack(userId: string, counters: readonly QuotaCounter[]): Promise<void> {
      const give = st.get('UPDATE quota_counts SET used = used - 1 WHERE user_id = ? AND scope = ? AND period = ? AND window_start = ? AND used > 0');
      for (const c of counters) give.run(userId, c.scope, c.period, c.windowStart);
    },

    async usage(userId: string, counters: readonly QuotaCounter[]): Promise<QuotaUse[]> {
      const scopes = JSON.stringify([...new Set(counters.map((c) => c.scope))]);
      const rows = st
        .get('SELECT scope, period, window_start, used FROM quota_counts WHERE user_id = ? AND scope IN (SELECT value FROM json_each(?))')
        .all(userId, scopes) as Array<{ scope: string; period: QuotaPeriod; window_start: number; used: number }>;
      return rows.map((r) => ({ scope: r.scope, period: r.period, windowStart: Number(r.window_start), used: r.used }));
    },
  };
}
