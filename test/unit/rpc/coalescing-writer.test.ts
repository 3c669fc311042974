import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { StreamMessageReader, type Message, type NotificationMessage, type ResponseMessage } from 'vscode-jsonrpc/node';
import { CoalescingMessageWriter } from '../../../src/rpc/coalescing-writer.js';

/** A stream that records every write and completes each one only when told to. */
function recordingStream(opts: { holdCallbacks?: boolean } = {}) {
  const writes: Buffer[] = [];
  const held: Array<() => void> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      writes.push(chunk);
      if (opts.holdCallbacks) held.push(() => done());
      else done();
    },
  });
  return { stream, writes, release: () => held.splice(0).forEach((f) => f()) };
}

/** Decodes LSP-framed bytes with vscode-jsonrpc's own reader. */
async function decode(bytes: Buffer, count: number): Promise<Message[]> {
  const input = new PassThrough();
  const reader = new StreamMessageReader(input);
  const out: Message[] = [];
  const done = new Promise<void>((resolve) => reader.listen((m) => out.push(m) === count && resolve()));
  input.end(bytes);
  await done;
  reader.dispose();
  return out;
}

const note: NotificationMessage = { jsonrpc: '2.0', method: 'tool/result', params: { final: true, text: 'é' } };
const response: ResponseMessage = { jsonrpc: '2.0', id: 7, result: { status: 'success' } };

test('a notification and the response queued with it go out framed, in one write', async () => {
  const { stream, writes } = recordingStream();
  const writer = new CoalescingMessageWriter(stream);
  await Promise.all([writer.write(note), writer.write(response)]);
  assert.equal(writes.length, 1, 'one write for the whole burst (header and body of both messages)');
  assert.deepEqual(await decode(writes[0]!, 2), [note, response]);
});

test('a message written after the burst has left gets its own write', async () => {
  const { stream, writes } = recordingStream();
  const writer = new CoalescingMessageWriter(stream);
  await writer.write(note);
  await writer.write(response);
  assert.equal(writes.length, 2);
  assert.deepEqual(await decode(Buffer.concat(writes), 2), [note, response]);
});

test('write() settles only once the stream has taken the bytes', async () => {
  const { stream, writes, release } = recordingStream({ holdCallbacks: true });
  const writer = new CoalescingMessageWriter(stream);
  let settled = false;
  const p = writer.write(response).then(() => (settled = true));
  while (writes.length === 0) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, false, 'not before the write callback');
  release();
  await p;
  assert.equal(settled, true);
});

test('a failed stream write rejects the messages it carried', async () => {
  const stream = new Writable({ write: (_c, _e, done) => done(new Error('EPIPE')) });
  stream.on('error', () => {});
  const writer = new CoalescingMessageWriter(stream);
  await assert.rejects(writer.write(response), /EPIPE/);
});
