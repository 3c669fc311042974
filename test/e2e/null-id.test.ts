/**
 * Contract section 21: a request with `"id": null` is answered -32600
 * (`id: null`) and holds no slot of the connection's read window, on stdio
 * and WebSocket alike — with `--max-in-flight 1` the window is 18 requests,
 * and 20 such requests followed by a real one used to leave the real one
 * unanswered for good. Refusals the transport sends itself take no slot and
 * free none, so the real request after them is answered too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import type { ResponseMessage } from 'vscode-jsonrpc/node';
import { startRaw } from '../helpers/raw-stdio.js';
import { startInProcess } from '../helpers/in-process.js';
import { waitFor } from '../helpers/wait-for.js';

const NULL_IDS = 40;

/** Requests with `id: null`, some junk the transport refuses itself, then a real request. */
function burst(): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < NULL_IDS; i++) out.push({ jsonrpc: '2.0', id: null, method: i % 2 ? 'initialize' : 'thread/list', params: { protocol_version: '1' } });
  for (let i = 0; i < 10; i++) out.push('{not json');
  out.push({ jsonrpc: '2.0', id: 'real', method: 'initialize', params: { protocol_version: '1' } });
  return out;
}

type Answer = ResponseMessage;

function check(answers: Answer[]): void {
  const real = answers.find((m) => m.id === 'real');
  assert.ok(real?.result, 'the real request is answered');
  const refusals = answers.filter((m) => m.id === null && m.error?.code === -32600);
  assert.equal(refusals.length, NULL_IDS, 'every id: null request is answered -32600 with id: null');
  assert.match(refusals[0]!.error!.message, /not null/);
  assert.ok(!answers.some((m) => m.error?.code === -32603), 'never -32603');
}

test('stdio, --max-in-flight 1: id: null requests are answered -32600 and the next request is answered', { timeout: 60_000 }, async () => {
  const d = startRaw(['--executor', 'inprocess', '--max-in-flight', '1']);
  try {
    for (const m of burst()) d.frame(m);
    const real = await d.waitFor((m) => m.id === 'real', 15_000);
    assert.ok(real, `the real request is answered (stderr: ${d.stderr().slice(-500)})`);
    await waitFor(() => d.messages.filter((m) => m.id === null).length >= NULL_IDS + 10 || undefined, 'every refusal');
    check(d.messages as unknown as Answer[]);
  } finally {
    d.kill();
    await d.exited;
  }
});

test('WebSocket, --max-in-flight 1: id: null requests are answered -32600 and the next request is answered', { timeout: 60_000 }, async () => {
  const host = await startInProcess({ transport: 'ws', args: ['--max-in-flight', '1'] });
  const ws = new WebSocket(`ws://127.0.0.1:${host.port}/rpc`);
  try {
    const answers: Answer[] = [];
    ws.on('message', (data: WebSocket.RawData) => answers.push(JSON.parse(String(data)) as Answer));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    for (const m of burst()) ws.send(typeof m === 'string' ? m : JSON.stringify(m));
    await waitFor(() => answers.some((m) => m.id === 'real') || undefined, 'the real request answered');
    await waitFor(() => answers.filter((m) => m.id === null).length >= NULL_IDS + 10 || undefined, 'every refusal');
    check(answers);
  } finally {
    ws.close();
    await host.stop();
  }
});
