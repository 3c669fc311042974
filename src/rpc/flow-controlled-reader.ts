/**
 * Flow control for one connection's incoming messages, on every transport
 * the daemon reads itself (stdio, WebSocket; contract section 13): messages
 * the inner reader has parsed are handed on only while the peer reads its
 * answers and only a bounded number of requests wait unanswered; otherwise
 * they stay here, parsed, and the source under the reader is paused so the
 * pipe or socket pushes back on the peer.
 *
 * The window's accounting, one rule for every transport: a slot is taken by
 * each request handed on (a `method` and an `id` — a string or a number: the
 * envelope check answers an `id: null` request itself, message-shape.ts) and
 * freed by the response to it (`answered()`). A refusal the transport sends
 * on its own (bad JSON, a bad envelope, a frame too large) neither takes nor
 * frees one, so no sequence of messages can hold the window shut.
 */
import { AbstractMessageReader, type DataCallback, type Disposable, type Message, type MessageReader } from 'vscode-jsonrpc/node';
import { cancelsNothing } from './message-shape.js';

type Hold = 'backpressure' | 'window';

/** A request the window counts: a method, and an id its response will carry. */
function takesSlot(m: Message): boolean {
  const { method, id } = m as { method?: unknown; id?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number');
}

export class FlowControlledReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  private readonly pending: Message[] = [];
  private readonly holds = new Set<Hold>();
  /** Requests handed on whose response has not been written yet. */
  private unanswered = 0;

  constructor(
    private readonly inner: MessageReader,
    /** The stream or socket the inner reader reads: paused while anything holds delivery. */
    private readonly source: { pause(): unknown; resume(): unknown },
    private readonly maxUnanswered: number,
  ) {
    super();
    inner.onError((err) => this.fireError(err));
    inner.onClose(() => this.fireClose());
    inner.onPartialMessage((info) => this.firePartialMessage(info));
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const sub = this.inner.listen((m) => {
      // Dropped here, on every transport: the connection would throw reading it (message-shape.ts).
      if (cancelsNothing(m)) return;
      this.pending.push(m);
      this.deliver();
    });
    this.deliver();
    return { dispose: () => { this.callback = undefined; sub.dispose(); } };
  }

  /** Backpressure: while held, the source is not read and messages already parsed wait here. */
  hold(held: boolean): void {
    this.setHold('backpressure', held);
  }

  /**
   * The response to a request handed on was handed to the writer: one more
   * request may be handed on. Called for those responses only — never for a
   * refusal the transport sent itself.
   */
  answered(): void {
    if (this.unanswered > 0) this.unanswered--;
    if (this.unanswered < this.maxUnanswered) this.setHold('window', false);
  }

  private setHold(reason: Hold, on: boolean): void {
    const before = this.holds.size;
    if (on) this.holds.add(reason);
    else this.holds.delete(reason);
    if (before === 0 && this.holds.size > 0) this.source.pause();
    if (before > 0 && this.holds.size === 0) {
      this.deliver();
      if (this.holds.size === 0) this.source.resume();
    }
  }

  private deliver(): void {
    while (this.callback && this.holds.size === 0 && this.pending.length > 0) {
      const m = this.pending.shift()!;
      if (takesSlot(m) && ++this.unanswered >= this.maxUnanswered) this.setHold('window', true);
      // Delivered from a socket's event, a write's callback or a resume: a throw must not escape into
      // them (an uncaught exception ends the daemon). The connection logs it as a protocol error.
      try {
        this.callback(m);
      } catch (err) {
        this.fireError(err);
      }
    }
  }

  override dispose(): void {
    super.dispose();
    this.inner.dispose();
  }
}
