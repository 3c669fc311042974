/**
 * A probe loaded into a toolgate daemon with `node --import` (bench/commit-block.ts
 * starts it so): it wraps better-sqlite3's `Statement#run/get/all` in the
 * daemon's main thread and times every statement and every `COMMIT` from
 * outside toolgate's code, beside an event-loop delay histogram
 * (`monitorEventLoopDelay`) and the event loop's utilization.
 *
 * Control is a signal: on SIGUSR2 the probe writes what it saw since the last
 * one to the file `$BENCH_COMMIT_PROBE_OUT` names (write, then rename) and
 * starts over, so the bench brackets a burst with two signals. Without that
 * variable (or in a worker thread) the probe does nothing.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

/** What one window (between two signals) holds; all times in ms. */
export interface ProbeWindow {
  wall: number;
  /** Event-loop utilization over the window (0–1). */
  elu: number;
  /** CPU time of the whole process over the window (all threads). */
  cpu: number;
  commits: Array<{ wall: number; cpu: number; units: number; group: number }>;
  /** Time in every other statement on the main thread (BEGIN, SAVEPOINTs, the writes, reads). */
  otherStatements: number;
  statements: number;
  loopDelay: { min: number; p50: number; p90: number; p99: number; max: number; mean: number; count: number };
}

const out = process.env.BENCH_COMMIT_PROBE_OUT;
if (isMainThread && out) {
  // The daemon's own copy of better-sqlite3: this file sits in the same tree (dist/bench).
  const require = createRequire(import.meta.url);
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const scratch = new Database(':memory:');
  const proto = Object.getPrototypeOf(scratch.prepare('SELECT 1')) as Record<'run' | 'get' | 'all', (...a: unknown[]) => unknown>;
  scratch.close();

  let windowStart = performance.now();
  let cpuStart = process.cpuUsage();
  let eluStart = performance.eventLoopUtilization();
  let commits: ProbeWindow['commits'] = [];
  let other = 0;
  let statements = 0;
  let groupStart = 0;
  let units = 0;
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();

  for (const method of ['run', 'get', 'all'] as const) {
    const original = proto[method];
    proto[method] = function timed(this: { source: string }, ...args: unknown[]) {
      const source = this.source;
      const t0 = performance.now();
      if (source === 'COMMIT') {
        const c0 = process.cpuUsage();
        try {
          return original.apply(this, args);
        } finally {
          const t1 = performance.now();
          const c = process.cpuUsage(c0);
          commits.push({ wall: t1 - t0, cpu: (c.user + c.system) / 1000, units, group: t1 - groupStart });
          statements++;
        }
      }
      if (source === 'BEGIN IMMEDIATE') {
        groupStart = t0;
        units = 1;
      } else if (source === 'SAVEPOINT unit') units++;
      try {
        return original.apply(this, args);
      } finally {
        other += performance.now() - t0;
        statements++;
      }
    };
  }

  process.on('SIGUSR2', () => {
    const now = performance.now();
    const c = process.cpuUsage(cpuStart);
    const ns = (x: number) => x / 1e6;
    const window: ProbeWindow = {
      wall: now - windowStart,
      elu: performance.eventLoopUtilization(eluStart).utilization,
      cpu: (c.user + c.system) / 1000,
      commits,
      otherStatements: other,
      statements,
      loopDelay: {
        min: ns(histogram.min), p50: ns(histogram.percentile(50)), p90: ns(histogram.percentile(90)),
        p99: ns(histogram.percentile(99)), max: ns(histogram.max), mean: ns(histogram.mean), count: histogram.count,
      },
    };
    writeFileSync(`${out}.tmp`, JSON.stringify(window));
    renameSync(`${out}.tmp`, out);
    histogram.reset();
    windowStart = performance.now();
    cpuStart = process.cpuUsage();
    eluStart = performance.eventLoopUtilization();
    commits = [];
    other = 0;
    statements = 0;
  });
}
