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
import { FlowControlledReader } from './flow-controlled-reader.js';

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

/** A JSON string's closing quote in `text` from its opening one at `from`, or -1 when the text ends first. */
function stringEnd(text: string, from: number): number {
  for (let i = from + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/** An id's value right after its key's colon: a string, or an integer, followed by `,` or `}`. */
const ID_VALUE = /^\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})\s*[,}]/;

/**
 * Best effort: the id of a request we refuse to parse in full, for the error reply — the top-level object's
 * `id` only, read from the first 4 KiB (an `"id"` nested in the params, such as an input's, is another
 * value: taking it answered the wrong request, or a request still pending). Null when it is not there.
 */
function guessId(text: string): RawId {
  const head = text.slice(0, 4096);
  let depth = 0;
  for (let i = 0; i < head.length; i++) {
    const c = head[i];
    if (c === '"') {
      const end = stringEnd(head, i);
      if (end < 0) return null;
      if (depth === 1) {
        let colon = end + 1;
        while (colon < head.length && /\s/.test(head[colon]!)) colon++;
        if (head[colon] === ':' && keyText(head.slice(i, end + 1)) === 'id') {
          const value = ID_VALUE.exec(head.slice(colon + 1))?.[1];
          if (value === undefined) return null;
          try {
            return JSON.parse(value) as string | number;
          } catch {
            return null; // a string id with an escape JSON refuses
          }
        }
      }
      i = end;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return null;
}

/** A key's text (escapes such as `\u0069d` read), or undefined for one JSON cannot read. */
function keyText(quoted: string): string | undefined {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return undefined;
  }
}

/**
 * The frames of one socket as messages: a frame too large, not UTF-8, not
 * JSON or not a JSON-RPC message is answered here (`onRejected`, then the
 * refusal) and never reaches the connection; every other message is handed
 * on at once — holding them is the flow-controlled reader's job.
 */
class WebSocketFrameReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  /** Messages read before `listen`. */
  private readonly early: Message[] = [];

  constructor(
    private readonly socket: WebSocket,
    private readonly maxMessageBytes: number,
    private readonly onRejected: (reason: 'parse' | 'invalid' | 'too_large' | 'binary') => void,
    private readonly onReplied: (bufferedAmount: number) => void,
  ) {
    super();
    socket.on('message', (data: WebSocket.RawData, isBinary: boolean) => this.receive(data, isBinary));
    socket.on('close', () => this.fireClose());
    socket.on('error', (err: Error) => this.fireError(err));
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    for (const m of this.early.splice(0)) callback(m);
    return { dispose: () => (this.callback = undefined) };
  }

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (buffer.length > this.maxMessageBytes) {
      this.onRejected('too_large');
      return this.replyError(guessId(buffer.subarray(0, 4096).toString('utf8')), RpcErrorCode.InvalidRequest,
        `message too large: ${buffer.length} bytes, limit ${this.maxMessageBytes}`);
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
    if (this.callback) this.callback(message as Message);
    else this.early.push(message as Message);
  }

  private replyError(id: RawId, code: number, message: string): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    // Refusals are answers too: a peer that sends bad frames and never reads is paused or dropped like any
    // other (reported after the send and when it completes, as the writer does, so a pause also ends).
    // They take no slot of the window and free none (flow-controlled-reader.ts).
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }), () => this.onReplied(this.socket.bufferedAmount));
    this.onReplied(this.socket.bufferedAmount);
  }
}

/**
 * The daemon's reader of one WebSocket: its frames (WebSocketFrameReader)
 * through the flow-controlled reader stdio uses too — `hold` (backpressure)
 * and `answered` (the request window) pause and resume the socket.
 */
export class WebSocketMessageReader extends FlowControlledReader {
  constructor(
    socket: WebSocket,
    limits: ReaderLimits = { maxMessageBytes: Number.MAX_SAFE_INTEGER, maxUnanswered: Number.MAX_SAFE_INTEGER },
    /** Invalid frames never reach the connection: they are answered here. */
    onRejected: (reason: 'parse' | 'invalid' | 'too_large' | 'binary') => void = () => {},
    /** Called after each refusal the reader sends itself, with the socket's unsent bytes (the writer's backpressure). */
    onReplied: (bufferedAmount: number) => void = () => {},
  ) {
    super(new WebSocketFrameReader(socket, limits.maxMessageBytes, onRejected, onReplied), socket, limits.maxUnanswered);
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
