import { ResponseError } from 'vscode-jsonrpc';

/**
 * JSON-RPC error codes on the wire. -32768..-32000 is reserved by JSON-RPC;
 * -32099..-32000 is the implementation-defined server range used below.
 */
export const RpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Bad/expired/wrongly signed bearer token, or an unknown session id. */
  Unauthorized: -32001,
  /** A request other than `initialize` before `initialize`. */
  NotInitialized: -32002,
  /** Too many requests in flight on this connection. */
  Overloaded: -32003,
  /** The daemon is shutting down and takes no new calls. */
  ShuttingDown: -32004,
  /** LSP's code for a request the client cancelled. */
  RequestCancelled: -32800,
} as const;

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
