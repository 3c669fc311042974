/**
 * `serve --mcp`: the same one tool as an MCP server on stdio (newline-
 * delimited JSON-RPC, via the official MCP SDK), acting for the user of the
 * bearer token in TOOLGATE_MCP_TOKEN. A `tools/call` goes through exactly the
 * path of `tool/invoke` — whitelist, credential, CLI boundary, storage — in
 * one thread per server process.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CancellationToken } from 'vscode-jsonrpc';
import type { Connection, Daemon } from '../daemon/daemon.js';
import type { Session } from '../daemon/sessions.js';
import { TOOL_DESCRIPTOR } from '../daemon/initialize.js';
import { invokeTool } from '../daemon/tool-invoke.js';
import { ToolArgs } from './methods.js';

export interface McpHandle {
  /** Resolves when the client closes stdin (or the transport closes). */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** An AbortSignal seen as the CancellationToken the tool path expects. */
function tokenOf(signal: AbortSignal): CancellationToken {
  return {
    get isCancellationRequested() {
      return signal.aborted;
    },
    onCancellationRequested: (listener: (e: unknown) => unknown) => {
      const handler = () => listener(undefined);
      signal.addEventListener('abort', handler, { once: true });
      return { dispose: () => signal.removeEventListener('abort', handler) };
    },
  } as CancellationToken;
}

export async function serveMcp(
  daemon: Daemon,
  session: Session,
  conn: Connection,
  track: <T>(work: Promise<T>) => Promise<T>,
): Promise<McpHandle> {
  const threadId = `mcp-${randomUUID()}`;
  const server = new Server({ name: 'toolgate', version: daemon.version }, { capabilities: { tools: {} } });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: TOOL_DESCRIPTOR.name, description: TOOL_DESCRIPTOR.description, inputSchema: TOOL_DESCRIPTOR.input_schema }],
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (request.params.name !== TOOL_DESCRIPTOR.name) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
    const args = ToolArgs.safeParse(request.params.arguments ?? {});
    if (!args.success) {
      throw new McpError(ErrorCode.InvalidParams, 'project_cli needs {module, method, input}', {
        issues: args.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
      });
    }
    const log = daemon.log.child({ connection: conn.id, method: 'tools/call', request_id: `mcp_${String(extra.requestId)}` });
    const response = await track(
      invokeTool(daemon, conn, session, { session_id: session.id, thread_id: threadId, tool_call_id: `mcp-${randomUUID()}`, args: args.data }, tokenOf(extra.signal), log),
    );
    // The projection is the model's text, as on every transport; a tool failure is an MCP tool error.
    return { content: response.content, isError: response.status === 'failure' };
  });

  const transport = new StdioServerTransport();
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  transport.onclose = () => resolveClosed();
  process.stdin.once('end', () => resolveClosed());
  await server.connect(transport);
  daemon.log.log('info', 'mcp server ready', { user_id: session.userId, thread_id: threadId });
  return { closed, close: () => server.close() };
}
