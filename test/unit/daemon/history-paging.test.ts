/**
 * history/get paging and thread/list ordering, as a host rebuilding a long
 * conversation would use them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseError } from 'vscode-jsonrpc/node';
import { openSession, TRANSPORTS } from '../../helpers/host.js';
import { EXECUTOR_FOR, startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import type { HistoryGetResult } from '../../../src/protocol/index.js';
import { waitFor } from '../../helpers/wait-for.js';

type Page = HistoryGetResult;

for (const transport of TRANSPORTS) {
  describe(`over ${transport} (${EXECUTOR_FOR[transport]} executor)`, () => {
    test('pages run newest first, oldest first within a page, until next_before is null', async () => {
      const host = await startInProcess({ executor: EXECUTOR_FOR[transport], transport });
      try {
        const s = await openSession(host, await mintBearer('alice'));
        for (let i = 1; i <= 7; i++) {
          await host.request('message/append', { session_id: s.session_id, thread_id: 'long', role: i % 2 ? 'user' : 'assistant', content: `m${i}` });
        }
        const get = (extra: Record<string, unknown>) =>
          host.request<Page>('history/get', { session_id: s.session_id, thread_id: 'long', view: 'context', ...extra });
        const first = await get({ limit: 3 });
        assert.deepEqual(first.messages.map((m) => m.content), ['m5', 'm6', 'm7']);
        assert.equal(first.next_before, first.messages[0]!.id);
        const second = await get({ limit: 3, before: first.next_before });
        assert.deepEqual(second.messages.map((m) => m.content), ['m2', 'm3', 'm4']);
        const third = await get({ limit: 3, before: second.next_before });
        assert.deepEqual(third.messages.map((m) => m.content), ['m1']);
        assert.equal(third.next_before, null);
        const all = await get({});
        assert.equal(all.messages.length, 7);
        assert.equal(all.next_before, null);
        for (const limit of [0, 501, 2.5]) {
          const err = (await get({ limit }).catch((e: unknown) => e)) as ResponseError<unknown>;
          assert.equal(err.code, -32602, `limit ${limit}`);
        }
        const foreign = await get({ before: 'msg_not-in-this-thread' });
        assert.deepEqual(foreign, { messages: [], next_before: null });
      } finally {
        await host.stop();
      }
    });

    test('thread/list shows the user’s threads, most recently used first, with counts', async () => {
      const host = await startInProcess({ executor: EXECUTOR_FOR[transport], transport });
      try {
        const s = await openSession(host, await mintBearer('alice'));
        const other = await openSession(host, await mintBearer('bob'));
        for (const [thread, n] of [['t-old', 2], ['t-mid', 1], ['t-new', 3]] as const) {
          for (let i = 0; i < n; i++) {
            await host.request('message/append', { session_id: s.session_id, thread_id: thread, role: 'user', content: `${thread}-${i}` });
            // Timestamps have millisecond resolution: the next append is stamped later than this one.
            const at = Date.now();
            await waitFor(() => Date.now() > at, 'the clock to tick', 1000, 1);
          }
        }
        await host.request('message/append', { session_id: other.session_id, thread_id: 'bobs', role: 'user', content: 'hi' });
        const list = await host.request<{ threads: Array<{ thread_id: string; message_count: number; created_at: string; updated_at: string }> }>(
          'thread/list', { session_id: s.session_id },
        );
        assert.deepEqual(list.threads.map((t) => [t.thread_id, t.message_count]), [['t-new', 3], ['t-mid', 1], ['t-old', 2]]);
        const limited = await host.request<{ threads: unknown[] }>('thread/list', { session_id: s.session_id, limit: 1 });
        assert.equal(limited.threads.length, 1);
      } finally {
        await host.stop();
      }
    });
  });
}
