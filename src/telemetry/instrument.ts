/**
 * Child spans of a tool call, installed only when tracing is on (a daemon
 * without an exporter keeps its store and executor untouched): each store
 * transaction, and each project-cli process, whose environment gets the
 * span's `TRACEPARENT` so a span the child emits joins the trace.
 */
import type { Store, Tx, UnitOptions } from '../store/store.js';
import { inSpan, traceEnv } from './spans.js';

/** The store with `transaction()` inside a `toolgate.store.transaction` span; everything else as it was. */
export function traceStore<S extends Store>(store: S): S {
  const attributes = { 'db.system.name': store.engine === 'postgres' ? 'postgresql' : 'sqlite' };
  // Every argument after `work` passed on as given (TypeScript accepts a wrapper that takes fewer): the
  // options' `signal` is how a cancel, a time limit or shutdown stops the unit (Store.transaction).
  const transaction = <T>(work: (tx: Tx) => Promise<T>, ...rest: [opts?: UnitOptions]): Promise<T> =>
    inSpan('toolgate.store.transaction', attributes, () => store.transaction(work, ...rest));
  return new Proxy(store, {
    get(target, key) {
      if (key === 'transaction') return transaction;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    set(target, key, value) {
      return Reflect.set(target, key, value, target);
    },
  });
}

interface Runs<R extends { env: Record<string, string> }, L, O> {
  run(req: R, log: L): Promise<O>;
}

/** The subprocess executor with each run inside a `toolgate.subprocess` span, its context passed as `TRACEPARENT`. */
// The executor is an object whose own methods call `this.run` for each child: its `run` is replaced in place,
// so every other method (and the prototype's) keeps working.
export function traceExecutor<R extends { env: Record<string, string>; module: string; method: string }, L, O, E extends Runs<R, L, O>>(executor: E): E {
  const run = executor.run.bind(executor);
  executor.run = (req: R, log: L) =>
    inSpan('toolgate.subprocess project-cli', { 'process.executable.name': 'project-cli' }, () => run({ ...req, env: { ...req.env, ...traceEnv() } }, log));
  return executor;
}
