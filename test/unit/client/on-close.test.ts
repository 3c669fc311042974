/**
 * `onClose` fires once whichever way the connection ends — the host's own `close()` included, which disposes
 * the connection (vscode-jsonrpc reports no close after a dispose) before the socket's close has made its way
 * behind the last messages read (src/protocol/close-after-dispatch.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { ToolgateClient } from '../../../src/client/index.js';

test('onClose fires once on close() over WebSocket, and once when the server closes the socket', async () => {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`;
  try {
    const mine = await ToolgateClient.connect(url);
    let closes = 0;
    mine.onClose(() => closes++);
    await mine.close();
    assert.equal(closes, 1, 'close() ends the connection: onClose fired');

    const theirs = await ToolgateClient.connect(url);
    let closed = 0;
    const ended = new Promise<void>((resolve) => theirs.onClose(() => (closed++, resolve())));
    for (const socket of server.clients) socket.close();
    await ended;
    await theirs.close();
    assert.equal(closed, 1);
  } finally {
    for (const socket of server.clients) socket.terminate();
    server.close();
  }
});
