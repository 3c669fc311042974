/**
 * A client may half-close its connection once its request is sent (TCP
 * FIN after the body, `sock.end(request)`): it still reads the answer. Node's
 * HTTP server ends such a socket at the FIN and aborts the request unless the
 * server allows half-open connections, so `/mcp` answered nothing; a POST
 * sent that way now gets its answer (JSON or SSE) like any other, and the
 * daemon closes the connection after it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startInProcess } from '../../helpers/in-process.js';
import { MCP_INIT } from '../../helpers/mcp-raw.js';
import { mintBearer } from '../../helpers/tokens.js';

/** One HTTP/1.1 request written with `sock.end(request)`: everything read until the server closes. */
function sendThenHalfClose(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const sock = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => sock.end(request));
    sock.setEncoding('utf8');
    sock.on('data', (c: string) => (data += c));
    sock.on('end', () => {
      sock.destroy();
      resolve(data);
    });
    sock.on('error', reject);
  });
}

function post(token: string, body: unknown, headers: Record<string, string> = {}): string {
  const text = JSON.stringify(body);
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return (
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\n${extra}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
  );
}

test('an /mcp POST whose client half-closes after sending it gets its answer', async () => {
  const host = await startInProcess({ transport: 'ws' });
  const token = await mintBearer('mia');
  try {
    // 2025-11-25 initialize: opens a session, answered with its Mcp-Session-Id.
    const init = await sendThenHalfClose(host.port!, post(token, MCP_INIT));
    assert.match(init, /^HTTP\/1\.1 200 /, init);
    const sid = /^mcp-session-id: (\S+)\r$/im.exec(init)?.[1];
    assert.ok(sid, init);
    assert.match(init, /"protocolVersion":"2025-11-25"/, init);
    // A request within that session (answered on an SSE stream or as JSON).
    const session = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const list = await sendThenHalfClose(host.port!, post(token, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, session));
    assert.match(list, /^HTTP\/1\.1 200 /, list);
    assert.match(list, /"id":2,?.*project_cli|project_cli.*"id":2/s, list);
  } finally {
    await host.stop();
  }
});
