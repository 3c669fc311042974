/**
 * The subprocess executor starts project-cli from its V8 start-up snapshot
 * (dist/project-cli.snapshot.blob) once the build's check or a probe shows the
 * blob runs on this node, with the same results as the bundle; a damaged or missing blob leaves
 * it on the bundle, said in one warning, and every call still succeeds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { copyFileSync, writeFileSync } from 'node:fs';
import { startHost, openSession, type Host } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { tempDir } from '../helpers/repo.js';
import { PROJECT_CLI_SNAPSHOT } from '../../src/runtime/package-root.js';
import { snapshotCheckPath, snapshotFacts } from '../../src/calls/cli-snapshot-check.js';
import { waitFor } from '../helpers/wait-for.js';
import type { ToolResponse } from '../../src/protocol/index.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const CALLS: Array<{ module: string; method: string; input: Record<string, unknown> }> = [
  { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-10-10' } },
  { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-13-01' } },
  { module: 'calendar', method: 'create', input: { title: 'x', start_at: '2026-10-10T10:00:00Z', end_at: '2026-10-10T09:00:00Z' } },
  { module: 'calendar', method: 'teleport', input: {} },
  { module: 'memory', method: 'read', input: {} },
  { module: 'contacts', method: 'read', input: { phone: '+15550009' } },
];

interface LogLine {
  level: string;
  msg: string;
  mode?: string;
  checked?: string;
  launch?: string;
  reason?: string;
}

function lines(host: Pick<Host, 'stderr'>, msg: string): LogLine[] {
  return host
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine)
    .filter((l) => l.msg === msg);
}

/** A daemon whose launch decision is made (the probe has finished), with debug lines of each run. */
async function startDecided(dataDir: string, env: Record<string, string> = {}): Promise<{ host: Host; launch: LogLine }> {
  const host = await startHost({ dataDir, env: { TOOLGATE_LOG_LEVEL: 'debug', ...env } });
  const launch = await waitFor(() => lines(host, 'project-cli launch')[0], () => `a project-cli launch line in:\n${host.stderr()}`);
  return { host, launch };
}

async function runAll(host: Host, token: string, thread: string): Promise<string[]> {
  const session = await openSession(host, token);
  const out: string[] = [];
  for (const [i, args] of CALLS.entries()) {
    const r = await host.request<ToolResponse>('tool/invoke', { session_id: session.session_id, thread_id: thread, tool_call_id: `c${i}`, args });
    out.push(`${r.status} ${r.content[0]!.text}`);
  }
  return out;
}

/**
 * alice (as her token's session provisions her) and one event of hers, written straight into the folder's
 * database: what is compared is how each launch mode answers reads of it, not how it was written, and a
 * daemon started only to write it cost ~0.6 s of CPU.
 */
async function seeded(): Promise<{ dataDir: string; token: string }> {
  const dataDir = tempDir();
  const token = await mintBearer('alice', { phone: '+15550001' });
  const store = openSqliteStore(join(dataDir, 'toolgate.db'));
  try {
    await store.transaction(async (tx) => {
      await tx.users.provision('alice', { phone: '+15550001' });
      await tx.events.create('alice', { title: 'Seeded', start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' });
    });
  } finally {
    await store.close();
  }
  return { dataDir, token };
}

/**
 * Both tests read one seeded data folder and compare with one run on the bundle (TOOLGATE_CLI_SNAPSHOT=off):
 * the calls write nothing that a later read would show, so each daemon answers them the same whatever ran
 * before. Made once, by whichever test asks first (two daemons fewer than a folder and a baseline per test).
 */
let seededOnce: ReturnType<typeof seeded> | undefined;
const seededData = () => (seededOnce ??= seeded());

/**
 * A daemon on the seeded folder that decided on `mode` (no warning: `off` is no failure), every call run
 * on it: the results, and how many calls reached project-cli — each in that mode.
 */
async function runAllIn(mode: 'bundle' | 'snapshot', thread: string, env: Record<string, string> = {}): Promise<{ results: string[]; runs: number }> {
  const { dataDir, token } = await seededData();
  const { host, launch } = await startDecided(dataDir, env);
  let results: string[];
  try {
    assert.equal(launch.mode, mode, JSON.stringify(launch));
    // The package's blob: the build ran a call through it on this node, so no probe is needed.
    if (mode === 'snapshot' && !env.TOOLGATE_CLI_SNAPSHOT) assert.equal(launch.checked, 'build', JSON.stringify(launch));
    results = await runAll(host, token, thread);
  } finally {
    await host.stop();
  }
  const runs = lines(host, 'project-cli ran');
  assert.ok(runs.length > 0, 'some calls ran project-cli');
  assert.deepEqual(new Set(runs.map((r) => r.launch)), new Set([mode]));
  assert.equal(lines(host, 'project-cli launch').filter((l) => l.level === 'warn').length, 0, 'no warning');
  return { results, runs: runs.length };
}

let bundleOnce: Promise<{ results: string[]; runs: number }> | undefined;
const bundleBaseline = () => (bundleOnce ??= runAllIn('bundle', 't-bundle', { TOOLGATE_CLI_SNAPSHOT: 'off' }));

test('calls run from the start-up snapshot with the results the bundle gives', async () => {
  // Calls the daemon refuses itself (an unknown method, say) never start project-cli, so the count
  // of runs is compared between the two launch modes rather than with the number of calls.
  const { results, runs } = await runAllIn('snapshot', 't-snapshot');
  const bundle = await bundleBaseline();
  assert.match(results[0]!, /^success .*Seeded/);
  assert.deepEqual(results, bundle.results);
  assert.equal(runs, bundle.runs, 'the same calls reach project-cli either way');
});

test("a daemon's first calls, made as soon as it answers, start from the snapshot the build checked", async () => {
  // The build's check is read in the background (~15–30 ms); calls made before it is read used to start from
  // the bundle. Several daemons, each called at once, in this process: the race is at its tightest.
  for (let i = 0; i < 3; i++) {
    const host = await startInProcess({ executor: 'subprocess', transport: 'stdio', env: { TOOLGATE_LOG_LEVEL: 'debug' } });
    try {
      const session = await openSession(host, await mintBearer('first'));
      const r = await host.request<ToolResponse>('tool/invoke', { session_id: session.session_id, thread_id: 't', tool_call_id: 'c0', args: CALLS[4]! });
      assert.equal(r.status, 'success', JSON.stringify(r));
      // Said once the child has exited, which is after the call's answer (taken at the end of its output).
      const ran = () => lines(host, 'project-cli ran');
      const runs = await waitFor(() => (ran().length > 0 ? ran() : undefined), () => `a project-cli ran line in:\n${host.stderr()}`);
      assert.deepEqual(runs.map((l) => l.launch), ['snapshot'], host.stderr());
    } finally {
      await host.stop();
    }
  }
});

test('a damaged or missing snapshot leaves the daemon on the bundle, with one warning', async () => {
  const { dataDir, token } = await seededData();
  const damaged = join(tempDir(), 'damaged.blob');
  writeFileSync(damaged, 'not a V8 start-up snapshot\n');
  const { results: expected, runs: expectedRuns } = await bundleBaseline();
  for (const [i, blob] of [damaged, join(tempDir(), 'missing.blob')].entries()) {
    const { host, launch } = await startDecided(dataDir, { TOOLGATE_CLI_SNAPSHOT: blob });
    try {
      assert.equal(launch.level, 'warn');
      assert.equal(launch.mode, 'bundle');
      assert.ok(launch.reason, 'says why not the snapshot');
      assert.deepEqual(await runAll(host, token, `t-fallback-${i}`), expected, `${blob}: the same answers`);
    } finally {
      await host.stop();
    }
    assert.equal(lines(host, 'project-cli launch').length, 1, 'said once');
    const runs = lines(host, 'project-cli ran');
    assert.equal(runs.length, expectedRuns);
    assert.deepEqual(new Set(runs.map((r) => r.launch)), new Set(['bundle']));
  }
});

test('a blob the build did not check is probed once before calls start from it', async () => {
  const { dataDir, token } = await seededData();
  // The package's blob, copied: byte-identical, but no check of the build beside it.
  const copy = join(tempDir(), 'copy.blob');
  copyFileSync(PROJECT_CLI_SNAPSHOT, copy);
  const { results: expected } = await bundleBaseline();
  const { host, launch } = await startDecided(dataDir, { TOOLGATE_CLI_SNAPSHOT: copy });
  try {
    assert.deepEqual([launch.level, launch.mode, launch.checked], ['info', 'snapshot', 'probe'], JSON.stringify(launch));
    assert.deepEqual(await runAll(host, token, 't-probed'), expected);
  } finally {
    await host.stop();
  }
  assert.deepEqual(new Set(lines(host, 'project-cli ran').map((r) => r.launch)), new Set(['snapshot']));
});

test('a blob trusted by a check that node still refuses: the call runs again from the bundle, and so does every later one', async (t) => {
  const { dataDir, token } = await seededData();
  // No V8 start-up snapshot at all, with a check beside it that matches it on this machine — as a check
  // written on a host with another CPU would match here. The daemon trusts it; node does not.
  const dir = tempDir();
  const blob = join(dir, 'project-cli.snapshot.blob');
  writeFileSync(blob, 'not a V8 start-up snapshot\n');
  const facts = await snapshotFacts(blob);
  if (!facts) return t.skip('/proc/cpuinfo does not describe this CPU: no check is written here');
  writeFileSync(snapshotCheckPath(blob), JSON.stringify(facts));
  const { results: expected, runs: expectedRuns } = await bundleBaseline();
  const { host, launch } = await startDecided(dataDir, { TOOLGATE_CLI_SNAPSHOT: blob });
  try {
    assert.deepEqual([launch.mode, launch.checked], ['snapshot', 'build'], JSON.stringify(launch));
    assert.deepEqual(await runAll(host, token, 't-refused'), expected, 'the same answers');
  } finally {
    await host.stop();
  }
  const said = lines(host, 'project-cli launch');
  assert.equal(said.length, 2, 'trusted, then moved to the bundle once');
  assert.deepEqual([said[1]!.level, said[1]!.mode], ['warn', 'bundle']);
  assert.match(said[1]!.reason ?? '', /the snapshot did not start a call: .*(SnapshotData|startup snapshot)/);
  const runs = lines(host, 'project-cli ran').map((r) => r.launch);
  assert.deepEqual(runs, ['snapshot', ...Array<string>(expectedRuns).fill('bundle')], 'one refused start, then every call from the bundle');
});
