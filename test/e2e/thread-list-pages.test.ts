/**
 * `thread/list` pages with a cursor: `cursor` in the params, `next_cursor`
 * in the result (null on the last page). It used to stop at 500 threads,
 * with no way to reach the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess } from '../helpers/in-process.js';
import { openSession, rpcError } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import type { ThreadListResult } from '../../src/protocol/methods.js';
import type { z } from 'zod';

type Page = z.infer<typeof ThreadListResult>;

test('thread/list: past 500 threads, next_cursor reaches every thread once, newest first', { timeout: 120_000 }, async () => {
  const host = await startInProcess();
  try {
    const s = await openSession(host, await mintBearer('alice'));
    const ids = Array.from({ length: 510 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    for (const thread_id of ids) await host.request('message/append', { session_id: s.session_id, thread_id, role: 'user', content: 'hi' });

    const pages: Page[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await host.request<Page>('thread/list', { session_id: s.session_id, limit: 500, ...(cursor ? { cursor } : {}) });
      pages.push(page);
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(pages.map((p) => p.threads.length), [500, 10]);
    const seen = pages.flatMap((p) => p.threads);
    assert.equal(new Set(seen.map((t) => t.thread_id)).size, 510, 'every thread once');
    const order = seen.map((t) => `${t.updated_at}|${t.thread_id}`);
    assert.deepEqual(order, [...order].sort().reverse(), 'most recently updated first, then by id');

    const small = await host.request<Page>('thread/list', { session_id: s.session_id, limit: 7 });
    assert.equal(small.threads.length, 7);
    const next = await host.request<Page>('thread/list', { session_id: s.session_id, limit: 7, cursor: small.next_cursor });
    assert.deepEqual(next.threads.map((t) => t.thread_id), seen.slice(7, 14).map((t) => t.thread_id));

    for (const cursor of ['%%%', Buffer.from('["x"]').toString('base64url'), Buffer.from('["2026", "a\\u0000"]').toString('base64url')]) {
      const err = await rpcError(host.request('thread/list', { session_id: s.session_id, cursor }));
      assert.equal(err.code, -32602);
      assert.equal((err.data as { code: string }).code, 'INVALID_CURSOR');
    }
  } finally {
    await host.stop();
  }
});
