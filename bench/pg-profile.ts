/**
 * Where a PostgreSQL call's CPU goes, beside the same daemon on SQLite: each
 * in-process daemon runs under `node --cpu-prof` for CALLS `calendar.create`
 * at concurrency 8 (after 300 sequential ones), and over that window /proc
 * gives the CPU (user and system) of the daemon and of the server's
 * processes (bench/proc-cpu.ts). The daemon's system time is the kernel's
 * work for it (socket and pipe I/O; SQLite's fsync). Its user time is split
 * by the profile's shares: the pg driver, toolgate's PostgreSQL store,
 * SQLite, GC, and the rest of the daemon, which both engines share. The
 * profile's samples inside socket and pipe writes are left out of those
 * shares: a sample's time is wall time, and inside a write that wakes the
 * server or the client the daemon often waits for a core (on a loaded
 * machine, most of that time), which /proc counts as neither.
 *
 *   npm run build && BENCH_PG_URL=postgres://… node dist/bench/pg-profile.js   # CALLS (1500), ROUNDS (3)
 *
 * `BENCH_PG_URL` must be a role with CREATEDB (a fresh database is made and
 * dropped) on a durable cluster (scripts/pg-test-cluster.sh start --durable).
 * Not part of `npm run bench`: its figures go into RESULTS.md's analysis by hand.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { concurrent, sequential } from './load.js';
import { tempDir } from './env.js';
import { parentOf, serverCpu, serverDelta, userSysMs } from './proc-cpu.js';
import { summarize } from './profile.js';
import { startToolgateStdio } from './targets/toolgate.js';
import { median } from './stats.js';
import { pgAdmin } from './pg-admin.js';

const base = process.env.BENCH_PG_URL;
if (!base) throw new Error('set BENCH_PG_URL (a role with CREATEDB, on a durable cluster)');
const CALLS = Number(process.env.CALLS ?? 1500);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SEQ = 300;

const admin = (sql: string) => pgAdmin(base, sql);

/** The profile's areas and functions, grouped as the header says. */
const GROUPS: Array<[string, (area: string, fn: string) => boolean]> = [
  ['socket and pipe writes (system calls)', (_a, fn) => /^(writev|writeBuffer|writeUtf8String|writeLatin1String) :0$/.test(fn)],
  ['pg driver (pg, pg-protocol, pg-pool)', (a) => /^pg(-protocol|-pool|-types)?$/.test(a)],
  ['toolgate store/pg', (a) => a.startsWith('toolgate store/pg')],
  ['SQLite (store/sqlite, better-sqlite3, its native calls)', (a) => a.startsWith('toolgate store/sqlite') || a === 'better-sqlite3'],
  ['GC', (a) => a === 'GC'],
];
const REST = 'the rest of the daemon (transport, zod, call path, codec, node internals)';

interface Run {
  engine: 'sqlite' | 'postgres';
  daemonUser: number;
  daemonSys: number;
  backends: number;
  other: number;
  rate: number;
  /** Share of the profile's busy samples per group. */
  shares: Map<string, number>;
}

async function profileOne(engine: Run['engine'], db: string, postmaster: number): Promise<Run> {
  const dir = tempDir();
  const profDir = join(dir, 'prof');
  const tg = await startToolgateStdio({
    executor: 'inprocess', dbFile: engine === 'sqlite' ? join(dir, 'p.db') : db, dataDir: dir, synchronous: 'FULL',
    thread: (i) => `prof-${i % 8}`, nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir], unbundled: true,
  });
  await sequential(tg, SEQ);
  const cpu0 = userSysMs(tg.pid)!;
  const srv0 = serverCpu(postmaster);
  const conc = await concurrent(tg, CALLS, 8);
  const cpu1 = userSysMs(tg.pid)!;
  const srv = serverDelta(srv0, serverCpu(postmaster));
  await tg.stop();
  // The main thread's profile (thread id 0): the SQLite daemon has a worker thread with a profile of its own.
  const file = readdirSync(profDir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (!file) throw new Error('no CPU profile was written');
  const sum = summarize(join(profDir, file), SEQ + CALLS, { areas: 1000, functions: 100000 });
  const shares = new Map<string, number>([...GROUPS.map(([g]) => [g, 0] as [string, number]), [REST, 0]]);
  const busy = sum.busyPerCall;
  // Functions carry their area in the summary only through their URL: group writes by function, the rest by area.
  const writes = sum.functions.filter((f) => GROUPS[0]![1]('', f.fn)).reduce((a, f) => a + f.usPerCall, 0);
  shares.set(GROUPS[0]![0], writes / busy);
  for (const a of sum.areas) {
    const g = GROUPS.slice(1).find(([, match]) => match(a.area, ''));
    const key = g ? g[0] : REST;
    shares.set(key, shares.get(key)! + a.usPerCall / busy);
  }
  // The writes were counted in their area ("native …") too: take them off the rest, then share the user time
  // among what is left (the writes' own CPU is system time).
  shares.set(REST, shares.get(REST)! - writes / busy);
  const left = 1 - writes / busy;
  for (const [g, v] of shares) shares.set(g, g === GROUPS[0]![0] ? v : v / left);
  return { engine, daemonUser: (cpu1.user - cpu0.user) / CALLS, daemonSys: (cpu1.sys - cpu0.sys) / CALLS, backends: srv.backendsMs / CALLS, other: srv.otherMs / CALLS, rate: conc.rate, shares };
}

const name = `tg_bench_${randomBytes(6).toString('hex')}`;
await admin(`CREATE DATABASE ${name}`);
const url = new URL(base);
url.pathname = `/${name}`;
try {
  const probe = new pg.Client({ connectionString: url.toString() });
  await probe.connect();
  const postmaster = parentOf(Number((await probe.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0]!.p))!;
  await probe.end();
  const runs: Run[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const engine of r % 2 === 0 ? (['sqlite', 'postgres'] as const) : (['postgres', 'sqlite'] as const)) {
      runs.push(await profileOne(engine, url.toString(), postmaster));
      const x = runs.at(-1)!;
      console.error(`round ${r + 1} ${engine}: ${x.rate.toFixed(0)} calls/s, daemon ${(x.daemonUser + x.daemonSys).toFixed(3)} ms, server ${(x.backends + x.other).toFixed(3)} ms per call`);
    }
  }
  const us = (ms: number) => `${Math.round(ms * 1000)} µs`;
  const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
  const lines = ['| per call at concurrency 8 | SQLite | PostgreSQL |', '|---|---:|---:|'];
  const med = (engine: Run['engine'], f: (r: Run) => number) => median(runs.filter((r) => r.engine === engine).map(f));
  const row = (label: string, f: (r: Run) => number) => lines.push(`| ${label} | ${us(med('sqlite', f))} | ${us(med('postgres', f))} |`);
  row('daemon, system (the kernel: socket and pipe I/O, SQLite\'s fsync)', (r) => r.daemonSys);
  row('daemon, user', (r) => r.daemonUser);
  for (const g of [...GROUPS.slice(1).map(([k]) => k), REST]) row(`  of it (profile share, writes left out): ${g}`, (r) => r.daemonUser * r.shares.get(g)!);
  lines.push(`| profile samples inside socket and pipe writes (wall time, waits for a core included) | ${pct(med('sqlite', (r) => r.shares.get(GROUPS[0]![0])!))} | ${pct(med('postgres', (r) => r.shares.get(GROUPS[0]![0])!))} |`);
  row('PostgreSQL backends', (r) => r.backends);
  row('PostgreSQL other processes (WAL writer, checkpointer, …)', (r) => r.other);
  lines.push(`| calls/s (under --cpu-prof) | ${med('sqlite', (r) => r.rate).toFixed(0)} | ${med('postgres', (r) => r.rate).toFixed(0)} |`);
  console.log(lines.join('\n'));
} finally {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
