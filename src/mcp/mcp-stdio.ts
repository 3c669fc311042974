/**
 * `serve --mcp`: the MCP server on stdio (newline-delimited JSON-RPC), via
 * the SDK's `serveStdio`, which tells a 2025-era `initialize` opening from a
 * 2026-07-28 one and pins one server instance per connection. The streams
 * are injectable so tests can run it in process.
 */
import type { Readable, Writable } from 'node:stream';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { parseJSONRPCMessage, type JSONRPCMessage } from '@modelcontextprotocol/server';
import type { StdioPrincipal } from './mcp-session.js';
import { buildMcpServer, type McpServerDeps } from './mcp-server.js';
import { SkillCatalogs } from './mcp-skills.js';
import type { ServeContext } from '../rpc/serve-context.js';
import { McpLineGuard } from './mcp-line-guard.js';
import { RpcErrorCode } from '../rpc/errors.js';
import { envelopeProblem, type EnvelopeProblem } from '../rpc/message-shape.js';

export interface McpHandle {
  /** Resolves when the client closes stdin (or the streams fail). */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** What only `serve --mcp` adds to the serve context (`limits.max_message_bytes` is the longest line read). */
export interface McpStdioOptions {
  principal: StdioPrincipal;
  stdin?: Readable;
  stdout?: Writable;
  catalogs?: SkillCatalogs;
}

/** What `serve --mcp` reads: its one MCP server's, and the call timeout that bounds the wait for answers at the end. */
export type McpStdioDeps = McpServerDeps['services'] & { callTimeoutMs: number };

export async function serveMcpStdio(ctx: ServeContext<McpStdioDeps>, extra: McpStdioOptions): Promise<McpHandle> {
  const { services } = ctx;
  const { principal } = extra;
  const opts = { ...ctx, ...extra, maxMessageBytes: ctx.limits.maxMessageBytes, maxInFlight: ctx.limits.maxInFlight };
  const stdin = opts.stdin ?? process.stdin;
  const stdout = opts.stdout ?? process.stdout;
  // The session's own catalog: a SIGHUP that changes its skills changes what this server lists and serves.
  const catalog = await (opts.catalogs ?? new SkillCatalogs(services.log)).live(principal.session);
  // One thread per server process (a stdio connection has no Mcp-Session-Id).
  const mcp = {
    session: principal.session,
    fallbackThread: `mcp-${randomUUID()}`,
    checkAuth: principal.checkAuth,
    inFlight: { count: 0, max: opts.maxInFlight },
  };
  // A host may pipe its requests and close stdin at once: the server ends only when every request it read
  // has been answered (contract: in-flight calls finish), bounded by the call timeout for one never answered.
  // A request the host cancelled (notifications/cancelled) gets no response: it is waited for no more.
  const answers = new PendingAnswers();
  const reply = (code: number, message: string, id: string | number | null = null) =>
    stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
  const guard = new McpLineGuard({
    maxMessageBytes: opts.maxMessageBytes,
    onTooLarge: () => {
      services.log.log('warn', 'mcp stdio message too large; discarding it', { limit: opts.maxMessageBytes });
      reply(RpcErrorCode.InvalidRequest, `message too large: over ${opts.maxMessageBytes} bytes (limits.max_message_bytes)`);
    },
    // The SDK skips a line it cannot parse, and one that is no JSON-RPC message, without an answer: a host would
    // wait forever. Answered here as on the daemon's own stdio (-32700 / -32600, id null), by the one envelope
    // check (message-shape.ts), then MCP's own message schema (the SDK's, stricter: e.g. integer or string ids);
    // a blank line is nothing. A message that passes goes to the transport as the object the schema returned,
    // in line order, as the SDK's own reader would deliver it — parsed once, not once here and again there.
    admit: (line) => {
      const text = line.toString('utf8');
      if (text.trim() === '') return false;
      // Decoded with replacement, a stray byte would reach the server as U+FFFD and be stored rewritten.
      if (!isUtf8(line)) {
        services.log.log('warn', 'mcp stdio line is not UTF-8', {});
        reply(RpcErrorCode.ParseError, 'parse error: the line is not UTF-8');
        return false;
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        services.log.log('warn', 'mcp stdio line is not JSON', {});
        reply(RpcErrorCode.ParseError, 'parse error: the line is not JSON');
        return false;
      }
      const envelope = envelopeProblem(value);
      const message = envelope ? null : mcpMessage(value);
      if (message) {
        if (isRequest(value)) answers.expect((value as { id: unknown }).id);
        transport.deliver(message);
        const cancelled = cancelledRequest(value);
        if (cancelled !== undefined) answers.answered(cancelled);
        return false;
      }
      const problem = envelope ?? mcpProblem(value);
      services.log.log('warn', 'mcp stdio line is not a JSON-RPC message', {});
      // A malformed *response* (no method; result or error) is never answered: JSON-RPC forbids replying to one.
      if (problem.response) return false;
      // A sound JSON-RPC request that MCP's schema refuses (`ping` with `"_meta": 3`) has an id the host waits
      // on: answered with it, or the host would wait forever. A broken envelope's id is not trusted (null).
      const id = envelope ? null : requestId(value);
      reply(RpcErrorCode.InvalidRequest, id === null ? 'invalid request: not a JSON-RPC 2.0 message' : 'invalid request: not an MCP request (a field does not fit its schema)', id);
      return false;
    },
  });
  // `pipe` forwards no errors: a stdin read error reaches the SDK (which logs it and closes) through the guard.
  stdin.once('error', (err) => guard.destroy(err));
  // The SDK's transport aborts what is in flight when its input ends; so the guard (its input) ends only once
  // every request read before stdin's end has been answered.
  stdin.pipe(guard, { end: false });
  // The guard is the transport's stdin for its end and errors only: it passes no line on, and hands the
  // transport each message it has parsed and checked instead (read only once data flows, after this line).
  const transport = new CountingStdioTransport(answers, guard, stdout);
  const handle = serveStdio(() => buildMcpServer(opts, mcp, catalog, { followReloads: true }), {
    transport,
    onerror: (err) => services.log.log('warn', 'mcp stdio error', { err: err.message }),
  });
  const inputEnded = new Promise<void>((resolve) => {
    stdin.once('end', () => resolve());
    stdin.once('close', () => resolve());
  });
  const closed = new Promise<void>((resolve) => {
    stdout.once('error', () => resolve());
    void inputEnded
      // Lines stdin delivered may still wait in the guard's buffer: an empty write's callback runs after them,
      // so every request is counted before the wait for their answers starts.
      .then(() => new Promise<void>((resolve) => guard.write(Buffer.alloc(0), () => resolve())))
      .then(() => answers.settled(services.callTimeoutMs + 5000))
      .then(() => {
        guard.end();
        resolve();
      });
  });
  services.log.log('info', 'mcp server ready', { transport: 'stdio', user_id: principal.session.userId, thread_id: mcp.fallbackThread });
  return { closed, close: () => handle.close() };
}

/** The id of a request whose envelope is sound (a string or a number), else null. */
function requestId(value: unknown): string | number | null {
  if (!isRequest(value)) return null;
  const { id } = value as { id: unknown };
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** A request (a method and an id) is answered exactly once; a notification never is. */
function isRequest(value: unknown): boolean {
  const o = value as Record<string, unknown>;
  return typeof o.method === 'string' && 'id' in o;
}

/**
 * The id a `notifications/cancelled` names, if the value is one. The SDK aborts that request, if it is still
 * running, and then sends no response for it; if it was answered already, the notification changes nothing.
 */
function cancelledRequest(value: unknown): unknown {
  const o = value as { method?: unknown; params?: { requestId?: unknown } };
  return o.method === 'notifications/cancelled' && o.params?.requestId !== undefined ? o.params.requestId : undefined;
}

/**
 * The requests read from stdin that have not been answered (nor cancelled) yet, counted by id: a host that
 * sends a second request with the id of one still in flight is waited for twice.
 */
class PendingAnswers {
  private readonly ids = new Map<string, number>();
  private waiters: Array<() => void> = [];
  expect(id: unknown): void {
    const key = JSON.stringify(id);
    this.ids.set(key, (this.ids.get(key) ?? 0) + 1);
  }
  /** A response to `id` was written, or the host cancelled it (no response will come). */
  answered(id: unknown): void {
    const key = JSON.stringify(id);
    const left = (this.ids.get(key) ?? 0) - 1;
    if (left > 0) this.ids.set(key, left);
    else this.ids.delete(key);
    if (this.ids.size === 0) for (const w of this.waiters.splice(0)) w();
  }
  /** Resolves when every request has been answered, or after `capMs` (the timer holds the process meanwhile). */
  settled(capMs: number): Promise<void> {
    if (this.ids.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, capMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * The SDK's stdio transport, counting the responses it writes (a message with an id and no method), and
 * handed each incoming message already parsed and checked (`deliver`) instead of reading lines itself.
 */
class CountingStdioTransport extends StdioServerTransport {
  constructor(
    private readonly answers: PendingAnswers,
    ...args: ConstructorParameters<typeof StdioServerTransport>
  ) {
    super(...args);
  }
  /** One message, as the SDK's reader hands it on: to `onmessage`, a throw going to `onerror`. */
  deliver(message: JSONRPCMessage): void {
    try {
      this.onmessage?.(message);
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    }
  }

  override async send(message: Parameters<StdioServerTransport['send']>[0]): Promise<void> {
    await super.send(message);
    if ('id' in message && !('method' in message)) this.answers.answered(message.id);
  }
}

/**
 * The message MCP's own schema makes of the value, or null when it refuses it: the SDK's
 * `deserializeMessage` check (its `parseJSONRPCMessage`), on the value parsed above.
 */
function mcpMessage(value: unknown): JSONRPCMessage | null {
  try {
    return parseJSONRPCMessage(value);
  } catch {
    return null;
  }
}

/** A valid JSON-RPC envelope that MCP's schema still refuses; a response-shaped one is never answered. */
function mcpProblem(value: unknown): EnvelopeProblem {
  const o = value as Record<string, unknown>;
  return { reason: 'not an MCP message', id: null, response: !('method' in o) && ('result' in o || 'error' in o) };
}
