/**
 * Any HTTP request target — `//`, `http://[::1/`, absolute-form, `*`,
 * garbage — gets an answer below 500 from every route (inspector files,
 * AG-UI streams), never a stack in the log; the server answers on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { MCP_INIT } from '../../helpers/mcp-raw.js';

/** One raw request; resolves with the status code (0 when the server closed without one). */
export function rawStatus(port: number, requestLine: string, headers = 'Host: 127.0.0.1\r\n'): Promise<number> {
  return new Promise((resolve) => {
    let data = '';
    const sock = connect(port, '127.0.0.1', () => sock.write(`${requestLine}\r\n${headers}Connection: close\r\n\r\n`));
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => (data += c));
    const done = () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ?? 0));
    sock.on('close', done);
    sock.on('error', done);
    setTimeout(() => sock.destroy(), 5000).unref();
  });
}

test('odd request targets get a 4xx, never a 500 or a logged stack', async () => {
  const host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
  try {
    const targets = [
      '//', '///', '//evil.example/x', 'http://[::1/', 'http://[::1]:x/', 'http://', '*', 'garbage', '%', '/%zz', '/threads/%zz/events',
      '/threads//events', '/threads/x/events?replay=%', 'http://localhost/threads/x/events', 'https://a b/', '/\\\\', '/..%2f..%2fetc',
    ];
    for (const t of targets) {
      for (const method of ['GET', 'HEAD', 'POST']) {
        const status = await rawStatus(host.port!, `${method} ${t} HTTP/1.1`);
        assert.ok(status >= 400 && status < 500, `${method} ${t} → ${status}`);
      }
    }
    assert.equal(await rawStatus(host.port!, 'GET http://127.0.0.1/ HTTP/1.1'), 200, 'absolute-form is read as its path');
    assert.equal(await rawStatus(host.port!, 'GET / HTTP/1.1'), 200, 'still serving');
    assert.doesNotMatch(host.stderr(), /http handler failed|ag-ui stream failed|"level":"error"/);
  } finally {
    await host.stop();
  }
});

test('absolute-form targets reach /mcp, its CORS preflight and the /rpc upgrade like their paths', async () => {
  const host = await startInProcess({ transport: 'ws' });
  const token = await mintBearer('absolute-form');
  const base = `http://127.0.0.1:${host.port}`;
  try {
    const init = JSON.stringify(MCP_INIT);
    const mcp = await rawExchange(
      host.port!,
      `POST ${base}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(init)}\r\nConnection: close\r\n\r\n${init}`,
    );
    assert.match(mcp, /^HTTP\/1\.1 200 /, mcp.slice(0, 200));
    assert.match(mcp, /mcp-session-id: ses_/i);

    const preflight = await rawExchange(
      host.port!,
      `OPTIONS ${base}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost:3000\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n`,
    );
    assert.match(preflight, /^HTTP\/1\.1 204 /, preflight);
    assert.match(preflight, /access-control-allow-origin: http:\/\/localhost:3000/i);

    const foreign = await rawExchange(host.port!, `POST ${base}/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    assert.match(foreign, /^HTTP\/1\.1 403 /, foreign);
    assert.match(foreign, /"jsonrpc":"2.0"/, 'a refusal on /mcp is a JSON-RPC error body');

    const upgrade = await rawExchange(
      host.port!,
      `GET ${base}/rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      true,
    );
    assert.match(upgrade, /^HTTP\/1\.1 101 /, upgrade);
  } finally {
    await host.stop();
  }
});

/**
 * Writes `text` on a fresh connection; reads until the server closes it, a chunked body's last
 * chunk arrived (the MCP SDK answers an SSE POST with `connection: keep-alive` whatever the
 * request said, so the socket would only close at the 5 s keep-alive timeout), or, `firstAnswer`,
 * a whole head arrived.
 */
function rawExchange(port: number, text: string, firstAnswer = false): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    const sock = connect(port, '127.0.0.1', () => sock.write(text));
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => {
      data += c;
      if ((firstAnswer && data.includes('\r\n\r\n')) || data.endsWith('\r\n0\r\n\r\n')) sock.destroy();
    });
    sock.on('close', () => resolve(data));
    sock.on('error', () => resolve(data));
    setTimeout(() => sock.destroy(), 5000).unref();
  });
}
