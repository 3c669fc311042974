/**
 * Clients that connect to the bare address (pygls' `start_ws` dials
 * ws://HOST:PORT with no path) get the same JSON-RPC service as `/rpc`,
 * while a plain GET `/` stays the inspector page.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { createMessageConnection } from 'vscode-jsonrpc/node';
import { WebSocketMessageReader, WebSocketMessageWriter } from '../../src/rpc/ws-message-stream.js';
import { startHost, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';

let host: Host;
before(async () => {
  host = await startHost({ transport: 'ws' });
});
after(async () => {
  await host.stop();
});

for (const url of ['', '/', '/?client=pygls']) {
  test(`a WebSocket upgrade at "${url || '(no path)'}" speaks the same JSON-RPC as /rpc`, async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${host.port}${url}`);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const rpc = createMessageConnection(new WebSocketMessageReader(socket), new WebSocketMessageWriter(socket));
    rpc.listen();
    try {
      const init = await rpc.sendRequest<{ protocol_version: string; tool: { name: string } }>('initialize', { protocol_version: '1' });
      assert.equal(init.protocol_version, '1');
      assert.equal(init.tool.name, 'project_cli');
      const opened = await rpc.sendRequest<{ user_id: string }>('session/open', { auth: { type: 'bearer', token: await mintBearer('root-user') } });
      assert.equal(opened.user_id, 'root-user');
    } finally {
      rpc.dispose();
      socket.close();
    }
  });
}

test('a plain GET / is still the inspector, and other upgrade paths are refused', async () => {
  const page = await fetch(`http://127.0.0.1:${host.port}/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  const elsewhere = new WebSocket(`ws://127.0.0.1:${host.port}/elsewhere`);
  const outcome = await new Promise<string>((resolve) => {
    elsewhere.once('open', () => resolve('open'));
    elsewhere.once('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
    elsewhere.once('error', (err) => resolve(err.message));
  });
  assert.match(outcome, /404/);
});
