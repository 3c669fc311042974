/**
 * An `/mcp` request that says `Connection: close` is answered, then its
 * connection closes: the SDK's `Connection: keep-alive` on an event stream no
 * longer overrules the client, whose socket used to stay open until the
 * server's keep-alive timeout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startInProcess } from '../../helpers/in-process.js';
import { MCP_INIT } from '../../helpers/mcp-raw.js';
import { mintBearer } from '../../helpers/tokens.js';

/** One request on a fresh socket: its response head and whether the server closed the socket (read until it does). */
function exchange(port: number, request: string): Promise<{ head: string; text: string }> {
  return new Promise((resolve, reject) => {
    let data = '';
    const sock = connect(port, '127.0.0.1', () => sock.write(request));
    sock.setEncoding('utf8');
    sock.on('data', (c: string) => (data += c));
    sock.on('close', () => resolve({ head: data.slice(0, data.indexOf('\r\n\r\n')), text: data }));
    sock.on('error', reject);
  });
}

function post(token: string, body: unknown, headers: Record<string, string>): string {
  const text = JSON.stringify(body);
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return (
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\n${extra}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
  );
}

test('an /mcp POST with Connection: close is answered with Connection: close, never keep-alive', async () => {
  const host = await startInProcess({ transport: 'ws' });
  const token = await mintBearer('cora');
  try {
    const init = await exchange(host.port!, post(token, MCP_INIT, { Connection: 'close' }));
    assert.match(init.head, /^HTTP\/1\.1 200 /, init.text);
    assert.match(init.head, /^connection: close\r?$/im, init.head);
    assert.doesNotMatch(init.head, /keep-alive/i, init.head);
    const sid = /^mcp-session-id: (\S+)\r?$/im.exec(init.head)?.[1];
    assert.ok(sid, init.head);
    // A request within that session: the SDK answers it on an event stream, which it marks keep-alive.
    const session = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25', Connection: 'close' };
    const list = await exchange(host.port!, post(token, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, session));
    assert.match(list.head, /^HTTP\/1\.1 200 /, list.text);
    assert.match(list.text, /project_cli/, list.text);
    assert.match(list.head, /^connection: close\r?$/im, list.head);
    assert.doesNotMatch(list.head, /keep-alive/i, list.head);
  } finally {
    await host.stop();
  }
});
