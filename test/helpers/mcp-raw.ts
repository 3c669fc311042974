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
