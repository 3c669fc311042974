/**
 * `$/cancelRequest` whose params name no request (no params, `null`, a number,
 * an array, `id` missing or `null`) cancels nothing and is dropped, on stdio
 * and WebSocket alike: the daemon keeps serving and a real cancel still works
 * after it. One such WebSocket frame, before `initialize` even, used to end
 * the daemon (vscode-jsonrpc throws reading its `id`, out of the socket's
 * event handler: an uncaught exception), taking every connection and every
 * call in flight with it. These tests spawn the daemon: what is checked is
 * that its process stays up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startHost } from '../helpers/host.js';
import { startRaw } from '../helpers/raw-stdio.js';

/** Notifications of the cancel method with params that cannot name a request. */
const MALFORMED_CANCELS: unknown[] = [
  { jsonrpc: '2.0', method: '$/cancelRequest' },
  { jsonrpc: '2.0', method: '$/cancelRequest', params: null },
  { jsonrpc: '2.0', method: '$/cancelRequest', params: 5 },
  { jsonrpc: '2.0', method: '$/cancelRequest', params: [] },
  { jsonrpc: '2.0', method: '$/cancelRequest', params: {} },
  { jsonrpc: '2.0', method: '$/cancelRequest', params: { id: null } },
];

test('WebSocket: a $/cancelRequest naming no request is dropped and the daemon keeps serving', { timeout: 60_000 }, async () => {
  const host = await startHost({ transport: 'ws', args: ['--executor', 'inprocess'] });
  try {
    const ws = new WebSocket(`ws://127.0.0.1:${host.port!}/rpc`);
    const answers: Array<{ id?: unknown; result?: unknown; error?: { code: number } }> = [];
    const answered = new Promise<string>((resolve) => {
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as (typeof answers)[number];
        answers.push(m);
        if (m.id === 'after') resolve('answered');
      });
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.on('error', () => {});
    for (const m of MALFORMED_CANCELS) ws.send(JSON.stringify(m));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'initialize', params: { protocol_version: '1' } }));
    const exited = host.exited.then((code) => `the daemon exited ${code}:\n${host.stderr().slice(-1500)}`);
    assert.equal(await Promise.race([answered, exited]), 'answered');
    const after = answers.find((a) => a.id === 'after');
    assert.ok(after?.result, JSON.stringify(after));
    // A notification is never answered: the malformed cancels got no reply of their own.
    assert.deepEqual(answers.map((a) => a.id), ['after']);
    // The connection the frames came on still works, and so does the daemon for a new one.
    const other = await host.connect();
    await other.request('initialize', { protocol_version: '1' });
    ws.close();
  } finally {
    await host.stop();
  }
});

test('stdio: a $/cancelRequest naming no request is dropped and the daemon keeps serving', { timeout: 60_000 }, async () => {
  const d = startRaw(['--executor', 'inprocess']);
  try {
    for (const m of MALFORMED_CANCELS) d.frame(m);
    d.frame({ jsonrpc: '2.0', id: 'after', method: 'initialize', params: { protocol_version: '1' } });
    const after = await d.waitFor((m) => m.id === 'after', 15_000);
    assert.ok(after, `the request after the cancels is answered (stderr: ${d.stderr().slice(-500)})`);
    assert.deepEqual(d.messages.map((m) => m.id), ['after']);
    // Dropped before vscode-jsonrpc reads them: nothing of its internals ("Cannot read properties…") in the log.
    assert.doesNotMatch(d.stderr(), /Cannot read properties|can't be correlated/);
  } finally {
    d.kill();
    await d.exited;
  }
});
