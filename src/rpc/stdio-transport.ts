import { createMessageConnection, StreamMessageReader } from 'vscode-jsonrpc/node';
import type { Daemon } from '../daemon/daemon.js';
import { bindConnection } from './bind-connection.js';
import { TrackedWriter, type PendingWrites } from './tracked-writer.js';
import { CoalescingMessageWriter } from './coalescing-writer.js';

export interface StdioHandle {
  /** Resolves with the exit code once the peer sent `exit` or closed stdin. */
  finished: Promise<number>;
  close(): void;
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
  opts: { track: <T>(work: Promise<T>) => Promise<T>; accepting: () => boolean; maxInFlight: number; writes: PendingWrites },
): StdioHandle {
  const rpc = createMessageConnection(new StreamMessageReader(input), new TrackedWriter(new CoalescingMessageWriter(output), opts.writes));
  // The host started this process: the connection is trusted by construction.
  const bound = bindConnection(daemon, rpc, { id: 'stdio', transport: 'stdio', trusted: true, maxInFlight: opts.maxInFlight, track: opts.track, accepting: opts.accepting });
  let resolveFinished!: (code: number) => void;
  const finished = new Promise<number>((r) => (resolveFinished = r));

  rpc.onNotification((method) => {
    if (method === 'exit') resolveFinished(bound.state.shutdownRequested ? 0 : 1);
  });
  rpc.onError(([err]) => daemon.log.log('warn', 'stdio protocol error', { err: err.message }));
  rpc.onClose(() => resolveFinished(0));
  input.on('end', () => resolveFinished(0));
  rpc.listen();
  return {
    finished,
    close() {
      bound.release();
    },
  };
}
