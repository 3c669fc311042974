/**
 * A daemon's last messages come before its close: vscode-jsonrpc's reader decodes the frames of one read
 * one per tick, but reports its stream's end at once — a host whose `onClose` disposes the connection (or
 * treats the daemon as gone) lost the answers and notifications written just before the daemon's output
 * ended. The client reads with DrainingStreamMessageReader (src/protocol/stream-reader.ts), as the daemon does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { ToolgateClient } from '../../../src/client/index.js';

const frame = (msg: unknown) => {
  const body = Buffer.from(JSON.stringify(msg), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
};

test('answers and notifications written just before the daemon output ends are seen before its close', async () => {
  const fromDaemon = new PassThrough();
  const toDaemon = new PassThrough();
  const client = ToolgateClient.fromStreams(fromDaemon, toDaemon);
  const seen: string[] = [];
  client.connection.onNotification('tool/result', () => void seen.push('notification'));
  // A host that lets go of the connection once the daemon is gone.
  client.onClose(() => {
    seen.push('close');
    client.connection.dispose();
  });
  const ids: number[] = [];
  toDaemon.on('data', (chunk: Buffer) => {
    for (const m of chunk.toString('utf8').matchAll(/"id":(\d+)/g)) ids.push(Number(m[1]));
  });
  const answers = [1, 2, 3].map((n) =>
    client.connection.sendRequest<{ n: number }>('x/echo', { n }).then(
      (r) => void seen.push(`answer ${r.n}`),
      (err: Error) => void seen.push(`lost: ${err.message}`),
    ),
  );
  while (ids.length < 3) await new Promise((r) => setImmediate(r));
  // The daemon's last write: a notification and the three answers in one chunk, then its output ends.
  const last = [frame({ jsonrpc: '2.0', method: 'tool/result', params: { final: true } }), ...ids.map((id, i) => frame({ jsonrpc: '2.0', id, result: { n: i + 1 } }))];
  fromDaemon.end(Buffer.concat(last));
  await Promise.all(answers);
  while (!seen.includes('close')) await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, ['notification', 'answer 1', 'answer 2', 'answer 3', 'close']);
});

test('a spawned daemon that answers and exits at once: every answer reaches the host before the client lets go', async () => {
  // "serve --stdio" is ignored by -e: the child reads 200 requests, answers them with a notification first
  // in one write, and exits.
  const daemon = `
    let buf = '';
    process.stdin.on('data', (c) => {
      buf += c;
      const ids = [...buf.matchAll(/"id":(\\d+)/g)].map((m) => Number(m[1]));
      if (ids.length < 200) return;
      const frame = (m) => { const b = JSON.stringify(m); return 'Content-Length: ' + Buffer.byteLength(b) + '\\r\\n\\r\\n' + b; };
      const out = frame({ jsonrpc: '2.0', method: 'tool/result', params: { final: true } }) + ids.map((id, i) => frame({ jsonrpc: '2.0', id, result: { n: i + 1 } })).join('');
      process.stdout.write(out, () => process.exit(0));
    });`;
  const client = ToolgateClient.spawn({ command: [process.execPath, '-e', daemon] });
  const seen: string[] = [];
  client.connection.onNotification('tool/result', () => void seen.push('notification'));
  client.onClose(() => void seen.push('close'));
  const answers = Array.from({ length: 200 }, (_, i) => i + 1).map((n) =>
    client.connection.sendRequest<{ n: number }>('x/echo', { n }).then(
      (r) => void seen.push(`answer ${r.n}`),
      (err: Error) => void seen.push(`lost: ${err.message}`),
    ),
  );
  await Promise.all(answers);
  assert.equal(await client.exited, 0);
  while (!seen.includes('close')) await new Promise((r) => setImmediate(r));
  // None lost to the exit. (The close itself may come earlier: the daemon's stdin closing ends the connection
  // for sending, as vscode-jsonrpc reports it; the client lets go of it only after the last answer.)
  assert.deepEqual(seen.filter((s) => s !== 'close'), ['notification', ...answers.map((_, i) => `answer ${i + 1}`)]);
});
