/**
 * `history/get` computes a message's ui-view extras once and caches them:
 * whether served from the cache (same daemon, seeded by the live call) or
 * compiled from storage (a fresh daemon on the same file), the `ui` view
 * carries exactly the `ui_schema` the live final notification carried.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession } from '../../helpers/host.js';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { tempDir } from '../../helpers/repo.js';

interface Page {
  messages: Array<{ id: string; role: string; tool_call_id?: string; ui_schema?: unknown; worker_output?: unknown }>;
}

test('the ui view is the live ui_schema, from the cache and compiled cold after a restart', async () => {
  const dataDir = tempDir();
  const token = await mintBearer('alice');
  const first = await startInProcess({ executor: 'subprocess', dataDir });
  let warm: Page;
  const live = new Map<string, unknown>();
  try {
    const s = await openSession(first, token);
    const calls = [
      { module: 'calendar', method: 'create', input: { items: [{ title: 'A', start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' }, { title: '' }] } },
      { module: 'memory', method: 'update', input: { key: 'lang', content: 'en' } },
      { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-10-10' } },
      { module: 'memory', method: 'forget', input: { key: 'missing' } },
    ];
    for (const [i, args] of calls.entries()) {
      await first.request('tool/invoke', { session_id: s.session_id, thread_id: 'h', tool_call_id: `c${i}`, args });
    }
    await first.request('message/append', { session_id: s.session_id, thread_id: 'h', role: 'assistant', content: 'Done.', worker_output: { status: 'success', answer: 'Done.' } });
    for (const e of first.wire) {
      const n = e.payload as { final?: boolean; tool_call_id?: string; ui_schema?: unknown };
      if (e.method === 'tool/result' && n.final) live.set(n.tool_call_id!, n.ui_schema);
    }
    warm = await first.request<Page>('history/get', { session_id: s.session_id, thread_id: 'h', view: 'ui' });
    const again = await first.request<Page>('history/get', { session_id: s.session_id, thread_id: 'h', view: 'ui' });
    assert.deepEqual(again, warm);
    for (const m of warm.messages.filter((x) => x.role === 'tool')) assert.deepEqual(m.ui_schema, live.get(m.tool_call_id!), m.tool_call_id);
    assert.ok(warm.messages.some((m) => m.ui_schema !== undefined));
    assert.deepEqual(warm.messages.find((m) => m.role === 'assistant')?.worker_output, { status: 'success', answer: 'Done.' });
    const context = await first.request<Page>('history/get', { session_id: s.session_id, thread_id: 'h', view: 'context' });
    assert.ok(context.messages.every((m) => m.ui_schema === undefined && m.worker_output === undefined));
  } finally {
    await first.stop();
  }

  const second = await startInProcess({ executor: 'subprocess', dataDir });
  try {
    const s = await openSession(second, token);
    const cold = await second.request<Page>('history/get', { session_id: s.session_id, thread_id: 'h', view: 'ui' });
    assert.deepEqual(cold, warm, 'compiled from storage, the page is the one the cache served');
  } finally {
    await second.stop();
  }
});
