/**
 * Contract section 7 on every MCP transport: an error the server sends never
 * repeats a token the client named. The SDK's own answers echo names verbatim
 * (`Tool <name> not found`, `Resource not found: <uri>`, `Prompt <name> not
 * found`, the Skills extension's `skills/get`), and a tool error result may
 * repeat the model's `module`; so every error response and every `isError`
 * tool result passes through the secret scan on its way out (ordinary names
 * stay as they are).
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { scrubCredentials, scrubError } from '../codec/redact.js';

type Transport = Parameters<McpServer['connect']>[0];
type Outgoing = Parameters<Transport['send']>[0];

/** Makes `server` send through a scrubbing view of whatever transport it is connected to. */
export function scrubOutgoingErrors(server: McpServer, secrets: readonly string[]): McpServer {
  const inner = server.server;
  const connect = inner.connect.bind(inner);
  inner.connect = (transport: Transport) => connect(scrubbing(transport, secrets));
  return server;
}

function scrubbing(transport: Transport, secrets: readonly string[]): Transport {
  const send: Transport['send'] = (message, options) => transport.send(scrubMessage(message, secrets), options);
  // A view, not a copy: the SDK sets `onmessage`/`onclose` on it and reads `sessionId` through it.
  return new Proxy(transport, {
    get(target, key) {
      if (key === 'send') return send;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    set: (target, key, value) => Reflect.set(target, key, value, target),
  });
}

function scrubMessage(message: Outgoing, secrets: readonly string[]): Outgoing {
  const m = message as { error?: { code: number; message: string; data?: unknown }; result?: { isError?: unknown } };
  if (m.error && typeof m.error.message === 'string') {
    const error = scrubError(m.error, secrets);
    return error === m.error ? message : ({ ...message, error } as Outgoing);
  }
  if (m.result && m.result.isError === true) return { ...message, result: scrubCredentials(m.result, secrets) } as Outgoing;
  return message;
}
