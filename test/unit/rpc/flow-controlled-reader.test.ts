/**
 * The flow-controlled reader both transports read through: a `$/cancelRequest`
 * that can name no request never reaches the connection, and a throw of the
 * connection while a message is handed to it is reported as a reader error —
 * it never escapes into whatever delivered the message (a socket's event, a
 * write's callback, a resume), where it would end the daemon; requests whose
 * ids share a key of vscode-jsonrpc's queue are each answered; on stdio the
 * end of input reaches the connection only behind the messages read before it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageWriter,
  type ResponseMessage,
} from 'vscode-jsonrpc/node';
import { FlowControlledReader } from '../../../src/rpc/flow-controlled-reader.js';
import { DrainingStreamMessageReader } from '../../../src/protocol/stream-reader.js';
import { waitFor } from '../../helpers/wait-for.js';


/** A reader whose messages the test pushes by hand. */
class PushReader extends AbstractMessageReader {
  private callback: DataCallback | undefined;
  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    return { dispose: () => (this.callback = undefined) };
  }
  push(m: unknown): void {
    this.callback?.(m as Message);
  }
  close(): void {
    this.fireClose();
  }
}

const source = { pause: () => undefined, resume: () => undefined };

test('a $/cancelRequest that names no request is dropped; one that does is handed on', () => {
  const inner = new PushReader();
  const reader = new FlowControlledReader(inner, source, 10);
  const got: unknown[] = [];
  reader.listen((m) => got.push(m));
  inner.push({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: null } });
  inner.push({ jsonrpc: '2.0', method: '$/cancelRequest' });
  inner.push({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 7 } });
  assert.deepEqual(got, [{ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 7 } }]);
});

test('a throw of the connection while a message is handed to it is a reader error, not a throw into the deliverer', () => {
  const inner = new PushReader();
  const reader = new FlowControlledReader(inner, source, 10);
  const errors: Error[] = [];
  reader.onError((err) => errors.push(err));
  reader.listen(() => {
    throw new TypeError('the connection could not take it');
  });
  assert.doesNotThrow(() => inner.push({ jsonrpc: '2.0', method: 'exit' }));
  assert.equal(errors.length, 1);
  assert.match(errors[0]!.message, /could not take it/);
});

/** Collects what the connection writes; a response frees its request's slot, as the transports do. */
class Answers extends AbstractMessageWriter implements MessageWriter {
  readonly responses: ResponseMessage[] = [];
  constructor(private readonly reader: FlowControlledReader) {
    super();
  }
  write(msg: Message): Promise<void> {
    if (!('method' in msg) && 'id' in msg) {
      this.reader.answered();
      this.responses.push(msg as ResponseMessage);
    }
    return Promise.resolve();
  }
  end(): void {}
}

test('requests vscode-jsonrpc would queue under one key (1 and "1", 0 and -0, a repeated id) are each answered, and none holds the window', async () => {
  const inner = new PushReader();
  const reader = new FlowControlledReader(inner, source, 4);
  const writer = new Answers(reader);
  const rpc = reader.connect(writer);
  // `wait` runs until `release` arrives: a call that waits on a later request of its own connection.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  rpc.onRequest((method) => {
    if (method === 'wait') return released.then(() => 'waited');
    if (method === 'release') release();
    return method;
  });
  rpc.listen();
  const ids = [1, '1', 0, -0, 'dup', 'dup', 'dup', 1000];
  for (const id of ids) inner.push({ jsonrpc: '2.0', id, method: 'odd' });
  inner.push({ jsonrpc: '2.0', id: 'w', method: 'wait' });
  inner.push({ jsonrpc: '2.0', id: 'r', method: 'release' });
  await waitFor(() => writer.responses.some((m) => m.id === 'w') || undefined, () => `the waiting call answered: ${JSON.stringify(writer.responses.map((m) => m.id))}`, 5_000);
  assert.equal(writer.responses.filter((m) => m.result === 'odd').length, ids.length, 'each odd request answered once');
  assert.ok(writer.responses.some((m) => m.id === 'r'));
  rpc.dispose();
});

test('closing after dispatch: the inner close reaches the connection only once every request read before it has started', async () => {
  const inner = new PushReader();
  const reader = new FlowControlledReader(inner, source, 100, true);
  const rpc = reader.connect(new Answers(reader));
  const started: unknown[] = [];
  rpc.onRequest((method) => void started.push(method));
  let startedAtClose: unknown[] | undefined;
  rpc.onClose(() => (startedAtClose = [...started]));
  rpc.listen();
  for (let i = 0; i < 20; i++) inner.push({ jsonrpc: '2.0', id: i, method: `m${i}` });
  inner.close();
  await waitFor(() => startedAtClose, 'the connection closed', 5_000);
  assert.equal(startedAtClose!.length, 20);
  rpc.dispose();
});

test('a stream read to its end: the reader closes after its last decoded message', async () => {
  const stream = new PassThrough();
  const decoder = new DrainingStreamMessageReader(stream);
  const events: string[] = [];
  decoder.onClose(() => events.push('close'));
  decoder.listen((m) => events.push(String((m as { id?: unknown }).id)));
  const frame = (id: number) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'm' });
    return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  stream.end([1, 2, 3, 4, 5].map(frame).join(''));
  await waitFor(() => events.includes('close') || undefined, 'the reader closed', 5_000);
  assert.deepEqual(events, ['1', '2', '3', '4', '5', 'close']);
  decoder.dispose();
});
