/**
 * vscode-jsonrpc reader/writer over a `ws` WebSocket: one JSON-RPC message
 * per frame (no Content-Length framing) — a text frame, or a binary frame
 * holding UTF-8 JSON; answers are always text frames. Used by the daemon's /rpc
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
import { messageText } from './message-text.js';
import { envelopeProblem, type RawId } from './message-shape.js';

export interface ReaderLimits {
  /** A frame larger than this is answered with -32600 and dropped; the connection stays. */
  maxMessageBytes: number;
  /**
   * Requests handed on and not answered yet before the reader stops reading
   * (until `answered()`): a burst of requests read in one go would otherwise
   * all become pending work at once, whatever the peer reads.
   */
  maxUnanswered: number;
}

/** Throws on a byte sequence that is not UTF-8 instead of replacing it with U+FFFD. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

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
    private readonly limits: ReaderLimits = { maxMessageBytes: Number.MAX_SAFE_INTEGER, maxUnanswered: Number.MAX_SAFE_INTEGER },
    /** Invalid frames never reach the connection: they are answered here. */
    private readonly onRejected: (reason: 'parse' | 'invalid' | 'too_large' | 'binary') => void = () => {},
    /** Called after each refusal the reader sends itself, with the socket's unsent bytes (the writer's backpressure). */
    private readonly onReplied: (bufferedAmount: number) => void = () => {},
  ) {
    super();
    socket.on('message', (data: WebSocket.RawData, isBinary: boolean) => this.receive(data, isBinary));
    socket.on('close', () => this.fireClose());
    socket.on('error', (err: Error) => this.fireError(err));
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    this.deliver();
    return { dispose: () => (this.callback = undefined) };
  }

  /** Why delivery (and the socket's reading) is stopped: the peer's unsent answers, or too many unanswered requests. */
  private readonly holds = new Set<'backpressure' | 'window'>();
  /** Requests handed on whose response has not been written yet. */
  private unanswered = 0;

  /**
   * Backpressure: while held, the socket is not read and messages already
   * read from it are kept here (parsed, a few hundred bytes each) instead of
   * becoming requests whose answers could not be sent; `hold(false)` hands
   * them on in order.
   */
  hold(held: boolean): void {
    this.setHold('backpressure', held);
  }

  /** A response left for the peer (the writer says so): one more request may be handed on. */
  answered(): void {
    if (this.unanswered > 0) this.unanswered--;
    if (this.unanswered < this.limits.maxUnanswered) this.setHold('window', false);
  }

  private setHold(reason: 'backpressure' | 'window', on: boolean): void {
    const before = this.holds.size;
    if (on) this.holds.add(reason);
    else this.holds.delete(reason);
    if (before === 0 && this.holds.size > 0) this.socket.pause();
    if (before > 0 && this.holds.size === 0) {
      this.deliver();
      if (this.holds.size === 0) this.socket.resume();
    }
  }

  private deliver(): void {
    while (this.callback && this.holds.size === 0 && this.pending.length > 0) this.handOn(this.pending.shift()!);
  }

  private handOn(m: Message): void {
    if (typeof (m as { method?: unknown }).method === 'string' && 'id' in m) {
      // A request: at most `maxUnanswered` wait for their responses; the next ones stay parsed here.
      if (++this.unanswered >= this.limits.maxUnanswered) this.setHold('window', true);
    }
    this.callback!(m);
  }

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (buffer.length > this.limits.maxMessageBytes) {
      this.onRejected('too_large');
      return this.replyError(guessId(buffer.subarray(0, 4096).toString('utf8')), RpcErrorCode.InvalidRequest,
        `message too large: ${buffer.length} bytes, limit ${this.limits.maxMessageBytes}`);
    }
    // A binary frame holding UTF-8 JSON (pygls' start_ws sends those) is read like a text frame;
    // `ws` has already checked a text frame's UTF-8, a binary frame's is checked here.
    let text: string;
    try {
      text = isBinary ? STRICT_UTF8.decode(buffer) : buffer.toString('utf8');
    } catch {
      this.onRejected('binary');
      return this.replyError(null, RpcErrorCode.ParseError, 'parse error: a binary frame must hold UTF-8 JSON');
    }
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
    if (this.callback && this.holds.size === 0 && this.pending.length === 0) this.handOn(m);
    else this.pending.push(m);
  }

  private replyError(id: RawId, code: number, message: string): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    // Refusals are answers too: a peer that sends bad frames and never reads is paused or dropped like any
    // other (reported after the send and when it completes, as the writer does, so a pause also ends).
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }), () => this.onReplied(this.socket.bufferedAmount));
    this.onReplied(this.socket.bufferedAmount);
  }
}

export interface WriterHooks {
  /** Called after every send with the socket's buffered byte count (backpressure). */
  onBuffered?: (bufferedAmount: number) => void;
  /** Called when a response (not a request or notification) is handed to the socket. */
  onResponse?: () => void;
}

export class WebSocketMessageWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(
    private readonly socket: WebSocket,
    private readonly hooks: WriterHooks = {},
  ) {
    super();
  }

  write(msg: Message): Promise<void> {
    if (!('method' in msg) && 'id' in msg) this.hooks.onResponse?.();
    if (this.socket.readyState !== this.socket.OPEN) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.send(messageText(msg), (err?: Error) => {
        if (err) this.fireError([err, msg, undefined]);
        this.hooks.onBuffered?.(this.socket.bufferedAmount);
        resolve();
      });
      this.hooks.onBuffered?.(this.socket.bufferedAmount);
    });
  }

  end(): void {}
}
