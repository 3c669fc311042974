/**
 * Operating the daemon (contract section 15), from outside: a spawned
 * `serve --ws` answers /healthz and /readyz, drains on SIGTERM with /readyz
 * at 503, and exposes Prometheus metrics that `promtool check metrics`
 * accepts, with bounded labels only.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResponseError } from 'vscode-jsonrpc/node';
import { startHost, openSession, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { REPO_ROOT, tempDir } from '../helpers/repo.js';
import type { ToolResponse } from '../../src/protocol/index.js';
import { waitFor } from '../helpers/wait-for.js';

const PROMTOOL = process.env.TOOLGATE_PROMTOOL ?? '/usr/bin/promtool';
const PROMETHEUS = process.env.TOOLGATE_PROMETHEUS ?? '/usr/bin/prometheus';
const prometheusSkip = existsSync(PROMETHEUS) ? {} : { skip: `prometheus is not installed at ${PROMETHEUS} (apt-get install prometheus)` };
const promtoolSkip = existsSync(PROMTOOL) ? {} : { skip: `promtool is not installed at ${PROMTOOL} (apt-get install prometheus)` };

const createArgs = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-03-03T09:00:00Z', end_at: '2026-03-03T10:00:00Z' },
});

async function get(host: Host, path: string): Promise<{ status: number; type: string; body: string }> {
  // A probe answers at once or not at all: a request that hangs fails here instead of after undici's 300 s.
  const res = await fetch(`http://127.0.0.1:${host.port}${path}`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

/** Probes until `check` holds (test/helpers/wait-for.ts; each round waits for the previous answer; a probe that fails is a round that did not see it yet). */
async function until<T>(what: string, probe: () => Promise<T>, check: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  let last: T | undefined;
  return waitFor(async () => {
    last = await probe();
    return check(last) ? { value: last } : undefined;
  }, () => `${what} (last: ${JSON.stringify(last)})`, timeoutMs, 10).then((r) => r.value);
}

/** The value of one series line of an exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * The daemon's live project-cli children, from /proc. Only a child that has exec'd project-cli counts: one caught
 * between fork and exec still shows the daemon's own command line, and stopping it there would freeze the daemon
 * (libuv's spawn waits for the exec).
 */
function childrenOf(pid: number): number[] {
  try {
    const all = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return all.filter((child) => {
      try {
        return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('project-cli');
      } catch {
        return false;
      }
    });
  } catch {
    return [];
  }
}

function stateOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] ?? '?';
  } catch {
    return '?';
  }
}

describe('probes', () => {
  test('/healthz and /readyz answer 200 while the daemon serves', async () => {
    const host = await startHost({ transport: 'ws' });
    try {
      const health = await get(host, '/healthz');
      assert.equal(health.status, 200);
      assert.deepEqual(JSON.parse(health.body), { status: 'ok' });
      const ready = await get(host, '/readyz');
      assert.equal(ready.status, 200);
      assert.deepEqual(JSON.parse(ready.body), { status: 'ready' });
      assert.equal((await fetch(`http://127.0.0.1:${host.port}/readyz`, { method: 'POST' })).status, 405);
    } finally {
      await host.stop();
    }
  });

  test('SIGTERM: /readyz turns 503 while an in-flight call finishes; a new call gets -32004', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async () => {
    // One project-cli at a time; the test stops the running one (SIGSTOP), so the call stays in flight.
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.*'] } }, limits: { max_processes: 1 } }));
    const host = await startHost({ transport: 'ws', dataDir: dir, args: ['--config', config] });
    const paused = new Set<number>();
    try {
      const s = await openSession(host, await mintBearer('ops'));
      const call = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'drain', tool_call_id: 'd0', args: createArgs('Drain') });
      // Every child seen is paused (and resumed in finally); the call is in flight once one of them shows as stopped.
      await until('a project-cli child stopped', async () => {
        for (const child of childrenOf(host.proc.pid!)) {
          if (!paused.has(child)) {
            paused.add(child);
            process.kill(child, 'SIGSTOP');
          }
        }
        return [...paused].some((c) => /^[Tt]$/.test(stateOf(c)));
      }, (yes) => yes);
      host.proc.kill('SIGTERM');
      const ready = await until('/readyz 503', () => get(host, '/readyz'), (r) => r.status === 503);
      assert.deepEqual(JSON.parse(ready.body), { status: 'not ready', reason: 'draining' });
      const health = await get(host, '/healthz');
      assert.equal(health.status, 200, 'the process still serves');
      let refusal = '';
      await assert.rejects(
        host.request('tool/invoke', { session_id: s.session_id, thread_id: 'drain', tool_call_id: 'd1', args: createArgs('Late') }),
        (err: ResponseError<unknown>) => ((refusal = err.message), err.code === -32004),
      );
      for (const c of paused) process.kill(c, 'SIGCONT');
      paused.clear();
      assert.equal((await call).status, 'success', 'the in-flight call finished');
      assert.equal(await host.exited, 0);
      await assert.rejects(fetch(`http://127.0.0.1:${host.port}/readyz`), 'nothing listens once it exited');

      // docs/operations.md shows exactly this sequence: the probes' answers, the refusal, the log lines in order.
      const block = /<!-- drain-sequence -->\n```\n([\s\S]*?)```/.exec(readFileSync(join(REPO_ROOT, 'docs', 'operations.md'), 'utf8'))?.[1] ?? '';
      assert.ok(block.includes(`${ready.body} 503`) && block.includes(`${health.body} 200`), block);
      assert.ok(block.includes(`-32004 "${refusal}"`), block);
      const logged = host.stderr().split('\n').filter((l) => l.startsWith('{"ts"')).map((l) => JSON.parse(l) as Record<string, unknown>);
      let at = 0;
      for (const shown of block.split('\n').filter((l) => l.startsWith('{"level"')).map((l) => JSON.parse(l) as Record<string, unknown>)) {
        const found = logged.findIndex((line, i) => i >= at && Object.entries(shown).every(([k, v]) => line[k] === v));
        assert.ok(found >= 0, `the daemon logged ${JSON.stringify(shown)} after line ${at}: ${host.stderr()}`);
        at = found + 1;
      }
    } finally {
      for (const c of paused) {
        try {
          process.kill(c, 'SIGCONT');
        } catch {
          /* gone */
        }
      }
      await host.stop();
    }
  });
});

describe('metrics', () => {
  test('/metrics counts calls with bounded labels and promtool accepts it', promtoolSkip, async () => {
    const host = await startHost({ transport: 'ws' });
    try {
      const s = await openSession(host, await mintBearer('user-secret-id'));
      const ok = await host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'thread-secret-id', tool_call_id: 'm0', args: createArgs('Metric') });
      assert.equal(ok.status, 'success', ok.content[0]!.text);
      const unknown = await host.request<ToolResponse>('tool/invoke', {
        session_id: s.session_id, thread_id: 'thread-secret-id', tool_call_id: 'm1',
        args: { module: 'client-chosen-module', method: 'anything', input: {} },
      });
      assert.equal(unknown.status, 'failure');
      await host.request('thread/subscribe', { session_id: s.session_id, thread_id: 'thread-secret-id' });
      const m = await get(host, '/metrics');
      assert.equal(m.status, 200);
      assert.match(m.type, /^text\/plain; version=0\.0\.4/);
      const text = m.body;
      if (process.env.TOOLGATE_DUMP_METRICS) writeFileSync(process.env.TOOLGATE_DUMP_METRICS, text);
      assert.equal(sample(text, 'toolgate_tool_calls_total{action="calendar.create",status="success",executor="subprocess",transport="ws"}'), 1);
      assert.equal(sample(text, 'toolgate_tool_calls_total{action="unknown",status="failure",executor="subprocess",transport="ws"}'), 1);
      assert.equal(sample(text, 'toolgate_tool_call_duration_seconds_count{action="calendar.create",executor="subprocess",transport="ws"}'), 1);
      assert.equal(sample(text, 'toolgate_tool_calls_in_flight{transport="ws"}'), 0);
      assert.equal(sample(text, 'toolgate_sessions_open'), 1);
      assert.equal(sample(text, 'toolgate_subscriptions_open'), 1);
      assert.ok((sample(text, 'toolgate_store_commit_duration_seconds_count') ?? 0) >= 2, 'the store reports its commits');
      assert.ok((sample(text, 'toolgate_store_commit_group_size_count') ?? 0) >= 2);
      assert.ok(sample(text, 'process_resident_memory_bytes')! > 0, 'the default process metrics are there');
      // This suite runs in the SQLite pass only; pg-connection.test.ts checks the pool series on PostgreSQL.
      assert.ok(!text.includes('toolgate_pg_pool'), 'no pool series on SQLite');
      for (const secret of ['user-secret-id', 'thread-secret-id', 'client-chosen-module', 'm0', s.session_id]) {
        assert.ok(!text.includes(secret), `${secret} is not in the metrics`);
      }
      const dir = tempDir();
      writeFileSync(join(dir, 'metrics.txt'), text);
      const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
      assert.equal(check.status, 0, `promtool check metrics:\n${check.stdout}${check.stderr}`);
    } finally {
      await host.stop();
    }
  });

  test('metrics.enabled: false turns /metrics off (404); the probes stay', async () => {
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.*'] } }, metrics: { enabled: false } }));
    const host = await startHost({ transport: 'ws', dataDir: dir, args: ['--config', config] });
    try {
      assert.equal((await get(host, '/metrics')).status, 404);
      assert.equal((await get(host, '/healthz')).status, 200);
    } finally {
      await host.stop();
    }
  });
});

/** A loopback port free right now (Prometheus takes a fixed listen address). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** A daemon and a real Prometheus scraping it every second; `log` is the tail of Prometheus's own log. */
interface Scraped {
  host: Host;
  prom: ChildProcess;
  promPort: number;
  log: () => string;
}

async function startScraped(): Promise<Scraped> {
  const host = await startHost({ transport: 'ws' });
  const dir = tempDir();
  const promPort = await freePort();
  writeFileSync(join(dir, 'prometheus.yml'), [
    'global: { scrape_interval: 1s, scrape_timeout: 1s }',
    'scrape_configs:',
    `  - { job_name: toolgate, static_configs: [{ targets: ["127.0.0.1:${host.port}"] }] }`,
    '',
  ].join('\n'));
  const prom = spawn(PROMETHEUS, [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`,
    `--web.listen-address=127.0.0.1:${promPort}`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let promLog = '';
  prom.stderr!.on('data', (c: Buffer) => (promLog = (promLog + c.toString('utf8')).slice(-4000)));
  return { host, prom, promPort, log: () => promLog };
}

async function stopScraped({ host, prom }: Scraped): Promise<void> {
  if (prom.exitCode === null && prom.signalCode === null) {
    const exited = new Promise((r) => prom.once('exit', r));
    prom.kill('SIGTERM');
    await exited;
  }
  await host.stop();
}

// Prometheus (2.42) scrapes a configured target first ~5 s after it starts: its service discovery hands the
// targets on every 5 s, with no flag to shorten that (measured: first scrape at 5.5-6 s). So the daemon and
// Prometheus start with the file, and that wait passes while the tests above run; the test below makes its
// call and waits for the series as before.
let scraped: Promise<Scraped> | undefined;
before(() => {
  if (prometheusSkip.skip) return;
  scraped = startScraped();
  scraped.catch(() => {}); // awaited (and reported) by the test
});
after(async () => {
  await scraped?.then(stopScraped, () => {});
});

test('a real Prometheus scrapes the daemon and its query API returns toolgate_tool_calls_total', prometheusSkip, async () => {
  const { host, promPort, log } = await (scraped ?? assert.fail('Prometheus was not started'));
  const s = await openSession(host, await mintBearer('scraped'));
  const r = await host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'p', tool_call_id: 'p0', args: createArgs('Scraped') });
  assert.equal(r.status, 'success');
  const query = `http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent('toolgate_tool_calls_total{action="calendar.create",status="success"}')}`;
  type Answer = { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
  const answer = await until('Prometheus has the series', async () => {
    try {
      return (await (await fetch(query)).json()) as Answer;
    } catch {
      return undefined;
    }
  }, (a) => (a?.data.result.length ?? 0) > 0, 60_000).catch((err: Error) => {
    throw new Error(`${err.message}\nprometheus:\n${log()}`);
  });
  const series = answer!.data.result[0]!;
  assert.equal(series.metric.job, 'toolgate');
  assert.equal(series.metric.transport, 'ws');
  assert.equal(series.value[1], '1');
});
