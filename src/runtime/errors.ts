/**
 * The daemon's own errors, in the domain's words: what went wrong, never how
 * a transport says so. Services throw a `DaemonError`; the transports map
 * its code to the wire in one table (src/rpc/errors.ts), so no JSON-RPC
 * error code is known below src/rpc.
 *
 * The seven -32602 codes ("not found", "not enabled", a made-up cursor) are the names the wire carries as
 * `data.code` (src/protocol/errors.ts); the others name a condition that the
 * wire tells by its error code alone.
 */
import type { RPC_ERROR_DATA_CODES } from '../protocol/errors.js';

export type DaemonErrorCode =
  | (typeof RPC_ERROR_DATA_CODES)[number]
  /** A bearer token that does not verify, or a connection that may not do this. */
  | 'UNAUTHORIZED'
  /** Something the request needs is out of reach for now (`auth.issuer`'s keys): the caller may retry. */
  | 'UNAVAILABLE'
  /** A per-connection cap (sessions, subscriptions) is reached. */
  | 'OVERLOADED'
  /** The caller cancelled the request before anything happened. */
  | 'CANCELLED';

export class DaemonError extends Error {
  override name = 'DaemonError';
  constructor(
    readonly code: DaemonErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Identical for a thread of another user and a thread that never existed. */
export function threadNotFound(): DaemonError {
  return new DaemonError('THREAD_NOT_FOUND', 'thread not found');
}
