/**
 * The PostgreSQL rows: toolgate `serve --stdio --executor inprocess` on one
 * PostgreSQL database — one daemon, and two daemons sharing the database
 * with the load split across both (call i goes to daemon i mod 2) — beside
 * the same daemon on SQLite, in interleaved rounds like the side-by-side
 * table, as medians of per-round ratios to that SQLite row.
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
import { median, medianRatio } from './stats.js';
import { childEnv, REPO_ROOT, tempDir } from './env.js';
import type { Target } from './target.js';
import { startToolgateStdio, type Synchronous } from './targets/toolgate.js';

const run = promisify(execFile);

export type PgEntryKey = 'sqlite' | 'pg1' | 'pg2';

export interface PgEntry {
  key: PgEntryKey;
  name: string;
  rounds: Array<{ p50: number; rate: number }>;
  p50: number;
  rate: number;
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
  /** Median of per-round `num / sqlite` ratios. */
  ratio?: (num: PgEntryKey, what: 'p50' | 'rate') => number;
}

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
    await admin(given, `CREATE DATABASE ${name}`);
    return { url: fresh.toString(), source: `${source} (fresh database)`, dispose: () => admin(given, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
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

async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

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
function split(a: Target, b: Target): Target {
  return {
    name: 'two daemons, one database',
    pid: a.pid,
    call: (i) => (i % 2 === 0 ? a : b).call(i),
    stop: async () => {
      await Promise.all([a.stop(), b.stop()]);
    },
  };
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

    for (const [, t] of targets) await sequential(t, 60); // warm-up: JIT, prepared statements, pool connections
    const raw = new Map<PgEntryKey, PgEntry['rounds']>(targets.map(([k]) => [k, []]));
    for (let r = 0; r < opts.rounds; r++) {
      const order = targets.map((_, j) => targets[(j + r) % targets.length]!);
      for (const [k, t] of order) {
        const seq = await sequential(t, opts.seq);
        const conc = await concurrent(t, opts.conc, opts.concurrency);
        raw.get(k)!.push({ p50: median(seq), rate: conc.rate });
      }
      opts.log(`  round ${r + 1}/${opts.rounds}: ${[...raw].map(([k, e]) => `${k} ${e.at(-1)!.p50.toFixed(2)} ms ${e.at(-1)!.rate.toFixed(0)}/s`).join(', ')}`);
    }
    const entries = {} as Record<PgEntryKey, PgEntry>;
    for (const [k, t] of targets) {
      const rounds = raw.get(k)!;
      entries[k] = { key: k, name: t.name, rounds, p50: median(rounds.map((x) => x.p50)), rate: median(rounds.map((x) => x.rate)) };
    }
    return {
      server: { ...server, source: db.source },
      synchronous: opts.synchronous,
      rounds: opts.rounds,
      concurrency: opts.concurrency,
      seqPerRound: opts.seq,
      concPerRound: opts.conc,
      entries,
      ratio: (num, what) => medianRatio(entries[num].rounds.map((x) => x[what]), entries.sqlite.rounds.map((x) => x[what])),
    };
  } finally {
    for (const [, t] of targets) await t.stop().catch(() => {});
    await db.dispose().catch(() => {});
  }
}
