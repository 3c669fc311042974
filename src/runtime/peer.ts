import type { ToolApprovalNotification } from '../protocol/methods.js';

/**
 * What a daemon service needs of the client a call came from — nothing of
 * how it is connected. Sessions and subscriptions are bound to `id`, a
 * trusted peer may open automation sessions, and `notify` sends it a
 * notification (`tool/result`). The transports' connections (src/rpc/connection.ts)
 * are peers; the daemon never imports them, so the dependency points one way.
 */
export interface Peer {
  /** Unique per live connection (stdio, one WebSocket, one MCP call). */
  readonly id: string;
  /** Trusted connections may open automation sessions (stdio always is). */
  trusted: boolean;
  notify(method: string, params: unknown): void;
  /**
   * A client that asks its own user (an MCP host that declared elicitation):
   * given a call that now awaits approval, returns true to have the request
   * end at once with `HostAsked` rather than wait — the host answers in a
   * new request. Absent or false: the request waits for the decision.
   */
  askHost?(notification: ToolApprovalNotification): boolean;
}

/**
 * The request of a call awaiting approval ended so that its host may ask its
 * user (`Peer.askHost`): the call stays pending, and nothing else happened.
 */
export class HostAsked extends Error {
  override name = 'HostAsked';
  /** How telemetry counts this end of the request: no error, the call awaits approval. */
  readonly toolStatus = 'awaiting_approval';
  constructor(readonly notification: ToolApprovalNotification) {
    super('the host asks its user to decide on the call');
  }
}

/** Params registered as shared: null until the first transport serializes them. */
const sharedTexts = new WeakMap<object, string | null>();

/**
 * Marks notification params that go to many peers (a stored tool message's
 * `tool/result`s reach the caller, every subscriber, on every transport):
 * whichever transport writes them first serializes them, and every other
 * write reuses that text (`sharedParamsText`). The object must not change
 * afterwards — shared values are never mutated.
 */
export function shareParams<T extends object>(params: T): T {
  if (!sharedTexts.has(params)) sharedTexts.set(params, null);
  return params;
}

/** The JSON text of shared params (serialized on first use, then reused); undefined for params not shared. */
export function sharedParamsText(params: unknown): string | undefined {
  if (params === null || typeof params !== 'object') return undefined;
  const text = sharedTexts.get(params);
  if (text === undefined) return undefined;
  if (text !== null) return text;
  const serialized = JSON.stringify(params);
  sharedTexts.set(params, serialized);
  return serialized;
}
