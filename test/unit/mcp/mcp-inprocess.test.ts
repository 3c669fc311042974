/**
 * The stdio MCP server in process, over injected streams: the same code as
 * `serve --mcp`, with the SDK's client on the other end of two pipes. Time
 * is moved instead of waited for, to see a token expire mid-session.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createDaemon } from '../../../src/app/serve.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { SubprocessExecutor } from '../../../src/calls/subprocess-executor.js';
import { openMcpStdioPrincipal } from '../../../src/mcp/mcp-session.js';
import { serveMcpStdio } from '../../../src/mcp/mcp-stdio.js';
import { serveContext } from '../../../src/rpc/serve-context.js';
import { tempDir } from '../../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../../helpers/tokens.js';

test('in process: a token that expires mid-session fails each call with UNAUTHENTICATED; the server stays up', async () => {
  const token = await mintBearer('mia', {}, { expiresIn: '10m' });
  const env = { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: token };
  const logs: string[] = [];
  const services = await createDaemon(
    { transport: 'mcp', db: join(tempDir(), 'toolgate.db'), dev: false, executor: 'inprocess', env },
    createLogger((line) => logs.push(line)),
  );
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const principal = await openMcpStdioPrincipal(services, env);
  const handle = await serveMcpStdio(serveContext(services, { limits: { maxInFlight: 8 } }), { principal, stdin: toServer, stdout: fromServer });
  // The server's newline-delimited JSON transport is symmetric: the client uses it the other way round.
  const client = new Client({ name: 'in-process', version: '1' });
  await client.connect(new StdioServerTransport(fromServer, toServer));
  // jose reads the clock as `new Date()`: shift that (and Date.now) to jump past the token's exp.
  const RealDate = Date;
  const shiftClock = (ms: number) => {
    globalThis.Date = class extends RealDate {
      constructor(...args: unknown[]) {
        if (args.length === 0) super(RealDate.now() + ms);
        else super(...(args as [string]));
      }
      static override now() {
        return RealDate.now() + ms;
      }
    } as DateConstructor;
  };
  try {
    const args = { name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} } };
    const first = (await client.callTool(args)) as { isError?: boolean };
    assert.notEqual(first.isError, true);

    shiftClock(11 * 60_000);
    const later = (await client.callTool(args)) as { isError?: boolean; structuredContent: { error: { code: string; message: string } }; content: Array<{ text: string }> };
    assert.equal(later.isError, true);
    assert.equal(later.structuredContent.error.code, 'UNAUTHENTICATED');
    assert.match(later.structuredContent.error.message, /TOOLGATE_MCP_TOKEN/);
    assert.ok(!later.content[0]!.text.includes(token));
    assert.equal((await client.listTools()).tools.length, 1, 'still serving');

    globalThis.Date = RealDate;
    assert.notEqual(((await client.callTool(args)) as { isError?: boolean }).isError, true);
  } finally {
    globalThis.Date = RealDate;
    await client.close();
    await handle.close();
    await services.store.close();
  }
  assert.ok(!logs.join('').includes(token.split('.')[2]!), 'the token is never logged');
});

test('in process: notifications/cancelled reaches a running call — no response is sent, and the call completed or left no trace', async () => {
  const token = await mintBearer('mia', {}, { expiresIn: '10m' });
  const env = { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: token };
  // A child process can be held while it runs (in-process work is one unit of store work that never waits).
  const services = await createDaemon(
    { transport: 'mcp', db: join(tempDir(), 'toolgate.db'), dev: false, executor: 'subprocess', env },
    createLogger(() => {}),
  );
  // Hold the action until the client has cancelled, so the cancel meets a call in flight.
  const real = services.executor;
  if (!(real instanceof SubprocessExecutor)) throw new Error('expected the subprocess executor');
  let entered!: () => void;
  const running = new Promise<void>((r) => (entered = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  services.executor = new SubprocessExecutor(async (req, log) => {
    entered();
    await gate;
    return real.run(req, log);
  });
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const principal = await openMcpStdioPrincipal(services, env);
  const handle = await serveMcpStdio(serveContext(services, { limits: { maxInFlight: 8 } }), { principal, stdin: toServer, stdout: fromServer });
  const client = new Client({ name: 'in-process', version: '1' });
  // Both directions as they pass: which id the cancelled call had, and what was answered.
  const lines = (into: Array<{ id?: unknown; method?: string; params?: { arguments?: { method?: string } } }>) => (c: Buffer) => {
    for (const line of c.toString('utf8').split('\n').filter(Boolean)) into.push(JSON.parse(line) as { id?: unknown });
  };
  const wire: Array<{ id?: unknown; method?: string }> = [];
  const sent: Array<{ id?: unknown; method?: string; params?: { arguments?: { method?: string } } }> = [];
  fromServer.on('data', lines(wire));
  toServer.on('data', lines(sent));
  await client.connect(new StdioServerTransport(fromServer, toServer));
  try {
    const abort = new AbortController();
    const args = { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } };
    const pending = client.callTool({ name: 'project_cli', arguments: args, _meta: { 'toolgate/thread_id': 'cancelled' } }, { signal: abort.signal });
    await running;
    abort.abort();
    await assert.rejects(pending);
    release();
    // The server goes on serving; the cancelled request never gets a response.
    assert.equal((await client.listTools()).tools.length, 1);
    await client.callTool({ name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} } });
    const responses = wire.filter((m) => m.id !== undefined && m.method === undefined).map((m) => m.id);
    assert.equal(new Set(responses).size, responses.length);
    const cancelledId = sent.find((m) => m.method === 'tools/call' && m.params?.arguments?.method === 'update')!.id;
    assert.ok(sent.some((m) => m.method === 'notifications/cancelled'), 'the client sent notifications/cancelled');
    assert.ok(!responses.includes(cancelledId), `no response to the cancelled call (got ids ${responses.join(', ')})`);
    const reader = new Database(services.dbPath, { readonly: true });
    const rows = reader.prepare(`SELECT content FROM messages WHERE role = 'tool' AND content LIKE '%"method":"update"%'`).all();
    reader.close();
    assert.ok(rows.length <= 1, 'completed once, or not at all');
  } finally {
    release();
    await client.close();
    await handle.close();
    await services.store.close();
  }
});

/** `serve --mcp` for a fresh user token, in process on the in-process executor, over two in-memory pipes. */
async function inProcessServer() {
  const token = await mintBearer('mia', {}, { expiresIn: '10m' });
  const env = { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: token };
  const services = await createDaemon({ transport: 'mcp', db: join(tempDir(), 'toolgate.db'), dev: false, executor: 'inprocess', env }, createLogger(() => {}));
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const handle = await serveMcpStdio(serveContext(services, { limits: { maxInFlight: 8 } }), { principal: await openMcpStdioPrincipal(services, env), stdin: toServer, stdout: fromServer });
  return { token, services, toServer, fromServer, handle };
}

test('in process: a token pasted as an unknown key of arguments, whole or split by a newline or tab, is never echoed', async () => {
  const { services, toServer, fromServer, handle } = await inProcessServer();
  const client = new Client({ name: 'in-process', version: '1' });
  await client.connect(new StdioServerTransport(fromServer, toServer));
  try {
    // Another user's token, as a model would paste it: the key zod's "Unrecognized key" message names.
    const pasted = await mintBearer('victim', { name: 'V' });
    const [header, payload, signature] = pasted.split('.') as [string, string, string];
    for (const key of [pasted, `${header.slice(0, 10)}\n${header.slice(10)}.${payload}.${signature}`, `${header}.${payload.slice(0, 12)}\t${payload.slice(12)}.${signature}`]) {
      const answer = (await client.callTool({ name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {}, [key]: 1 } })) as {
        isError?: boolean;
        structuredContent: { error: { code: string } };
        content: Array<{ text: string }>;
      };
      assert.equal(answer.isError, true);
      assert.equal(answer.structuredContent.error.code, 'INVALID_ACTION_INPUT');
      const wire = JSON.stringify(answer);
      for (const part of [payload, signature]) assert.ok(!wire.includes(part.slice(4, 30)), `${JSON.stringify(key.slice(0, 14))}: ${wire.slice(0, 400)}`);
      // The text is still the JSON of structuredContent (contract section 11).
      assert.deepEqual(JSON.parse(answer.content[0]!.text), answer.structuredContent);
    }
  } finally {
    await client.close();
    await handle.close();
    await services.store.close();
  }
});

test('in process: past the token\'s exp every tasks/* request is refused -32001 (an approval above all); the server stays up', async () => {
  const { token, services, toServer, fromServer, handle } = await inProcessServer();
  // Raw lines (the SDK's client has no task API): each request's answer by its id.
  type Answer = { id?: number; result?: Record<string, unknown>; error?: { code: number; message: string } };
  const waiting = new Map<number, (a: Answer) => void>();
  createInterface({ input: fromServer }).on('line', (line) => {
    const m = JSON.parse(line) as Answer;
    if (typeof m.id === 'number') waiting.get(m.id)?.(m);
  });
  let next = 0;
  const request = (method: string, params: Record<string, unknown>) =>
    new Promise<Answer>((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      toServer.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const RealDate = Date;
  try {
    assert.ok((await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } })).result);
    toServer.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const created = await request('tools/call', { name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} }, task: { ttl: 60_000 } });
    const taskId = (created.result?.task as { taskId?: string } | undefined)?.taskId;
    assert.ok(taskId, JSON.stringify(created));
    // jose reads the clock as `new Date()`: shift that (and Date.now) past the token's exp.
    globalThis.Date = class extends RealDate {
      constructor(...args: unknown[]) {
        if (args.length === 0) super(RealDate.now() + 11 * 60_000);
        else super(...(args as [string]));
      }
      static override now() {
        return RealDate.now() + 11 * 60_000;
      }
    } as DateConstructor;
    for (const [method, params] of [['tasks/get', { taskId }], ['tasks/result', { taskId }], ['tasks/list', {}], ['tasks/cancel', { taskId }]] as const) {
      const refused = await request(method, params);
      assert.equal(refused.error?.code, -32001, `${method}: ${JSON.stringify(refused)}`);
      assert.match(refused.error.message, /TOOLGATE_MCP_TOKEN: bearer token refused: expired/);
      assert.ok(!refused.error.message.includes(token.split('.')[2]!));
    }
    assert.ok((await request('tools/list', {})).result, 'still serving');
    globalThis.Date = RealDate;
    assert.ok((await request('tasks/get', { taskId })).result, 'a fresh clock: served again');
  } finally {
    globalThis.Date = RealDate;
    await handle.close();
    await services.store.close();
  }
});
