/**
 * A small JSON-RPC 2.0 client over one WebSocket (one message per text
 * frame), as the daemon speaks it on `ws://HOST:PORT/rpc`.
 *
 *   const rpc = await RpcClient.connect(`ws://${location.host}/rpc`);
 *   const off = rpc.on('tool/result', (params) => …);
 *   const result = await rpc.request('initialize', { protocol_version: '1' });
 *
 * A JSON-RPC error rejects with an `RpcError` that keeps the wire `code`,
 * `message` and `data`. Nothing here logs params or results: they can carry
 * credentials (session/open) or user data.
 */
import { RpcErrorCode } from '../protocol/errors.js';

/** Client-side failures, kept apart from the codes a server sends. */
export const CONNECTION_CLOSED = -32099;
export const REQUEST_TIMEOUT = -32098;

export class RpcError extends Error {
  override name = 'RpcError';

  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  /** `data.code` of a -32602 (`THREAD_NOT_FOUND`, …), if any. */
  get dataCode(): string | undefined {
    const d = this.data as { code?: unknown } | undefined;
    return typeof d?.code === 'string' ? d.code : undefined;
  }

  /** `-32602 Invalid params (THREAD_NOT_FOUND)`, for showing to a person. */
  describe(): string {
    return `${this.code} ${this.message}${this.dataCode ? ` (${this.dataCode})` : ''}`;
  }

  /** The server refused the bearer token or the session (not a transport problem). */
  get unauthorized(): boolean {
    return this.code === RpcErrorCode.Unauthorized;
  }
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  method: string;
  timer?: ReturnType<typeof setTimeout>;
}

export interface RequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

type Listener = (params: unknown) => void;

export class RpcClient {
  /** Opens the socket and resolves once it is connected. */
  static connect(url: string, options: { timeoutMs?: number } = {}): Promise<RpcClient> {
    return new Promise((resolve, reject) => {
      let socket: WebSocket;
      try {
        socket = new WebSocket(url);
      } catch (err) {
        reject(err);
        return;
      }
      const timer = setTimeout(() => {
        socket.close();
        reject(new RpcError(CONNECTION_CLOSED, 'Connection timed out'));
      }, options.timeoutMs ?? 10_000);
      const cleanup = () => {
        clearTimeout(timer);
        socket.removeEventListener('open', onOpen);
        socket.removeEventListener('error', onFail);
        socket.removeEventListener('close', onFail);
      };
      const onOpen = () => {
        cleanup();
        resolve(new RpcClient(socket));
      };
      const onFail = () => {
        cleanup();
        reject(new RpcError(CONNECTION_CLOSED, `Could not connect to ${url}`));
      };
      socket.addEventListener('open', onOpen);
      socket.addEventListener('error', onFail);
      socket.addEventListener('close', onFail);
    });
  }

  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly closeListeners = new Set<(event: { code: number; reason: string }) => void>();
  closed = false;

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (ev) => this.onFrame(ev.data));
    socket.addEventListener('close', (ev) => this.onSocketClose(ev.code, ev.reason));
  }

  /** Sends a request and resolves with its `result`, or rejects with an RpcError. */
  request<T = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new RpcError(CONNECTION_CLOSED, 'Connection closed'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { resolve: resolve as (v: unknown) => void, reject, method };
      if (options.timeoutMs) {
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new RpcError(REQUEST_TIMEOUT, `${method} timed out`));
        }, options.timeoutMs);
      }
      if (options.signal) {
        const onAbort = () => {
          if (this.pending.has(id)) this.notify('$/cancelRequest', { id });
        };
        if (options.signal.aborted) queueMicrotask(onAbort);
        else options.signal.addEventListener('abort', onAbort, { once: true });
      }
      this.pending.set(id, entry);
      try {
        this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
      } catch (err) {
        this.pending.delete(id);
        if (entry.timer) clearTimeout(entry.timer);
        reject(err);
      }
    });
  }

  /** Sends a notification (no response). */
  notify(method: string, params?: unknown): void {
    if (this.closed) return;
    this.send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /** Listens to a notification method; returns the function that stops listening. */
  on(method: string, listener: Listener): () => void {
    let set = this.listeners.get(method);
    if (!set) this.listeners.set(method, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Called once when the socket closes (after pending requests were rejected). */
  onClose(listener: (event: { code: number; reason: string }) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  close(): void {
    if (!this.closed) this.socket.close(1000, 'client closing');
  }

  private send(message: unknown): void {
    if (this.socket.readyState !== WebSocket.OPEN) throw new RpcError(CONNECTION_CLOSED, 'Connection closed');
    this.socket.send(JSON.stringify(message));
  }

  private onFrame(data: unknown): void {
    if (typeof data !== 'string') return;
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      return;
    }
    for (const m of Array.isArray(message) ? message : [message]) this.dispatch(m);
  }

  private dispatch(m: unknown): void {
    if (!m || typeof m !== 'object') return;
    const msg = m as { id?: number | string | null; method?: unknown; params?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    const hasId = msg.id !== undefined && msg.id !== null;
    if (typeof msg.method === 'string') {
      if (hasId) {
        // The inspector serves no requests; say so instead of leaving the server waiting.
        try {
          this.send({ jsonrpc: '2.0', id: msg.id, error: { code: RpcErrorCode.MethodNotFound, message: `Method not found: ${msg.method}` } });
        } catch {
          /* socket gone */
        }
        return;
      }
      for (const listener of [...(this.listeners.get(msg.method) ?? [])]) {
        try {
          listener(msg.params);
        } catch (err) {
          queueMicrotask(() => {
            throw err;
          });
        }
      }
      return;
    }
    if (!hasId || typeof msg.id !== 'number') return;
    const entry = this.pending.get(msg.id);
    if (!entry) return;
    this.pending.delete(msg.id);
    if (entry.timer) clearTimeout(entry.timer);
    if (msg.error && typeof msg.error === 'object') {
      const code = typeof msg.error.code === 'number' ? msg.error.code : RpcErrorCode.InternalError;
      const message = typeof msg.error.message === 'string' ? msg.error.message : 'Unknown error';
      entry.reject(new RpcError(code, message, msg.error.data));
    } else {
      entry.resolve(msg.result);
    }
  }

  private onSocketClose(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.pending.values()) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.reject(new RpcError(CONNECTION_CLOSED, `Connection closed before ${entry.method} answered`));
    }
    this.pending.clear();
    for (const listener of [...this.closeListeners]) {
      try {
        listener({ code, reason });
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}

/** An error as a person reads it. */
export function describeError(err: unknown): string {
  if (err instanceof RpcError) return err.describe();
  return err instanceof Error ? err.message : String(err);
}
