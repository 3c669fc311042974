/**
 * `serve --mcp`: the MCP server on stdio (newline-delimited JSON-RPC), via
 * the SDK's `serveStdio`, which tells a 2025-era `initialize` opening from a
 * 2026-07-28 one and pins one server instance per connection. The streams
 * are injectable so tests can run it in process.
 */
import type { Readable, Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { StdioPrincipal } from '../daemon/mcp-session.js';
import { buildMcpServer } from './mcp-server.js';
import { SkillCatalogs } from './mcp-skills.js';
import type { McpCallDeps } from './mcp-tool.js';
import { McpLineGuard } from './mcp-line-guard.js';
import { RpcErrorCode } from './errors.js';

export interface McpHandle {
  /** Resolves when the client closes stdin (or the streams fail). */
  closed: Promise<void>;
  close(): Promise<void>;
}

export interface McpStdioOptions extends McpCallDeps {
  principal: StdioPrincipal;
  maxInFlight: number;
  /** `limits.max_message_bytes`: the longest line read (one JSON-RPC message). */
  maxMessageBytes: number;
  stdin?: Readable;
  stdout?: Writable;
  catalogs?: SkillCatalogs;
}

export async function serveMcpStdio(opts: McpStdioOptions): Promise<McpHandle> {
  const { daemon, principal } = opts;
  const stdin = opts.stdin ?? process.stdin;
  const stdout = opts.stdout ?? process.stdout;
  const catalog = await (opts.catalogs ?? new SkillCatalogs(daemon.log)).for(principal.session.enabledSkills);
  // One thread per server process (a stdio connection has no Mcp-Session-Id).
  const mcp = {
    session: principal.session,
    fallbackThread: `mcp-${randomUUID()}`,
    checkAuth: principal.checkAuth,
    inFlight: { count: 0, max: opts.maxInFlight },
  };
  const guard = new McpLineGuard({
    maxMessageBytes: opts.maxMessageBytes,
    onTooLarge: () => {
      daemon.log.log('warn', 'mcp stdio message too large; discarding it', { limit: opts.maxMessageBytes });
      const error = { code: RpcErrorCode.InvalidRequest, message: `message too large: over ${opts.maxMessageBytes} bytes (limits.max_message_bytes)` };
      stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error })}\n`);
    },
  });
  // `pipe` forwards no errors: a stdin read error reaches the SDK (which logs it and closes) through the guard.
  stdin.once('error', (err) => guard.destroy(err));
  stdin.pipe(guard);
  const handle = serveStdio(() => buildMcpServer(opts, mcp, catalog), {
    // The SDK's own cap (10 MB by default, which closes the connection) stays above the guard's: lines reach it capped.
    transport: new StdioServerTransport(guard, stdout, { maxBufferSize: opts.maxMessageBytes + 1024 * 1024 }),
    onerror: (err) => daemon.log.log('warn', 'mcp stdio error', { err: err.message }),
  });
  const closed = new Promise<void>((resolve) => {
    stdin.once('end', () => resolve());
    stdin.once('close', () => resolve());
    stdout.once('error', () => resolve());
  });
  daemon.log.log('info', 'mcp server ready', { transport: 'stdio', user_id: principal.session.userId, thread_id: mcp.fallbackThread });
  return { closed, close: () => handle.close() };
}
