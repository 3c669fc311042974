/**
 * The engine a test pass runs on is chosen by ONE environment variable:
 * `TOOLGATE_TEST_PG_URL` set → the PostgreSQL pass (every daemon a test
 * starts stores in PostgreSQL), unset → SQLite. `scripts/pg-test-cluster.sh`
 * starts a throwaway cluster and prints that URL; `.ci/run` does it for CI.
 *
 * Each test gets its own fresh database (`freshPgDatabase`), created from the
 * cluster URL's role (which has CREATEDB) and dropped afterwards, so tests
 * stay independent — including their LISTEN/NOTIFY traffic, which PostgreSQL
 * scopes to one database.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import pg from 'pg';
import { REPO_ROOT } from './repo.js';

export const TEST_PG_URL: string | undefined = process.env.TOOLGATE_TEST_PG_URL || undefined;

/** The engine of this pass. */
export const TEST_ENGINE: 'postgres' | 'sqlite' = TEST_PG_URL ? 'postgres' : 'sqlite';

/** `{ skip }` for node:test when there is no cluster to test against. */
export const needsPg = TEST_PG_URL ? {} : { skip: 'TOOLGATE_TEST_PG_URL is not set (start one with scripts/pg-test-cluster.sh)' };

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface FreshDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

const created = new Set<FreshDatabase>();

/** A new empty database on the test cluster; `drop()` ends its sessions and removes it. */
export async function freshPgDatabase(base = TEST_PG_URL): Promise<FreshDatabase> {
  if (!base) throw new Error('TOOLGATE_TEST_PG_URL is not set');
  const name = `tg_${randomBytes(6).toString('hex')}`;
  await admin(base, `CREATE DATABASE ${name}`);
  const db: FreshDatabase = {
    url: withDatabase(base, name),
    name,
    drop: async () => {
      created.delete(db);
      await admin(base, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
  created.add(db);
  return db;
}

/** Drops every database this process created and has not dropped yet (an `after` hook). */
export async function dropAllFreshDatabases(): Promise<void> {
  await Promise.allSettled([...created].map((d) => d.drop()));
}

/** Runs one statement (names are generated here, never input) on the cluster URL's own database. */
async function admin(base: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Runs a query against a test database and returns its rows (for assertions on stored bytes). */
export async function pgQuery<R = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  // count(*) and other int8 values as numbers, as better-sqlite3 returns them.
  const types = { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === 20 ? Number : pg.types.getTypeParser(oid, format ?? 'text'))) as typeof pg.types.getTypeParser };
  const client = new pg.Client({ connectionString: url, types });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as R[];
  } finally {
    await client.end();
  }
}

const byDataDir = new Map<string, Promise<FreshDatabase>>();

/**
 * The database of a test's data folder in the PostgreSQL pass: created on
 * first use, so a test that restarts a daemon on the same folder finds its
 * data again (as it would find the SQLite file). Dropped when the process ends.
 */
export async function pgDatabaseFor(dataDir: string): Promise<string> {
  let db = byDataDir.get(dataDir);
  if (!db) {
    db = freshPgDatabase();
    byDataDir.set(dataDir, db);
  }
  return (await db).url;
}

// Drop what the test file created when it ends: a file run in a process of its own. In a group of suites
// sharing one process (scripts/test-files.mjs), this drops what the first suite made, and the group drops
// each suite's after it.
if (TEST_PG_URL) after(dropAllFreshDatabases);

// ---------------------------------------------------------------- a cluster of the test's own

/** Whether PostgreSQL's server binaries are here (what scripts/pg-test-cluster.sh needs). */
export const HAS_PG_SERVER: boolean = (() => {
  try {
    if (readdirSync('/usr/lib/postgresql').some((v) => existsSync(join('/usr/lib/postgresql', v, 'bin', 'initdb')))) return true;
  } catch {
    // not Debian's layout
  }
  return (process.env.PATH ?? '').split(':').some((d) => d !== '' && existsSync(join(d, 'initdb')));
})();

/** `{ skip }` for suites that start (and restart) a cluster of their own. */
export const needsPgServer = HAS_PG_SERVER ? {} : { skip: 'PostgreSQL is not installed (no initdb; apt-get install postgresql)' };

export interface PrivateCluster {
  /** The cluster's `toolgate` role on its `toolgate` database (CREATEDB: `freshPgDatabase(url)`). */
  url: string;
  /** `pg_ctl restart -m fast`: every session ends; the server is back on the same port when this resolves. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const CLUSTER_SCRIPT = join(REPO_ROOT, 'scripts', 'pg-test-cluster.sh');

/**
 * A throwaway cluster owned by one test file (scripts/pg-test-cluster.sh), for
 * tests that restart the server: the shared cluster of the PostgreSQL pass is
 * never restarted under other suites. The caller stops it (an `after` hook of
 * the suite that started it).
 */
export async function startPrivateCluster(): Promise<PrivateCluster> {
  const { stdout } = await run('bash', [CLUSTER_SCRIPT, 'start']);
  const value = (name: string) => {
    const m = new RegExp(`^export ${name}='([^']*)'$`, 'm').exec(stdout);
    if (!m) throw new Error(`pg-test-cluster.sh printed no ${name}`);
    return m[1]!;
  };
  const url = value('TOOLGATE_TEST_PG_URL');
  const dir = value('TOOLGATE_TEST_PG_DIR');
  let stopped: Promise<void> | undefined;
  const cluster: PrivateCluster = {
    url,
    restart: async () => {
      await run('bash', [CLUSTER_SCRIPT, 'restart', dir]);
    },
    stop: () => (stopped ??= run('bash', [CLUSTER_SCRIPT, 'stop', dir]).then(() => {})),
  };
  return cluster;
}

function run(cmd: string, args: string[]): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 120_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve({ stdout })));
  });
}

// ---------------------------------------------------------------- a throwaway PgBouncer

/** Where Debian's pgbouncer is, if it is installed. */
export const PGBOUNCER_BIN: string | undefined = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', ...(process.env.PATH ?? '').split(':').filter(Boolean).map((d) => join(d, 'pgbouncer'))].find((p) => existsSync(p));

/** `{ skip }` for suites that run the daemon through a PgBouncer of their own. */
export const needsPgBouncer = !HAS_PG_SERVER ? needsPgServer : PGBOUNCER_BIN ? {} : { skip: 'pgbouncer is not installed (apt-get install pgbouncer)' };

export interface PgBouncer {
  /** The same role and database as `serverUrl`, through the pooler. */
  url: string;
  stop(): Promise<void>;
}

/**
 * A PgBouncer in transaction pooling mode in front of `serverUrl`'s server,
 * on a free loopback port, for one test file; resolves once it accepts a
 * query. Run as the `postgres` user when the tests run as root (PgBouncer
 * refuses root), in its own process group, which `stop()` ends.
 */
export async function startPgBouncer(serverUrl: string): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-pgbouncer-'));
  const port = await freePort();
  const user = decodeURIComponent(server.username);
  const password = decodeURIComponent(server.password);
  // userlist.txt: "user" "password" (quotes doubled), readable by the pooler only.
  writeFileSync(join(dir, 'userlist.txt'), `"${user.replace(/"/g, '""')}" "${password.replace(/"/g, '""')}"\n`, { mode: 0o600 });
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      'default_pool_size = 20',
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await run('chown', ['-R', 'postgres:', dir]);
  const [cmd, args] = asRoot ? ['runuser', ['-u', 'postgres', '--', PGBOUNCER_BIN!, join(dir, 'pgbouncer.ini')]] : [PGBOUNCER_BIN!, [join(dir, 'pgbouncer.ini')]];
  const proc = spawn(cmd, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const u = new URL(serverUrl);
  u.port = String(port);
  const url = u.toString();
  // Accepting queries is the event to wait for (a few tries while it binds its port).
  for (let attempt = 0; ; attempt++) {
    try {
      await pgQuery(url, 'SELECT 1');
      break;
    } catch (err) {
      if (proc.exitCode !== null || attempt >= 100) throw new Error(`pgbouncer did not start: ${(err as Error).message}\n${stderr}`, { cause: err });
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  let stopped: Promise<void> | undefined;
  return {
    url,
    stop: () =>
      (stopped ??= (async () => {
        if (proc.exitCode === null && proc.pid !== undefined) process.kill(-proc.pid, 'SIGTERM');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      })()),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
