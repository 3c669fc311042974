/**
 * The first hour, third walk (issue #42): what a newcomer met that was silent
 * or unclear, each as a person would meet it. Tracing says where spans go,
 * shows them without a collector (`OTEL_TRACES_EXPORTER=console`, on stderr),
 * and says once when the collector cannot be reached; a database path that
 * cannot be written names the path and the cause; a config mistake names
 * what to fix.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import type { AddressInfo } from 'node:net';
import { startHost, openSession } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import type { ToolResponse } from '../../src/protocol/index.js';

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const logLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('OTEL_TRACES_EXPORTER=console: each span is one JSON line on stderr, stdout stays the protocol', { timeout: 60_000 }, async () => {
  const host = await startHost({ env: { OTEL_TRACES_EXPORTER: 'console' } });
  try {
    const s = await openSession(host, await mintBearer('spans'));
    const r = await host.request<ToolResponse>('tool/invoke', {
      session_id: s.session_id, thread_id: 't', tool_call_id: 'c1', args: { module: 'memory', method: 'read', input: {} },
    });
    assert.equal(r.status, 'success');
    const span = await waitFor(() => logLines(host.stderr()).find((l) => l.span === 'execute_tool project_cli'), () => host.stderr());
    assert.match(String(span.trace_id), /^[0-9a-f]{32}$/);
    assert.equal((span.attributes as Record<string, unknown>)['toolgate.action'], 'memory.read');
    assert.equal(typeof span.duration_ms, 'number');
    const on = logLines(host.stderr()).find((l) => l.msg === 'tracing on');
    assert.ok(on, host.stderr());
    assert.equal(on.exporter, 'console');
    assert.match(String(on.to), /stderr/);
  } finally {
    await host.stop();
  }
});

test('OTEL_TRACES_EXPORTER=otlp: "tracing on" names the endpoint, and an unreachable collector is one warning line, while running', { timeout: 90_000 }, async () => {
  const port = await closedPort();
  const host = await startHost({
    transport: 'ws',
    env: {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://user:pw@127.0.0.1:${port}/`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '20',
      // The exporter retries a refused connection until its timeout (10 s by default) before it reports:
      // a second gives the same ECONNREFUSED.
      OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
    },
  });
  const warnings = () => logLines(host.stderr()).filter((l) => /export/i.test(String(l.msg)) && /fail/i.test(String(l.msg)));
  try {
    const on = logLines(host.stderr()).find((l) => l.msg === 'tracing on');
    assert.ok(on, host.stderr());
    assert.equal(on.to, `http://127.0.0.1:${port}/v1/traces`, 'the endpoint, without its credentials');
    const s = await openSession(host, await mintBearer('trace-down'));
    for (const id of ['c1', 'c2', 'c3']) {
      const r = await host.request<ToolResponse>('tool/invoke', {
        session_id: s.session_id, thread_id: 't', tool_call_id: id, args: { module: 'memory', method: 'read', input: {} },
      });
      assert.equal(r.status, 'success');
    }
    // Said while the daemon runs, not only at shutdown.
    const [w] = await waitFor(() => (warnings().length > 0 ? warnings() : null), () => `a warning line in:\n${host.stderr()}`, 60_000);
    assert.equal(w!.level, 'warn');
    assert.equal(w!.endpoint, `http://127.0.0.1:${port}/v1/traces`);
    assert.doesNotMatch(String(w!.err), /\n|\s+at\s+\S+\s+\(/, 'no stack');
  } finally {
    await host.stop();
  }
  assert.equal(warnings().length, 1, `one line for the whole outage:\n${host.stderr()}`);
  assert.doesNotMatch(host.stderr(), /pw@/, 'the URL\'s password is never logged');
});

/** `toolgate serve --stdio --dev --db <db>` as a person runs it (as `uid` when given), stdin at its end. */
function serveDev(db: string, home: string, uid?: number): { code: number | null; stderr: string } {
  const env = { PATH: process.env.PATH ?? '', HOME: home, TOOLGATE_HOME: home };
  const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'serve', '--stdio', '--dev', '--db', db], {
    env, input: '', encoding: 'utf8', timeout: 60_000, ...(uid === undefined ? {} : { uid, gid: uid }),
  });
  return { code: r.status, stderr: r.stderr };
}

const ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

test('--db in a read-only folder: one line naming the folder and "permission denied", not "unable to open database file"', () => {
  // root writes anywhere: the daemon then runs as nobody, as a person without rights to the folder would.
  const base = tempDir();
  chmodSync(base, 0o755);
  const ro = join(base, 'ro');
  mkdirSync(ro, { mode: 0o555 });
  chmodSync(ro, 0o555);
  const home = join(base, 'home');
  mkdirSync(home, { mode: 0o700 });
  if (ROOT) chownSync(home, NOBODY, NOBODY);
  const r = serveDev(join(ro, 't.db'), home, ROOT ? NOBODY : undefined);
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, new RegExp(`^toolgate: cannot open database ${join(ro, 't.db')}: its folder ${ro} is not writable \\(permission denied\\)`));
  assert.doesNotMatch(r.stderr, /unable to open database file/);
});

test('--db on a read-only file system: one line naming the path and "a read-only file system", for an existing and a new folder', (t) => {
  const mnt = tempDir();
  const mounted = ROOT && spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', mnt]).status === 0;
  if (!mounted) return t.skip('needs root and mount to make a read-only file system');
  try {
    const home = tempDir();
    const existing = serveDev(join(mnt, 't.db'), home);
    assert.equal(existing.code, 2, existing.stderr);
    assert.match(existing.stderr, new RegExp(`^toolgate: cannot open database ${join(mnt, 't.db')}: its folder ${mnt} is not writable \\(a read-only file system\\)`));
    const fresh = serveDev(join(mnt, 'new', 't.db'), home);
    assert.equal(fresh.code, 2, fresh.stderr);
    assert.match(fresh.stderr, new RegExp(`^toolgate: --db: cannot create the folder ${join(mnt, 'new')} \\(a read-only file system\\)`));
    assert.doesNotMatch(existing.stderr + fresh.stderr, /ENOENT|unable to open/);
  } finally {
    spawnSync('umount', [mnt]);
    if (existsSync(mnt)) rmSync(mnt, { recursive: true, force: true });
  }
});

test('config mistakes say what to fix in one line: no agents, a near-miss key, a JSON syntax error with line and column', () => {
  const dir = tempDir();
  const home = tempDir();
  const cases: Array<[name: string, text: string, message: RegExp]> = [
    ['no-agents.json', '{"limits": {"call_timeout_ms": 5000}}', /: no "agents": a config needs at least one agent profile, e\.g\. \{"agents": /],
    ['near-miss.json', '{"agents": {"a": {"enabled_skills": [], "allowed_actions": []}}, "limits": {"call_timeout": 5000}}', /: unknown key limits\.call_timeout \(did you mean limits\.call_timeout_ms\?\)$/],
    ['typo.json', '{"agnets": {}}', /: unknown key agnets \(did you mean agents\?\)$/],
    ['syntax.json', '{\n  "agents": {\n    "a": {,}\n  }\n}\n', /: not valid JSON \(line 3, column 11\): /],
  ];
  for (const [name, text, message] of cases) {
    const file = join(dir, name);
    writeFileSync(file, text);
    const r = spawnSync(process.execPath, [TOOLGATE_BIN, 'serve', '--stdio', '--dev', '--config', file, '--db', join(dir, 'x', 't.db')], {
      env: { PATH: process.env.PATH ?? '', HOME: home, TOOLGATE_HOME: home }, input: '', encoding: 'utf8', timeout: 60_000,
    });
    assert.equal(r.status, 2, `${name}: ${r.stderr}`);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, `${name}: ${r.stderr}`);
    assert.match(lines[0]!, new RegExp(`^toolgate: config ${file}`), name);
    assert.match(lines[0]!, message, name);
    assert.doesNotMatch(r.stderr, /expected record, received undefined|at position/, name);
  }
});

test('npm run inspector on a busy port says how to pass a port through npm (-- --port N)', { timeout: 60_000 }, async () => {
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = busy.address() as AddressInfo;
    const home = tempDir();
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts', 'inspector.mjs'), '--port', String(port), '--db', join(home, 't.db')], {
      env: { PATH: process.env.PATH ?? '', HOME: home, TOOLGATE_HOME: home }, input: '', encoding: 'utf8', timeout: 60_000,
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /already in use .*npm run inspector -- --port N/);
  } finally {
    await new Promise<void>((resolve) => busy.close(() => resolve()));
  }
});

test('operations.md backup commands make a 0600 copy (sqlite3 alone makes 0644)', (t) => {
  if (spawnSync('sqlite3', ['-version']).status !== 0) return t.skip('sqlite3 is not installed');
  const page = readFileSync(join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
  const commands = page.split('\n').filter((l) => l.includes('sqlite3 /var/lib/toolgate/toolgate.db'));
  assert.equal(commands.length, 2, 'the two backup commands');
  const dir = tempDir();
  const db = join(dir, 'toolgate.db');
  assert.equal(spawnSync('sqlite3', [db, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);']).status, 0);
  for (const [i, command] of commands.entries()) {
    const copy = join(dir, `copy-${i}.db`);
    const line = command.replaceAll('/var/lib/toolgate/toolgate.db', db).replace(/\/backup\/toolgate-\$\(date \+%F\)\.db/, copy);
    const r = spawnSync('sh', ['-c', line], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    assert.equal(r.status, 0, `${line}\n${r.stderr}`);
    assert.equal(statSync(copy).mode & 0o777, 0o600, line);
  }
});

test('a request refused for its Host (a daemon reached by its LAN name) is one warn line naming http.allowed_hosts, once', { timeout: 60_000 }, async () => {
  const host = await startHost({ transport: 'ws' });
  const get = (hostHeader: string) =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: host.port, path: '/', headers: { host: hostHeader } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject).end();
    });
  const refusals = () => logLines(host.stderr()).filter((l) => l.msg === 'http request refused (403)');
  try {
    assert.equal(await get(`toolgate.lan:${host.port}`), 403);
    assert.equal(await get(`toolgate.lan:${host.port}`), 403);
    const [line] = await waitFor(() => (refusals().length > 0 ? refusals() : null), () => host.stderr());
    assert.equal(line!.level, 'warn');
    assert.match(String(line!.fix), /add "toolgate\.lan" to http\.allowed_hosts/);
  } finally {
    await host.stop();
  }
  assert.equal(refusals().length, 1, 'the same refusal is logged once');
});
