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
 *
 * One request at a time per id key: vscode-jsonrpc files a request waiting
 * for dispatch under `String(id)`, and a second one under the same key
 * replaces the first (`1` and `"1"`, `0` and `-0`, `1000` and `1e3`, an id
 * sent twice) — which is then never answered and holds its slot for good. A
 * request whose key is already waiting in the connection waits here until
 * that one is dispatched (the connection's `messageStrategy`, see `connect`).
 */
import {
  AbstractMessageReader,
  createMessageConnection,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageConnection,
  type MessageReader,
  type MessageStrategy,
  type MessageWriter,
} from 'vscode-jsonrpc/node';
import { cancelsNothing } from './message-shape.js';

type Hold = 'backpressure' | 'window';

/**
 * The key vscode-jsonrpc queues a request under until it is dispatched (its connection's
 * `createRequestQueueKey` is `'req-' + id.toString()`), for a request the window counts — a method, and an id
 * its response will carry; undefined for any other message.
 */
function queueKey(m: Message): string | undefined {
  const { method, id } = m as { method?: unknown; id?: unknown };
  return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number') ? String(id) : undefined;
}

export class FlowControlledReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  private readonly pending: Message[] = [];
  private readonly holds = new Set<Hold>();
  /** Requests handed on whose response has not been written yet. */
  private unanswered = 0;
  /** Keys of the requests handed on that the connection has not dispatched yet. */
  private readonly undispatched = new Set<string>();
  /** Markers `dispatched()` queued behind the messages read so far, each with what it resolves. */
  private readonly markers = new Map<Message, () => void>();
  /** Told by the connection as it dispatches each message it queued (see `connect`). */
  private readonly strategy: MessageStrategy = {
    handleMessage: (m, next) => {
      const reached = this.markers.get(m);
      if (reached) {
        this.markers.delete(m);
        return reached();
      }
      const result = next(m);
      const key = queueKey(m);
      if (key !== undefined && this.undispatched.delete(key)) this.deliver();
      return result;
    },
  };

  constructor(
    private readonly inner: MessageReader,
    /** The stream or socket the inner reader reads: paused while anything holds delivery. */
    private readonly source: { pause(): unknown; resume(): unknown },
    private readonly maxUnanswered: number,
    /**
     * The inner reader's close reaches the connection only once every message read before it is dispatched
     * (stdio: the end of stdin is a goodbye behind the host's last requests, which are answered). Off on
     * WebSocket: a closed socket's waiting requests are dropped, and its paused reader would never drain.
     */
    closeAfterDispatch = false,
  ) {
    super();
    inner.onError((err) => this.fireError(err));
    inner.onClose(() => (closeAfterDispatch ? void this.dispatched().then(() => this.fireClose()) : this.fireClose()));
    inner.onPartialMessage((info) => this.firePartialMessage(info));
  }

  /**
   * The connection that reads this reader: vscode-jsonrpc's, told to report each dispatch here. A connection
   * created otherwise never reports one, and a second request of an id would wait for good.
   */
  connect(writer: MessageWriter): MessageConnection {
    return createMessageConnection(this, writer, undefined, { messageStrategy: this.strategy });
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

  /**
   * Resolves once the connection has dispatched every message this reader was handed so far (each request's
   * handler has started): a marker queued behind them, in this reader and then in the connection's own queue,
   * which the connection dispatches one message per tick. Waits while delivery is held.
   */
  dispatched(): Promise<void> {
    return new Promise((resolve) => {
      const marker: Message = { jsonrpc: '2.0' };
      this.markers.set(marker, resolve);
      this.pending.push(marker);
      this.deliver();
    });
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
      const m = this.pending[0]!;
      const key = queueKey(m);
      // Its twin is still queued in the connection: handed on now, it would replace it there.
      if (key !== undefined && this.undispatched.has(key)) return;
      this.pending.shift();
      if (key !== undefined) {
        this.undispatched.add(key);
        if (++this.unanswered >= this.maxUnanswered) this.setHold('window', true);
      }
      // Delivered from a socket's event, a write's callback or a resume: a throw must not escape into
      // them (an uncaught exception ends the daemon). The connection logs it as a protocol error.
      try {
        this.callback(m);
      } catch (err) {
        // Not queued, so never dispatched: its key must not hold back the next request of that id.
        if (key !== undefined) this.undispatched.delete(key);
        this.fireError(err);
      }
    }
  }

  override dispose(): void {
    super.dispose();
    this.inner.dispose();
  }
}
