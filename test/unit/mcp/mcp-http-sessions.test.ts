/**
 * MCP 2025-11-25 HTTP sessions stored in the database (contract §11, §20),
 * on either engine: two daemons on one database (one data folder), a
 * session opened on one is served by the other — restored with the SDK's
 * own handshake — and a DELETE on one ends the session's GET stream on the
 * other. The initialize params are stored, so a token in them is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { dbCount } from '../../helpers/db.js';
import { tempDir } from '../../helpers/repo.js';
import { waitFor } from '../../helpers/wait-for.js';
import { MCP_ACCEPT, MCP_INIT } from '../../helpers/mcp-raw.js';

const url = (h: InProcessHost) => `http://127.0.0.1:${h.port}/mcp`;

test('a session opened on one daemon is served, and deleted, by another on the same database', async () => {
  const dataDir = tempDir();
  const a = await startInProcess({ transport: 'ws', dataDir });
  const b = await startInProcess({ transport: 'ws', dataDir });
  try {
    const token = await mintBearer('shared-ann');
    const opened = await fetch(url(a), { method: 'POST', headers: { ...MCP_ACCEPT, authorization: `Bearer ${token}` }, body: JSON.stringify(MCP_INIT) });
    assert.equal(opened.status, 200);
    const sid = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const session = { ...MCP_ACCEPT, authorization: `Bearer ${token}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };

    const call = await fetch(url(b), {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} } } }),
    });
    assert.equal(call.status, 200);
    const text = await call.text();
    assert.match(text, /"isError":false/, text);
    assert.match(b.stderr(), new RegExp(`"msg":"mcp session restored".*"mcp_session":"${sid}"`));
    // Another user's token on the daemon that never saw the session: not found, as an unknown id.
    const bob = await fetch(url(b), { method: 'POST', headers: { ...session, authorization: `Bearer ${await mintBearer('shared-bob')}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }) });
    assert.equal(bob.status, 404);
    await bob.text();

    // A GET stream on A; the DELETE on B; A's sweep (each second) finds the row gone and ends the stream.
    // Its headers leave at once, as a client awaiting the GET needs: before, they went with the first
    // bytes, the SDK's keep-alive 15 s later, so the stream ends here having carried no keep-alive.
    const stream = await fetch(url(a), { headers: { ...session, accept: 'text/event-stream' } });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    const deleted = await fetch(url(b), { method: 'DELETE', headers: session });
    assert.equal(deleted.status, 200);
    await deleted.text();
    const carried = await stream.text();
    assert.doesNotMatch(carried, /keepalive/, 'the headers came before any keep-alive');
    assert.equal(await dbCount(a.dbPath, 'SELECT count(*) AS n FROM mcp_sessions WHERE id = ?', [sid]), 0);
    const late = await fetch(url(a), { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }) });
    assert.equal(late.status, 404);
    await late.text();
    await waitFor(() => a.services.sessions.size === 0 && b.services.sessions.size === 0, 'both daemons to drop the session');
  } finally {
    await a.stop();
    await b.stop();
  }
});

test('a token in the initialize params is refused, and nothing is stored', async () => {
  const host = await startInProcess({ transport: 'ws' });
  try {
    const token = await mintBearer('leaky-ann');
    const init = { ...MCP_INIT, params: { ...MCP_INIT.params, clientInfo: { name: `host ${token}`, version: '1' } } };
    const res = await fetch(url(host), { method: 'POST', headers: { ...MCP_ACCEPT, authorization: `Bearer ${token}` }, body: JSON.stringify(init) });
    assert.equal(res.status, 400);
    const body = await res.text();
    assert.ok(!body.includes(token), 'the token is not echoed');
    assert.equal((JSON.parse(body) as { error: { code: number } }).error.code, -32602);
    assert.equal(res.headers.get('mcp-session-id'), null);
    assert.equal(await dbCount(host.dbPath, 'SELECT count(*) AS n FROM mcp_sessions'), 0);
  } finally {
    await host.stop();
  }
});
