/**
 * Does the SQLite commit (its fsync) block the daemon's event loop, and for
 * how long compared with everything else the loop does?
 *
 * Two in-process daemons, `synchronous=FULL` and `NORMAL` (NORMAL: no fsync at
 * commit in WAL mode), each started with bench/commit-probe.ts preloaded
 * (`node --import`): the probe times every `COMMIT` (wall and process CPU),
 * every other statement, the event loop's utilization and an event-loop delay
 * histogram inside the daemon, from outside toolgate's code. Interleaved
 * rounds; per round and daemon: sequential calls, then a burst at
 * concurrency 8, each bracketed by the probe's signal. Medians over rounds.
 */
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIST, tempDir } from './env.js';
import { concurrent, sequential } from './load.js';
import { median, medianRatio, quantile } from './stats.js';
import type { ProbeWindow } from './commit-probe.js';
import { startToolgateStdio, type Synchronous, type ToolgateStdio } from './targets/toolgate.js';

export type LoadKind = 'seq' | 'conc';

/** One daemon under one load: medians over the rounds (times in ms). */
export interface CommitBlockRow {
  synchronous: Synchronous;
  load: LoadKind;
  /** Client side: calls/s (both loads) and the sequential p50. */
  rate: number;
  p50: number;
  callsPerCommit: number;
  commitP50: number;
  commitP99: number;
  /** Process CPU during a COMMIT (median): the rest of its wall time is waiting for the disk. */
  commitCpuP50: number;
  /** Per call: COMMIT wall, the part of it not on a CPU, every other statement, the loop's busy time. */
  commitPerCall: number;
  commitWaitPerCall: number;
  otherStatementsPerCall: number;
  busyPerCall: number;
  /** CPU time of the whole process (every thread) per call: unlike the loop's busy time, not inflated by preemption. */
  cpuPerCall: number;
  /** Share of the window's wall time the main thread spent inside COMMIT; event-loop utilization. */
  commitShare: number;
  elu: number;
  /** Event-loop delay (monitorEventLoopDelay, 1 ms resolution): how late a timer fired. */
  loopDelayP50: number;
  loopDelayP99: number;
  loopDelayMax: number;
}

export interface CommitBlockResult {
  rounds: number;
  concurrency: number;
  seq: number;
  conc: number;
  rows: CommitBlockRow[];
  /** calls/s at concurrency, NORMAL ÷ FULL: median of per-round ratios (NORMAL has no fsync: the ceiling of moving it). */
  normalOverFull: number;
}

const PROBE = pathToFileURL(join(BENCH_DIST, 'commit-probe.js')).href;

async function waitForFile(file: string, timeoutMs = 10_000): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!existsSync(file)) {
    if (performance.now() > until) throw new Error(`commit probe: no ${file} (was the probe loaded?)`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The probe's window over `work`: one signal before (start over), one after (write it out). */
async function probed<T>(tg: ToolgateStdio, file: string, work: () => Promise<T>): Promise<{ value: T; window: ProbeWindow }> {
  const signal = async () => {
    if (existsSync(file)) unlinkSync(file);
    process.kill(tg.pid, 'SIGUSR2');
    await waitForFile(file);
    const window = JSON.parse(readFileSync(file, 'utf8')) as ProbeWindow;
    unlinkSync(file);
    return window;
  };
  await signal();
  const value = await work();
  return { value, window: await signal() };
}

type RoundFigures = Omit<CommitBlockRow, 'synchronous' | 'load'>;

function figures(w: ProbeWindow, calls: number, rate: number, p50: number): RoundFigures {
  const walls = w.commits.map((c) => c.wall);
  const commitWall = walls.reduce((a, b) => a + b, 0);
  const commitCpu = w.commits.reduce((a, c) => a + Math.min(c.cpu, c.wall), 0);
  return {
    rate,
    p50,
    callsPerCommit: calls / Math.max(1, w.commits.length),
    commitP50: median(walls),
    commitP99: quantile(walls, 0.99),
    commitCpuP50: median(w.commits.map((c) => c.cpu)),
    commitPerCall: commitWall / calls,
    commitWaitPerCall: (commitWall - commitCpu) / calls,
    otherStatementsPerCall: w.otherStatements / calls,
    busyPerCall: (w.elu * w.wall) / calls,
    cpuPerCall: w.cpu / calls,
    commitShare: commitWall / w.wall,
    elu: w.elu,
    loopDelayP50: w.loopDelay.p50,
    loopDelayP99: w.loopDelay.p99,
    loopDelayMax: w.loopDelay.max,
  };
}

export async function runCommitBlock(opts: { rounds: number; concurrency: number; seq: number; conc: number; log: (line: string) => void }): Promise<CommitBlockResult> {
  const daemons: Array<{ synchronous: Synchronous; tg: ToolgateStdio; file: string }> = [];
  const perRound = new Map<string, RoundFigures[]>();
  try {
    for (const synchronous of ['FULL', 'NORMAL'] as const) {
      const dir = tempDir(`toolgate-bench-commit-${synchronous}-`);
      const file = join(dir, 'commit-probe.json');
      const tg = await startToolgateStdio({
        executor: 'inprocess', dbFile: join(dir, 'c.db'), dataDir: dir, synchronous, nodeArgs: ['--import', PROBE],
        env: { BENCH_COMMIT_PROBE_OUT: file },
        name: `toolgate inprocess + commit probe (${synchronous})`,
      });
      daemons.push({ synchronous, tg, file });
      await sequential(tg, 100); // warm-up: JIT, statements, first pages
      await concurrent(tg, 100, opts.concurrency);
    }
    for (let r = 0; r < opts.rounds; r++) {
      const order = r % 2 === 0 ? daemons : [...daemons].reverse();
      const line: string[] = [];
      for (const { synchronous, tg, file } of order) {
        const seq = await probed(tg, file, () => sequential(tg, opts.seq));
        const seqWall = seq.window.wall;
        const conc = await probed(tg, file, () => concurrent(tg, opts.conc, opts.concurrency));
        const rows: Array<[LoadKind, RoundFigures]> = [
          ['seq', figures(seq.window, opts.seq, (opts.seq / seqWall) * 1000, median(seq.value))],
          ['conc', figures(conc.window, opts.conc, conc.value.rate, median(conc.value.latencies))],
        ];
        for (const [load, f] of rows) {
          const key = `${synchronous}/${load}`;
          perRound.set(key, [...(perRound.get(key) ?? []), f]);
        }
        line.push(`${synchronous}: COMMIT ${rows[1]![1].commitP50.toFixed(3)} ms (${(rows[1]![1].commitShare * 100).toFixed(0)} % of wall @${opts.concurrency})`);
      }
      opts.log(`  round ${r + 1}/${opts.rounds}: ${line.join(', ')}`);
    }
  } finally {
    for (const { tg } of daemons) await tg.stop().catch(() => {});
  }
  const rows: CommitBlockRow[] = [];
  for (const synchronous of ['FULL', 'NORMAL'] as const) {
    for (const load of ['seq', 'conc'] as const) {
      const rs = perRound.get(`${synchronous}/${load}`) ?? [];
      const med = (k: keyof RoundFigures) => median(rs.map((x) => x[k]));
      const row = { synchronous, load } as CommitBlockRow;
      for (const k of Object.keys(rs[0] ?? {}) as Array<keyof RoundFigures>) row[k] = med(k);
      rows.push(row);
    }
  }
  const rates = (synchronous: Synchronous) => (perRound.get(`${synchronous}/conc`) ?? []).map((x) => x.rate);
  const normalOverFull = medianRatio(rates('NORMAL'), rates('FULL'));
  return { rounds: opts.rounds, concurrency: opts.concurrency, seq: opts.seq, conc: opts.conc, rows, normalOverFull };
}
