/**
 * Contract section 21: no sequence of requests on one connection can make it
 * stop reading for good — and every request with a usable id is answered.
 * vscode-jsonrpc files a request waiting for dispatch under `String(id)`, so
 * `1` and `"1"`, `0` and `-0`, `1000` and `1e3`, or one id sent twice, read in
 * one burst, used to overwrite one another: the earlier one was never
 * answered and held a slot of the read window (2 × max_in_flight + 16) for
 * good. With `--max-in-flight 1` a few such bursts left the connection
 * reading one request at a time, behind any call that waits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import type { ResponseMessage } from 'vscode-jsonrpc/node';
import { frameOf, startRaw } from '../helpers/raw-stdio.js';
import { startInProcess } from '../helpers/in-process.js';
import { waitFor } from '../helpers/wait-for.js';

/** Id texts (JSON) that are distinct on the wire, many of them one key to vscode-jsonrpc. */
const IDS = ['1', '"1"', '1.5', '"1.5"', '0', '-0', '"0"', '1000', '1e3', '"1000"', '1E3', '9007199254740993', '9007199254740992', '1e308', '"x"', '"x"', '-1', '"-1"'];
/** Requests answered at once: -32601, -32602 (missing or positional params), -32600 (initialize again), -32001 (no such session). */
const METHODS = [
  '"method": "no/such"',
  '"method": "thread/list"',
  '"method": "thread/list", "params": [1]',
  '"method": "initialize", "params": {"protocol_version": "1"}',
  '"method": "thread/list", "params": {"session_id": "nope"}',
];
const ROUNDS = 12;

/** Several hundred requests with odd ids, each followed by a `$/cancelRequest` of its id; how many requests. */
function burst(): { bodies: string[]; requests: number } {
  const bodies: string[] = [];
  let requests = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, id] of IDS.entries()) {
      const method = METHODS[(i + round) % METHODS.length]!;
      bodies.push(`{"jsonrpc": "2.0", "id": ${id}, ${method}}`);
      requests++;
      if ((i + round) % 2 === 0) bodies.push(`{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": ${id}}}`);
    }
  }
  return { bodies, requests };
}

const init = JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocol_version: '1' } });
const after = JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'no/such' });

const ofBurst = (answers: ResponseMessage[]) => answers.filter((m) => m.id !== 'init' && m.id !== 'after');

/** Waits for an answer to every request of the burst (answers may come in any order), then checks them. */
async function check(answers: ResponseMessage[], requests: number): Promise<void> {
  await waitFor(() => ofBurst(answers).length >= requests || undefined, () => `every request of the burst answered: ${ofBurst(answers).length} of ${requests}`);
  const odd = ofBurst(answers);
  assert.ok(!odd.some((m) => m.id === null), `no body was refused: ${JSON.stringify(odd.find((m) => m.id === null))}`);
  assert.equal(odd.length, requests, 'every request of the burst is answered, each once');
  assert.ok(!odd.some((m) => m.error?.code === -32603), 'never -32603');
}

test('the bodies are valid JSON-RPC requests and cancels', () => {
  for (const body of burst().bodies) assert.equal(typeof (JSON.parse(body) as { method: unknown }).method, 'string', body);
});

test('stdio, --max-in-flight 1: every request with an odd or repeated id is answered, and the next one too', { timeout: 60_000 }, async () => {
  const d = startRaw(['--executor', 'inprocess', '--max-in-flight', '1']);
  try {
    const { bodies, requests } = burst();
    d.send(frameOf(init));
    assert.ok(await d.waitFor((m) => m.id === 'init'));
    // One write, so that the daemon reads the burst in as few reads as it can.
    d.send(Buffer.concat(bodies.map((b) => frameOf(b))));
    d.send(frameOf(after));
    const last = await d.waitFor((m) => m.id === 'after', 15_000);
    assert.ok(last, `the request after the burst is answered (stderr: ${d.stderr().slice(-500)})`);
    await check(d.messages as unknown as ResponseMessage[], requests);
  } finally {
    d.kill();
    await d.exited;
  }
});

test('WebSocket, --max-in-flight 1: every request with an odd or repeated id is answered, and the next one too', { timeout: 60_000 }, async () => {
  const host = await startInProcess({ transport: 'ws', args: ['--max-in-flight', '1'] });
  const ws = new WebSocket(`ws://127.0.0.1:${host.port}/rpc`);
  try {
    const answers: ResponseMessage[] = [];
    ws.on('message', (data: WebSocket.RawData) => answers.push(JSON.parse(String(data)) as ResponseMessage));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(init);
    await waitFor(() => answers.some((m) => m.id === 'init') || undefined, 'initialize answered');
    const { bodies, requests } = burst();
    for (const body of bodies) ws.send(body);
    ws.send(after);
    await waitFor(() => answers.some((m) => m.id === 'after') || undefined, () => `the request after the burst answered (${answers.length} answers)`);
    await check(answers, requests);
  } finally {
    ws.close();
    await host.stop();
  }
});
