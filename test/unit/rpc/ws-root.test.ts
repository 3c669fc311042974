/**
 * Clients that connect to the bare address (pygls' `start_ws` dials
 * ws://HOST:PORT with no path) get the same JSON-RPC service as `/rpc`,
 * while a plain GET `/` stays the inspector page.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { createMessageConnection } from 'vscode-jsonrpc/node';
import { WebSocketMessageReader, WebSocketMessageWriter } from '../../../src/rpc/ws-message-stream.js';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';

let host: InProcessHost;
before(async () => {
  host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
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

/** A raw `ws` client that sends every message as a binary frame, as pygls' start_ws does. */
async function binaryClient(path: string) {
  const socket = new WebSocket(`ws://127.0.0.1:${host.port}${path}`);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const answers: { binary: boolean; message: { id?: unknown; result?: unknown; error?: { code: number; message: string } } }[] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    answers.push({ binary: isBinary, message: JSON.parse(data.toString('utf8')) as (typeof answers)[number]['message'] });
    for (const w of waiters) w();
  });
  const next = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => answers.length >= n && (waiters.delete(check), resolve());
      waiters.add(check);
      check();
    });
  const send = async (bytes: Buffer) => {
    const n = answers.length + 1;
    socket.send(bytes, { binary: true });
    await next(n);
    return answers.at(-1)!;
  };
  return { socket, send, answers };
}

for (const path of ['/', '/rpc']) {
  test(`binary frames holding UTF-8 JSON are read like text frames at ${path}, answered in text frames`, async () => {
    const c = await binaryClient(path);
    try {
      const json = (m: unknown) => Buffer.from(JSON.stringify(m), 'utf8');
      const init = await c.send(json({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_version: '1', client_info: { name: 'pygls-like', version: 'é' } } }));
      assert.equal((init.message.result as { protocol_version: string }).protocol_version, '1');
      const token = await mintBearer('binary-user');
      const open = await c.send(json({ jsonrpc: '2.0', id: 2, method: 'session/open', params: { auth: { type: 'bearer', token } } }));
      assert.equal((open.message.result as { user_id: string }).user_id, 'binary-user');
      const invalid = await c.send(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
      assert.deepEqual(invalid.message.error, { code: -32700, message: 'parse error: a binary frame must hold UTF-8 JSON' });
      assert.equal(invalid.message.id, null);
      const notJson = await c.send(Buffer.from('not json', 'utf8'));
      assert.equal(notJson.message.error?.code, -32700);
      assert.ok(c.answers.every((a) => !a.binary), 'every answer is a text frame');
    } finally {
      c.socket.close();
    }
  });
}
