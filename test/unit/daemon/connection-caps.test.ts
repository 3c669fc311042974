/**
 * Contract section 13: sessions and subscriptions per connection are capped
 * (-32003 with a clear message past the cap); a closed connection's sessions
 * are freed; subscribing creates no thread — and a subscriber hears only its
 * own user's calls on that thread id.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ResponseError } from 'vscode-jsonrpc/node';
import { openSession } from '../../helpers/host.js';
import { startInProcess } from '../../helpers/in-process.js';
import { tempDir } from '../../helpers/repo.js';
import { mintBearer } from '../../helpers/tokens.js';
import { waitFor } from '../../helpers/wait-for.js';

function configWith(limits: Record<string, number>): string {
  const file = join(tempDir('toolgate-cfg-'), 'config.json');
  writeFileSync(file, JSON.stringify({
    agents: { default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] } },
    limits,
  }));
  return file;
}

test('sessions per connection are capped; another connection has its own cap; a closed connection frees its sessions', async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws', args: ['--config', configWith({ max_sessions_per_connection: 3 })] });
  try {
    const token = await mintBearer('alice');
    for (let i = 0; i < 3; i++) await openSession(host, token);
    const err = (await openSession(host, token).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(err.code, -32003);
    assert.match(err.message, /too many sessions on this connection \(limit 3/);
    const other = await host.connect();
    for (let i = 0; i < 3; i++) await openSession(other, token);
    await other.close();
    const again = await host.connect();
    for (let i = 0; i < 3; i++) await openSession(again, token);
    await again.close();
  } finally {
    await host.stop();
  }
});

test('connections per user are capped: the next one is refused -32003, a closed one frees its place, other users are not counted', async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws', args: ['--config', configWith({ max_connections_per_user: 2 })] });
  try {
    const token = await mintBearer('alice');
    const first = await host.connect();
    await openSession(first, token);
    await openSession(first, token); // a second session on the same connection takes no second place
    const second = await host.connect();
    await openSession(second, token);
    const third = await host.connect();
    const err = (await openSession(third, token).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(err.code, -32003);
    assert.match(err.message, /too many connections for this user \(limit 2, limits\.max_connections_per_user\)/);
    await openSession(third, await mintBearer('bob'));
    await first.close();
    // The daemon frees the place when it sees the close: the next open is admitted once it has.
    await waitFor(
      () => openSession(third, token).catch((e: unknown) => ((e as ResponseError<unknown>).code === -32003 ? undefined : Promise.reject(e))),
      'a closed connection to free its place',
    );
    await second.close();
    await third.close();
  } finally {
    await host.stop();
  }
});

test('subscriptions per connection are capped, re-subscribing costs nothing, and subscribing writes no thread', async () => {
  const host = await startInProcess({ executor: 'subprocess', args: ['--config', configWith({ max_subscriptions_per_connection: 2 })] });
  try {
    const s = await openSession(host, await mintBearer('alice'));
    await host.request('thread/subscribe', { session_id: s.session_id, thread_id: 'a' });
    await host.request('thread/subscribe', { session_id: s.session_id, thread_id: 'a' });
    await host.request('thread/subscribe', { session_id: s.session_id, thread_id: 'b' });
    const err = (await host.request('thread/subscribe', { session_id: s.session_id, thread_id: 'c' }).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(err.code, -32003);
    assert.match(err.message, /too many subscriptions on this connection \(limit 2/);
    await host.request('thread/unsubscribe', { session_id: s.session_id, thread_id: 'b' });
    await host.request('thread/subscribe', { session_id: s.session_id, thread_id: 'c' });
    assert.deepEqual((await host.request<{ threads: unknown[] }>('thread/list', { session_id: s.session_id })).threads, []);
  } finally {
    await host.stop();
  }
  const db = new Database(host.dbPath, { readonly: true });
  assert.equal((db.prepare('SELECT count(*) AS n FROM threads').get() as { n: number }).n, 0, 'no thread row');
  db.close();
});

test('a subscriber to a thread id hears only its own user’s calls there', async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
  try {
    const mallory = await host.connect();
    const m = await openSession(mallory, await mintBearer('mallory'));
    await mallory.request('thread/subscribe', { session_id: m.session_id, thread_id: 'shared-name' });
    const a = await openSession(host, await mintBearer('alice'));
    await host.request('tool/invoke', {
      session_id: a.session_id, thread_id: 'shared-name', tool_call_id: 'c1', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'alice only' } },
    });
    // No fixed wait for what must not come: mallory's own call in the thread she watches is published after
    // alice's was answered, so a leak of alice's call would reach her ahead of it.
    await mallory.request('tool/invoke', { session_id: m.session_id, thread_id: 'shared-name', tool_call_id: 'm1', args: { module: 'memory', method: 'read', input: {} } });
    assert.deepEqual(mallory.wire.filter((e) => e.method === 'tool/result').map((e) => (e.payload as { tool_call_id: string }).tool_call_id), ['m1']);
    assert.equal(host.wire.filter((e) => e.method === 'tool/result').length, 1);
  } finally {
    await host.stop();
  }
});
