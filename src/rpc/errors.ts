/**
 * The one place that turns the daemon's domain errors into JSON-RPC errors.
 * Services throw `DaemonError`s (src/runtime/errors.ts) and know no wire
 * code; the dispatcher and the MCP adapter both answer through
 * `wireErrorOf`, so `tool/invoke` and MCP's `tools/call` fail alike.
 */
import { ResponseError } from 'vscode-jsonrpc';
import { RpcErrorCode } from '../protocol/errors.js';
import { DaemonError, type DaemonErrorCode } from '../runtime/errors.js';
import { StoreUnavailableError } from '../store/store.js';

/** The wire's JSON-RPC error codes, declared once in src/protocol/errors.ts. */
export { RpcErrorCode };

/**
 * Domain code → JSON-RPC error. The message is the domain error's own text;
 * `dataCode` errors also carry `data: {code}` (which -32602 it is, so a host
 * can tell them apart without reading the message).
 */
export const WIRE_ERRORS: Readonly<Record<DaemonErrorCode, { code: number; dataCode: boolean }>> = {
  THREAD_NOT_FOUND: { code: RpcErrorCode.InvalidParams, dataCode: true },
  JOB_NOT_FOUND: { code: RpcErrorCode.InvalidParams, dataCode: true },
  UNKNOWN_AGENT: { code: RpcErrorCode.InvalidParams, dataCode: true },
  SKILL_NOT_ENABLED: { code: RpcErrorCode.InvalidParams, dataCode: true },
  SKILL_NOT_FOUND: { code: RpcErrorCode.InvalidParams, dataCode: true },
  SKILL_FILE_NOT_FOUND: { code: RpcErrorCode.InvalidParams, dataCode: true },
  CALL_NOT_FOUND: { code: RpcErrorCode.InvalidParams, dataCode: true },
  INVALID_CURSOR: { code: RpcErrorCode.InvalidParams, dataCode: true },
  ARGS_MISMATCH: { code: RpcErrorCode.InvalidParams, dataCode: true },
  UNAUTHORIZED: { code: RpcErrorCode.Unauthorized, dataCode: false },
  // As a database outage: -32603 with a message that says to retry.
  UNAVAILABLE: { code: RpcErrorCode.InternalError, dataCode: false },
  OVERLOADED: { code: RpcErrorCode.Overloaded, dataCode: false },
  CANCELLED: { code: RpcErrorCode.RequestCancelled, dataCode: false },
};

/** The JSON-RPC error a domain error is on the wire. */
export function wireErrorOf(err: DaemonError): ResponseError<unknown> {
  const { code, dataCode } = WIRE_ERRORS[err.code];
  return new ResponseError(code, err.message, dataCode ? { code: err.code } : undefined);
}

/** A thrown value as the JSON-RPC error to answer with, or undefined when it is not one the wire names (an internal error). */
export function asWireError(err: unknown): ResponseError<unknown> | undefined {
  if (err instanceof ResponseError) return err;
  if (err instanceof DaemonError) return wireErrorOf(err);
  // A passing database outage (PostgreSQL restarted, connections dropped): a clear -32603 the host may retry.
  if (err instanceof StoreUnavailableError) return new ResponseError(RpcErrorCode.InternalError, 'database unavailable: retry the request');
  return undefined;
}

// The rpc layer's own refusals (params, sessions), raised before any service runs.

export function invalidParams(message: string, data?: Record<string, unknown>): ResponseError<unknown> {
  return new ResponseError(RpcErrorCode.InvalidParams, message, data);
}

export function unauthorized(message: string): ResponseError<unknown> {
  return new ResponseError(RpcErrorCode.Unauthorized, message);
}
