/**
 * An MCP session over HTTP that nobody uses ends (the session registry's
 * idle end, `ReserveOptions.idleMs`): its id then answers 404 like one that
 * never existed, and its place under the per-user cap is free again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { waitFor } from '../../helpers/wait-for.js';
import { createMcpHttp } from '../../../src/mcp/mcp-http.js';
import { createHttpServer } from '../../../src/http/http-server.js';
import { serveContext } from '../../../src/rpc/serve-context.js';
import { MCP_ACCEPT as ACCEPT, MCP_INIT as INIT } from '../../helpers/mcp-raw.js';

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });

test('an unused MCP session ends after its idle time; its id is then not found', async () => {
  const host = await startInProcess();
  const ctx = serveContext(host.services);
  // Long enough that the requests below never wait that long between them, even on a loaded machine.
  const mcp = createMcpHttp(ctx, { idleMs: 1500 });
  const http = createHttpServer(ctx, [mcp.route]);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const headers = { ...ACCEPT, authorization: `Bearer ${await mintBearer('idle-ann')}` };
  try {
    const opened = await fetch(url, { method: 'POST', headers, body: JSON.stringify(INIT) });
    assert.equal(opened.status, 200);
    const sid = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const session = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    await (await fetch(url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
    const used = await fetch(url, { method: 'POST', headers: session, body: LIST });
    assert.equal(used.status, 200, 'in use, it lives');
    await used.text();
    assert.equal(mcp.sessionCount(), 1);

    await waitFor(() => /"msg":"closing an idle mcp session"/.test(host.stderr()), () => `no idle end:\n${host.stderr()}`);
    assert.match(host.stderr(), new RegExp(`"mcp_session":"${sid}"`));
    const late = await fetch(url, { method: 'POST', headers: session, body: LIST });
    assert.equal(late.status, 404);
    await late.text();
    assert.equal(mcp.sessionCount(), 0, 'its transport is gone');
    assert.equal(host.services.sessions.countInPool('MCP sessions', 'idle-ann'), 0, 'its place is free');
  } finally {
    await mcp.closeAll();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await host.stop();
  }
});
