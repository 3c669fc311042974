/**
 * Interleaved A/B of toolgate in-process daemons that differ in one thing: every variant is started once,
 * warmed up, then measured in rounds (each round runs every variant back to back, in a rotating order), and
 * each variant is compared with the first (the reference) by the median of per-round ratios, with their
 * spread (min–max over the rounds) and the per-call difference in µs.
 *
 * Sections of `npm run bench` built on it (BENCH_ONLY=telemetry, BENCH_ONLY=approval, BENCH_ONLY=base):
 * - `telemetry`: the daemon as shipped (tracing off: `OTEL_TRACES_EXPORTER` unset, no metrics on stdio)
 *   against the same build with the telemetry hooks not installed at all (bench/no-telemetry).
 * - `approval`: the daemon without an approval policy against the same build whose profile asks before
 *   `calendar.delete`, `calendar.share` and `memory.forget` (the example configs' list), both calling
 *   `calendar.create`, which does not ask: what the approval check costs a call that is not asked (issue 38).
 * - `base`: another build of toolgate (`BENCH_BASE=/path/to/checkout`, built) against this one.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { concurrent, sequential } from './load.js';
import { median, quantile } from './stats.js';
import { BENCH_DIST, tempDir } from './env.js';
import type { Target } from './target.js';
import { startToolgateStdio, type Synchronous } from './targets/toolgate.js';

export interface AbVariant {
  key: string;
  name: string;
  start(dir: string): Promise<Target>;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface AbRow {
  key: string;
  name: string;
  /** Median over rounds of the round's sequential p50 (ms), and of calls/s at the concurrency. */
  p50: number;
  rate: number;
  /** Per-round ratios to the reference (1 for the reference itself). */
  p50Ratio: Spread;
  rateRatio: Spread;
  /** Median of per-round differences to the reference, µs per call: sequential p50, and 1e6 ÷ calls/s at the concurrency. */
  seqDeltaUs: Spread;
  concDeltaUs: Spread;
}

export interface AbResult {
  title: string;
  /** The call-path hook measured alone (the telemetry section). */
  hook?: import('./hook-cost.js').HookCost;
  synchronous: Synchronous;
  rounds: number;
  seq: number;
  conc: number;
  concurrency: number;
  rows: AbRow[];
}

const spread = (xs: number[]): Spread => ({ median: median(xs), min: quantile(xs, 0), max: quantile(xs, 1) });

export async function runAb(opts: {
  title: string;
  variants: AbVariant[];
  synchronous: Synchronous;
  rounds: number;
  seq: number;
  conc: number;
  concurrency: number;
  log: (line: string) => void;
}): Promise<AbResult> {
  const dir = tempDir('toolgate-bench-ab-');
  const targets: Array<[AbVariant, Target]> = [];
  try {
    for (const v of opts.variants) targets.push([v, await v.start(join(dir, v.key))]);
    for (const [, t] of targets) await sequential(t, 200); // warm-up: JIT, caches, first pages
    const perRound = new Map<string, Array<{ p50: number; rate: number }>>(opts.variants.map((v) => [v.key, []]));
    for (let r = 0; r < opts.rounds; r++) {
      const order = targets.map((_, j) => targets[(j + r) % targets.length]!);
      for (const [v, t] of order) {
        const seq = await sequential(t, opts.seq);
        const conc = await concurrent(t, opts.conc, opts.concurrency);
        perRound.get(v.key)!.push({ p50: median(seq), rate: conc.rate });
      }
      opts.log(`  round ${r + 1}/${opts.rounds}: ${opts.variants.map((v) => { const x = perRound.get(v.key)!.at(-1)!; return `${v.key} ${(x.p50 * 1000).toFixed(0)} µs, ${x.rate.toFixed(0)}/s`; }).join('; ')}`);
    }
    const ref = perRound.get(opts.variants[0]!.key)!;
    const rows = opts.variants.map((v): AbRow => {
      const mine = perRound.get(v.key)!;
      return {
        key: v.key,
        name: v.name,
        p50: median(mine.map((x) => x.p50)),
        rate: median(mine.map((x) => x.rate)),
        p50Ratio: spread(mine.map((x, r) => x.p50 / ref[r]!.p50)),
        rateRatio: spread(mine.map((x, r) => x.rate / ref[r]!.rate)),
        seqDeltaUs: spread(mine.map((x, r) => (x.p50 - ref[r]!.p50) * 1000)),
        concDeltaUs: spread(mine.map((x, r) => 1e6 / x.rate - 1e6 / ref[r]!.rate)),
      };
    });
    return { title: opts.title, synchronous: opts.synchronous, rounds: opts.rounds, seq: opts.seq, conc: opts.conc, concurrency: opts.concurrency, rows };
  } finally {
    for (const [, t] of targets) await t.stop().catch(() => {});
  }
}

const NO_TELEMETRY = join(BENCH_DIST, 'no-telemetry', 'register.js');

/** The in-process daemon of this build, its telemetry hooks as shipped (`on`) or not installed (`off`). */
export function telemetryVariant(telemetry: 'on' | 'off', synchronous: Synchronous): AbVariant {
  return {
    key: telemetry === 'on' ? 'shipped' : 'bare',
    name: telemetry === 'on' ? 'as shipped: telemetry hooks installed, `OTEL_TRACES_EXPORTER` unset' : 'telemetry hooks not installed (bench/no-telemetry)',
    start: async (dir) => {
      mkdirSync(dir, { recursive: true });
      return startToolgateStdio({
        executor: 'inprocess', dbFile: join(dir, 'toolgate.db'), dataDir: dir, synchronous,
        nodeArgs: ['--import', NO_TELEMETRY], unbundled: true, env: { BENCH_TELEMETRY: telemetry },
      });
    },
  };
}

/** The in-process daemon of this build, with or without the example configs' approval list (`calendar.create` never asks). */
export function approvalVariant(ask: boolean, synchronous: Synchronous): AbVariant {
  return {
    key: ask ? 'asking' : 'plain',
    name: ask ? 'profile asks before calendar.delete, calendar.share, memory.forget' : 'no approval policy',
    start: async (dir) => {
      mkdirSync(dir, { recursive: true });
      return startToolgateStdio({
        executor: 'inprocess', dbFile: join(dir, 'toolgate.db'), dataDir: dir, synchronous,
        ...(ask ? { profile: { approval: { ask: ['calendar.delete', 'calendar.share', 'memory.forget'], ttl_s: 600 } } } : {}),
      });
    },
  };
}

/** The in-process daemon of a checkout (`root`: its bin/toolgate.mjs, built), named by `label`. */
export function buildVariant(key: string, label: string, root: string | undefined, synchronous: Synchronous): AbVariant {
  return {
    key,
    name: label,
    start: async (dir) => {
      mkdirSync(dir, { recursive: true });
      return startToolgateStdio({
        executor: 'inprocess', dbFile: join(dir, 'toolgate.db'), dataDir: dir, synchronous,
        ...(root ? { bin: join(root, 'bin', 'toolgate.mjs') } : {}),
      });
    },
  };
}
