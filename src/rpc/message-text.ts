/**
 * The JSON text of one outgoing JSON-RPC message, as every writer of the
 * daemon's transports produces it (stdio's framer, WebSocket frames). A
 * notification whose params are shared (`shareParams`, src/runtime/peer.ts:
 * the `tool/result`s of one stored message, sent to the caller and to every
 * subscriber) reuses the params' text serialized by the first write; the
 * bytes are exactly `JSON.stringify(message)`'s — vscode-jsonrpc builds a
 * notification as `{jsonrpc, method, params}`, in that order.
 */
import type { Message } from 'vscode-jsonrpc/node';
import { sharedParamsText } from '../runtime/peer.js';

export function messageText(msg: Message): string {
  const m = msg as { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown };
  if (typeof m.method === 'string' && m.id === undefined) {
    const params = sharedParamsText(m.params);
    if (params !== undefined && m.jsonrpc === '2.0' && isPlainNotification(m)) return `${envelopeOf(m.method)}${params}}`;
  }
  return JSON.stringify(msg);
}

/** Exactly `{jsonrpc, method, params}`, in that order (what JSON.stringify would write). */
function isPlainNotification(m: object): boolean {
  const keys = Object.keys(m);
  return keys.length === 3 && keys[0] === 'jsonrpc' && keys[1] === 'method' && keys[2] === 'params';
}

/** `{"jsonrpc":"2.0","method":…,"params":` per method name (the daemon sends a handful). */
const envelopes = new Map<string, string>();

function envelopeOf(method: string): string {
  let text = envelopes.get(method);
  if (text === undefined) {
    text = `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":`;
    if (envelopes.size < 64) envelopes.set(method, text);
  }
  return text;
}
