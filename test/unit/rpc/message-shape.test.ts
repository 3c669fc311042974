/**
 * The one JSON-RPC envelope check every transport the daemon reads uses
 * (stdio, WebSocket, `serve --mcp` stdio): what it accepts, what it refuses
 * with which reason and id, and which refusals are malformed responses
 * (never answered).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cancelsNothing, envelopeProblem } from '../../../src/rpc/message-shape.js';

test('requests, notifications and responses pass', () => {
  for (const m of [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
    { jsonrpc: '2.0', id: 'a', method: 'x' },
    { jsonrpc: '2.0', method: 'exit' },
    { jsonrpc: '2.0', id: 3, result: null },
    { jsonrpc: '2.0', id: null, error: { code: -1, message: 'm' } },
  ]) assert.equal(envelopeProblem(m), null, JSON.stringify(m));
});

test('anything else is refused, with its id when it has a valid one', () => {
  const cases: Array<[unknown, RegExp, unknown, boolean]> = [
    [[], /batch/, null, false],
    [[{ jsonrpc: '2.0', id: 1, method: 'x' }], /batch/, null, false],
    [null, /not a JSON-RPC message/, null, false],
    [42, /not a JSON-RPC message/, null, false],
    [{ id: 8, method: 'x' }, /jsonrpc must be "2.0"/, 8, false],
    [{ jsonrpc: '2.0', id: {}, method: 'x' }, /id must be/, null, false],
    [{ jsonrpc: '2.0', id: true, method: 'x' }, /id must be/, null, false],
    [{ jsonrpc: '2.0', id: null, method: 'x' }, /not null/, null, false],
    [{ jsonrpc: '2.0', id: 7, method: 5 }, /method must be a string/, 7, false],
    [{ jsonrpc: '2.0', result: 1 }, /method must be a string/, null, true],
    [{ jsonrpc: '1.0', id: 2, result: 1 }, /jsonrpc/, 2, true],
  ];
  for (const [m, reason, id, response] of cases) {
    const p = envelopeProblem(m);
    assert.ok(p, JSON.stringify(m));
    assert.match(p.reason, reason);
    assert.equal(p.id, id);
    assert.equal(p.response, response, `${JSON.stringify(m)} is ${response ? '' : 'not '}a malformed response`);
  }
});

test('a $/cancelRequest that can name no request is dropped; every other message is handed on', () => {
  const cancel = (params?: unknown) => ({ jsonrpc: '2.0', method: '$/cancelRequest', ...(params === undefined ? {} : { params }) });
  for (const m of [cancel(), cancel(null), cancel(5), cancel('x'), cancel([]), cancel([1]), cancel({}), cancel({ id: null }), cancel({ id: {} }), cancel({ id: true })]) {
    assert.equal(cancelsNothing(m), true, JSON.stringify(m));
  }
  for (const m of [cancel({ id: 3 }), cancel({ id: 'a' }), { jsonrpc: '2.0', method: 'exit' }, { jsonrpc: '2.0', id: 1, method: '$/cancelRequest' }, { jsonrpc: '2.0', id: 1, result: null }]) {
    assert.equal(cancelsNothing(m), false, JSON.stringify(m));
  }
});
