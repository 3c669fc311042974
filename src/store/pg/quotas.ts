import type { CallKeyOf, QuotaCounter, QuotaTake, QuotaUse, QuotasRepo, QuotaPeriod } from '../store.js';
import type { Query } from './unit.js';

/**
 * The one order every statement locks a user's counter rows in. Two statements that lock overlapping
 * rows in opposite orders deadlock, and PostgreSQL ends one of them after `deadlock_timeout`: a call
 * that should pass fails, or a count is never given back. The order of the counters a call names
 * depends on the profile's quota list (which a reload on one daemon may reorder) and the plan's.
 */
const LOCK_ORDER = (alias: string) => `ORDER BY ${alias}.scope COLLATE "C", ${alias}.period COLLATE "C"`;

/** PostgreSQL's check_violation: a counter's `used <= allowed` (the only check the statement can fail). */
const CHECK_VIOLATION = '23514';

/**
 * The quota counters (contract §20) on PostgreSQL: one statement counts a
 * call against every counter, or against none. `INSERT … ON CONFLICT DO
 * UPDATE` locks each counter's row and computes from its latest committed
 * version, so daemons racing on one counter queue on its row; the row's
 * `CHECK (used <= allowed)` fails the statement — every counter of it — for
 * the call past the limit. Run as a unit's only statement, it is its own
 * transaction: one round trip, no BEGIN, no COMMIT.
 */
export class PgQuotas implements QuotasRepo {
  constructor(private readonly q: Query) {}

  async take(key: CallKeyOf & { argsSha256: string }, counters: readonly QuotaCounter[]): Promise<QuotaTake> {
    if (counters.length === 0) return 'counted';
    const values: unknown[] = [key.userId, key.threadId, key.toolCallId, key.argsSha256];
    const rows = counters.map((c) => {
      values.push(c.scope, c.period, c.windowStart, c.allowed);
      const n = values.length;
      return `($${n - 3}::text, $${n - 2}::text, $${n - 1}::bigint, $${n}::integer)`;
    });
    const text = `INSERT INTO quota_counts AS q (user_id, scope, period, window_start, used, allowed)
        SELECT $1, v.scope, v.period, v.window_start, 1, v.allowed FROM (VALUES ${rows.join(', ')}) AS v (scope, period, window_start, allowed)
         WHERE NOT EXISTS (SELECT 1 FROM messages WHERE user_id = $1 AND thread_id = $2 AND tool_call_id = $3)
           AND NOT EXISTS (SELECT 1 FROM calls WHERE user_id = $1 AND thread_id = $2 AND tool_call_id = $3 AND args_sha256 = $4)
         ${LOCK_ORDER('v')}
      ON CONFLICT (user_id, scope, period) DO UPDATE SET
        used = CASE WHEN excluded.window_start > q.window_start THEN 1 ELSE q.used + 1 END,
        window_start = GREATEST(q.window_start, excluded.window_start),
        allowed = excluded.allowed
      RETURNING 1 AS counted`;
    try {
      const counted = await (this.q.last ? this.q.last(text, values, ['messages', 'calls', 'quota_counts']) : this.q(text, values));
      return counted.length === 0 ? 'stored' : 'counted';
    } catch (err) {
      if ((err as { code?: string }).code === CHECK_VIOLATION) return 'full';
      throw err;
    }
  }

  async giveBack(userId: string, counters: readonly QuotaCounter[]): Promise<void> {
    if (counters.length === 0) return;
    const values: unknown[] = [userId];
    const rows = counters.map((c) => {
      values.push(c.scope, c.period, c.windowStart);
      const n = values.length;
      return `($${n - 2}::text, $${n - 1}::text, $${n}::bigint)`;
    });
    // Locked first, in LOCK_ORDER: an UPDATE … FROM locks rows in its plan's order (on disk, for a bitmap scan).
    await this.q(
      `WITH locked AS (
         SELECT q.scope, q.period FROM quota_counts AS q JOIN (VALUES ${rows.join(', ')}) AS v (scope, period, window_start)
             ON q.scope = v.scope AND q.period = v.period AND q.window_start = v.window_start
          WHERE q.user_id = $1 AND q.used > 0
          ${LOCK_ORDER('q')} FOR UPDATE OF q)
       UPDATE quota_counts AS q SET used = q.used - 1 FROM locked AS l
        WHERE q.user_id = $1 AND q.scope = l.scope AND q.period = l.period AND q.used > 0`,
      values,
    );
  }

  async usage(userId: string, counters: readonly QuotaCounter[]): Promise<QuotaUse[]> {
    const scopes = [...new Set(counters.map((c) => c.scope))];
    const rows = await this.q<{ scope: string; period: QuotaPeriod; window_start: string | number; used: number }>(
      'SELECT scope, period, window_start, used FROM quota_counts WHERE user_id = $1 AND scope = ANY($2::text[])',
      [userId, scopes],
      ['quota_counts'],
    );
    return rows.map((r) => ({ scope: r.scope, period: r.period, windowStart: Number(r.window_start), used: r.used }));
  }
}
