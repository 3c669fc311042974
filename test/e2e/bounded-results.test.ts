/**
 * Contract section 21, bounded results: `memory.read` and `calendar.read`
 * (`day`, `range`) answer a page — `limit` (default 100, at most 500),
 * `cursor`, `next_cursor` (null on the last page) — and a result whose
 * projection is over `limits.max_result_bytes` is the failure
 * `RESULT_TOO_LARGE`, with both executors, nothing cut.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startInProcess, type InProcessHost } from '../helpers/in-process.js';
import { openSession } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { tempDir } from '../helpers/repo.js';
import type { CalendarReadData, MemoryReadData } from '../../src/protocol/actions.js';

interface Invoked {
  status: string;
  content: Array<{ text: string }>;
}

type Page = MemoryReadData | CalendarReadData;

function tool(host: InProcessHost, sessionId: string) {
  let n = 0;
  return async (module: string, method: string, input: Record<string, unknown>) => {
    const r = await host.request<Invoked>('tool/invoke', { session_id: sessionId, thread_id: 'pages', tool_call_id: `c${++n}`, args: { module, method, input } });
    return { status: r.status, ...(JSON.parse(r.content[0]!.text) as { data?: Page; error?: { code: string; message: string; [k: string]: unknown } }) };
  };
}

/** Follows next_cursor from the first page to the last; returns every page. */
async function allPages(call: ReturnType<typeof tool>, module: string, method: string, input: Record<string, unknown>): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null | undefined;
  do {
    const r = await call(module, method, cursor ? { ...input, cursor } : input);
    assert.equal(r.status, 'success', JSON.stringify(r.error));
    pages.push(r.data!);
    cursor = r.data!.next_cursor;
  } while (cursor);
  return pages;
}

test('memory.read pages by key: limit, next_cursor until null, every memory once, default 100', { timeout: 120_000 }, async () => {
  const host = await startInProcess();
  try {
    const s = await openSession(host, await mintBearer('alice'));
    const call = tool(host, s.session_id);
    const keys = Array.from({ length: 105 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    for (const key of keys) assert.equal((await call('memory', 'update', { key, content: `memory ${key}` })).status, 'success');

    const first = await call('memory', 'read', {});
    assert.equal(first.data!.count, 100, 'the default page is 100');
    assert.equal(typeof first.data!.next_cursor, 'string');

    const pages = await allPages(call, 'memory', 'read', { limit: 40 });
    assert.deepEqual(pages.map((p) => p.count), [40, 40, 25]);
    assert.equal(pages.at(-1)!.next_cursor, null);
    assert.deepEqual(pages.flatMap((p) => (p as MemoryReadData).items.map((m) => m.key)), keys);

    // A page that ends exactly at the last memory says so.
    const exact = await call('memory', 'read', { limit: 105 });
    assert.equal(exact.data!.count, 105);
    assert.equal(exact.data!.next_cursor, null);

    // One key: one item, no next page.
    const one = await call('memory', 'read', { key: 'k007' });
    assert.deepEqual([one.data!.count, one.data!.next_cursor], [1, null]);

    for (const bad of [{ limit: 0 }, { limit: 501 }, { cursor: 'not a cursor!' }, { cursor: Buffer.from('["a\\u0000"]').toString('base64url') }, { cursor: Buffer.from('{}').toString('base64url') }]) {
      const r = await call('memory', 'read', bad);
      assert.equal(r.error?.code, 'INVALID_ACTION_INPUT', JSON.stringify(bad));
    }
  } finally {
    await host.stop();
  }
});

test('calendar.read day and range page by start then id, ties included', { timeout: 120_000 }, async () => {
  const host = await startInProcess();
  try {
    const s = await openSession(host, await mintBearer('alice'));
    const call = tool(host, s.session_id);
    // 12 events, 4 of them starting at the same instant: the page boundary falls inside the tie.
    const items = Array.from({ length: 12 }, (_, i) => ({
      title: `e${i}`,
      start_at: `2026-05-04T${String(i < 4 ? 9 : 9 + i).padStart(2, '0')}:00:00Z`,
      end_at: `2026-05-04T${String(i < 4 ? 10 : 10 + i).padStart(2, '0')}:00:00Z`,
    }));
    assert.equal((await call('calendar', 'create', { items })).status, 'success');
    for (const input of [
      { mode: 'day', date: '2026-05-04', limit: 3 },
      { mode: 'range', start_at: '2026-05-04T00:00:00Z', end_at: '2026-05-05T00:00:00Z', limit: 5 },
    ]) {
      const pages = await allPages(call, 'calendar', 'read', input);
      const seen = pages.flatMap((p) => (p as CalendarReadData).items);
      assert.equal(seen.length, 12, `${input.mode}: every event once`);
      assert.equal(new Set(seen.map((e) => e.id)).size, 12);
      const order = seen.map((e) => `${e.start_at}|${e.id}`);
      assert.deepEqual(order, [...order].sort(), 'by start, then id');
      assert.equal(pages.at(-1)!.next_cursor, null);
    }
    const one = await call('calendar', 'read', { mode: 'event', event_id: 'evt_missing' });
    assert.equal(one.error?.code, 'NOT_FOUND');
  } finally {
    await host.stop();
  }
});

for (const executor of ['inprocess', 'subprocess'] as const) {
  test(`${executor}: a result over limits.max_result_bytes is RESULT_TOO_LARGE, nothing cut; a smaller page succeeds`, { timeout: 120_000 }, async () => {
    const config = join(tempDir(), 'small-results.json');
    writeFileSync(config, JSON.stringify({
      agents: { default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] } },
      limits: { max_result_bytes: 50_000 },
    }));
    const host = await startInProcess({ executor, args: ['--config', config] });
    try {
      const s = await openSession(host, await mintBearer('alice'));
      const call = tool(host, s.session_id);
      for (let i = 0; i < 5; i++) assert.equal((await call('memory', 'update', { key: `big${i}`, content: 'x'.repeat(20_000) })).status, 'success');
      const all = await call('memory', 'read', {});
      assert.equal(all.status, 'failure');
      assert.equal(all.error?.code, 'RESULT_TOO_LARGE');
      assert.equal(all.error?.max_result_bytes, 50_000);
      assert.ok((all.error?.result_bytes as number) > 50_000);
      assert.match(all.error!.message, /narrow|page/);
      const page = await call('memory', 'read', { limit: 2 });
      assert.equal(page.status, 'success');
      assert.equal(page.data!.count, 2);
      assert.equal((page.data as MemoryReadData).items[0]!.content.length, 20_000, 'nothing cut');
    } finally {
      await host.stop();
    }
  });
}

test('history/get pages by bytes too: a page ends before limits.max_result_bytes; a larger stored message comes cut, without UI', { timeout: 120_000 }, async () => {
  const config = join(tempDir(), 'small-history.json');
  writeFileSync(config, JSON.stringify({
    agents: { default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] } },
    limits: { max_result_bytes: 10_000 },
  }));
  const host = await startInProcess({ args: ['--config', config] });
  try {
    const s = await openSession(host, await mintBearer('alice'));
    // 3,000 bytes each, and one of 40,000 (appended text is bounded by the message size, not by max_result_bytes).
    const sizes = [3_000, 3_000, 40_000, 3_000, 3_000, 3_000, 3_000];
    for (const [i, n] of sizes.entries()) {
      await host.request('message/append', { session_id: s.session_id, thread_id: 'long', role: 'user', content: `${i}`.padEnd(n, 'x') });
    }
    const seen: Array<{ content: string }> = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const r: { messages: Array<{ content: string }>; next_before: string | null } = await host.request('history/get', {
        session_id: s.session_id,
        thread_id: 'long',
        limit: 50,
        ...(before ? { before } : {}),
      });
      const bytes = r.messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
      assert.ok(bytes <= 10_000 + 2_500 + 200, `a page of ${bytes} bytes`);
      seen.unshift(...r.messages);
      before = r.next_before;
      pages++;
    } while (before);
    assert.ok(pages >= 4, `${pages} pages`);
    assert.equal(seen.length, sizes.length, 'every message once');
    assert.equal(seen[3]!.content, '3'.padEnd(3_000, 'x'));
    assert.match(seen[2]!.content, /^2x+\n\[toolgate: this stored message is 40000 bytes, more than limits\.max_result_bytes; only its start is shown\]$/);
  } finally {
    await host.stop();
  }
});
