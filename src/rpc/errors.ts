import { ResponseError } from 'vscode-jsonrpc';
import { RpcErrorCode } from '../protocol/errors.js';

/** The wire's JSON-RPC error codes, declared once in src/protocol/errors.ts. */
export { RpcErrorCode };

export function invalidParams(message: string, data?: Record<string, unknown>): ResponseError<unknown> {
  return new ResponseError(RpcErrorCode.InvalidParams, message, data);
}

export function unauthorized(message: string): ResponseError<unknown> {
  return new ResponseError(RpcErrorCode.Unauthorized, message);
}

/** Identical for a thread of another user and a thread that never existed. */
export function threadNotFound(): ResponseError<unknown> {
  return invalidParams('thread not found', { code: 'THREAD_NOT_FOUND' });
}
