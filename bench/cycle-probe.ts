/**
 * A probe loaded into a toolgate daemon with `node --import` (bench/cycle.ts
 * starts it so): it stamps, on the daemon's main thread, every read of stdin,
 * every `BEGIN IMMEDIATE` (before it runs), the end of every `COMMIT` and
 * every write to stdout — from outside toolgate's code (better-sqlite3's
 * `Statement#run` and the process streams), so it works on any build.
 *
 * Control is a signal: the first SIGUSR2 starts recording, the next writes
 * the stamps to the file `$BENCH_CYCLE_PROBE_OUT` names (write, then rename)
 * and stops. Without that variable (or in a worker thread) it does nothing.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';

/** `[kind, ms, bytes]`: d = stdin read, B = BEGIN, C = end of COMMIT, w = stdout write. */
export type Stamp = ['d' | 'w', number, number] | ['B' | 'C', number];

const out = process.env.BENCH_CYCLE_PROBE_OUT;
if (isMainThread && out) {
  const require = createRequire(import.meta.url);
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const scratch = new Database(':memory:');
  const proto = Object.getPrototypeOf(scratch.prepare('SELECT 1')) as { run: (...a: unknown[]) => unknown };
  scratch.close();

  let recording = false;
  const stamps: Stamp[] = [];
  process.stdin.prependListener('data', (chunk: Buffer) => {
    if (recording) stamps.push(['d', performance.now(), chunk.length]);
  });
  const run = proto.run;
  proto.run = function stamped(this: { source: string }, ...args: unknown[]) {
    if (recording && this.source === 'BEGIN IMMEDIATE') stamps.push(['B', performance.now()]);
    try {
      return run.apply(this, args);
    } finally {
      if (recording && this.source === 'COMMIT') stamps.push(['C', performance.now()]);
    }
  };
  const write = process.stdout.write.bind(process.stdout) as (...a: unknown[]) => boolean;
  process.stdout.write = ((...args: unknown[]) => {
    if (recording) stamps.push(['w', performance.now(), (args[0] as { length?: number }).length ?? 0]);
    return write(...args);
  }) as typeof process.stdout.write;
  process.on('SIGUSR2', () => {
    if (!recording) {
      recording = true;
      return;
    }
    recording = false;
    writeFileSync(`${out}.tmp`, JSON.stringify(stamps.splice(0)));
    renameSync(`${out}.tmp`, out);
  });
}
