import type { MessageWriter, ResponseMessage } from 'vscode-jsonrpc/node';
import { DrainingStreamMessageReader } from '../protocol/stream-reader.js';
import { bindConnection } from './bind-connection.js';
import { TrackedWriter } from './tracked-writer.js';
import type { ServeContext } from './serve-context.js';
import type { DispatchDeps } from './dispatcher.js';
import { CoalescingMessageWriter } from './coalescing-writer.js';
import { StdioFrameGuard } from './stdio-frame-guard.js';
import { STRICT_JSON_DECODER, ShapeCheckingReader } from './message-shape.js';
import { RpcErrorCode } from './errors.js';
import { Backpressure } from './backpressure.js';
import { FlowControlledReader } from './flow-controlled-reader.js';

export interface StdioHandle {
  /** Resolves with the exit code once the peer sent `exit` or closed stdin. */
  finished: Promise<number>;
  close(): void;
}

/**
 * Serves JSON-RPC with LSP framing (Content-Length headers) on the given
 * streams. stdout carries protocol only. `exit` after `shutdown` ends with
 * 0, `exit` without it with 1, and stdin end counts as a clean goodbye.
 *
 * A host that stops reading stdout costs bounded memory (contract section
 * 13): past `limits.ws_high_water_bytes` of unsent stdout bytes, stdin is
 * no longer read (the pipe pushes back on the host) and requests already
 * parsed wait; below half of it reading goes on. At most 2 × max_in_flight
 * + 16 requests are handed on unanswered, as on WebSocket. stdio has no
 * peer to drop, so `ws_max_buffered_bytes` does not apply.
 */
export function serveStdio(ctx: ServeContext<DispatchDeps>, input: NodeJS.ReadableStream, output: NodeJS.WritableStream): StdioHandle {
  const { services } = ctx;
  const opts = { ...ctx, maxInFlight: ctx.limits.maxInFlight, maxMessageBytes: ctx.limits.maxMessageBytes };
  let resolveFinished!: (code: number) => void;
  const finished = new Promise<number>((r) => (resolveFinished = r));
  const flow = new Backpressure(ctx.limits.highWaterBytes, Number.POSITIVE_INFINITY);
  const onBuffered = (buffered: number) => {
    switch (flow.update(buffered)) {
      case 'pause':
        services.log.log('info', 'backpressure: stopped reading stdin', { buffered });
        reader.hold(true);
        break;
      case 'resume':
        services.log.log('info', 'backpressure: reading stdin again', { buffered });
        reader.hold(false);
        break;
    }
  };
  const tracked = new TrackedWriter(new CoalescingMessageWriter(output, onBuffered), opts.writes);
  const writer: MessageWriter = {
    onError: tracked.onError,
    onClose: tracked.onClose,
    write(msg) {
      if (!('method' in msg) && 'id' in msg) reader.answered();
      return tracked.write(msg);
    },
    end: () => tracked.end(),
    dispose: () => tracked.dispose(),
  };
  // Contract section 13: what the connection would only log is answered here, `id: null` — past the
  // request window's accounting (flow-controlled-reader.ts): it took no slot, so it frees none.
  const reply = (code: number, message: string) =>
    void tracked.write({ jsonrpc: '2.0', id: null, error: { code, message } } as ResponseMessage).catch(() => {});
  /** The exit code the end of input stops with: 1 once the framing broke, 2 after a JSON line. */
  let endCode = 0;
  const guard = new StdioFrameGuard({
    maxMessageBytes: opts.maxMessageBytes,
    onTooLarge: (declared) => {
      services.log.log('warn', 'stdio message too large; discarding its body', { declared_bytes: declared, limit: opts.maxMessageBytes });
      reply(RpcErrorCode.InvalidRequest, `message too large: ${declared} bytes, limit ${opts.maxMessageBytes}`);
    },
    onFatal: (reason) => {
      services.log.log('error', `stdio framing broken, stopping: ${reason}`);
      // Nothing more is read; the whole frames before the broken header are answered first (their end is
      // the guard's end, which closes the connection as stdin's end does).
      endCode = 1;
      input.unpipe(guard);
      if (!guard.writableEnded) guard.end();
    },
    onJsonLine: () => {
      // Newline-delimited JSON is what people type first: say what the framing is, once, then end (exit 2).
      const hint = 'stdio expects LSP framing (a "Content-Length: N" header, a blank line, then N bytes of JSON) but got a JSON line; newline-delimited JSON is the framing of serve --mcp';
      services.log.log('error', `${hint}; stopping`);
      reply(RpcErrorCode.ParseError, hint);
      // As a broken header: the whole frames before the line are answered first, then the daemon ends.
      endCode = 2;
      input.unpipe(guard);
      if (!guard.writableEnded) guard.end();
    },
  });
  input.pipe(guard);
  // Room for every request in flight plus as many refused past the limit (-32003) before reading stops.
  // Closed behind the last message it read, and that close reaches the connection once each is dispatched:
  // the library decodes a read's frames and dispatches its queue one per tick, and a stop at stdin's end
  // used to leave the requests written just before it unanswered (contract section 2).
  const decoder = new DrainingStreamMessageReader(guard, { charset: 'utf-8', contentTypeDecoder: STRICT_JSON_DECODER });
  const reader = new FlowControlledReader(new ShapeCheckingReader(decoder, (r) => reply(r.code, r.message)), guard, 2 * opts.maxInFlight + 16, true);
  const rpc = reader.connect(writer);
  // The host started this process: the connection is trusted by construction.
  const bound = bindConnection(services, rpc, { id: 'stdio', transport: 'stdio', trusted: true, maxInFlight: opts.maxInFlight, track: opts.track, accepting: opts.accepting });

  rpc.onNotification((method) => {
    if (method === 'exit') resolveFinished(bound.state.shutdownRequested ? 0 : 1);
  });
  rpc.onError(([err]) => services.log.log('warn', 'stdio protocol error', { err: err.message }));
  // The end of input (clean only between frames: the guard reports a stream cut inside one first, as
  // broken framing), or stdout closing. serve then lets the calls in flight finish.
  rpc.onClose(() => resolveFinished(endCode));
  rpc.listen();
  return {
    finished,
    close() {
      bound.release();
    },
  };
}
