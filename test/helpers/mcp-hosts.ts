/**
 * MCP hosts as a host author writes them, with the SDK's own Client: over
 * stdio (`serve --mcp`, spawned) and over Streamable HTTP (`/mcp` on a
 * `serve --ws` daemon), sessionful 2025-11-25 or sessionless 2026-07-28.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { TOOLGATE_BIN, tempDir } from './repo.js';
import { TEST_BEARER_SECRET } from './tokens.js';

export type McpKind = 'stdio' | 'http' | 'http-2026';
export const MCP_KINDS: readonly McpKind[] = ['stdio', 'http', 'http-2026'];

export interface McpHost {
  kind: McpKind;
  client: Client;
  /**
   * Every message the server sent, as it arrived. The SDK client runs
   * notification handlers a microtask after the message while it settles a
   * response at once, so a progress notification that shares a read with
   * its response reaches `onprogress` too late; the wire has it either way.
   */
  wire: Array<{ method?: string; params?: Record<string, unknown> }>;
  /** The Mcp-Session-Id of a sessionful HTTP connection. */
  sessionId(): string | undefined;
  stderr(): string;
  close(): Promise<void>;
}

export interface McpConnectOptions {
  token: string;
  /** stdio: the database file; http: the daemon's port. */
  dbPath?: string;
  port?: number;
  args?: string[];
  env?: Record<string, string>;
  headers?: Record<string, string>;
  /**
   * Declares form elicitation and answers every `elicitation/create` with
   * this (2025-11-25: a request from the server; 2026-07-28: the SDK client
   * fulfils an `input_required` result with it and retries).
   */
  elicit?: (params: { message: string; requestedSchema?: unknown }) => ElicitAnswer | Promise<ElicitAnswer>;
}

export interface ElicitAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean>;
}

export async function connectMcp(kind: McpKind, opts: McpConnectOptions): Promise<McpHost> {
  const client = new Client(
    { name: 'test-host', version: '1' },
    {
      ...(kind === 'http-2026' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
      ...(opts.elicit ? { capabilities: { elicitation: { form: {} } } } : {}),
    },
  );
  const elicit = opts.elicit;
  if (elicit) client.setRequestHandler('elicitation/create', async (request) => ({ ...(await elicit(request.params as { message: string; requestedSchema?: unknown })) }));
  if (kind === 'stdio') {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [TOOLGATE_BIN, 'serve', '--mcp', '--db', opts.dbPath ?? join('/nonexistent', 'x.db'), ...(opts.args ?? [])],
      env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir('toolgate-mcp-home-'), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: opts.token, ...opts.env },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    await client.connect(transport);
    return { kind, client, wire: tap(transport), sessionId: () => undefined, stderr: () => stderr, close: () => client.close() };
  }
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${opts.port}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${opts.token}`, ...opts.headers } },
  });
  await client.connect(transport);
  return {
    kind,
    client,
    wire: tap(transport),
    sessionId: () => transport.sessionId,
    stderr: () => '',
    async close() {
      if (transport.sessionId) await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** Records what the transport delivers, before the client handles it. */
function tap(transport: { onmessage?: ((message: never, extra?: never) => void) | undefined }): McpHost['wire'] {
  const wire: McpHost['wire'] = [];
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    wire.push(message as McpHost['wire'][number]);
    deliver(message, extra);
  };
  return wire;
}
