/**
 * The side-by-side comparison at steady state. `npm run bench`'s table
 * measures each entry over its first ~1,600 calls (100 of warm-up, then 5
 * rounds of 150 + 150): a young daemon, whose call path V8 is still
 * compiling. A long-running daemon — a backend's, or an IDE's over a day —
 * runs far past that. Here the in-process daemon and the two MCP anchors
 * (b, the thin one; b′, the equal-work one) first take the same `warm`
 * calls each (sequential, then twice as many at concurrency 8), then run
 * interleaved rounds in rotating order; ratios are medians of per-round
 * ratios, as in the bench. Every entry gets the same warm-up: this moves
 * when the measuring starts, never what is measured.
 *
 *   npm run build && node dist/bench/steady.js [WARM] [ROUNDS] [FULL|NORMAL]   (default 3000, 9, FULL)
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from './env.js';
import { concurrent, sequential } from './load.js';
import { median, medianRatio } from './stats.js';
import type { Target } from './target.js';
import { startMcp } from './targets/mcp.js';
import { startToolgateStdio, type Synchronous } from './targets/toolgate.js';

export interface SteadyResult {
  synchronous: Synchronous;
  /** Sequential warm-up calls per entry (then twice as many at concurrency 8). */
  warm: number;
  rounds: number;
  seq: number;
  conc: number;
  rows: SteadyRow[];
}

export interface SteadyRow {
  entry: 'b' | 'b′' | 'toolgate';
  p50: number;
  rate: number;
  /** toolgate's per-round p50 and calls/s over this entry's, medians. */
  p50Ratio: number;
  rateRatio: number;
}

export async function runSteady(opts: { warm: number; rounds: number; synchronous: Synchronous; seq?: number; conc?: number; log: (line: string) => void }): Promise<SteadyResult> {
  const seq = opts.seq ?? 300;
  const conc = opts.conc ?? 600;
  const dir = tempDir('toolgate-bench-steady-');
  const entries: Array<[SteadyRow['entry'], Target]> = [];
  try {
    entries.push(['b', await startMcp(join(dir, 'b.db'), opts.synchronous, 'thin')]);
    entries.push(['b′', await startMcp(join(dir, 'b-equal.db'), opts.synchronous, 'equal')]);
    entries.push(['toolgate', await startToolgateStdio({ executor: 'inprocess', dbFile: join(dir, 'tg.db'), dataDir: dir, synchronous: opts.synchronous })]);
    for (const [, t] of entries) {
      await sequential(t, opts.warm);
      await concurrent(t, 2 * opts.warm, 8);
    }
    const p50s = new Map<string, number[]>();
    const rates = new Map<string, number[]>();
    for (let r = 0; r < opts.rounds; r++) {
      const line: string[] = [];
      for (let i = 0; i < entries.length; i++) {
        const [name, t] = entries[(i + r) % entries.length]!;
        const p50 = median(await sequential(t, seq));
        const { rate } = await concurrent(t, conc, 8);
        p50s.set(name, [...(p50s.get(name) ?? []), p50]);
        rates.set(name, [...(rates.get(name) ?? []), rate]);
        line.push(`${name} ${p50.toFixed(3)} ms ${rate.toFixed(0)}/s`);
      }
      opts.log(`  round ${r + 1}/${opts.rounds}: ${line.join(' · ')}`);
    }
    // Series are in round order for every entry, so the ratios pair rounds.
    const rows = entries.map(([entry]) => ({
      entry,
      p50: median(p50s.get(entry)!),
      rate: median(rates.get(entry)!),
      p50Ratio: medianRatio(p50s.get('toolgate')!, p50s.get(entry)!),
      rateRatio: medianRatio(rates.get('toolgate')!, rates.get(entry)!),
    }));
    return { synchronous: opts.synchronous, warm: opts.warm, rounds: opts.rounds, seq, conc, rows };
  } finally {
    for (const [, t] of entries) await t.stop().catch(() => {});
  }
}

async function main(): Promise<void> {
  const warm = Number(process.argv[2] ?? 3000);
  const rounds = Number(process.argv[3] ?? 9);
  const synchronous = (process.argv[4] === 'NORMAL' ? 'NORMAL' : 'FULL') as Synchronous;
  if (!(warm >= 0 && rounds >= 1)) throw new Error('usage: node dist/bench/steady.js [WARM ≥ 0] [ROUNDS ≥ 1] [FULL|NORMAL]');
  const { rows } = await runSteady({ warm, rounds, synchronous, log: (l) => console.log(l) });
  console.log(`\nsteady state, synchronous=${synchronous}: ${warm} sequential + ${2 * warm} calls @8 of warm-up each, ${rounds} rounds of 300 + 600`);
  console.log('| entry | p50 | calls/s @8 | toolgate p50 ÷ it | toolgate calls/s ÷ it |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.entry} | ${(r.p50 * 1000).toFixed(0)} µs | ${r.rate.toFixed(0)} | ${r.p50Ratio.toFixed(2)}× | ${r.rateRatio.toFixed(2)}× |`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
