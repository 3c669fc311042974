/**
 * The capacity model of the PostgreSQL section, computed from the run's own
 * figures (bench/pg.ts): CPU per call of the daemon and of the server, the
 * commit probe, and the write transactions per call. docs/protocols/postgresql.md
 * ("How far it scales") explains the formulas.
 */
import type { PgResult } from './pg.js';

export interface Capacity {
  /** ms of CPU per call: the daemon, the server's backends, the server's other processes. */
  daemonMs: number;
  backendMs: number;
  otherMs: number;
  /** Calls/s one daemon can drive on one core of its own: 1000 ÷ daemonMs. */
  perDaemonCore: number;
  /** Calls/s one server core can feed: 1000 ÷ (backendMs + otherMs). */
  perServerCore: number;
  /** Calls/s this machine can do when daemon and server share its cores: cores × 1000 ÷ (daemon + server ms). */
  sharedMachine: number;
  /**
   * Notifying commits/s at the probe's concurrency: what the calls' commits would allow if each carried its
   * fan-out NOTIFY (such commits queue on one server-wide lock). They do not: src/store/pg/notifier.ts.
   */
  notifyCeiling: number;
  /** Plain commits/s at the same concurrency (group commit shares fsyncs): the calls' commit ceiling. */
  walCeiling: number;
  /** The wait for one commit's WAL flush (durable p50 − asynchronous p50), ms. */
  fsyncMs: number;
  /** One thread's calls queue on its row lock, held at least through the commit's flush: ≤ 1000 ÷ durable commit p50. */
  perThread: number;
  xactsPerCall: number;
  /** Calls/s of N daemons (a core each) on a K-core server: min(N × perDaemonCore, K × perServerCore, walCeiling). */
  project(daemons: number, serverCores: number): { rate: number; bound: 'daemons' | 'server CPU' | 'WAL flush (group commit)' };
  /** Daemons (a core each) one K-core server can feed before its CPU is the limit: K × perServerCore ÷ perDaemonCore. */
  daemonsPerServer(serverCores: number): number;
}

export function capacity(p: PgResult, cores: number): Capacity | undefined {
  const e = p.entries?.pg1;
  const c = p.commit;
  if (!e || !c) return undefined;
  const serverMs = e.backendCpu + e.otherCpu;
  const perDaemonCore = 1000 / e.daemonCpu;
  const perServerCore = 1000 / serverMs;
  return {
    daemonMs: e.daemonCpu,
    backendMs: e.backendCpu,
    otherMs: e.otherCpu,
    perDaemonCore,
    perServerCore,
    sharedMachine: (cores * 1000) / (e.daemonCpu + serverMs),
    notifyCeiling: c.notifyRate,
    walCeiling: c.plainRate,
    fsyncMs: c.durableP50 - c.asyncP50,
    perThread: 1000 / c.durableP50,
    xactsPerCall: e.xactsPerCall,
    project(daemons, serverCores) {
      const options = [
        { rate: daemons * perDaemonCore, bound: 'daemons' as const },
        { rate: serverCores * perServerCore, bound: 'server CPU' as const },
        // One plain commit per call (its NOTIFY goes after it, batched, without a flush).
        { rate: c.plainRate, bound: 'WAL flush (group commit)' as const },
      ];
      return options.reduce((a, b) => (b.rate < a.rate ? b : a));
    },
    daemonsPerServer: (serverCores) => (serverCores * perServerCore) / perDaemonCore,
  };
}
