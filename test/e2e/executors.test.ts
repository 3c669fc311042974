/**
 * The subprocess and in-process executors run the same router with the same
 * environment map: the same call gives byte-identical results.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHost, openSession, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { tempDir } from '../helpers/repo.js';
import type { ToolResponse } from '../../src/protocol/index.js';


const CALLS: Array<{ module: string; method: string; input: Record<string, unknown> }> = [
  { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-10-10' } },
  { module: 'calendar', method: 'read', input: { mode: 'range', start_at: '2026-10-01T00:00:00Z', end_at: '2026-11-01T00:00:00Z' } },
  { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-13-01' } },
  { module: 'calendar', method: 'read', input: { mode: 'event', event_id: 'evt_missing' } },
  { module: 'calendar', method: 'create', input: { title: 'x', start_at: '2026-10-10T10:00:00Z', end_at: '2026-10-10T09:00:00Z' } },
  { module: 'calendar', method: 'create', input: { items: [] } },
  { module: 'calendar', method: 'teleport', input: {} },
  { module: 'memory', method: 'read', input: {} },
  { module: 'memory', method: 'forget', input: { key: 'nope' } },
  { module: 'contacts', method: 'read', input: { phone: '+15550009' } },
];

async function runAll(host: Host, sessionId: string, thread: string): Promise<string[]> {
  const out: string[] = [];
  for (const [i, args] of CALLS.entries()) {
    const r = await host.request<ToolResponse>('tool/invoke', { session_id: sessionId, thread_id: thread, tool_call_id: `c${i}`, args });
    out.push(`${r.status} ${r.content[0]!.text}`);
  }
  return out;
}

test('subprocess and in-process executors return byte-identical results on the same data', async () => {
  const dataDir = tempDir();
  const token = await mintBearer('alice', { phone: '+15550001' });
  const seed = await startHost({ dataDir });
  const s = await openSession(seed, token);
  await seed.request('tool/invoke', {
    session_id: s.session_id, thread_id: 'seed', tool_call_id: 'seed-1',
    args: { module: 'calendar', method: 'create', input: { title: 'Seeded', start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' } },
  });
  await seed.request('tool/invoke', {
    session_id: s.session_id, thread_id: 'seed', tool_call_id: 'seed-2',
    args: { module: 'memory', method: 'update', input: { key: 'lang', content: 'en' } },
  });
  await seed.stop();

  const results: Record<string, string[]> = {};
  for (const executor of ['subprocess', 'inprocess']) {
    const host = await startHost({ dataDir, args: ['--executor', executor] });
    try {
      const init = await host.request<{ capabilities: { executor: string } }>('initialize', { protocol_version: '1' });
      assert.equal(init.capabilities.executor, executor);
      const session = await openSession(host, token);
      results[executor] = await runAll(host, session.session_id, `compare-${executor}`);
    } finally {
      await host.stop();
    }
  }
  assert.equal(results.subprocess!.length, CALLS.length);
  assert.deepEqual(results.inprocess, results.subprocess);
  assert.match(results.subprocess![1]!, /Seeded/);
});

test('writes through the in-process executor are stored like any other', async () => {
  const host = await startHost({ args: ['--executor', 'inprocess'] });
  try {
    const session = await openSession(host, await mintBearer('alice'));
    const r = await host.request<ToolResponse>('tool/invoke', {
      session_id: session.session_id, thread_id: 't', tool_call_id: 'c1',
      args: { module: 'calendar', method: 'create', input: { items: [{ title: 'A', start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' }, { title: '' }] } },
    });
    assert.equal(r.status, 'partial');
    const again = await host.request<ToolResponse>('tool/invoke', {
      session_id: session.session_id, thread_id: 't', tool_call_id: 'c2', args: { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-10-10' } },
    });
    assert.equal(JSON.parse(again.content[0]!.text).data.count, 1);
  } finally {
    await host.stop();
  }
});
