/**
 * What counts as a JSON-RPC 2.0 message the daemon will act on: a request
 * or notification (`method` a string, `id` absent, a string, a finite number
 * or null) or a response. Anything else that parsed as JSON — a batch array,
 * `[]`, `null`, an object or boolean id, a numeric method — is answered
 * -32600 with `id: null` (contract section 13), as on WebSocket.
 */
import {
  AbstractMessageReader,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageReader,
} from 'vscode-jsonrpc/node';

export type Rejection = { code: -32600 | -32700; message: string };

export function invalidReason(m: unknown): string | null {
  if (Array.isArray(m)) return 'batch requests are not supported';
  if (m === null || typeof m !== 'object') return 'not a JSON-RPC message';
  const o = m as Record<string, unknown>;
  const validId = (id: unknown) => id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (o.jsonrpc !== '2.0') return 'invalid JSON-RPC 2.0 message: jsonrpc must be "2.0"';
  if ('id' in o && !validId(o.id)) return 'invalid JSON-RPC 2.0 message: id must be a string, a number or null';
  if (typeof o.method === 'string') return null;
  if (!('method' in o) && 'id' in o && ('result' in o || 'error' in o)) return null;
  return 'invalid JSON-RPC 2.0 message: method must be a string';
}

/**
 * Wraps a reader: messages of the wrong shape, and bodies that are not JSON
 * (vscode-jsonrpc reports those as a SyntaxError), are answered through
 * `reject` instead of reaching the connection, which would only log them.
 */
export class ShapeCheckingReader extends AbstractMessageReader implements MessageReader {
  constructor(
    private readonly inner: MessageReader,
    private readonly reject: (r: Rejection) => void,
  ) {
    super();
    inner.onError((err) => {
      if (err instanceof SyntaxError) reject({ code: -32700, message: 'parse error: invalid JSON' });
      else this.fireError(err);
    });
    inner.onClose(() => this.fireClose());
    inner.onPartialMessage((info) => this.firePartialMessage(info));
  }

  listen(callback: DataCallback): Disposable {
    return this.inner.listen((m: Message) => {
      const reason = invalidReason(m);
      if (reason === null) callback(m);
      else this.reject({ code: -32600, message: reason });
    });
  }

  override dispose(): void {
    super.dispose();
    this.inner.dispose();
  }
}
