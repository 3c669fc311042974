/**
 * What one durable commit costs on the bench's PostgreSQL, and what NOTIFY does
 * to commits in parallel — the inputs of the capacity model's "next bottleneck"
 * (bench/pg-capacity.ts). A one-row table of the bench's own, outside toolgate's schema.
 *
 * - sequential single-row INSERT commits with synchronous_commit on and off: the
 *   difference is the wait for the WAL flush (fsync) of one commit;
 * - the same INSERTs at concurrency 8 without and with a `pg_notify` in the same
 *   transaction, as toolgate's message insert does: PostgreSQL serialises the commits
 *   of notifying transactions (one global lock taken before commit, held through the
 *   WAL flush), so they cannot share one fsync (group commit) the way plain ones can.
 */
import pg from 'pg';
import { median } from './stats.js';

export interface CommitProbe {
  /** p50 of one sequential commit, ms, with synchronous_commit on / off. */
  durableP50: number;
  asyncP50: number;
  /** Commits/s at concurrency 8: plain INSERTs, INSERT + pg_notify. */
  plainRate: number;
  notifyRate: number;
}

const TABLE = 'tg_bench_commit_probe';

export async function openCommitProbe(url: string, concurrency: number): Promise<{ round(n: number): Promise<CommitProbe>; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: url, max: concurrency });
  await pool.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (id bigserial PRIMARY KEY, v integer NOT NULL)`);
  const seq = async (n: number, sync: 'on' | 'off') => {
    const c = await pool.connect();
    try {
      await c.query(`SET synchronous_commit = ${sync}`);
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await c.query(`INSERT INTO ${TABLE} (v) VALUES ($1)`, [i]);
        out.push(performance.now() - t);
      }
      await c.query('RESET synchronous_commit');
      return median(out);
    } finally {
      c.release();
    }
  };
  const conc = async (n: number, notify: boolean) => {
    const sql = notify
      ? `WITH i AS (INSERT INTO ${TABLE} (v) VALUES ($1) RETURNING id) SELECT pg_notify('tg_bench_probe', (SELECT id FROM i)::text)`
      : `INSERT INTO ${TABLE} (v) VALUES ($1)`;
    let issued = 0;
    const t = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (issued < n) await pool.query(sql, [issued++]);
    }));
    return (n / (performance.now() - t)) * 1000;
  };
  return {
    async round(n) {
      const durableP50 = await seq(n, 'on');
      const asyncP50 = await seq(n, 'off');
      const plainRate = await conc(2 * n, false);
      const notifyRate = await conc(2 * n, true);
      return { durableP50, asyncP50, plainRate, notifyRate };
    },
    async close() {
      await pool.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => {});
      await pool.end();
    },
  };
}
