import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import type { Connection, Daemon } from '../daemon/daemon.js';
import { dispatch, type ConnectionState } from './dispatcher.js';

export interface StdioHandle {
  /** Resolves with the exit code once the peer sent `exit` or closed stdin. */
  finished: Promise<number>;
}

/**
 * Serves JSON-RPC with LSP framing (Content-Length headers) on the given
 * streams. stdout carries protocol only. `exit` after `shutdown` ends with
 * 0, `exit` without it with 1, and stdin end counts as a clean goodbye.
 */
export function serveStdio(
  daemon: Daemon,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  track: <T>(work: Promise<T>) => Promise<T>,
): StdioHandle {
  const rpc = createMessageConnection(new StreamMessageReader(input), new StreamMessageWriter(output));
  const conn: Connection = {
    id: 'stdio',
    transport: 'stdio',
    trusted: true, // the host started this process: trusted by construction
    notify: (method, params) => void rpc.sendNotification(method, params),
  };
  const state: ConnectionState = { initialized: false, shutdownRequested: false };
  let resolveFinished!: (code: number) => void;
  const finished = new Promise<number>((r) => (resolveFinished = r));

  rpc.onRequest((method, params, token) => track(dispatch(daemon, conn, state, method, params, token)));
  rpc.onNotification((method) => {
    if (method === 'exit') resolveFinished(state.shutdownRequested ? 0 : 1);
  });
  rpc.onError(([err]) => daemon.log.log('warn', 'stdio protocol error', { err: err.message }));
  rpc.onClose(() => resolveFinished(0));
  input.on('end', () => resolveFinished(0));
  rpc.listen();
  return { finished };
}
