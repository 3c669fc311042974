/**
 * `history/get` (src/threads/history.ts) in process: pages run newest first
 * (oldest first within a page) through `before`/`next_before` to the end;
 * the `context` view is the stored content alone, the `ui` view replays a
 * tool message's `ui_schema` exactly as its live `tool/result` carried it
 * (also after the UI cache is emptied, from the stored metadata) and an
 * assistant's worker_output; another user's thread is THREAD_NOT_FOUND.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseError } from 'vscode-jsonrpc';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { openSession } from '../../helpers/host.js';
import { mintBearer } from '../../helpers/tokens.js';
import { waitFor } from '../../helpers/wait-for.js';
import { UiCache } from '../../../src/threads/ui-cache.js';
import type { HistoryGetResult, ToolResponse, ToolResultNotification } from '../../../src/protocol/index.js';

describe('history/get', () => {
  let host: InProcessHost;
  let session: string;
  before(async () => {
    host = await startInProcess();
    session = (await openSession(host, await mintBearer('hana'))).session_id;
  });
  after(() => host.stop());

  const get = (thread: string, extra: Record<string, unknown> = {}) =>
    host.request<HistoryGetResult>('history/get', { session_id: session, thread_id: thread, ...extra });
  const append = (thread: string, content: string, extra: Record<string, unknown> = {}) =>
    host.request<{ id: string }>('message/append', { session_id: session, thread_id: thread, role: 'user', content, ...extra });

  test('pages: newest page first, oldest first within it, before = next_before until it is null', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 7; i++) ids.push((await append('pages', `m${i}`)).id);
    const first = await get('pages', { limit: 3, view: 'context' });
    assert.deepEqual(first.messages.map((m) => m.content), ['m5', 'm6', 'm7']);
    assert.equal(first.next_before, ids[4], 'the cursor is the oldest message of the page');
    const second = await get('pages', { limit: 3, before: first.next_before, view: 'context' });
    assert.deepEqual(second.messages.map((m) => m.content), ['m2', 'm3', 'm4']);
    const last = await get('pages', { limit: 3, before: second.next_before, view: 'context' });
    assert.deepEqual(last.messages.map((m) => m.content), ['m1']);
    assert.equal(last.next_before, null, 'no page before the first message');
    // A cursor in the middle: only what is older than it.
    const older = await get('pages', { before: ids[2], view: 'context' });
    assert.deepEqual(older.messages.map((m) => m.id), ids.slice(0, 2));
    assert.equal(older.next_before, null);
    const all = await get('pages');
    assert.deepEqual(all.messages.map((m) => m.id), ids);
    assert.equal(all.next_before, null);
  });

  test('the ui view replays a tool message\'s ui_schema as the live tool/result carried it; context has none', async () => {
    await host.request('thread/subscribe', { session_id: session, thread_id: 'ui' });
    const args = { module: 'calendar', method: 'create', input: { title: 'Replay', start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' } };
    const res = await host.request<ToolResponse>('tool/invoke', { session_id: session, thread_id: 'ui', tool_call_id: 'c1', args });
    assert.equal(res.status, 'success');
    const live = await waitFor(
      () => host.wire.find((e) => e.method === 'tool/result' && (e.payload as ToolResultNotification).final)?.payload as ToolResultNotification | undefined,
      'the final tool/result',
    );
    assert.ok(live.ui_schema, 'calendar.create has a UI');

    const ui = await get('ui');
    const tool = ui.messages.find((m) => m.role === 'tool');
    assert.ok(tool);
    assert.equal(tool.tool_call_id, 'c1');
    assert.equal(tool.status, 'success');
    assert.equal(tool.content, res.content[0]!.text, 'the stored text is the text tool/invoke returned');
    assert.deepEqual(tool.ui_schema, live.ui_schema);

    // Compiled again from the stored metadata, not only served from the cache.
    Object.assign(host.services, { uiCache: new UiCache() });
    assert.deepEqual((await get('ui')).messages.find((m) => m.role === 'tool')?.ui_schema, live.ui_schema);

    const context = await get('ui', { view: 'context' });
    assert.equal(context.messages.find((m) => m.role === 'tool')?.ui_schema, undefined);
    assert.equal(context.messages.find((m) => m.role === 'tool')?.content, tool.content);
  });

  test('an assistant\'s worker_output is in the ui view only', async () => {
    const worker_output = { status: 'success', answer: 'Booked.', suggested_actions: ['show my week'] };
    await host.request('message/append', { session_id: session, thread_id: 'worker', role: 'assistant', content: 'Booked.', worker_output });
    assert.deepEqual((await get('worker')).messages[0]?.worker_output, worker_output);
    assert.equal((await get('worker', { view: 'context' })).messages[0]?.worker_output, undefined);
  });

  test('a thread of another user, or none, is -32602 THREAD_NOT_FOUND', async () => {
    const bob = (await openSession(host, await mintBearer('bob'))).session_id;
    await host.request('message/append', { session_id: bob, thread_id: 'bobs', role: 'user', content: 'mine' });
    for (const thread of ['bobs', 'nowhere']) {
      const err = (await get(thread).catch((e: unknown) => e)) as ResponseError<{ code?: string }>;
      assert.equal(err.code, -32602, thread);
      assert.equal(err.data?.code, 'THREAD_NOT_FOUND', thread);
    }
  });
});
