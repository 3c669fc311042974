/**
 * vscode-jsonrpc reader/writer over a `ws` WebSocket: one JSON-RPC message
 * per text frame (no Content-Length framing). Used by the daemon's /rpc
 * endpoint and by test hosts alike.
 */
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageReader,
  type MessageWriter,
} from 'vscode-jsonrpc/node';
import type WebSocket from 'ws';
import { RpcErrorCode } from './errors.js';
import { envelopeProblem, type RawId } from './message-shape.js';

export interface ReaderLimits {
  /** A frame larger than this is answered with -32600 and dropped; the connection stays. */
  maxMessageBytes: number;
}

/** Best effort: the id of a request we refuse to parse in full, for the error reply. */
function guessId(text: string): RawId {
  const m = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})/.exec(text.slice(0, 4096));
  if (!m) return null;
  try {
    return JSON.parse(m[1]!) as string | number;
  } catch {
    return null;
  }
}

export class WebSocketMessageReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  private readonly pending: Message[] = [];

  constructor(
    private readonly socket: WebSocket,
    private readonly limits: ReaderLimits = { maxMessageBytes: Number.MAX_SAFE_INTEGER },
    /** Invalid frames never reach the connection: they are answered here. */
    private readonly onRejected: (reason: 'parse' | 'invalid' | 'too_large' | 'binary') => void = () => {},
  ) {
    super();
    socket.on('message', (data: WebSocket.RawData, isBinary: boolean) => this.receive(data, isBinary));
    socket.on('close', () => this.fireClose());
    socket.on('error', (err: Error) => this.fireError(err));
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    for (const m of this.pending.splice(0)) callback(m);
    return { dispose: () => (this.callback = undefined) };
  }

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (buffer.length > this.limits.maxMessageBytes) {
      this.onRejected('too_large');
      return this.replyError(guessId(buffer.subarray(0, 4096).toString('utf8')), RpcErrorCode.InvalidRequest,
        `message too large: ${buffer.length} bytes, limit ${this.limits.maxMessageBytes}`);
    }
    if (isBinary) {
      this.onRejected('binary');
      return this.replyError(null, RpcErrorCode.InvalidRequest, 'binary frames are not accepted; send JSON text');
    }
    const text = buffer.toString('utf8');
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.onRejected('parse');
      return this.replyError(null, RpcErrorCode.ParseError, 'parse error: invalid JSON');
    }
    const problem = envelopeProblem(message);
    if (problem) {
      this.onRejected('invalid');
      return this.replyError(problem.id, RpcErrorCode.InvalidRequest, problem.reason);
    }
    const m = message as Message;
    if (this.callback) this.callback(m);
    else this.pending.push(m);
  }

  private replyError(id: RawId, code: number, message: string): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));
  }
}

export interface WriterHooks {
  /** Called after every send with the socket's buffered byte count (backpressure). */
  onBuffered?: (bufferedAmount: number) => void;
}

export class WebSocketMessageWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(
    private readonly socket: WebSocket,
    private readonly hooks: WriterHooks = {},
  ) {
    super();
  }

  write(msg: Message): Promise<void> {
    if (this.socket.readyState !== this.socket.OPEN) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.send(JSON.stringify(msg), (err?: Error) => {
        if (err) this.fireError([err, msg, undefined]);
        this.hooks.onBuffered?.(this.socket.bufferedAmount);
        resolve();
      });
      this.hooks.onBuffered?.(this.socket.bufferedAmount);
    });
  }

  end(): void {}
}
