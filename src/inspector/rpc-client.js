// A tiny JSON-RPC 2.0 client over one WebSocket (one message per text frame), as the toolgate
// daemon speaks it on `ws://HOST:PORT/rpc`.
//
//   const rpc = await RpcClient.connect(`ws://${location.host}/rpc`);
//   const off = rpc.on('tool/result', (params) => …);
//   const result = await rpc.request('initialize', { protocol_version: '1' });
//
// A JSON-RPC error rejects with an `RpcError` that keeps the wire `code`, `message` and `data`.
// Nothing here logs params or results: they can carry credentials (session/open) or user data.

/** Client-side error codes (the JSON-RPC "server error" range is the server's; these stay apart). */
export const CONNECTION_CLOSED = -32099;
export const REQUEST_TIMEOUT = -32098;
export const REQUEST_CANCELLED = -32800;

export class RpcError extends Error {
  /**
   * @param {number} code
   * @param {string} message
   * @param {unknown} [data]
   */
  constructor(code, message, data) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }

  /** `-32602 Invalid params (THREAD_NOT_FOUND)` — for showing to a person. */
  describe() {
    const dataCode = this.data && typeof this.data === 'object' && typeof this.data.code === 'string' ? ` (${this.data.code})` : '';
    return `${this.code} ${this.message}${dataCode}`;
  }
}

export class RpcClient {
  /**
   * Opens the socket and resolves once it is connected.
   * @param {string} url
   * @param {{timeoutMs?: number}} [options]
   * @returns {Promise<RpcClient>}
   */
  static connect(url, options = {}) {
    return new Promise((resolve, reject) => {
      let socket;
      try { socket = new WebSocket(url); } catch (err) { reject(err); return; }
      const timer = setTimeout(() => { socket.close(); reject(new RpcError(CONNECTION_CLOSED, 'Connection timed out')); },
        options.timeoutMs ?? 10_000);
      const onOpen = () => { cleanup(); resolve(new RpcClient(socket)); };
      const onFail = () => { cleanup(); reject(new RpcError(CONNECTION_CLOSED, `Could not connect to ${url}`)); };
      const cleanup = () => {
        clearTimeout(timer);
        socket.removeEventListener('open', onOpen);
        socket.removeEventListener('error', onFail);
        socket.removeEventListener('close', onFail);
      };
      socket.addEventListener('open', onOpen);
      socket.addEventListener('error', onFail);
      socket.addEventListener('close', onFail);
    });
  }

  /** @param {WebSocket} socket an open socket */
  constructor(socket) {
    this.socket = socket;
    this.nextId = 1;
    /** @type {Map<number, {resolve: (v: unknown) => void, reject: (e: unknown) => void, method: string, timer?: ReturnType<typeof setTimeout>}>} */
    this.pending = new Map();
    /** @type {Map<string, Set<(params: any) => void>>} */
    this.listeners = new Map();
    /** @type {Set<(event: {code: number, reason: string}) => void>} */
    this.closeListeners = new Set();
    this.closed = false;
    socket.addEventListener('message', (ev) => this.#onFrame(ev.data));
    socket.addEventListener('close', (ev) => this.#onClose(ev.code, ev.reason));
  }

  /**
   * Sends a request and resolves with its `result`, or rejects with an RpcError.
   * @param {string} method
   * @param {unknown} [params]
   * @param {{timeoutMs?: number, signal?: AbortSignal}} [options]
   */
  request(method, params, options = {}) {
    if (this.closed) return Promise.reject(new RpcError(CONNECTION_CLOSED, 'Connection closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, method };
      if (options.timeoutMs) {
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new RpcError(REQUEST_TIMEOUT, `${method} timed out`));
        }, options.timeoutMs);
      }
      if (options.signal) {
        const onAbort = () => {
          if (!this.pending.has(id)) return;
          this.notify('$/cancelRequest', { id });
        };
        if (options.signal.aborted) queueMicrotask(onAbort);
        else options.signal.addEventListener('abort', onAbort, { once: true });
      }
      this.pending.set(id, entry);
      try {
        this.#send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
      } catch (err) {
        this.pending.delete(id);
        if (entry.timer) clearTimeout(entry.timer);
        reject(err);
      }
    });
  }

  /** Sends a notification (no response). */
  notify(method, params) {
    if (this.closed) return;
    this.#send({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
  }

  /**
   * Listens to a notification method; returns a function that stops listening.
   * @param {string} method
   * @param {(params: any) => void} listener
   */
  on(method, listener) {
    let set = this.listeners.get(method);
    if (!set) { set = new Set(); this.listeners.set(method, set); }
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Called once when the socket closes (after pending requests were rejected). */
  onClose(listener) {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  close() {
    if (!this.closed) this.socket.close(1000, 'client closing');
  }

  #send(message) {
    if (this.socket.readyState !== WebSocket.OPEN) throw new RpcError(CONNECTION_CLOSED, 'Connection closed');
    this.socket.send(JSON.stringify(message));
  }

  #onFrame(data) {
    if (typeof data !== 'string') return;
    let message;
    try { message = JSON.parse(data); } catch { return; }
    for (const m of Array.isArray(message) ? message : [message]) this.#dispatch(m);
  }

  #dispatch(m) {
    if (!m || typeof m !== 'object') return;
    const hasId = m.id !== undefined && m.id !== null;
    if (typeof m.method === 'string') {
      if (hasId) {
        // The inspector serves no requests; say so instead of leaving the server waiting.
        try {
          this.#send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
        } catch { /* socket gone */ }
        return;
      }
      for (const listener of [...(this.listeners.get(m.method) ?? [])]) {
        try { listener(m.params); } catch (err) { queueMicrotask(() => { throw err; }); }
      }
      for (const listener of [...(this.listeners.get('*') ?? [])]) {
        try { listener({ method: m.method, params: m.params }); } catch (err) { queueMicrotask(() => { throw err; }); }
      }
      return;
    }
    if (!hasId) return;
    const entry = this.pending.get(m.id);
    if (!entry) return;
    this.pending.delete(m.id);
    if (entry.timer) clearTimeout(entry.timer);
    if (m.error && typeof m.error === 'object') {
      const code = typeof m.error.code === 'number' ? m.error.code : -32603;
      const message = typeof m.error.message === 'string' ? m.error.message : 'Unknown error';
      entry.reject(new RpcError(code, message, m.error.data));
    } else {
      entry.resolve(m.result);
    }
  }

  #onClose(code, reason) {
    if (this.closed) return;
    this.closed = true;
    for (const [, entry] of this.pending) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.reject(new RpcError(CONNECTION_CLOSED, `Connection closed before ${entry.method} answered`));
    }
    this.pending.clear();
    for (const listener of [...this.closeListeners]) {
      try { listener({ code, reason }); } catch (err) { queueMicrotask(() => { throw err; }); }
    }
  }
}
