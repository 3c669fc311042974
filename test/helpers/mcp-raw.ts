/** What a test that speaks MCP over HTTP with raw `fetch` sends (no SDK client). */
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { RpcError } from '../../src/protocol/index.js';
import { createDaemon } from '../../src/app/serve.js';
import { createLogger } from '../../src/runtime/logger.js';
import { openMcpStdioPrincipal } from '../../src/mcp/mcp-session.js';
import { serveMcpStdio } from '../../src/mcp/mcp-stdio.js';
import { serveContext } from '../../src/rpc/serve-context.js';
import { tempDir } from './repo.js';
import { TEST_BEARER_SECRET } from './tokens.js';

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

/**
 * `serve --mcp` in this process (src/mcp/mcp-stdio.ts over two in-memory pipes), acting for the user of
 * `token`, spoken to line by line as a raw 2025-11-25 host: `request` sends one request and answers its response.
 */
export async function openRawMcpStdio(token: string): Promise<{ request(method: string, params: Record<string, unknown>): Promise<RawMcpAnswer>; close(): Promise<void> }> {
  const env = { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: token, TOOLGATE_HOME: tempDir() };
  const services = await createDaemon({ transport: 'mcp', db: join(tempDir(), 'toolgate.db'), dev: false, executor: 'inprocess', env }, createLogger(() => {}));
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const handle = await serveMcpStdio(serveContext(services, { limits: { maxInFlight: 8 } }), { principal: await openMcpStdioPrincipal(services, env), stdin: toServer, stdout: fromServer });
  const waiting = new Map<unknown, (a: RawMcpAnswer) => void>();
  createInterface({ input: fromServer }).on('line', (line) => {
    const message = JSON.parse(line) as RawMcpAnswer;
    waiting.get(message.id)?.(message);
  });
  let id = 0;
  const request = (method: string, params: Record<string, unknown>) =>
    new Promise<RawMcpAnswer>((resolve) => {
      waiting.set(++id, resolve);
      toServer.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await request('initialize', MCP_INIT.params);
  toServer.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return {
    request,
    async close() {
      toServer.end();
      await handle.close();
      await services.store.close();
    },
  };
}
