/**
 * `/mcp` refuses JSON nested thousands of levels deep in `arguments` or
 * `_meta` with a structured -32602 (HTTP 400), as stdio and WebSocket do —
 * never an HTTP 500 from a stack overflow — and the session goes on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { MCP_ACCEPT as ACCEPT, MCP_INIT as INIT } from '../../helpers/mcp-raw.js';

/** `{"d":{"d":…1…}}`, built as text: JSON.stringify itself recurses. */
const nested = (levels: number) => `${'{"d":'.repeat(levels)}1${'}'.repeat(levels)}`;

test('HTTP /mcp: 5,000 levels of nesting in arguments or _meta → 400 with -32602, no stack overflow, the session goes on', async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
  const token = await mintBearer('deep-mcp');
  const headers = { ...ACCEPT, authorization: `Bearer ${token}` };
  const url = `http://127.0.0.1:${host.port}/mcp`;
  try {
    const opened = await fetch(url, { method: 'POST', headers, body: JSON.stringify(INIT) });
    assert.equal(opened.status, 200);
    const session = { ...headers, 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
    await opened.text();
    await (await fetch(url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();

    const bodies = [
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"project_cli","arguments":{"module":"memory","method":"read","input":${nested(5000)}}}}`,
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"project_cli","arguments":{},"_meta":${nested(5000)}}}`,
      `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":${nested(20000)}}}`,
    ];
    for (const body of bodies) {
      for (const h of [session, headers]) {
        const r = await fetch(url, { method: 'POST', headers: h, body });
        assert.equal(r.status, 400, body.slice(0, 120));
        assert.deepEqual(await r.json(), { jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'nested deeper than 32 levels' } });
      }
    }
    const list = await fetch(url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} }) });
    assert.equal(list.status, 200);
    assert.match(await list.text(), /project_cli/);
    assert.doesNotMatch(host.stderr(), /call stack|mcp http handler failed/i);
  } finally {
    await host.stop();
  }
});
