/**
 * The flow-controlled reader both transports read through: a `$/cancelRequest`
 * that can name no request never reaches the connection, and a throw of the
 * connection while a message is handed to it is reported as a reader error —
 * it never escapes into whatever delivered the message (a socket's event, a
 * write's callback, a resume), where it would end the daemon.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AbstractMessageReader, type DataCallback, type Disposable, type Message } from 'vscode-jsonrpc/node';
import { FlowControlledReader } from '../../../src/rpc/flow-controlled-reader.js';

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
