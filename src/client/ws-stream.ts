/**
 * vscode-jsonrpc's reader and writer over a `ws` WebSocket, client side:
 * one JSON-RPC message per text frame, no Content-Length framing.
 *
 * Deliberately smaller than the daemon's own (src/rpc/ws-message-stream.ts),
 * which also answers malformed frames: a client only has to read what a
 * conforming daemon sends, and a frame that is not JSON is reported as an
 * error of the connection rather than answered.
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

export class ClientWebSocketReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  /** Frames that arrive before `listen` are kept, in order. */
  private readonly pending: Message[] = [];

  constructor(socket: WebSocket) {
    super();
    socket.on('message', (data: WebSocket.RawData) => {
      const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8');
      let message: Message;
      try {
        message = JSON.parse(text) as Message;
      } catch {
        this.fireError(new Error(`the daemon sent a frame that is not JSON (${text.length} characters)`));
        return;
      }
      if (this.callback) this.callback(message);
      else this.pending.push(message);
    });
    socket.on('close', () => this.fireClose());
    socket.on('error', (err: Error) => this.fireError(err));
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    for (const m of this.pending.splice(0)) callback(m);
    return { dispose: () => (this.callback = undefined) };
  }
}

export class ClientWebSocketWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(private readonly socket: WebSocket) {
    super();
  }

  write(message: Message): Promise<void> {
    if (this.socket.readyState !== this.socket.OPEN) return Promise.reject(new Error('the WebSocket is not open'));
    return new Promise((resolve, reject) => {
      this.socket.send(JSON.stringify(message), (err?: Error) => {
        if (err) {
          this.fireError([err, message, undefined]);
          reject(err);
        } else resolve();
      });
    });
  }

  end(): void {}
}
