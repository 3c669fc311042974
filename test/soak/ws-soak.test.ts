/**
 * Bounded soak on loopback: 50 WebSocket connections × 100 calls each, as
 * 10 users. Every acknowledged call must be in history exactly once. Uses the
 * in-process executor so the run measures the daemon, not 5,000 node starts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { startHost, openSession, type Client } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { slowSuite } from '../helpers/quick.js';

const CONNECTIONS = 50;
const CALLS_PER_CONNECTION = 100;
const IN_FLIGHT_PER_CONNECTION = 4;

test(`soak: ${CONNECTIONS} connections × ${CALLS_PER_CONNECTION} calls, every acknowledged call stored exactly once`, slowSuite({ timeout: 240_000 }), async () => {
  const host = await startHost({ transport: 'ws', args: ['--executor', 'inprocess'] });
  const acknowledged: Array<{ thread: string; call: string }> = [];
  const clients: Client[] = [];
  try {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, c) => {
        const client = await host.connect();
        clients.push(client);
        const user = `soak-user-${c % 10}`;
        const session = await openSession(client, await mintBearer(user));
        const thread = `soak-${c}`;
        let next = 0;
        const worker = async () => {
          while (next < CALLS_PER_CONNECTION) {
            const i = next++;
            const args =
              i % 4 === 3
                ? { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-12-01' } }
                : { module: 'calendar', method: 'create', input: { title: `S${c}-${i}`, start_at: '2026-12-01T08:00:00Z', end_at: '2026-12-01T09:00:00Z' } };
            const r = await client.request<{ tool_call_id: string; status: string }>('tool/invoke', {
              session_id: session.session_id, thread_id: thread, tool_call_id: `call-${i}`, args,
            });
            assert.equal(r.status, 'success');
            acknowledged.push({ thread, call: r.tool_call_id });
          }
        };
        await Promise.all(Array.from({ length: IN_FLIGHT_PER_CONNECTION }, worker));
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const total = CONNECTIONS * CALLS_PER_CONNECTION;
    assert.equal(acknowledged.length, total);
    // Reported, never asserted: timing depends on the machine.
    console.log(`# soak: ${total} calls in ${seconds.toFixed(1)} s (${Math.round(total / seconds)} calls/s)`);
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    await host.stop();
  }

  const db = new Database(host.dbPath, { readonly: true });
  const rows = db.prepare("SELECT thread_id, tool_call_id FROM messages WHERE role = 'tool'").all() as Array<{ thread_id: string; tool_call_id: string }>;
  const seen = new Map<string, number>();
  for (const r of rows) seen.set(`${r.thread_id}/${r.tool_call_id}`, (seen.get(`${r.thread_id}/${r.tool_call_id}`) ?? 0) + 1);
  for (const a of acknowledged) assert.equal(seen.get(`${a.thread}/${a.call}`), 1, `${a.thread}/${a.call} stored exactly once`);
  assert.equal(rows.length, acknowledged.length, 'nothing stored that was not acknowledged');
  const creates = acknowledged.length * 3 / 4;
  assert.equal((db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n, creates);
  assert.equal((db.prepare('SELECT count(*) AS n FROM tool_calls').get() as { n: number }).n, acknowledged.length);
  db.close();
});
