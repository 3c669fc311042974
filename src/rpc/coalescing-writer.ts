/**
 * A stdio MessageWriter that hands the stream one write per burst of messages.
 *
 * vscode-jsonrpc's StreamMessageWriter frames each message (Content-Length
 * header, body) and writes the header and the body separately, the body only
 * after the header's write has completed; messages queue behind each other in
 * the same way. A call's `tool/result` notifications and its response are
 * sent together (contract §4: after the commit, "in one burst"), so they cost
 * 2 × (notifications + 1) writes and as many reads at the host.
 *
 * Here vscode-jsonrpc still does all the framing, into a memory sink that
 * accepts every chunk at once; when every message handed to this writer has
 * been framed, the sink's bytes go to the real stream in one `write`. Each
 * message's promise settles when the write that carries it has completed, so
 * shutdown's "wait for the last responses to leave" still means the bytes left.
 */
import { Writable } from 'node:stream';
import { messageText } from './message-text.js';
import { Emitter, StreamMessageWriter, type Disposable, type Message, type MessageWriter } from 'vscode-jsonrpc/node';

export class CoalescingMessageWriter implements MessageWriter {
  private readonly framer: StreamMessageWriter;
  private readonly sink: Writable;
  private chunks: Buffer[] = [];
  /** Messages handed to `write` whose framing has not finished yet. */
  private framing = 0;
  /** Settles once the bytes framed so far have been written to the stream. */
  private flushed: Promise<void> | undefined;
  private settleFlush: ((err?: Error | null) => void) | undefined;
  private readonly errors = new Emitter<[Error, Message | undefined, number | undefined]>();
  private readonly closes = new Emitter<void>();

  /**
   * `onBuffered` hears the stream's unsent byte count (`writableLength`)
   * after each write is handed to it, each write's completion and each
   * 'drain': the transport's flow control (backpressure.ts) decides on it.
   */
  constructor(
    private readonly output: NodeJS.WritableStream,
    private readonly onBuffered?: (bytes: number) => void,
  ) {
    this.sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        this.chunks.push(chunk);
        done();
      },
    });
    // vscode-jsonrpc's own encoder is JSON.stringify; this one reuses shared notification text (message-text.ts).
    this.framer = new StreamMessageWriter(this.sink, {
      charset: 'utf-8',
      contentTypeEncoder: { name: 'application/json', encode: (msg) => Promise.resolve(Buffer.from(messageText(msg), 'utf8')) },
    });
    this.framer.onError((e) => this.errors.fire(e));
    output.on('error', (err: Error) => this.errors.fire([err, undefined, undefined]));
    output.on('close', () => this.closes.fire());
    if (onBuffered) output.on('drain', () => onBuffered(this.unsent()));
  }

  get onError() {
    return this.errors.event;
  }

  get onClose() {
    return this.closes.event;
  }

  write(msg: Message): Promise<void> {
    this.framing++;
    // The promise of the flush this message will be part of (made before any framing can finish).
    let flushed = this.flushed;
    if (!flushed) {
      flushed = this.flushed = new Promise<void>((resolve, reject) => {
        this.settleFlush = (err) => (err ? reject(err) : resolve());
      });
      // Each message's own promise reports a failed write; this one must not count as unhandled.
      flushed.catch(() => {});
    }
    const framed = this.framer.write(msg).finally(() => {
      if (--this.framing === 0) this.flush();
    });
    return framed.then(() => flushed);
  }

  /** Everything framed so far, in one write. */
  private flush(): void {
    const settle = this.settleFlush;
    this.flushed = undefined;
    this.settleFlush = undefined;
    if (this.chunks.length === 0) return settle?.();
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    try {
      this.output.write(bytes, (err?: Error | null) => {
        settle?.(err);
        this.onBuffered?.(this.unsent());
      });
      this.onBuffered?.(this.unsent());
    } catch (err) {
      settle?.(err as Error);
    }
  }

  private unsent(): number {
    return (this.output as Partial<{ writableLength: number }>).writableLength ?? 0;
  }

  end(): void {
    this.output.end();
  }

  dispose(): void {
    (this.framer as Partial<Disposable>).dispose?.();
    this.errors.dispose();
    this.closes.dispose();
  }
}
