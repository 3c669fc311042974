/**
 * The quota counters on PostgreSQL (src/store/pg/quotas.ts) under races
 * between daemons: counts and give-backs of calls whose counters overlap,
 * on two stores (two daemons) on one database. Each statement locks its
 * counters' rows one after the other; statements that lock them in opposite
 * orders can deadlock, and PostgreSQL then ends one of them — a call that
 * should have passed fails, or a count is never given back.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openPgStore, type PgStore } from '../../../src/store/pg/pg-store.js';
import type { QuotaCounter } from '../../../src/store/store.js';
import { dropAllFreshDatabases, freshPgDatabase, needsPg, pgQuery } from '../../helpers/pg.js';

after(dropAllFreshDatabases);

const silent = { log: () => {} };
const DAY_MS = 86_400_000;

test('counts and give-backs raced in opposite counter orders on two daemons never deadlock, and every count is exact', { ...needsPg, timeout: 120_000 }, async () => {
  const db = await freshPgDatabase();
  const stores: PgStore[] = await Promise.all([0, 1].map(() => openPgStore(db.url, { log: silent })));
  try {
    const now = Date.now();
    const counter = (scope: string): QuotaCounter => ({ scope, period: 'day', windowStart: now - (now % DAY_MS), allowed: 1_000_000 });
    const all = counter('p:calendar.*');
    const create = counter('p:calendar.create');
    const del = counter('p:calendar.delete');
    // One daemon lists the quotas in one order, the other (its file reloaded with the keys moved) in the other;
    // a call of one action counts only the module's quota, which moves its row behind the others on disk.
    const orders: QuotaCounter[][] = [[all, create, del], [del, create, all], [all], [create, all]];
    const ROUNDS = 40;
    let n = 0;
    const failures: string[] = [];
    const expected = new Map<string, number>();
    const bump = (cs: readonly QuotaCounter[], by: number) => cs.forEach((c) => expected.set(c.scope, (expected.get(c.scope) ?? 0) + by));
    const worker = async (w: number) => {
      const store = stores[w % 2]!;
      for (let i = 0; i < ROUNDS; i++) {
        const counters = orders[(w + i) % orders.length]!;
        const key = { userId: 'u', threadId: 't', toolCallId: `w${w}-${i}`, argsSha256: 'x' };
        try {
          const taken = await store.transaction((tx) => tx.quotas.take(key, counters));
          assert.equal(taken, 'counted');
          bump(counters, 1);
          n++;
          // Every other call turns out stored elsewhere: its count is given back.
          if (i % 2 === 0) {
            await store.transaction((tx) => tx.quotas.giveBack('u', counters));
            bump(counters, -1);
          }
        } catch (err) {
          failures.push(`${(err as { code?: string }).code ?? ''} ${(err as Error).message}`);
        }
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].map(worker));
    assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${n + failures.length} statements failed`);
    const rows = await pgQuery<{ scope: string; used: number }>(db.url, "SELECT scope, used FROM quota_counts WHERE user_id = 'u' ORDER BY scope");
    assert.deepEqual(
      rows.map((r) => [r.scope, Number(r.used)]),
      [...expected].sort(([a], [b]) => (a < b ? -1 : 1)),
      'every count and give-back applied once',
    );
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
});
