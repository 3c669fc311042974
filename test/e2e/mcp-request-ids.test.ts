/**
 * Request ids on one sessionful MCP HTTP session (2025-11-25): the SDK's
 * transport finds the stream of a response by its request id, so a request
 * whose id is already in flight on the session took that id's stream over and
 * the first request's POST was never answered — a silent stream. Such a
 * request is refused at once (409, -32600), and the first one still gets its
 * answer; a body whose requests repeat an id is refused the same way.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startInProcess } from '../helpers/in-process.js';
import { tempDir } from '../helpers/repo.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import { MCP_ACCEPT, MCP_INIT } from '../helpers/mcp-raw.js';

/** A config whose default profile (the one MCP sessions use) asks before memory.forget: such a call waits. */
function askConfig(): string {
  const file = join(tempDir(), 'toolgate.config.json');
  writeFileSync(file, JSON.stringify({ agents: { default: { enabled_skills: ['memory'], allowed_actions: ['memory.*'], approval: { ask: ['memory.forget'] } } } }));
  return file;
}

describe('MCP over HTTP: a request id already in flight on the session', () => {
  test('is refused at once (409), and the request that holds it is still answered', async () => {
    const host = await startInProcess({ transport: 'ws', args: ['--config', askConfig()] });
    const token = await mintBearer('ids-user');
    const base = `http://127.0.0.1:${host.port}`;
    const auth = { authorization: `Bearer ${token}` };
    try {
      const opened = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...auth, ...MCP_ACCEPT }, body: JSON.stringify(MCP_INIT) });
      assert.equal(opened.status, 200);
      await opened.text();
      const session = { ...auth, ...MCP_ACCEPT, 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
      const post = (body: unknown, signal?: AbortSignal) => fetch(`${base}/mcp`, { method: 'POST', headers: session, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
      assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);

      // id 7 is in flight: a call that waits for approval.
      const forget = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'project_cli', arguments: { module: 'memory', method: 'forget', input: { key: 'k' } } } };
      const first = post(forget, AbortSignal.timeout(20_000)).then(async (res) => ({ status: res.status, text: await res.text() }));
      const asked = await waitFor(async () => {
        const list = (await (await fetch(`${base}/calls`, { headers: auth })).json()) as { calls: Array<{ thread_id: string; tool_call_id: string; args_sha256: string }> };
        return list.calls[0];
      }, 'the call awaiting approval');

      const twin = await post({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} });
      assert.equal(twin.status, 409, 'a second request with the id of one in flight is refused');
      const refusal = (await twin.json()) as { id: unknown; error: { code: number; message: string } };
      assert.equal(refusal.error.code, -32600);
      assert.equal(refusal.id, 7);
      assert.match(refusal.error.message, /already in flight/);

      const batch = await post([
        { jsonrpc: '2.0', id: 8, method: 'ping' },
        { jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} },
      ]);
      assert.equal(batch.status, 409, 'a body whose requests repeat an id is refused');
      await batch.text();

      const decided = await fetch(`${base}/threads/${encodeURIComponent(asked.thread_id)}/calls/${encodeURIComponent(asked.tool_call_id)}/approval`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'deny', args_sha256: asked.args_sha256, reason: 'not now' }),
      });
      assert.equal(decided.status, 200);
      const answered = await first;
      assert.equal(answered.status, 200);
      assert.match(answered.text, /"id":7/, 'the first request gets its own answer');
      assert.match(answered.text, /APPROVAL_DENIED/);

      // The id is free again once answered.
      const again = await post({ jsonrpc: '2.0', id: 7, method: 'ping' });
      assert.equal(again.status, 200);
      assert.match(await again.text(), /"id":7/);
      assert.doesNotMatch(host.stderr(), /toolgate crashed|uncaught/i);
    } finally {
      await host.stop();
    }
  });
});
