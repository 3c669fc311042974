/**
 * Flow control for the daemon's stdin (contract section 13): messages the
 * reader has parsed are handed on only while the host reads its answers and
 * only a bounded number of requests wait unanswered; otherwise they stay
 * here, parsed, and the stream under the reader is paused so the pipe pushes
 * back on the host. The stdio counterpart of the WebSocket reader's holds
 * (ws-message-stream.ts).
 */
import { AbstractMessageReader, type DataCallback, type Disposable, type Message, type MessageReader } from 'vscode-jsonrpc/node';

type Hold = 'backpressure' | 'window';

export class FlowControlledReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  private readonly pending: Message[] = [];
  private readonly holds = new Set<Hold>();
  /** Requests handed on whose response has not been written yet. */
  private unanswered = 0;

  constructor(
    private readonly inner: MessageReader,
    /** The stream the inner reader reads: paused while anything holds delivery. */
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
      this.pending.push(m);
      this.deliver();
    });
    return { dispose: () => { this.callback = undefined; sub.dispose(); } };
  }

  /** Backpressure: while held, stdin is not read and messages already parsed wait here. */
  hold(held: boolean): void {
    this.setHold('backpressure', held);
  }

  /** A response was handed to the writer: one more request may be handed on. */
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
      if (typeof (m as { method?: unknown }).method === 'string' && 'id' in m) {
        if (++this.unanswered >= this.maxUnanswered) this.setHold('window', true);
      }
      this.callback(m);
    }
  }

  override dispose(): void {
    super.dispose();
    this.inner.dispose();
  }
}
