/**
 * Issue 19 item 8's A/B: where the commit's fsync runs at `synchronous=FULL`.
 *
 *  - inline: SQLite's own fsync inside COMMIT, on the daemon's JavaScript thread;
 *  - deferred: COMMIT at NORMAL, then an fdatasync of the WAL on libuv's pool
 *    before the group's answers (src/store/sqlite/wal-sync.ts), while the next
 *    group runs; the same durability;
 *  - NORMAL: no fsync at commit at all — the ceiling of any move.
 *
 * Three in-process daemons (TOOLGATE_SQLITE_SYNC picks the first two),
 * interleaved rounds in rotating order; per round and daemon sequential calls,
 * then calls at concurrency 8. Ratios are medians of per-round ratios.
 */
import { join } from 'node:path';
import { tempDir } from './env.js';
import { concurrent, sequential } from './load.js';
import { median, medianRatio } from './stats.js';
import { startToolgateStdio, type ToolgateStdio } from './targets/toolgate.js';

export type SyncVariant = 'inline' | 'deferred' | 'NORMAL';
export const SYNC_VARIANTS: readonly SyncVariant[] = ['inline', 'deferred', 'NORMAL'];

export interface SyncRow {
  variant: SyncVariant;
  p50: number;
  rate: number;
  /** Medians of per-round ratios to the inline daemon. */
  p50OverInline: number;
  rateOverInline: number;
}

export interface SyncAbResult {
  rounds: number;
  seq: number;
  conc: number;
  concurrency: number;
  rows: SyncRow[];
}

export async function runSyncAb(opts: { rounds: number; seq: number; conc: number; concurrency: number; log: (line: string) => void }): Promise<SyncAbResult> {
  const daemons: Array<{ variant: SyncVariant; tg: ToolgateStdio }> = [];
  const p50s = new Map<SyncVariant, number[]>();
  const rates = new Map<SyncVariant, number[]>();
  try {
    for (const variant of SYNC_VARIANTS) {
      const dir = tempDir(`toolgate-bench-sync-${variant}-`);
      const tg = await startToolgateStdio({
        executor: 'inprocess', dbFile: join(dir, 's.db'), dataDir: dir, synchronous: variant === 'NORMAL' ? 'NORMAL' : 'FULL',
        env: variant === 'NORMAL' ? {} : { TOOLGATE_SQLITE_SYNC: variant },
        name: `toolgate inprocess (${variant})`,
      });
      daemons.push({ variant, tg });
      await sequential(tg, 100);
      await concurrent(tg, 100, opts.concurrency);
    }
    for (let r = 0; r < opts.rounds; r++) {
      const order = daemons.map((_, i) => daemons[(i + r) % daemons.length]!);
      const line: string[] = [];
      for (const { variant, tg } of order) {
        const p50 = median(await sequential(tg, opts.seq));
        const { rate } = await concurrent(tg, opts.conc, opts.concurrency);
        p50s.set(variant, [...(p50s.get(variant) ?? []), p50]);
        rates.set(variant, [...(rates.get(variant) ?? []), rate]);
        line.push(`${variant} p50 ${p50.toFixed(2)} ms, ${rate.toFixed(0)}/s`);
      }
      opts.log(`  round ${r + 1}/${opts.rounds}: ${line.join(' · ')}`);
    }
  } finally {
    for (const { tg } of daemons) await tg.stop().catch(() => {});
  }
  // Per-round series are in round order for every variant, so ratios pair rounds.
  const rows = SYNC_VARIANTS.map((variant) => ({
    variant,
    p50: median(p50s.get(variant) ?? []),
    rate: median(rates.get(variant) ?? []),
    p50OverInline: medianRatio(p50s.get(variant) ?? [], p50s.get('inline') ?? []),
    rateOverInline: medianRatio(rates.get(variant) ?? [], rates.get('inline') ?? []),
  }));
  return { rounds: opts.rounds, seq: opts.seq, conc: opts.conc, concurrency: opts.concurrency, rows };
}
