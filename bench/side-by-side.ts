/**
 * Entries (a)–(e) side by side (b and b′ are the two MCP anchors): every entry is started once, warmed up, then
 * measured in interleaved rounds (each round runs every entry back to back, in
 * a rotating order), so that the noise of a shared machine lands on all of them
 * alike. Ratios are medians of per-round ratios.
 */
import { join } from 'node:path';
import { concurrent, sequential } from './load.js';
import { median, medianRatio, p99 } from './stats.js';
import { memoryOf, tempDir } from './env.js';
import type { Target } from './target.js';
import { startEcho } from './targets/echo.js';
import { startMcp } from './targets/mcp.js';
import { startToolgateStdio, type Synchronous } from './targets/toolgate.js';
import { nodeStart } from './targets/node-start.js';

export type EntryKey = 'echo' | 'mcp' | 'mcpEq' | 'inprocess' | 'subprocess' | 'subprocessBundle' | 'node';

/** Every entry, in the tables' order. */
export const ENTRY_KEYS: readonly EntryKey[] = ['echo', 'mcp', 'mcpEq', 'inprocess', 'subprocess', 'subprocessBundle', 'node'];

export interface EntryResult {
  key: EntryKey;
  name: string;
  /** Per round: sequential p50 and p99, and calls/s at concurrency 8. */
  rounds: Array<{ p50: number; p99: number; rate: number }>;
  p50: number;
  p99: number;
  rate: number;
  /** p99 latency of the calls at concurrency 8 (pooled). */
  concP99: number;
  seqPerRound: number;
  concPerRound: number;
  peakRss?: number;
}

export interface SideBySide {
  synchronous: Synchronous;
  rounds: number;
  concurrency: number;
  /** The entries that ran (all of them, unless `only` named a subset). */
  entries: Partial<Record<EntryKey, EntryResult>>;
  /** Median of per-round ratios; NaN when either entry did not run. */
  ratio(num: EntryKey, den: EntryKey, what: 'p50' | 'rate'): number;
}

export interface SideBySideOptions {
  synchronous: Synchronous;
  rounds: number;
  concurrency: number;
  /** Calls per round for the fast entries (a–c) and the ones that start a process per call (d, e). */
  fast: { seq: number; conc: number };
  slow: { seq: number; conc: number };
  /** Run only these entries (a smoke run of a few; default all). */
  only?: ReadonlySet<EntryKey>;
  /** Run after each round's entries (the floor's round, so that a per-round subtraction sees the same moment). */
  eachRound?: () => unknown;
  log: (line: string) => void;
}

export async function runSideBySide(opts: SideBySideOptions): Promise<SideBySide> {
  const dir = tempDir();
  const targets: Array<[EntryKey, Target]> = [];
  try {
    const start: Record<EntryKey, () => Promise<Target> | Target> = {
      echo: startEcho,
      mcp: () => startMcp(join(dir, 'mcp.db'), opts.synchronous, 'thin'),
      mcpEq: () => startMcp(join(dir, 'mcp-equal.db'), opts.synchronous, 'equal'),
      inprocess: () => startToolgateStdio({ executor: 'inprocess', dbFile: join(dir, 'inprocess.db'), dataDir: dir, synchronous: opts.synchronous }),
      subprocess: () => startToolgateStdio({ executor: 'subprocess', dbFile: join(dir, 'subprocess.db'), dataDir: dir, synchronous: opts.synchronous, awaitLaunch: true }),
      // The same daemon with project-cli started from its bundle, not its start-up snapshot (the A/B of that snapshot).
      subprocessBundle: () =>
        startToolgateStdio({
          executor: 'subprocess', dbFile: join(dir, 'subprocess-bundle.db'), dataDir: dir, synchronous: opts.synchronous, awaitLaunch: true,
          env: { TOOLGATE_CLI_SNAPSHOT: 'off' }, name: `toolgate subprocess, bundle (${opts.synchronous})`,
        }),
      node: nodeStart,
    };
    for (const k of ENTRY_KEYS) if (!opts.only || opts.only.has(k)) targets.push([k, await start[k]()]);
    const isSlow = (k: EntryKey) => k === 'subprocess' || k === 'subprocessBundle' || k === 'node';

    for (const [k, t] of targets) await sequential(t, isSlow(k) ? 3 : 100); // warm-up: JIT, caches, first pages

    const raw = new Map<EntryKey, { rounds: EntryResult['rounds']; seq: number[]; conc: number[] }>();
    for (const [k] of targets) raw.set(k, { rounds: [], seq: [], conc: [] });
    for (let r = 0; r < opts.rounds; r++) {
      const order = targets.map((_, j) => targets[(j + r) % targets.length]!);
      for (const [k, t] of order) {
        const counts = isSlow(k) ? opts.slow : opts.fast;
        const seq = await sequential(t, counts.seq);
        const conc = await concurrent(t, counts.conc, opts.concurrency);
        const e = raw.get(k)!;
        e.rounds.push({ p50: median(seq), p99: p99(seq), rate: conc.rate });
        e.seq.push(...seq);
        e.conc.push(...conc.latencies);
      }
      opts.eachRound?.();
      opts.log(`  round ${r + 1}/${opts.rounds}: ${[...raw].map(([k, e]) => `${k} ${e.rounds.at(-1)!.p50.toFixed(2)} ms`).join(', ')}`);
    }

    const entries: Partial<Record<EntryKey, EntryResult>> = {};
    for (const [k, t] of targets) {
      const e = raw.get(k)!;
      const counts = isSlow(k) ? opts.slow : opts.fast;
      entries[k] = {
        key: k,
        name: t.name,
        rounds: e.rounds,
        p50: median(e.rounds.map((x) => x.p50)),
        p99: p99(e.seq),
        rate: median(e.rounds.map((x) => x.rate)),
        concP99: p99(e.conc),
        seqPerRound: counts.seq,
        concPerRound: counts.conc,
        ...(Number.isFinite(t.pid) ? { peakRss: memoryOf(t.pid).peak } : {}),
      };
    }
    return {
      synchronous: opts.synchronous,
      rounds: opts.rounds,
      concurrency: opts.concurrency,
      entries,
      ratio(num, den, what) {
        const pick = (k: EntryKey) => entries[k]?.rounds.map((x) => x[what]) ?? [];
        return medianRatio(pick(num), pick(den));
      },
    };
  } finally {
    for (const [, t] of targets) await t.stop().catch(() => {});
  }
}
