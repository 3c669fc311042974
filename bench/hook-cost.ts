/**
 * The telemetry hook on the call path measured alone, in the bench process: `observeToolCall` (tracing off,
 * no metrics) around a call that does nothing, against the same call without it. Interleaved rounds; the
 * median of per-round differences, ns per call.
 */
import { observeToolCall } from '../src/telemetry/tool-call.js';
import { median, quantile } from './stats.js';

export interface HookCost {
  calls: number;
  rounds: number;
  /** ns per call: the median of per-round differences, and their spread. */
  ns: { median: number; min: number; max: number };
}

export async function measureHookCost(rounds = 9, calls = 100_000): Promise<HookCost> {
  const work = () => Promise.resolve({ status: 'success' });
  const info = { transport: 'stdio', executor: 'inprocess', module: 'calendar', method: 'create', toolCallId: 'c1' };
  const time = async (f: () => Promise<unknown>) => {
    const t = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await f();
    return Number(process.hrtime.bigint() - t) / calls;
  };
  const hooked = () => observeToolCall(undefined, info, work);
  await time(hooked); // warm-up: JIT
  await time(work);
  const diffs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so neither always runs on a warmer (or more loaded) moment.
    let a: number, b: number;
    if (r % 2 === 0) {
      a = await time(hooked);
      b = await time(work);
    } else {
      b = await time(work);
      a = await time(hooked);
    }
    diffs.push(a - b);
  }
  return { calls, rounds, ns: { median: median(diffs), min: quantile(diffs, 0), max: quantile(diffs, 1) } };
}
