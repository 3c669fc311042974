/**
 * Binds one vscode-jsonrpc MessageConnection (any transport) to the shared
 * dispatcher: per-connection state, an in-flight limit, a request id and a
 * log line per call, and notifications that never throw on a closed peer.
 */
import { ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import type { Connection } from './connection.js';
import { METHODS, dispatch, type ConnectionState, type DispatchDeps } from './dispatcher.js';
import { RpcErrorCode } from './errors.js';

export interface BindOptions {
  id: string;
  transport: 'stdio' | 'ws';
  trusted: boolean;
  maxInFlight: number;
  /** Registers the call with the daemon so shutdown can wait for it. */
  track: <T>(work: Promise<T>) => Promise<T>;
  /** False once the daemon stops taking calls. */
  accepting: () => boolean;
  /**
   * While the peer does not read its answers, a promise a request waits on
   * before it runs (WebSocket backpressure); undefined when it may run now.
   */
  writable?: () => Promise<void> | undefined;
}

export interface BoundConnection {
  conn: Connection;
  state: ConnectionState;
  inFlight: () => number;
  /** Forgets the connection's sessions and subscriptions. */
  release(): void;
}

let requestCounter = 0;

/**
 * Binds `rpc` to the dispatcher. `services` is what the dispatcher takes; the
 * binding itself reads only its log and, on release, the session and
 * subscription registries.
 */
export function bindConnection(services: DispatchDeps, rpc: MessageConnection, opts: BindOptions): BoundConnection {
  let closed = false;
  const conn: Connection = {
    id: opts.id,
    transport: opts.transport,
    trusted: opts.trusted,
    notify(method, params) {
      if (closed) return;
      // The peer may be gone (vscode-jsonrpc throws synchronously on a closed
      // connection, or rejects later): the call's outcome is stored regardless.
      try {
        rpc.sendNotification(method, params).catch(() => {});
      } catch {
        closed = true;
      }
    },
  };
  const state: ConnectionState = { initialized: false, shutdownRequested: false };
  let inFlight = 0;

  rpc.onClose(() => {
    closed = true;
  });

  rpc.onRequest(async (method, params, token) => {
    if (!opts.accepting()) throw new ResponseError(RpcErrorCode.ShuttingDown, 'the daemon is shutting down');
    if (inFlight >= opts.maxInFlight) {
      throw new ResponseError(RpcErrorCode.Overloaded, `too many requests in flight on this connection (limit ${opts.maxInFlight})`);
    }
    inFlight++;
    const wait = opts.writable?.();
    if (wait) {
      await wait;
      if (closed) {
        inFlight--;
        throw new ResponseError(RpcErrorCode.InvalidRequest, 'the connection closed');
      }
    }
    const requestId = `req_${(++requestCounter).toString(36)}`;
    // Only known method names reach the log: the raw string is attacker-sized.
    const log = services.log.child({ request_id: requestId, connection: conn.id, method: Object.hasOwn(METHODS, method) ? method : '<unknown>' });
    const started = performance.now();
    try {
      const result = await opts.track(dispatch(services, conn, state, method, params, token, log));
      if (log.enabled('debug')) log.log('debug', 'request done', { ms: round(performance.now() - started) });
      return result;
    } catch (err) {
      const code = err instanceof ResponseError ? err.code : RpcErrorCode.InternalError;
      log.log(code === RpcErrorCode.InternalError ? 'error' : 'info', 'request failed', { ms: round(performance.now() - started), code });
      throw err;
    } finally {
      inFlight--;
    }
  });

  return {
    conn,
    state,
    inFlight: () => inFlight,
    release() {
      closed = true;
      services.sessions.closeConnection(conn.id);
      services.subscriptions.dropConnection(conn.id);
    },
  };
}

const round = (ms: number) => Math.round(ms * 10) / 10;
