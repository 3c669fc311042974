/**
 * The one JSON-RPC 2.0 envelope check, for every transport the daemon reads
 * itself (stdio, WebSocket, `serve --mcp` stdio; `/mcp` over HTTP is the MCP
 * SDK's, which answers a bad body itself). A message the daemon acts on is a
 * request or notification (`method` a string, `id` absent, a string or a
 * finite number) or a response (`id` a string, a number or null). Anything
 * else that parsed as JSON — a batch array, `[]`, `null`, an object or
 * boolean id, a request with `id: null`, a numeric method — is answered
 * -32600 (contract sections 13 and 21).
 */
import {
  AbstractMessageReader,
  type ContentTypeDecoder,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageReader,
} from 'vscode-jsonrpc/node';
import { isUtf8 } from 'node:buffer';

export type Rejection = { code: -32600 | -32700; message: string };

export type RawId = string | number | null;

/** Why a parsed value is not a JSON-RPC message the daemon acts on. */
export interface EnvelopeProblem {
  reason: string;
  /** The message's own id when it is a valid one (WebSocket answers with it), else null. */
  id: RawId;
  /** It has no `method` but a `result` or `error`: a malformed response, which JSON-RPC forbids answering. */
  response: boolean;
}

export const isValidId = (id: unknown): id is RawId => id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));

/** Null when `m` is a JSON-RPC 2.0 request, notification or response; else what is wrong with it. */
export function envelopeProblem(m: unknown): EnvelopeProblem | null {
  if (Array.isArray(m)) return { reason: 'batch requests are not supported', id: null, response: false };
  if (m === null || typeof m !== 'object') return { reason: 'not a JSON-RPC message', id: null, response: false };
  const o = m as Record<string, unknown>;
  const id = isValidId(o.id) ? o.id : null;
  const response = !('method' in o) && ('result' in o || 'error' in o);
  const problem = (reason: string): EnvelopeProblem => ({ reason: `invalid JSON-RPC 2.0 message: ${reason}`, id, response });
  if (o.jsonrpc !== '2.0') return problem('jsonrpc must be "2.0"');
  if ('id' in o && !isValidId(o.id)) return problem('id must be a string, a number or null');
  // A request with `id: null` could never be told from the refusals answered `id: null`: it is one of them.
  if (typeof o.method === 'string' && o.id === null) return problem('a request id must be a string or a number, not null');
  if (typeof o.method === 'string') return null;
  if (response && 'id' in o) return null;
  return problem('method must be a string');
}

/**
 * A `$/cancelRequest` that can name no request: params missing or not an
 * object, or an `id` that is not a string or a finite number. vscode-jsonrpc
 * reads `params.id` of every cancel as it arrives and throws on these — on
 * WebSocket out of the socket's event handler, which ended the daemon. A
 * notification is never answered: such a cancel is dropped, as a cancel of an
 * unknown request is ignored.
 */
export function cancelsNothing(m: unknown): boolean {
  const o = m as { method?: unknown; id?: unknown; params?: unknown };
  if (o.method !== '$/cancelRequest' || 'id' in o) return false;
  const params = o.params;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return true;
  const id = (params as { id?: unknown }).id;
  return !(typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)));
}

/** The reason only (stdio answers `id: null` whatever the message held). */
function invalidReason(m: unknown): string | null {
  return envelopeProblem(m)?.reason ?? null;
}

/** A frame's body that is not UTF-8 (a stray byte, a surrogate's bytes): refused like one that is not JSON. */
export class BodyNotUtf8Error extends SyntaxError {
  constructor() {
    super('parse error: the body is not UTF-8');
  }
}

/**
 * vscode-jsonrpc's JSON decoding, strict about UTF-8: the library's own decodes with replacement, so a stray
 * byte reached the daemon as U+FFFD and was stored rewritten (contract section 21: text is stored as written
 * or refused). WebSocket frames are checked the same way (ws-message-stream.ts).
 */
export const STRICT_JSON_DECODER: ContentTypeDecoder = {
  name: 'application/json',
  decode(buffer: Uint8Array): Promise<Message> {
    try {
      if (!isUtf8(buffer)) return Promise.reject(new BodyNotUtf8Error());
      // Whatever JSON it is: ShapeCheckingReader refuses a body that is no JSON-RPC message.
      return Promise.resolve(JSON.parse(Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength).toString('utf8')) as Message);
    } catch (err) {
      return Promise.reject(err);
    }
  },
};

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
      if (err instanceof SyntaxError) reject({ code: -32700, message: err instanceof BodyNotUtf8Error ? err.message : 'parse error: invalid JSON' });
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
