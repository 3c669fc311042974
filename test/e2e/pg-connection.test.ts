/**
 * The daemon's PostgreSQL connection from outside: the password can stay out
 * of argv (TOOLGATE_DB, PGPASSWORD) and never reaches a log line, a password
 * on the command line is warned about, and a daemon whose database
 * connections are cut reconnects, says so in its log, and keeps fanning out.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openSession, startHost, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { dbCount } from '../helpers/db.js';
import { freshPgDatabase, needsPg, pgQuery, TEST_PG_URL } from '../helpers/pg.js';
import type { ToolResponse } from '../../src/protocol/index.js';
import { waitFor } from '../helpers/wait-for.js';

const create = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' },
});

const ARGV_WARNING = /the database password is on the command line/;

async function call(host: Host, toolCallId: string, thread = 't'): Promise<ToolResponse> {
  const { session_id } = await openSession(host, await mintBearer('alice'));
  return host.request<ToolResponse>('tool/invoke', { session_id, thread_id: thread, tool_call_id: toolCallId, args: create(toolCallId) });
}

function withoutPassword(url: string): string {
  const u = new URL(url);
  u.password = '';
  return u.toString();
}

describe('the PostgreSQL password stays out of argv and logs', needsPg, () => {
  const password = decodeURIComponent(new URL(TEST_PG_URL ?? 'postgres://x:y@h/d').password);

  test('TOOLGATE_DB without a password + PGPASSWORD: serves (project-cli children too), nothing in argv or stderr', async () => {
    const db = await freshPgDatabase();
    const host = await startHost({ db: withoutPassword(db.url), env: { PGPASSWORD: password }, args: ['--executor', 'subprocess'] });
    try {
      const res = await call(host, 'pw-env');
      assert.equal(res.status, 'success', `${JSON.stringify(res)}\n${host.stderr()}`);
      assert.equal(await dbCount(db.url, 'SELECT count(*) AS n FROM events WHERE title = ?', ['pw-env']), 1, 'the CLI child stored the event');
      const argv = readFileSync(`/proc/${host.proc.pid}/cmdline`, 'utf8');
      assert.ok(!argv.includes(password), 'no password in argv');
      assert.doesNotMatch(host.stderr(), ARGV_WARNING);
    } finally {
      await host.stop();
    }
    assert.ok(!host.stderr().includes(password), 'the password stays out of the log');
    assert.match(host.stderr(), /"db":"postgres:\/\/toolgate:\*\*\*@127\.0\.0\.1/, "the log names the database, its password masked");
  });

  test('a password in --db works, is warned about, and is never logged', async () => {
    const db = await freshPgDatabase();
    // --db wins over the TOOLGATE_DB the harness sets.
    const host = await startHost({ db: db.url, args: ['--db', db.url, '--executor', 'inprocess'] });
    try {
      assert.equal((await call(host, 'pw-argv')).status, 'success');
    } finally {
      await host.stop();
    }
    assert.match(host.stderr(), ARGV_WARNING);
    assert.ok(!host.stderr().includes(password), 'the password stays out of the log');
    assert.match(host.stderr(), /postgres:\/\/toolgate:\*\*\*@127\.0\.0\.1/);
  });
});

describe('a daemon that loses its database connections', needsPg, () => {
  test('reconnects, says so in its log, and keeps serving and fanning out', async () => {
    const db = await freshPgDatabase();
    const args = ['--executor', 'inprocess'];
    const [a, b] = await Promise.all([startHost({ transport: 'ws', db: db.url, args }), startHost({ transport: 'ws', db: db.url, args })]);
    try {
      const sa = (await openSession(a, await mintBearer('alice'))).session_id;
      const sb = (await openSession(b, await mintBearer('alice'))).session_id;
      await a.request('thread/subscribe', { session_id: sa, thread_id: 'shared' });
      const invokeB = (id: string) => b.request<ToolResponse>('tool/invoke', { session_id: sb, thread_id: 'shared', tool_call_id: id, args: create(id) });
      const seenByA = () =>
        a.wire
          .filter((e) => e.kind === 'notification' && e.method === 'tool/result' && (e.payload as { thread_id: string }).thread_id === 'shared')
          .map((e) => (e.payload as { tool_call_id: string }).tool_call_id);
      assert.equal((await invokeB('before')).status, 'success');
      await waitFor(() => seenByA().includes('before'), () => `A saw ${seenByA().join(',')}`);

      // The server ends every session of this database (as a restart or a network cut would).
      await pgQuery(db.url, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      await waitFor(() => /reconnected to the database for thread events/.test(a.stderr()), () => a.stderr());
      assert.match(a.stderr(), /lost the database connection that listens for thread events; reconnecting/);

      // Both still serve (their pools replace the dead connections), and B's calls still reach A's subscriber.
      const after = await retryOnce(() => invokeB('after'));
      assert.equal(after.status, 'success', JSON.stringify(after));
      await waitFor(() => seenByA().includes('after'), () => `A saw ${seenByA().join(',')}\n${a.stderr()}`);
      const own = await retryOnce(() => a.request<ToolResponse>('tool/invoke', { session_id: sa, thread_id: 'own', tool_call_id: 'own-1', args: create('own-1') }));
      assert.equal(own.status, 'success', JSON.stringify(own));
      assert.deepEqual(seenByA(), ['before', 'after'], 'each call of the subscribed thread once, in order');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

/**
 * A request that raced the cut may meet a connection the pool had not yet
 * seen die; the answer is a clear error, and the retry goes through.
 */
async function retryOnce<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch {
    return f();
  }
}

describe('PostgreSQL pool metrics', needsPg, () => {
  test('/metrics reports the pool of a daemon on PostgreSQL (connections idle and busy, waiting), labels bounded', async () => {
    const { url } = await freshPgDatabase();
    const host = await startHost({ transport: 'ws', db: url });
    try {
      assert.equal((await call(host, 'metrics-1')).status, 'success');
      const text = await (await fetch(`http://127.0.0.1:${host.port}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
      const series = text.split('\n').filter((l) => l.startsWith('toolgate_pg_pool'));
      const value = (name: string) => series.find((l) => l.startsWith(`${name} `))?.split(' ')[1];
      // The labels are exactly the two states: nothing of a call, a user or the database URL.
      assert.deepEqual(series.filter((l) => l.startsWith('toolgate_pg_pool_connections')).map((l) => l.split(' ')[0]).sort(), [
        'toolgate_pg_pool_connections{state="busy"}',
        'toolgate_pg_pool_connections{state="idle"}',
      ]);
      const idle = Number(value('toolgate_pg_pool_connections{state="idle"}'));
      assert.ok(idle >= 1, `idle connections after a call: ${idle}`);
      assert.equal(value('toolgate_pg_pool_waiting'), '0');
      assert.ok(!text.includes(new URL(url).password), 'the database password is in /metrics');
    } finally {
      await host.stop();
    }
  });
});
