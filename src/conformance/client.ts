/**
 * A JSON-RPC client that keeps every message it receives, in order, and
 * validates each one against `schemas/` as it arrives: results by their
 * method's result shape, errors as `RpcError`, `tool/result` as
 * `ToolResultNotification`. What does not match is a violation the report
 * names. Requests are typed by the protocol's `RequestType`s.
 */
import type { RequestType, RequestType0 } from 'vscode-jsonrpc';
import { REQUESTS, NOTIFICATIONS } from '../protocol/methods.js';
import type { RpcError } from '../protocol/errors.js';
import type { RawTransport } from './transport.js';
import type { WireValidator } from './wire-validator.js';

export interface Received {
  /** Arrival order on this connection, from 1. */
  seq: number;
  message: Record<string, unknown>;
}

/** A JSON-RPC error as the protocol declares it. */
export type WireError = RpcError;

export type Outcome<R> =
  | { ok: true; result: R; seq: number }
  | { ok: false; error: WireError; seq: number; /** no response at all (timeout or peer gone) */ missing?: true };

interface Pending {
  method: string;
  resolve: (o: Outcome<unknown>) => void;
}

export class ConformanceClient {
  readonly received: Received[] = [];
  /** What this client sent, each with the number of messages received before it (for a transcript). */
  readonly sent: Array<{ afterSeq: number; message: Record<string, unknown> }> = [];
  readonly violations: string[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private gone: string | undefined;

  constructor(
    readonly transport: RawTransport,
    private readonly validator: WireValidator,
    private readonly timeoutMs: number,
    /** Prefix of this connection's violations in the report (`A`, `B`…). */
    private readonly label: string,
  ) {
    transport.onMessage((m) => this.receive(m));
    transport.onClose((reason) => {
      this.gone = reason;
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.resolve({ ok: false, error: { code: NaN, message: `no response: ${reason}` }, seq: this.received.length, missing: true });
      }
    });
  }

  /** The reason the peer went away, if it did. */
  closedReason(): string | undefined {
    return this.gone;
  }

  call<P, R>(type: RequestType<P, R, void>, params: P): Promise<Outcome<R>>;
  call<R>(type: RequestType0<R, void>): Promise<Outcome<R>>;
  call(type: { method: string }, params?: unknown): Promise<Outcome<unknown>> {
    return this.request(type.method, params);
  }

  /** Any method name, typed or not (the runner also sends what the protocol does not define). */
  request(method: string, params?: unknown): Promise<Outcome<unknown>> {
    const id = this.nextId++;
    return new Promise<Outcome<unknown>>((resolve) => {
      if (this.gone) {
        resolve({ ok: false, error: { code: NaN, message: `no response: ${this.gone}` }, seq: this.received.length, missing: true });
        return;
      }
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        resolve({ ok: false, error: { code: NaN, message: `no response to ${method} within ${this.timeoutMs} ms` }, seq: this.received.length, missing: true });
      }, this.timeoutMs);
      timer.unref?.();
      this.pending.set(id, {
        method,
        resolve: (o) => {
          clearTimeout(timer);
          resolve(o);
        },
      });
      const message = params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
      this.sent.push({ afterSeq: this.received.length, message });
      this.transport.send(message).catch((err: Error) => {
        this.pending.delete(id);
        resolve({ ok: false, error: { code: NaN, message: `cannot send ${method}: ${err.message}` }, seq: this.received.length, missing: true });
      });
    });
  }

  async notify(method: string, params?: unknown): Promise<void> {
    const message = params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    this.sent.push({ afterSeq: this.received.length, message });
    await this.transport.send(message);
  }

  /** Everything sent and received, in order: `[direction, message]` with `->` for sent. */
  transcript(): Array<['->' | '<-', Record<string, unknown>]> {
    const out: Array<['->' | '<-', Record<string, unknown>]> = [];
    let s = 0;
    for (const r of this.received) {
      while (s < this.sent.length && this.sent[s]!.afterSeq < r.seq) out.push(['->', this.sent[s++]!.message]);
      out.push(['<-', r.message]);
    }
    while (s < this.sent.length) out.push(['->', this.sent[s++]!.message]);
    return out;
  }

  /** `tool/result` notifications received after `afterSeq` (exclusive) up to `uptoSeq` (inclusive). */
  toolResults(afterSeq: number, uptoSeq: number = Number.MAX_SAFE_INTEGER): Array<Record<string, unknown> & { seq: number }> {
    return this.received
      .filter((r) => r.seq > afterSeq && r.seq <= uptoSeq && r.message.method === 'tool/result')
      .map((r) => ({ ...(r.message.params as Record<string, unknown>), seq: r.seq }));
  }

  /** Waits until `predicate` holds over what has arrived, or `ms` pass; returns whether it held. */
  async waitFor(predicate: () => boolean, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!predicate()) {
      if (Date.now() > deadline || this.gone) return predicate();
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  private violation(seq: number, text: string): void {
    this.violations.push(`${this.label} message #${seq}: ${text}`);
  }

  private receive(raw: unknown): void {
    const seq = this.received.length + 1;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      this.received.push({ seq, message: {} });
      this.violation(seq, `not a JSON-RPC message object: ${JSON.stringify(raw)?.slice(0, 200)}`);
      return;
    }
    const m = raw as Record<string, unknown>;
    this.received.push({ seq, message: m });
    if (m.jsonrpc !== '2.0') this.violation(seq, 'jsonrpc is not "2.0"');
    if ('method' in m) {
      if ('id' in m) this.violation(seq, `the server sent a request (${String(m.method)}), which the protocol never does`);
      else this.checkNotification(seq, m);
      return;
    }
    const id = m.id;
    const pending = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (!pending) {
      // -32600 with id null answers a message the server could not read; anything else is stray.
      if (id === null && 'error' in m) this.checkShape(seq, 'RpcError', m.error, 'error');
      else this.violation(seq, `a response to no request of ours (id ${JSON.stringify(id)})`);
      return;
    }
    this.pending.delete(id as number);
    if ('error' in m && !('result' in m)) {
      this.checkShape(seq, 'RpcError', m.error, `${pending.method} error`);
      pending.resolve({ ok: false, error: m.error as WireError, seq });
    } else if ('result' in m && !('error' in m)) {
      const spec = (REQUESTS as Record<string, { resultId: string }>)[pending.method];
      if (spec) this.checkShape(seq, spec.resultId, m.result, `${pending.method} result`);
      pending.resolve({ ok: true, result: m.result, seq });
    } else {
      this.violation(seq, `${pending.method}: a response needs exactly one of result and error`);
      pending.resolve({ ok: false, error: { code: NaN, message: 'malformed response' }, seq });
    }
  }

  private checkNotification(seq: number, m: Record<string, unknown>): void {
    const method = String(m.method);
    if (method.startsWith('$/')) return;
    const spec = (NOTIFICATIONS as Record<string, { paramsId: string | null }>)[method];
    if (!spec || method === 'exit') {
      this.violation(seq, `a notification the protocol does not define: ${method}`);
      return;
    }
    if (spec.paramsId) this.checkShape(seq, spec.paramsId, m.params, `${method} params`);
  }

  private checkShape(seq: number, shape: string, value: unknown, what: string): void {
    const errors = this.validator.check(shape, value);
    if (errors.length > 0) this.violation(seq, `${what} does not match ${shape}: ${errors.slice(0, 5).join('; ')}`);
  }
}
