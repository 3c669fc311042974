/**
 * Caps hold under concurrency (contract section 13): 120 concurrent opens
 * for a user seen for the first time — whose provisioning awaits the store
 * between the check and the registration — open exactly the cap's worth,
 * over MCP's `/mcp` (32 sessions per user) and `session/open` (64 sessions
 * per connection); the rest are refused -32003 / 429, and nothing leaks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { openSession } from '../../helpers/host.js';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';

const CONCURRENT = 120;
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'race', version: '1' } },
};

test(`MCP over HTTP: ${CONCURRENT} concurrent initializes of a new user open exactly 32 sessions`, { timeout: 60_000 }, async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
  try {
    const token = await mintBearer(`newcomer-${randomUUID()}`);
    const statuses = await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        const res = await fetch(`http://127.0.0.1:${host.port}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
          body: JSON.stringify(INIT),
        });
        const body = await res.text();
        return { status: res.status, sid: res.headers.get('mcp-session-id'), body };
      }),
    );
    const opened = statuses.filter((s) => s.status === 200);
    const refused = statuses.filter((s) => s.status === 429);
    assert.equal(opened.length, 32, `opened ${opened.length}: ${JSON.stringify(statuses.map((s) => s.status))}`);
    assert.equal(refused.length, CONCURRENT - 32);
    assert.equal(new Set(opened.map((s) => s.sid)).size, 32, 'each its own session');
    assert.match(refused[0]!.body, /"code":-32003/);
    // Ending one frees exactly one place.
    const ended = await fetch(`http://127.0.0.1:${host.port}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'mcp-session-id': opened[0]!.sid!, 'mcp-protocol-version': '2025-11-25' },
    });
    assert.equal(ended.status, 200);
    const again = await Promise.all(
      [1, 2].map(() =>
        fetch(`http://127.0.0.1:${host.port}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
          body: JSON.stringify(INIT),
        }).then(async (r) => (await r.text(), r.status)),
      ),
    );
    assert.deepEqual(again.sort(), [200, 429]);
  } finally {
    await host.stop();
  }
});

test(`session/open: ${CONCURRENT} concurrent opens of a new user on one connection open exactly 64 sessions`, { timeout: 60_000 }, async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
  try {
    const token = await mintBearer(`newcomer-${randomUUID()}`);
    await host.request('initialize', { protocol_version: '1' });
    const outcomes = await Promise.allSettled(
      Array.from({ length: CONCURRENT }, () => host.request<{ session_id: string }>('session/open', { auth: { type: 'bearer', token } })),
    );
    const opened = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    assert.equal(opened.length, 64);
    assert.ok(refused.every((o) => (o.reason as { code?: number }).code === -32003), 'every other one is -32003');
    // Another connection has a cap of its own.
    assert.ok((await openSession(await host.connect(), token)).session_id);
  } finally {
    await host.stop();
  }
});
