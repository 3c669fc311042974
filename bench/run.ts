/**
 * `npm run bench`: toolgate side by side with its anchors in one run, under
 * five minutes on a 2-core machine. Writes bench/RESULTS.md.
 *
 *   BENCH_SCALE=0.5   fewer calls per round (default 1)
 *   BENCH_ROUNDS=5    interleaved rounds at synchronous=FULL (NORMAL gets 3; BENCH_NORMAL=0 skips it)
 *   BENCH_ONLY=side,steady,floor,commit,pg,telemetry,approval,history,ws,startup,profile   a subset (base: see BENCH_BASE)
 *   BENCH_ENTRIES=echo,mcp,mcpEq,inprocess,subprocess,subprocessBundle,node   the side-by-side entries (default all)
 *   BENCH_COMMIT_CALLS=400   calls per round and load in the commit section (scaled by BENCH_SCALE)
 *   BENCH_RESULTS=/tmp/x.md   write the tables there instead of bench/RESULTS.md (a smoke run)
 *   BENCH_AB_SYNC=NORMAL   the A/B daemons' store.synchronous (default FULL; NORMAL takes the fsync's noise out of a small difference)
 *   BENCH_AB_ROUNDS=9   interleaved rounds of the A/B sections (telemetry, approval, base); BENCH_AB_CALLS=200 calls per round and load
 *   BENCH_BASE=/path/to/checkout   section `base`: that checkout's build (bin/toolgate.mjs) against this one, interleaved
 *     e.g. BENCH_ONLY=telemetry BENCH_RESULTS=/tmp/ab.md node dist/bench/run.js   only the telemetry A/B, RESULTS.md left alone
 *   BENCH_PG_URL=postgres://…   the PostgreSQL rows on that server (else a throwaway durable cluster, else TOOLGATE_TEST_PG_URL)
 *   BENCH_ONLY=pg   only the PostgreSQL section: it is replaced in place in RESULTS.md (between its markers), the rest kept
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeMachine } from './machine.js';
import { REPO_ROOT } from './env.js';
import { runSideBySide } from './side-by-side.js';
import { runHistory } from './history.js';
import { runPg } from './pg.js';
import { runWsLoad } from './ws-load.js';
import { runStartup } from './startup.js';
import { runDaemonStartup } from './daemon-startup.js';
import { openFloor } from './floor.js';
import { runCommitBlock } from './commit-block.js';
import { profileInprocess } from './profile.js';
import { approvalVariant, buildVariant, runAb, telemetryVariant } from './ab.js';
import { measureHookCost } from './hook-cost.js';
import type { Synchronous } from './targets/toolgate.js';
import { ANALYSIS_MARKER, render, type Results } from './report.js';
import { readRoundTrips, renderPg, replacePgSection } from './report-pg.js';
import { ENTRY_KEYS, type EntryKey } from './side-by-side.js';
import { runSteady } from './steady.js';

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
const log = (line: string) => process.stdout.write(`${line}\n`);
const scale = Number(process.env.BENCH_SCALE ?? 1);
const n = (x: number) => Math.max(1, Math.round(x * scale));
const only = new Set((process.env.BENCH_ONLY ?? `side,steady,floor,commit,pg,telemetry,approval,history,ws,startup,profile${process.env.BENCH_BASE ? ',base' : ''}`).split(','));
const entries = process.env.BENCH_ENTRIES ? new Set(process.env.BENCH_ENTRIES.split(',') as EntryKey[]) : undefined;
for (const k of entries ?? []) if (!ENTRY_KEYS.includes(k)) throw new Error(`BENCH_ENTRIES: no entry ${k} (${ENTRY_KEYS.join(', ')})`);

function commit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const results: Results = { machine: describeMachine(), commit: commit(), seconds: 0, sideBySide: [] };
log(`toolgate bench — ${results.machine.cpu}, ${results.machine.cores} cores, node ${results.machine.node}`);

// The floor's rounds run inside the FULL side-by-side rounds when both are asked for: the daemon's own work
// (entry c minus the echo and the writes) is then a median of per-round differences taken at one moment each.
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const floor = only.has('floor') ? await openFloor({ synchronous: 'FULL', perRound: n(200), groupSize: 8, log }) : undefined;
try {
  if (only.has('side')) {
    const settings: Array<['FULL' | 'NORMAL', number]> = [['FULL', rounds]];
    if (process.env.BENCH_NORMAL !== '0') settings.push(['NORMAL', 3]);
    for (const [synchronous, count] of settings) {
      log(`side by side, synchronous=${synchronous}${floor?.synchronous === synchronous ? ', with the floor: the SQLite writes alone' : ''} (${elapsed()})`);
      results.sideBySide.push(
        await runSideBySide({
          synchronous, rounds: count, concurrency: 8, fast: { seq: n(150), conc: n(150) }, slow: { seq: n(8), conc: n(16) }, only: entries,
          ...(floor?.synchronous === synchronous ? { eachRound: () => floor.round() } : {}), log,
        }),
      );
    }
  }
  if (floor) {
    const interleaved = only.has('side');
    if (!interleaved) {
      log(`the floor: the SQLite writes alone (${elapsed()})`);
      for (let r = 0; r < rounds; r++) floor.round();
    }
    results.floor = floor.result(interleaved);
  }
} finally {
  floor?.close();
}
if (only.has('steady')) {
  log(`side by side at steady state: the daemon and both MCP anchors after the same long warm-up (${elapsed()})`);
  results.steady = await runSteady({ warm: n(3000), rounds: Number(process.env.BENCH_STEADY_ROUNDS ?? 7), synchronous: 'FULL', log });
}
if (only.has('commit')) {
  log(`does the COMMIT block the event loop? (${elapsed()})`);
  const calls = n(Number(process.env.BENCH_COMMIT_CALLS ?? 400));
  results.commitBlock = await runCommitBlock({ rounds: Number(process.env.BENCH_ROUNDS ?? 5), concurrency: 8, seq: calls, conc: calls, log });
}
if (only.has('pg')) {
  log(`PostgreSQL: one daemon, two daemons on one database, beside SQLite (${elapsed()})`);
  try {
    results.pg = await runPg({ synchronous: 'FULL', rounds: Number(process.env.BENCH_ROUNDS ?? 5), concurrency: 8, seq: n(100), conc: n(150), log });
  } catch (err) {
    results.pg = { skipped: `PostgreSQL rows skipped: ${(err as Error).message.split('\n')[0]}` };
    log(`  ${results.pg.skipped}`);
  }
}
const ab = { synchronous: (process.env.BENCH_AB_SYNC === 'NORMAL' ? 'NORMAL' : 'FULL') as Synchronous, rounds: Number(process.env.BENCH_AB_ROUNDS ?? 9), seq: n(Number(process.env.BENCH_AB_CALLS ?? 200)), conc: n(Number(process.env.BENCH_AB_CALLS ?? 200)), concurrency: 8, log };
if (only.has('telemetry')) {
  log(`tracing off: telemetry hooks as shipped vs not installed (${elapsed()})`);
  results.ab = [...(results.ab ?? []), await runAb({
    ...ab, title: 'Tracing off: the telemetry hooks as shipped vs not installed (issue 24)',
    variants: [telemetryVariant('on', ab.synchronous), telemetryVariant('off', ab.synchronous)],
  })];
  results.ab.at(-1)!.hook = await measureHookCost();
}
if (only.has('approval')) {
  log(`an action that does not ask: no approval policy vs the example configs' ask list (${elapsed()})`);
  results.ab = [...(results.ab ?? []), await runAb({
    ...ab, title: 'An action that does not ask: no approval policy vs a profile that asks before three others (issue 38)',
    variants: [approvalVariant(false, ab.synchronous), approvalVariant(true, ab.synchronous)],
  })];
}
if (only.has('base')) {
  const base = process.env.BENCH_BASE;
  if (!base) throw new Error('BENCH_ONLY=base needs BENCH_BASE=/path/to/a/built/checkout');
  const label = (root: string) => { try { return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim(); } catch { return root; } };
  log(`this build against ${base} (${elapsed()})`);
  results.ab = [...(results.ab ?? []), await runAb({
    ...ab, title: `This build against another: \`${base}\``,
    variants: [buildVariant('base', `the other build (${label(base)})`, base, ab.synchronous), buildVariant('this', `this build (${results.commit})`, undefined, ab.synchronous)],
  })];
}
if (only.has('history')) {
  log(`history/get (${elapsed()})`);
  results.history = await runHistory({ synchronous: 'FULL', total: 100_000, pageSize: 200, rounds: 5, perRound: n(8), log });
}
if (only.has('ws')) {
  log(`50 WebSocket clients × 100 calls (${elapsed()})`);
  results.ws = await runWsLoad({ synchronous: 'FULL', clients: 50, callsPerClient: 100, log });
}
if (only.has('startup')) {
  log(`project-cli start-up probes (${elapsed()})`);
  results.startup = await runStartup(Math.max(7, n(9)));
  log(`toolgate start-up probes (${elapsed()})`);
  results.daemonStartup = await runDaemonStartup(Math.max(7, n(9)));
}
if (only.has('profile')) {
  log(`CPU profile of the in-process daemon (${elapsed()})`);
  results.profile = await profileInprocess({ synchronous: 'FULL', seq: n(250), conc: n(250) });
}
results.seconds = (performance.now() - started) / 1000;

const file = process.env.BENCH_RESULTS ?? join(REPO_ROOT, 'bench', 'RESULTS.md');
const existing = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
const previousPg = existing ? readRoundTrips(existing) : undefined;
// A PostgreSQL-only run replaces only its own section, leaving the other sections' figures as they were.
const pgOnly = only.size === 1 && only.has('pg') && results.pg;
const pgSection = pgOnly ? renderPg(results.pg!, { commit: results.commit, date: results.machine.date, load: results.machine.load, cores: results.machine.cores, previous: previousPg }) : undefined;
const replaced = pgSection && existing ? replacePgSection(existing, pgSection) : undefined;
if (pgSection) log(`\n${pgSection}`);
if (replaced) {
  writeFileSync(file, replaced);
  log(`replaced the PostgreSQL section of ${file} (${elapsed()})`);
} else {
  const table = render(results, previousPg);
  if (!pgSection) log(`\n${table}`);
  const kept = existing?.split(ANALYSIS_MARKER)[1];
  writeFileSync(file, `${table}\n${ANALYSIS_MARKER}\n${kept?.replace(/^\n/, '') ?? '\n## Analysis\n\n(none yet)\n'}`);
  log(`wrote ${file} (${elapsed()})`);
}
