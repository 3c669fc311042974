/**
 * Which driver errors mean "the database went away" (a restart, a
 * terminated backend, a network fault) rather than "this statement is
 * wrong". The first kind is a passing outage: the store answers it with
 * `StoreUnavailableError`, drops the connection, and the caller may retry.
 */
import { StoreUnavailableError } from '../store.js';

/** Socket-level failures Node reports while connecting or talking to the server. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going or not there yet: class 08 (connection
 * exception), 57P01 admin_shutdown (`pg_terminate_backend`, `pg_ctl -m fast`),
 * 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or shutting
 * down), 57P05 idle_session_timeout, 53300 too_many_connections.
 */
const SERVER_GONE = /^(08...|57P0[1235]|53300)$/;

/** node-postgres's own words for a connection that died or never came up. */
const DRIVER_MESSAGES = [
  'Connection terminated',
  'not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
];

export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_GONE.test(code))) return true;
  return DRIVER_MESSAGES.some((m) => err.message.includes(m));
}

/** The reason to name in a `StoreUnavailableError`: the SQLSTATE or errno, else the driver's message. */
function reasonOf(err: Error): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${err.message}` : err.message;
}

/** A connection error as the store's `StoreUnavailableError`; anything else unchanged. */
export function asUnavailable(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || !isConnectionError(err)) return err;
  return new StoreUnavailableError(reasonOf(err as Error));
}
