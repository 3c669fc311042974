/** The two loads every side-by-side entry gets: sequential calls, and calls at a fixed concurrency. */
import type { Target } from './target.js';

/** A counter shared by all loads, so every call of a run has its own id. */
let nextCall = 0;
export const callId = (): number => nextCall++;

/** `n` calls one after the other; the latency of each, in ms. */
export async function sequential(target: Target, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    const i = callId();
    const t = performance.now();
    await target.call(i);
    out.push(performance.now() - t);
  }
  return out;
}

/** `n` calls with `concurrency` in flight at any time: calls per second, and each call's latency. */
export async function concurrent(target: Target, n: number, concurrency: number): Promise<{ rate: number; latencies: number[] }> {
  const latencies: number[] = [];
  let issued = 0;
  const started = performance.now();
  const worker = async () => {
    while (issued < n) {
      issued++;
      const i = callId();
      const t = performance.now();
      await target.call(i);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return { rate: (n / (performance.now() - started)) * 1000, latencies };
}
