// `npm test` after the build: the whole suite on SQLite and then, when
// TOOLGATE_TEST_PG_URL names a PostgreSQL cluster (scripts/pg-test-cluster.sh,
// which .ci/run starts), the PostgreSQL pass of the outside-in suites. The
// engine of a pass is chosen by that ONE variable: the SQLite pass runs
// without it, the PostgreSQL pass with it. Exit code: non-zero when either
// pass fails.
//
// One pass after the other, each two files at a time, not the two side by
// side: both take this 2-core machine's two cores, so side by side each took
// as long as both (2026-12-07, CI: SQLite 345–399 s, PostgreSQL 356–407 s
// beside it), and the SQLite pass's figure said more about the other pass
// than about itself. In turn (2026-12-08): SQLite ~200 s, then PostgreSQL in
// two lanes (~100 s of suites each, which took 201 s in one lane).
//
// TOOLGATE_TEST_QUICK=1 (a developer machine only; .ci/run never sets it)
// skips the soak and fuzz suites, test/soak and test/fuzz: each case is
// reported as skipped with that reason (test/helpers/quick.ts). Without it
// every suite runs.
//
// TOOLGATE_TEST_TIMES=1 prints, after the SQLite pass, its slowest test files
// with each one's wall time (scripts/file-times-reporter.mjs) and the pass's
// own wall time: where the suite's time goes.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GROUPS, HEAVY, OWN_CLUSTER_SUITES, PG_GROUPS, PG_SUITES, groupFile, pgGroupFile } from './test-files.mjs';

const root = new URL('..', import.meta.url).pathname;

const pgUrl = process.env.TOOLGATE_TEST_PG_URL;

/** Runs a pass's test runner with its output passed through; resolves with its exit code and its output's tail (for the counts). */
function run(args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let tail = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk.toString('utf8')).slice(-4096);
    });
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), tail }));
  });
}

/** The `# pass N` / `# fail N` summary of a TAP run, or `ℹ pass N` of the spec reporter (Node 22+ uses it off a terminal too); 0 when absent. */
function counts(text) {
  const last = (name) => Number([...text.matchAll(new RegExp(`^(?:#|ℹ) ${name} (\\d+)$`, 'gm'))].at(-1)?.[1] ?? 0);
  return { pass: last('pass'), fail: last('fail') };
}

// NODE_EXTRA_CA_CERTS (this machine sets it) costs every Node start ~40 ms loading certificates, and
// no test file speaks TLS to the outside: each pass's test processes, and the children that inherit
// their environment, start without it.
const { NODE_EXTRA_CA_CERTS: _certs, ...testEnv } = process.env;
const { TOOLGATE_TEST_PG_URL: _omit, ...sqliteEnv } = testEnv;

// The SQLite pass's temporary folders — every test's database and WAL (test/helpers/repo.ts, `tempDir`)
// — go in a folder of its own on /dev/shm (tmpfs) when there is one, removed when the pass ends. Every
// commit fsyncs (synchronous FULL), and on this machine's disk, shared with whatever else runs, those
// fsyncs were time the test processes spent waiting, not working: test/unit/store/sqlite-store alone
// took 11.2 / 8.5 s on /tmp against 4.3 / 2.7 s on /dev/shm (2026-12-07). No test checks what survives
// a power cut (a SIGKILL leaves the page cache, tmpfs or not); what each checks is the same. A TMPDIR
// set for the run is kept.
const shmRoot = '/dev/shm';
let passTmp;
if (!process.env.TMPDIR && existsSync(shmRoot)) {
  try {
    passTmp = mkdtempSync(join(shmRoot, 'toolgate-sqlite-pass-'));
    // The mode of /tmp: the test PostgreSQL cluster's initdb runs as `postgres`, and a test drops to
    // another user to meet a read-only folder; both must reach their folders in here.
    chmodSync(passTmp, 0o1777);
    sqliteEnv.TMPDIR = passTmp;
  } catch {
    // Not writable here: the pass keeps the system's temporary folder.
  }
}

// The unit suites (test/unit) run together in one process, scripts/unit-suites.mjs, and the light
// outside-in suites in GROUPS processes, scripts/e2e-group-N.mjs: ~0.85 s of CPU per test file is its own
// process's start (scripts/test-files.mjs says which share and why). The unit process starts first: it is the
// pass's longest file; then the groups (~45 s each), then the heavy suites longest first — a long file started
// last would run alone at the end while the other lane idles.
const UNIT_SUITES = join(root, 'scripts', 'unit-suites.mjs');
const SUITES = [
  UNIT_SUITES,
  ...Array.from({ length: GROUPS }, (_, i) => groupFile(i + 1)),
  ...HEAVY.filter((f) => existsSync(f) && !(pgUrl && OWN_CLUSTER_SUITES.includes(f))),
];

/**
 * Test files run at once in each pass: 2, one a core on this 2-core machine. 3 was measured against 2 in
 * full runs (2026-12-06): 492 s against 456 s for the SQLite pass, and 843 s against 718 s of CPU — the
 * files wait on their daemons part of the time, but not enough for a third lane to pay for its contention.
 */
const CONCURRENCY = 2;
const timesLog = process.env.TOOLGATE_TEST_TIMES === '1' ? join(mkdtempSync(join(tmpdir(), 'toolgate-times-')), 'files.jsonl') : undefined;
const started = Date.now();
// scripts/run-suites.mjs, not `node --test`: it keeps the order above (the CLI sorts by name).
const sqlite = await run([join(root, 'scripts', 'run-suites.mjs'), String(CONCURRENCY), timesLog ?? '-', ...SUITES], sqliteEnv);
const sqliteSeconds = (Date.now() - started) / 1000;
try {
  if (passTmp) rmSync(passTmp, { recursive: true, force: true, maxRetries: 3 });
} catch (err) {
  process.stderr.write(`could not remove the pass's temporary folder ${passTmp}: ${err.message}\n`);
}
if (timesLog) {
  const lines = readFileSync(timesLog, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)).sort((a, b) => b.ms - a.ms);
  // A suite run in a group process (`grouped`) is listed by itself too, and counted once, in its group's time.
  const files = lines.filter((l) => !l.grouped);
  const name = (f) => (f.grouped ? `${f.file} (grouped)` : f.file.replace(join(root, 'dist', 'test') + '/', ''));
  process.stdout.write(`\n==== slowest of ${files.length} test processes and the ${lines.length - files.length} suites they group (SQLite pass) ====\n`);
  for (const f of lines.slice(0, 25)) process.stdout.write(`${(f.ms / 1000).toFixed(1).padStart(7)} s  ${name(f)}\n`);
  const sum = files.reduce((t, f) => t + f.ms, 0) / 1000;
  process.stdout.write(`its test processes add up to ${sum.toFixed(0)} s, run ${CONCURRENCY} at a time\n`);
}
// Always said, in every run (CI's too): the pass's wall time is the suite's figure to keep down.
process.stdout.write(`SQLite pass: ${sqliteSeconds.toFixed(0)} s wall\n`);
let pg = { code: 0, tail: '' };
if (pgUrl) {
  process.stdout.write(`\n==== PostgreSQL pass (${PG_SUITES.length + OWN_CLUSTER_SUITES.length} suites) ====\n`);
  const pgStarted = Date.now();
  // The shared-cluster groups at once, then the suites with clusters of their own in the lane that frees first.
  const pgFiles = [...Array.from({ length: PG_GROUPS }, (_, i) => pgGroupFile(i + 1)), ...OWN_CLUSTER_SUITES];
  pg = await run([join(root, 'scripts', 'run-suites.mjs'), String(CONCURRENCY), '-', ...pgFiles], testEnv);
  const pgSeconds = (Date.now() - pgStarted) / 1000;
  process.stdout.write(`==== PostgreSQL pass: ${pg.code === 0 ? 'passed' : `FAILED (exit ${pg.code})`} in ${pgSeconds.toFixed(0)} s wall ====\n`);
} else {
  process.stdout.write('\n(PostgreSQL pass skipped: TOOLGATE_TEST_PG_URL is not set — scripts/pg-test-cluster.sh starts a cluster)\n');
}
// One closing line over both passes, so a reader (or CI) sees the whole count at once.
const sqliteCounts = counts(sqlite.tail);
const pgCounts = counts(pg.tail);
const failed = sqliteCounts.fail + pgCounts.fail + (sqlite.code !== 0 && sqliteCounts.fail === 0 ? 1 : 0) + (pg.code !== 0 && pgCounts.fail === 0 ? 1 : 0);
process.stdout.write(`${sqliteCounts.pass + pgCounts.pass} passed, ${failed} failed\n`);
process.exit(sqlite.code !== 0 ? sqlite.code : pg.code);
