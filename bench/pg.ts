/**
 * The PostgreSQL rows: toolgate `serve --stdio --executor inprocess` on one
 * PostgreSQL database — one daemon, and two daemons sharing the database
 * with the load split across both (call i goes to daemon i mod 2) — beside
 * the same daemon on SQLite, in interleaved rounds like the side-by-side
 * table, as medians of per-round ratios to that SQLite row.
 *
 * Over each concurrent window it also takes, from /proc, the CPU time of the
 * daemon(s) and of the server's backends and other processes (bench/proc-cpu.ts),
 * and the server's write transactions and WAL bytes; per round, a commit probe
 * (bench/pg-commit-probe.ts); once, the round trips per call through a counting
 * proxy (test/helpers/pg-wire-proxy.ts). bench/pg-capacity.ts turns them into the
 * capacity model.
 *
 * Every entry spreads its calls over 8 threads (call i → thread i mod 8), so
 * the calls at concurrency 8 are not all queued on one thread's row lock.
 *
 * The database: `BENCH_PG_URL` when given (a fresh database on it when the
 * role may create one), else a throwaway durable cluster started with
 * scripts/pg-test-cluster.sh and removed afterwards, else — no local
 * PostgreSQL — `TOOLGATE_TEST_PG_URL` when set. Otherwise the rows are
 * skipped, with the reason.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { concurrent, sequential } from './load.js';
import { cpuMs, parentOf, serverCpu, serverDelta } from './proc-cpu.js';
import { startPgWireProxy } from '../test/helpers/pg-wire-proxy.js';
import { NOTIFY_STATEMENT } from '../src/store/pg/notifier.js';
import { openCommitProbe, type CommitProbe } from './pg-commit-probe.js';
import { median, medianRatio } from './stats.js';
import { childEnv, REPO_ROOT, tempDir } from './env.js';
import type { Target } from './target.js';
import { startToolgateStdio, type Synchronous } from './targets/toolgate.js';
import { pgAdmin } from './pg-admin.js';

const run = promisify(execFile);

export type PgEntryKey = 'sqlite' | 'pg1' | 'pg2';

/** One round of one entry: sequential p50, calls/s at concurrency, and CPU ms per call over the concurrent window. */
export interface PgRound {
  p50: number;
  rate: number;
  /** The daemon process(es), utime + stime. */
  daemonCpu: number;
  /** PostgreSQL's client backends. */
  backendCpu: number;
  /** PostgreSQL's postmaster and auxiliary processes (WAL writer, checkpointer, …). */
  otherCpu: number;
  /** Write transactions (xids) and WAL bytes per call (PostgreSQL entries). */
  xactsPerCall?: number;
  walBytesPerCall?: number;
}

export interface PgEntry {
  key: PgEntryKey;
  name: string;
  rounds: PgRound[];
  p50: number;
  rate: number;
  /** Medians over the rounds, ms per call. */
  daemonCpu: number;
  backendCpu: number;
  otherCpu: number;
  xactsPerCall: number;
  walBytesPerCall: number;
}

export interface PgResult {
  /** Why the rows are missing, when they are. */
  skipped?: string;
  server?: { version: string; fsync: string; synchronousCommit: string; source: string };
  synchronous?: Synchronous;
  rounds?: number;
  concurrency?: number;
  seqPerRound?: number;
  concPerRound?: number;
  entries?: Record<PgEntryKey, PgEntry>;
  /** Client messages that wait for the server (Sync + Query) per sequential call of one daemon, through a counting proxy. */
  roundTripsPerCall?: number;
  /** The fan-out NOTIFY statements per sequential call, sent after the commits (not the call's wait). */
  notifyTripsPerCall?: number;
  /** The commit probe's medians over the rounds (bench/pg-commit-probe.ts). */
  commit?: CommitProbe;
  /** Median of per-round `num / sqlite` ratios. */
  ratio?: (num: PgEntryKey, what: 'p50' | 'rate') => number;
}

/** A window's counters on the server: the next transaction id and the WAL position. */
async function serverCounters(client: pg.Client): Promise<{ xid: bigint; lsn: string }> {
  const r = await client.query<{ xid: string; lsn: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid, pg_current_wal_lsn()::text AS lsn');
  return { xid: BigInt(r.rows[0]!.xid), lsn: r.rows[0]!.lsn };
}

/** Bytes between two WAL positions ("X/Y", hexadecimal halves). */
const lsnBytes = (a: string, b: string): number => {
  const n = (l: string) => l.split('/').reduce((acc, h) => acc * 2 ** 32 + parseInt(h, 16), 0);
  return n(b) - n(a);
};

interface Database {
  url: string;
  source: string;
  dispose(): Promise<void>;
}

/** Where the bench's database comes from (see the header). */
async function database(log: (l: string) => void): Promise<Database | string> {
  if (process.env.BENCH_PG_URL) return onServer(process.env.BENCH_PG_URL, 'BENCH_PG_URL');
  const own = await throwawayCluster(log);
  if (typeof own !== 'string') return own;
  // No local PostgreSQL to start: the test cluster, when one is named (its durability is shown in the table).
  if (process.env.TOOLGATE_TEST_PG_URL) return onServer(process.env.TOOLGATE_TEST_PG_URL, 'TOOLGATE_TEST_PG_URL');
  return own;
}

/** A fresh database on a given server when the role may create one, else the URL's own database. */
async function onServer(given: string, source: string): Promise<Database> {
  const name = `tg_bench_${randomBytes(4).toString('hex')}`;
  const fresh = new URL(given);
  fresh.pathname = `/${name}`;
  try {
    await pgAdmin(given, `CREATE DATABASE ${name}`);
    return { url: fresh.toString(), source: `${source} (fresh database)`, dispose: () => pgAdmin(given, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
  } catch {
    return { url: given, source, dispose: async () => {} };
  }
}

/**
 * A durable (fsync on) throwaway cluster, like SQLite at synchronous=FULL: a
 * committed call is on disk on both sides of the ratio.
 */
async function throwawayCluster(log: (l: string) => void): Promise<Database | string> {
  const script = join(REPO_ROOT, 'scripts', 'pg-test-cluster.sh');
  let out: string;
  try {
    out = (await run('bash', [script, 'start', '--durable'], { env: clusterEnv(), encoding: 'utf8' })).stdout;
  } catch (err) {
    const why = String((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split('\n').at(-1);
    return `PostgreSQL rows skipped: could not start a throwaway cluster (${why}). Install PostgreSQL (apt-get install postgresql) or set BENCH_PG_URL.`;
  }
  const url = /TOOLGATE_TEST_PG_URL='([^']+)'/.exec(out)?.[1];
  const dir = /TOOLGATE_TEST_PG_DIR='([^']+)'/.exec(out)?.[1];
  if (!url || !dir) return 'PostgreSQL rows skipped: scripts/pg-test-cluster.sh printed no URL';
  log('  started a throwaway PostgreSQL cluster (scripts/pg-test-cluster.sh start --durable)');
  return { url, source: 'throwaway cluster (scripts/pg-test-cluster.sh --durable)', dispose: () => run('bash', [script, 'stop', dir], { env: clusterEnv() }).then(() => {}) };
}

/** The script's environment: a bare one, plus PG_BINDIR when set (which PostgreSQL to use). */
const clusterEnv = () => childEnv(process.env.PG_BINDIR ? { PG_BINDIR: process.env.PG_BINDIR } : {});

async function describeServer(url: string): Promise<{ version: string; fsync: string; synchronousCommit: string }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const one = async (sql: string) => String(Object.values((await client.query(sql)).rows[0] as object)[0]);
    return { version: await one('SHOW server_version'), fsync: await one('SHOW fsync'), synchronousCommit: await one('SHOW synchronous_commit') };
  } finally {
    await client.end();
  }
}

/** Two daemons as one target: call i goes to daemon i mod 2. */
function split(a: Target, b: Target): Target & { pids: number[] } {
  return {
    name: 'two daemons, one database',
    pid: a.pid,
    call: (i) => (i % 2 === 0 ? a : b).call(i),
    pids: [a.pid, b.pid],
    stop: async () => {
      await Promise.all([a.stop(), b.stop()]);
    },
  };
}

/**
 * Sync + Query messages per sequential call of one daemon whose every connection goes through the
 * counting proxy (test/helpers/pg-wire-proxy.ts): the call's own, and the fan-out NOTIFYs the daemon
 * sends after the commits on a connection of its own (no call waits for those).
 */
async function countRoundTrips(url: string, opts: Omit<Parameters<typeof startToolgateStdio>[0], 'dbFile'>): Promise<{ own: number; notify: number }> {
  const proxy = await startPgWireProxy(url, { ignore: (text) => text === NOTIFY_STATEMENT });
  let daemon: Target | undefined;
  try {
    daemon = await startToolgateStdio({ ...opts, dbFile: proxy.url, name: 'round-trip count' });
    await sequential(daemon, 20); // warm-up: the pool's connections, prepared statements
    const calls = 40;
    proxy.reset();
    await sequential(daemon, calls);
    return { own: proxy.roundTrips() / calls, notify: proxy.ignored() / calls };
  } finally {
    await daemon?.stop().catch(() => {});
    await proxy.stop();
  }
}

export async function runPg(opts: {
  synchronous: Synchronous;
  rounds: number;
  concurrency: number;
  seq: number;
  conc: number;
  log: (l: string) => void;
}): Promise<PgResult> {
  const db = await database(opts.log);
  if (typeof db === 'string') {
    opts.log(`  ${db}`);
    return { skipped: db };
  }
  const dir = tempDir();
  const home = (name: string) => {
    const d = join(dir, name);
    mkdirSync(d);
    return d;
  };
  const threads = (i: number) => `bench-pg-${i % 8}`;
  const targets: Array<[PgEntryKey, Target]> = [];
  try {
    const server = await describeServer(db.url);
    const common = { executor: 'inprocess' as const, synchronous: opts.synchronous, thread: threads };
    targets.push(['sqlite', await startToolgateStdio({ ...common, dbFile: join(dir, 'sqlite.db'), dataDir: home('sqlite'), name: 'toolgate inprocess, SQLite' })]);
    targets.push(['pg1', await startToolgateStdio({ ...common, dbFile: db.url, dataDir: home('pg1'), name: 'toolgate inprocess, PostgreSQL, one daemon' })]);
    const pair = await Promise.allSettled([
      startToolgateStdio({ ...common, dbFile: db.url, dataDir: home('pg2a'), name: 'daemon A' }),
      startToolgateStdio({ ...common, dbFile: db.url, dataDir: home('pg2b'), name: 'daemon B' }),
    ]);
    for (const p of pair) if (p.status === 'rejected') await Promise.all(pair.map((q) => (q.status === 'fulfilled' ? q.value.stop() : undefined))).then(() => Promise.reject(p.reason));
    const [a, b] = pair.map((p) => (p as PromiseFulfilledResult<Target>).value) as [Target, Target];
    targets.push(['pg2', split(a, b)]);

    // Round trips per call: one more daemon, alone, through the counting proxy (outside the measured rounds,
    // so the proxy's hop costs none of the figures above it).
    const { own: roundTripsPerCall, notify: notifyTripsPerCall } = await countRoundTrips(db.url, { ...common, dataDir: home('pgrt') });

    // The server's processes: the postmaster is the parent of this bench's own backend.
    const probeClient = new pg.Client({ connectionString: db.url });
    await probeClient.connect();
    const backendPid = Number((await probeClient.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0]!.p);
    const postmaster = parentOf(backendPid);
    const probe = await openCommitProbe(db.url, opts.concurrency);
    const pidsOf = (t: Target) => (t as Target & { pids?: number[] }).pids ?? [t.pid];
    try {
      for (const [, t] of targets) await sequential(t, 60); // warm-up: JIT, prepared statements, pool connections
      const raw = new Map<PgEntryKey, PgRound[]>(targets.map(([k]) => [k, []]));
      const probes: CommitProbe[] = [];
      for (let r = 0; r < opts.rounds; r++) {
        const order = targets.map((_, j) => targets[(j + r) % targets.length]!);
        for (const [k, t] of order) {
          const seq = await sequential(t, opts.seq);
          const pids = pidsOf(t);
          const before = { daemon: cpuMs(pids), server: postmaster ? serverCpu(postmaster) : undefined, db: k === 'sqlite' ? undefined : await serverCounters(probeClient) };
          const conc = await concurrent(t, opts.conc, opts.concurrency);
          const after = { daemon: cpuMs(pids), server: postmaster ? serverCpu(postmaster) : undefined, db: before.db ? await serverCounters(probeClient) : undefined };
          const srv = before.server && after.server ? serverDelta(before.server, after.server) : { backendsMs: Number.NaN, otherMs: Number.NaN };
          raw.get(k)!.push({
            p50: median(seq),
            rate: conc.rate,
            daemonCpu: (after.daemon - before.daemon) / opts.conc,
            backendCpu: srv.backendsMs / opts.conc,
            otherCpu: srv.otherMs / opts.conc,
            ...(before.db && after.db
              ? { xactsPerCall: Number(after.db.xid - before.db.xid) / opts.conc, walBytesPerCall: lsnBytes(before.db.lsn, after.db.lsn) / opts.conc }
              : {}),
          });
        }
        probes.push(await probe.round(Math.max(20, Math.round(opts.seq / 2))));
        const last = probes.at(-1)!;
        opts.log(`  round ${r + 1}/${opts.rounds}: ${[...raw].map(([k, e]) => `${k} ${e.at(-1)!.p50.toFixed(2)} ms ${e.at(-1)!.rate.toFixed(0)}/s cpu ${e.at(-1)!.daemonCpu.toFixed(2)}+${e.at(-1)!.backendCpu.toFixed(2)}+${e.at(-1)!.otherCpu.toFixed(2)} ms`).join(', ')}; ` +
          `commit ${last.durableP50.toFixed(2)}/${last.asyncP50.toFixed(2)} ms, @${opts.concurrency} ${last.plainRate.toFixed(0)}/s plain, ${last.notifyRate.toFixed(0)}/s with NOTIFY`);
      }
      const entries = {} as Record<PgEntryKey, PgEntry>;
      for (const [k, t] of targets) {
        const rounds = raw.get(k)!;
        const med = (f: (x: PgRound) => number | undefined) => median(rounds.map(f).filter((x): x is number => x !== undefined));
        entries[k] = {
          key: k, name: t.name, rounds, p50: med((x) => x.p50), rate: med((x) => x.rate),
          daemonCpu: med((x) => x.daemonCpu), backendCpu: med((x) => x.backendCpu), otherCpu: med((x) => x.otherCpu),
          xactsPerCall: med((x) => x.xactsPerCall), walBytesPerCall: med((x) => x.walBytesPerCall),
        };
      }
      const pm = (f: (c: CommitProbe) => number) => median(probes.map(f));
      return {
        server: { ...server, source: db.source },
        synchronous: opts.synchronous,
        rounds: opts.rounds,
        concurrency: opts.concurrency,
        seqPerRound: opts.seq,
        concPerRound: opts.conc,
        entries,
        roundTripsPerCall,
        notifyTripsPerCall,
        commit: { durableP50: pm((c) => c.durableP50), asyncP50: pm((c) => c.asyncP50), plainRate: pm((c) => c.plainRate), notifyRate: pm((c) => c.notifyRate) },
        ratio: (num, what) => medianRatio(entries[num].rounds.map((x) => x[what]), entries.sqlite.rounds.map((x) => x[what])),
      };
    } finally {
      await probe.close().catch(() => {});
      await probeClient.end().catch(() => {});
    }
  } finally {
    for (const [, t] of targets) await t.stop().catch(() => {});
    await db.dispose().catch(() => {});
  }
}
