/**
 * JSON-RPC errors on the wire. -32768..-32000 is reserved by JSON-RPC;
 * -32099..-32000 is the implementation-defined server range used below.
 * Tool-level failures are not here: they are successful responses with
 * `status: "failure"` (see tool.ts).
 */
import { z } from 'zod';
import { named } from './registry.js';

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
  /** Too many requests in flight, sessions or subscriptions on this connection. */
  Overloaded: -32003,
  /** The daemon is shutting down and takes no new calls. */
  ShuttingDown: -32004,
  /** LSP's code for a request the client cancelled. */
  RequestCancelled: -32800,
} as const;

/** `data.code` values that name which -32602 it is. */
export const RPC_ERROR_DATA_CODES = [
  'THREAD_NOT_FOUND',
  'JOB_NOT_FOUND',
  'UNKNOWN_AGENT',
  'SKILL_NOT_ENABLED',
  'SKILL_NOT_FOUND',
  'SKILL_FILE_NOT_FOUND',
  'CALL_NOT_FOUND',
  'INVALID_CURSOR',
  'ARGS_MISMATCH',
] as const;

/** The `error` member of a JSON-RPC error response. */
export const RpcError = named(
  'protocol',
  'RpcError',
  z.strictObject({
    code: z.number().int(),
    message: z.string(),
    data: z.unknown().optional(),
  }),
  'The error member of a JSON-RPC error response; -32602 carries data.code (e.g. THREAD_NOT_FOUND) or data.issues.',
);

export type RpcError = z.infer<typeof RpcError>;
