/**
 * Connecting to PostgreSQL: URL recognition, the pool, and the errors an
 * operator can act on.
 *
 * Driver: `pg` (node-postgres). It is the long-maintained default driver for
 * Node, ships its own pool (`pg.Pool`), supports LISTEN/NOTIFY on a plain
 * client (what the cross-daemon fan-out needs), sends every value as a bound
 * parameter of the extended query protocol (no SQL is ever built from input),
 * and needs no native build.
 */
import pg from 'pg';
import { DatabaseOpenError } from '../database.js';
import { describePgUrl } from './url.js';
import { isConnectionError } from './connection-errors.js';

export { describePgUrl, isPostgresUrl } from './url.js';

function target(url: string): { host: string; port: string; user: string; database: string } {
  const u = new URL(url);
  return {
    host: u.hostname || 'localhost',
    port: u.port || '5432',
    user: decodeURIComponent(u.username) || '(default user)',
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || '(default database)',
  };
}

// int8 (counts, milliseconds, sequence numbers) as JS numbers: they stay far below 2^53.
const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

export interface PgPoolOptions {
  /** `store.pool_size`: connections per daemon, each running one call's transaction at a time. */
  poolSize?: number | undefined;
  /** Called when an idle pooled connection fails (the pool replaces it). */
  onIdleError?: (err: Error) => void;
}

export const DEFAULT_POOL_SIZE = 10;

const FAILED = new WeakMap<pg.ClientBase, Error>();

/** The error a pooled connection failed with, if it has (at any time, even before its borrower listened). */
export function failureOf(client: pg.ClientBase): Error | undefined {
  return FAILED.get(client);
}

export function clientConfig(url: string): pg.ClientConfig {
  // TCP keep-alive: a server that vanished without a reset (a dropped route, a frozen VM) is noticed by the
  // kernel's probes, and the connection fails like one the server closed, instead of hanging until TCP gives up.
  return { connectionString: url, connectionTimeoutMillis: 10_000, application_name: 'toolgate', types, keepAlive: true, keepAliveInitialDelayMillis: 10_000 };
}

/**
 * Opens a pool and proves it works with one round trip, so that a wrong URL
 * fails at start with a clear message instead of at the first call.
 */
export async function openPgPool(url: string, opts: PgPoolOptions = {}): Promise<pg.Pool> {
  const pool = new pg.Pool({ ...clientConfig(url), max: opts.poolSize ?? DEFAULT_POOL_SIZE, idleTimeoutMillis: 30_000 });
  // An idle connection that dies (server restart, network) must not crash the daemon.
  pool.on('error', (err) => opts.onIdleError?.(err));
  // The pool's own listener is off while a connection is checked out, and a server's FATAL (57P01) can
  // arrive in the same read as a new connection's ReadyForQuery: after the pool handed it out, before
  // the borrower's listener is on. An 'error' event with no listener throws, and the daemon exits —
  // so every connection keeps a listener for its whole life, and the borrower asks failureOf().
  pool.on('connect', (client) => client.on('error', (err) => FAILED.set(client, FAILED.get(client) ?? err)));
  try {
    const client = await pool.connect();
    client.release();
    return pool;
  } catch (err) {
    await pool.end().catch(() => {});
    throw pgOpenError(url, err);
  }
}

/** Turns a driver error at connect time into a message that names the cause and never the password. */
export function pgOpenError(url: string, err: unknown): DatabaseOpenError {
  const where = describePgUrl(url);
  let t: ReturnType<typeof target>;
  try {
    t = target(url);
  } catch {
    return new DatabaseOpenError(`cannot open database ${where}: not a valid postgres:// URL`);
  }
  const e = err as { code?: string; message?: string };
  switch (e.code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return new DatabaseOpenError(`cannot reach the PostgreSQL server at ${t.host}:${t.port} (${e.code}) for ${where}`, { unavailable: true });
    case '28P01': // invalid_password
    case '28000': // invalid_authorization_specification (no such role, pg_hba refusal)
      return new DatabaseOpenError(`PostgreSQL refused the credentials of user "${t.user}" at ${t.host}:${t.port} (${e.code}) for ${where}`);
    case '3D000': // invalid_catalog_name
      return new DatabaseOpenError(`database "${t.database}" does not exist on the PostgreSQL server at ${t.host}:${t.port}: create it first (createdb) — ${where}`);
    default: {
      const msg = String(e.message ?? err);
      // pg reports a connect timeout as a plain Error.
      if (/timeout/i.test(msg)) return new DatabaseOpenError(`cannot reach the PostgreSQL server at ${t.host}:${t.port} (timeout) for ${where}`, { unavailable: true });
      // Starting up, shutting down, a session ended while opening: a passing outage.
      return new DatabaseOpenError(`cannot open database ${where}: ${msg}${e.code ? ` (${e.code})` : ''}`, { unavailable: isConnectionError(err) });
    }
  }
}
