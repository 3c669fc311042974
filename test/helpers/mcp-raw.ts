/** What a test that speaks MCP over HTTP with raw `fetch` sends (no SDK client). */
import type { RpcError } from '../../src/protocol/index.js';

/** The Accept and Content-Type a Streamable HTTP client sends with every POST. */
export const MCP_ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A 2025-11-25 `initialize` request: opens a sessionful MCP session. */
export const MCP_INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** One JSON-RPC answer read off a raw MCP POST (a task's creation result carries `task`). */
export interface RawMcpAnswer {
  id?: unknown;
  result?: Record<string, unknown> & { task?: { taskId: string; status: string } };
  error?: RpcError;
}

/** One request over a raw Streamable HTTP 2025-11-25 session: the JSON-RPC response, however it came (JSON or SSE). */
export async function mcpPost(port: number, token: string, headers: Record<string, string>, body: Record<string, unknown>): Promise<{ headers: Headers; answer: RawMcpAnswer }> {
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...MCP_ACCEPT, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const messages = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as RawMcpAnswer)
    : text
      ? [JSON.parse(text) as RawMcpAnswer]
      : [];
  return { headers: res.headers, answer: messages.find((m) => m.id === body.id) ?? {} };
}

/**
 * An initialized sessionful 2025-11-25 MCP session over raw POSTs to the daemon's `/mcp` on `port`:
 * `mcp(method, params)` sends one request (ids counted from 1) and answers its JSON-RPC response.
 */
export async function openRawMcpSession(port: number, token: string): Promise<(method: string, params: Record<string, unknown>) => Promise<RawMcpAnswer>> {
  const init = await mcpPost(port, token, {}, { ...MCP_INIT, id: 0 });
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
  await mcpPost(port, token, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
  let id = 0;
  return async (method, params) => (await mcpPost(port, token, session, { jsonrpc: '2.0', id: ++id, method, params })).answer;
}
