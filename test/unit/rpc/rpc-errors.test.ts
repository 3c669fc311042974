/**
 * The one table from domain errors to JSON-RPC errors (src/rpc/errors.ts):
 * every code the daemon throws has its wire error, the -32602 ones carry
 * exactly the `data.code` values the protocol documents, and the wire bytes
 * are the ones hosts already see.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DaemonError, threadNotFound } from '../../../src/runtime/errors.js';
import { RPC_ERROR_DATA_CODES, RpcErrorCode } from '../../../src/protocol/errors.js';
import { WIRE_ERRORS, asWireError, wireErrorOf } from '../../../src/rpc/errors.js';

test('THREAD_NOT_FOUND is -32602 with data.code, byte for byte as before', () => {
  assert.equal(JSON.stringify(wireErrorOf(threadNotFound()).toJson()), '{"code":-32602,"message":"thread not found","data":{"code":"THREAD_NOT_FOUND"}}');
});

test('codes without data carry no data member', () => {
  assert.deepEqual(wireErrorOf(new DaemonError('OVERLOADED', 'too many sessions')).toJson(), { code: RpcErrorCode.Overloaded, message: 'too many sessions' });
  assert.deepEqual(wireErrorOf(new DaemonError('UNAUTHORIZED', 'token expired')).toJson(), { code: RpcErrorCode.Unauthorized, message: 'token expired' });
  assert.deepEqual(wireErrorOf(new DaemonError('CANCELLED', 'request cancelled')).toJson(), { code: RpcErrorCode.RequestCancelled, message: 'request cancelled' });
});

test('the -32602 codes of the table are exactly the data codes the protocol documents', () => {
  const withData = Object.entries(WIRE_ERRORS).filter(([, w]) => w.dataCode).map(([code]) => code).sort();
  assert.deepEqual(withData, [...RPC_ERROR_DATA_CODES].sort());
  for (const code of withData) assert.equal(WIRE_ERRORS[code as keyof typeof WIRE_ERRORS].code, RpcErrorCode.InvalidParams);
});

test('anything else is no wire error (the dispatcher answers -32603 without its text)', () => {
  assert.equal(asWireError(new Error('disk on fire')), undefined);
  assert.ok(asWireError(new DaemonError('JOB_NOT_FOUND', 'automation job not found')));
});
