/**
 * A connection whose reader's close comes after the reader's last message.
 * vscode-jsonrpc's connection reports its reader's close at once, while the
 * messages read just before it still wait in the connection's queue,
 * dispatched one per tick: a host that let go of the connection on that
 * close (disposed it, which rejects every pending request) lost the answers
 * and notifications a daemon wrote just before its output ended or it
 * exited. Here the reader's close is queued behind those messages as a
 * marker, and reported when the connection dispatches that marker.
 */
import {
  AbstractMessageReader,
  createMessageConnection,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageConnection,
  type MessageReader,
  type MessageWriter,
} from 'vscode-jsonrpc/node';

/** The reader the connection reads: the inner reader's messages, then (once it closed) the marker. */
class CloseBehindMessages extends AbstractMessageReader {
  readonly marker: Message = { jsonrpc: '2.0' };
  private callback: DataCallback | undefined;
  private closed = false;

  constructor(private readonly inner: MessageReader) {
    super();
    inner.onError((err) => this.fireError(err));
    inner.onPartialMessage((info) => this.firePartialMessage(info));
    inner.onClose(() => {
      this.closed = true;
      this.callback?.(this.marker);
    });
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const sub = this.inner.listen(callback);
    if (this.closed) callback(this.marker);
    return { dispose: () => { this.callback = undefined; sub.dispose(); } };
  }

  /** The connection dispatched the marker: every message read before the close is handled. */
  reached(): void {
    this.fireClose();
  }

  override dispose(): void {
    super.dispose();
    this.inner.dispose();
  }
}

export interface OrderedConnection {
  connection: MessageConnection;
  /** Resolves once the reader has closed and every message it read is dispatched (each answer resolved, each notification handled). */
  readerClosed: Promise<void>;
}

/** `createMessageConnection(reader, writer)`, with the reader's close reported behind the messages read before it. */
export function connectClosingAfterDispatch(reader: MessageReader, writer: MessageWriter): OrderedConnection {
  const behind = new CloseBehindMessages(reader);
  const readerClosed = new Promise<void>((resolve) => behind.onClose(() => resolve()));
  const connection = createMessageConnection(behind, writer, undefined, {
    messageStrategy: { handleMessage: (m, next) => (m === behind.marker ? behind.reached() : next(m)) },
  });
  return { connection, readerClosed };
}
