/**
 * Where a call's wall time goes inside the daemon, phase by phase, as the
 * daemon's main thread sees it (bench/cycle-probe.ts stamps stdin reads,
 * `BEGIN`, the end of `COMMIT` and stdout writes). Two loads on one
 * in-process daemon (`serve --stdio`, `synchronous=FULL` unless asked),
 * each after a warm-up:
 *
 * - sequential: per call, request read → `BEGIN` (reading, validating,
 *   admitting, the group's wait for a quiet turn), `BEGIN` → end of
 *   `COMMIT` (the unit's work, its statements, the commit), end of `COMMIT` →
 *   the write carrying the answer;
 * - concurrency 8: per group commit, the same phases plus the host's
 *   turnaround (the first write of a group's answers → the next request's
 *   arrival), which the daemon spends idle.
 *
 *   npm run build && node dist/bench/cycle.js [N] [FULL|NORMAL]      (default 1500 calls, FULL)
 */
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIST, tempDir } from './env.js';
import { concurrent, sequential } from './load.js';
import { median } from './stats.js';
import { startToolgateStdio, type Synchronous } from './targets/toolgate.js';
import type { Stamp } from './cycle-probe.js';

export interface SequentialPhases {
  calls: number;
  readToBegin: number;
  beginToCommit: number;
  commitToWrite: number;
  inDaemon: number;
}

export interface GroupPhases {
  groups: number;
  callsPerGroup: number;
  beginToCommit: number;
  commitToFirstWrite: number;
  hostTurnaround: number;
  nextReadToBegin: number;
  cycle: number;
}

/** Sequential calls: each request read (a read larger than `minBytes`) up to the write after its COMMIT. */
export function sequentialPhases(stamps: readonly Stamp[], minBytes = 300): SequentialPhases {
  const calls: Array<{ d: number; B?: number; C?: number; w?: number }> = [];
  let cur: { d: number; B?: number; C?: number; w?: number } | undefined;
  for (const s of stamps) {
    if (s[0] === 'd' && s[2] > minBytes) cur = { d: s[1] };
    else if (s[0] === 'B' && cur) cur.B = s[1];
    else if (s[0] === 'C' && cur?.B !== undefined) cur.C = s[1];
    else if (s[0] === 'w' && cur?.C !== undefined) {
      cur.w = s[1];
      calls.push(cur);
      cur = undefined;
    }
  }
  const m = (f: (c: Required<(typeof calls)[number]>) => number) => median(calls.map((c) => f(c as Required<typeof c>)));
  return {
    calls: calls.length,
    readToBegin: m((c) => c.B - c.d),
    beginToCommit: m((c) => c.C - c.B),
    commitToWrite: m((c) => c.w - c.C),
    inDaemon: m((c) => c.w - c.d),
  };
}

/** Group commits under load: each BEGIN…COMMIT, the writes that follow it, the reads that feed the next. */
export function groupPhases(stamps: readonly Stamp[], calls: number): GroupPhases {
  const groups: Array<{ B: number; C: number }> = [];
  let begin: number | undefined;
  const reads: number[] = [];
  const writes: number[] = [];
  for (const s of stamps) {
    if (s[0] === 'd') reads.push(s[1]);
    else if (s[0] === 'w') writes.push(s[1]);
    else if (s[0] === 'B') begin = s[1];
    else if (begin !== undefined) {
      groups.push({ B: begin, C: s[1] });
      begin = undefined;
    }
  }
  const work: number[] = [];
  const post: number[] = [];
  const turnaround: number[] = [];
  const admit: number[] = [];
  for (let i = 0; i + 1 < groups.length; i++) {
    const g = groups[i]!;
    const next = groups[i + 1]!;
    work.push(g.C - g.B);
    const firstWrite = writes.find((w) => w >= g.C && w < next.B);
    const firstRead = reads.find((r) => r > g.C && r < next.B);
    if (firstWrite !== undefined) post.push(firstWrite - g.C);
    if (firstWrite !== undefined && firstRead !== undefined && firstRead >= firstWrite) turnaround.push(firstRead - firstWrite);
    if (firstRead !== undefined) admit.push(next.B - firstRead);
  }
  // BEGIN to BEGIN: one whole cycle per group after the first.
  const span = groups.length > 1 ? groups.at(-1)!.B - groups[0]!.B : 0;
  return {
    groups: groups.length,
    callsPerGroup: groups.length ? calls / groups.length : 0,
    beginToCommit: median(work),
    commitToFirstWrite: median(post),
    hostTurnaround: median(turnaround),
    nextReadToBegin: median(admit),
    cycle: groups.length > 1 ? span / (groups.length - 1) : 0,
  };
}

async function recorded(pid: number, out: string, work: () => Promise<void>): Promise<Stamp[]> {
  if (existsSync(out)) unlinkSync(out);
  process.kill(pid, 'SIGUSR2');
  await work();
  process.kill(pid, 'SIGUSR2');
  const until = performance.now() + 10_000;
  while (!existsSync(out)) {
    if (performance.now() > until) throw new Error(`cycle: no ${out} (was the probe loaded?)`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return JSON.parse(readFileSync(out, 'utf8')) as Stamp[];
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 1500);
  const synchronous = (process.argv[3] === 'NORMAL' ? 'NORMAL' : 'FULL') as Synchronous;
  const dir = tempDir('toolgate-bench-cycle-');
  const out = join(dir, 'cycle.json');
  const daemon = await startToolgateStdio({
    executor: 'inprocess', dbFile: join(dir, 'cycle.db'), dataDir: dir, synchronous,
    nodeArgs: ['--import', pathToFileURL(join(BENCH_DIST, 'cycle-probe.js')).href],
    env: { BENCH_CYCLE_PROBE_OUT: out },
  });
  const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  try {
    await sequential(daemon, 300);
    let latencies: number[] = [];
    const seq = sequentialPhases(await recorded(daemon.pid, out, async () => void (latencies = await sequential(daemon, Math.min(n, 400)))));
    console.log(`sequential, ${seq.calls} calls, synchronous=${synchronous}: client p50 ${us(median(latencies))}, in the daemon ${us(seq.inDaemon)}`);
    console.log(`  read → BEGIN ${us(seq.readToBegin)} · BEGIN → end of COMMIT ${us(seq.beginToCommit)} · end of COMMIT → answer written ${us(seq.commitToWrite)}`);
    await concurrent(daemon, 1000, 8);
    let rate = 0;
    const groups = groupPhases(await recorded(daemon.pid, out, async () => void ({ rate } = await concurrent(daemon, n, 8))), n);
    console.log(`concurrency 8, ${n} calls: ${rate.toFixed(0)} calls/s, ${groups.groups} groups of ${groups.callsPerGroup.toFixed(1)} calls, one every ${us(groups.cycle)}`);
    console.log(`  BEGIN → end of COMMIT ${us(groups.beginToCommit)} · end of COMMIT → first write ${us(groups.commitToFirstWrite)} · first write → next request ${us(groups.hostTurnaround)} · that request → next BEGIN ${us(groups.nextReadToBegin)}`);
  } finally {
    await daemon.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
