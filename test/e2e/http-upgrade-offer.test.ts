/**
 * A request that offers a protocol upgrade the `--ws` port does not speak
 * (`Upgrade: h2c`, as `curl --http2 http://…` sends on every request, bodies
 * included) is served as the plain HTTP/1.1 request it also is: RFC 9110
 * lets a server ignore an `Upgrade` it does not take. Node hands every
 * request with an `Upgrade` header to the server's `upgrade` listener (the
 * WebSocket transport), which answered them 404 — a health probe, an MCP
 * POST, the inspector. WebSocket upgrades are unchanged.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { MCP_INIT } from '../helpers/mcp-raw.js';

/**
 * Writes `text` on a fresh connection (kept open, as curl keeps it) and reads until the server
 * closes it or a chunked body's last chunk arrived: the MCP SDK answers an SSE POST with
 * `connection: keep-alive` whatever the request said, so that socket would only close at the
 * server's 5 s keep-alive timeout.
 */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.endsWith('\r\n0\r\n\r\n')) socket.destroy();
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    socket.write(text);
  });
}

const H2C = 'Connection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';

describe('a request offering an upgrade the port does not speak', () => {
  test('is served as plain HTTP/1.1: probes, the inspector, an MCP POST with its body', async () => {
    const host = await startInProcess({ transport: 'ws' });
    const token = await mintBearer('h2c-user');
    try {
      const health = await exchange(host.port!, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${H2C}\r\n`);
      assert.match(health, /^HTTP\/1\.1 200 /, health);
      assert.match(health, /"status":"ok"/);

      const page = await exchange(host.port!, `HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n${H2C}\r\n`);
      assert.match(page, /^HTTP\/1\.1 200 /, page);

      const body = JSON.stringify(MCP_INIT);
      const mcp = await exchange(
        host.port!,
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n${H2C}Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      assert.match(mcp, /^HTTP\/1\.1 200 /, mcp.slice(0, 300));
      assert.match(mcp, /mcp-session-id: ses_/i);
      assert.match(mcp, /"protocolVersion":"2025-11-25"/);

      // The guard still holds for such a request.
      const foreign = await exchange(host.port!, `GET /healthz HTTP/1.1\r\nHost: evil.example\r\n${H2C}\r\n`);
      assert.match(foreign, /^HTTP\/1\.1 403 /, foreign);

      // A WebSocket upgrade on another path is still 404.
      const ws = await exchange(
        host.port!,
        'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
      assert.match(ws, /^HTTP\/1\.1 404 /, ws);
      assert.ok(!host.stderr().includes(token), 'the token is in no log line');
    } finally {
      await host.stop();
    }
  });
});
