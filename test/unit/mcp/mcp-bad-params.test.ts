/**
 * A request whose params do not fit its method — `resources/read` with a
 * `uri` that is no string, `prompts/get` without a `name`, a list with a
 * `cursor` that is no string — is the client's mistake: -32602 (invalid
 * params) naming the method and the field, on stdio (`serve --mcp`) and
 * Streamable HTTP (`/mcp` on `serve --ws`, both revisions) alike — never
 * -32603 (internal error). The same methods with good params still answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess } from '../../helpers/in-process.js';
import { MCP_ACCEPT, openRawMcpSession, openRawMcpStdio, type RawMcpAnswer } from '../../helpers/mcp-raw.js';
import { mintBearer } from '../../helpers/tokens.js';

type Send = (method: string, params: Record<string, unknown>) => Promise<RawMcpAnswer>;

/** Each bad request, and the field its error names. */
const BAD: ReadonlyArray<[method: string, params: Record<string, unknown>, field: string]> = [
  ['resources/read', { uri: 3 }, 'uri'],
  ['resources/read', {}, 'uri'],
  ['prompts/get', {}, 'name'],
  ['prompts/get', { name: 3 }, 'name'],
  ['prompts/get', { name: 'calendar', arguments: 3 }, 'arguments'],
  ['tools/list', { cursor: 3 }, 'cursor'],
  ['resources/list', { cursor: 3 }, 'cursor'],
  ['resources/templates/list', { cursor: 3 }, 'cursor'],
  ['prompts/list', { cursor: false }, 'cursor'],
  ['tools/call', { name: 3 }, 'name'],
  ['tools/call', { name: 'project_cli', arguments: 'x' }, 'arguments'],
];

/** 2025-11-25 only (2026-07-28 has no `initialize`): a second one on an open connection. */
const BAD_2025: typeof BAD = [['initialize', { protocolVersion: 3, capabilities: {}, clientInfo: { name: 'raw', version: '1' } }, 'protocolVersion']];

async function assertBadParamsRefused(send: Send, where: string, bad = BAD): Promise<void> {
  for (const [method, params, field] of bad) {
    const answer = await send(method, params);
    const label = `${where} ${method} ${JSON.stringify(params)}`;
    assert.equal(answer.error?.code, -32602, `${label}: ${JSON.stringify(answer)}`);
    assert.match(answer.error.message, new RegExp(method.replace(/\//g, '\\/')), `${label}: names the method`);
    assert.match(answer.error.message, new RegExp(field), `${label}: names the field`);
  }
  // Many bad values: the first three are named, each key cut, the answer short whatever the request's size.
  const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`${'k'.repeat(300)}${i}`, i]));
  const flood = await send('prompts/get', { name: 'calendar', arguments: many });
  assert.equal(flood.error?.code, -32602, `${where}: ${JSON.stringify(flood).slice(0, 300)}`);
  assert.match(flood.error.message, /\(and 197 more\)$/, `${where}: ${flood.error.message.slice(0, 300)}`);
  assert.ok(flood.error.message.length < 1000, `${where}: ${flood.error.message.length} characters`);
  // Good params still answer.
  assert.ok(Array.isArray((await send('resources/list', {})).result?.resources), `${where}: resources/list`);
  assert.ok(Array.isArray((await send('prompts/list', {})).result?.prompts), `${where}: prompts/list`);
  assert.ok(Array.isArray((await send('tools/list', {})).result?.tools), `${where}: tools/list`);
}

test('bad params are -32602 on stdio MCP', async () => {
  const mcp = await openRawMcpStdio(await mintBearer('mia'));
  try {
    await assertBadParamsRefused(mcp.request, 'stdio', [...BAD, ...BAD_2025]);
  } finally {
    await mcp.close();
  }
});

test('stdio MCP: a sound JSON-RPC request that MCP\'s schema refuses is answered with its own id', { timeout: 30_000 }, async () => {
  // `_meta` that is no object fails MCP's message schema before any method is looked at: the answer used to carry
  // `id: null`, which no host can match to its request, so the request waited forever.
  const mcp = await openRawMcpStdio(await mintBearer('mia'));
  try {
    for (const [method, params] of [['ping', { _meta: 3 }], ['tools/list', { _meta: 'x' }]] as const) {
      const answer = await mcp.request(method, params);
      assert.equal(answer.error?.code, -32600, `${method}: ${JSON.stringify(answer)}`);
      assert.match(answer.error.message, /not an MCP request/);
    }
    assert.ok(Array.isArray((await mcp.request('tools/list', {})).result?.tools), 'the server answers on');
  } finally {
    await mcp.close();
  }
});

test('bad params are -32602 on Streamable HTTP, 2025-11-25 and 2026-07-28', async () => {
  const host = await startInProcess({ transport: 'ws' });
  try {
    const token = await mintBearer('mia');
    await assertBadParamsRefused(await openRawMcpSession(host.port!, token), 'http 2025-11-25', [...BAD, ...BAD_2025]);
    let id = 0;
    const modern: Send = async (method, params) => {
      // The header 2026-07-28 requires beside a string `name` or `uri` (SEP-2243), as a host sends it.
      const name = [params.name, params.uri].find((v) => typeof v === 'string');
      const _meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
      const res = await fetch(`http://127.0.0.1:${host.port}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, ...MCP_ACCEPT, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta } }),
      });
      const text = await res.text();
      const sse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
      const messages = sse ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as RawMcpAnswer) : [JSON.parse(text) as RawMcpAnswer];
      return messages.find((m) => m.id === id) ?? {};
    };
    await assertBadParamsRefused(modern, 'http 2026-07-28');
  } finally {
    await host.stop();
  }
});

test('Streamable HTTP: a first initialize with bad params is -32602 to its own id, and opens no session', async () => {
  const host = await startInProcess({ transport: 'ws' });
  try {
    const token = await mintBearer('mia');
    const initialize = (id: number, params: Record<string, unknown>) =>
      fetch(`http://127.0.0.1:${host.port}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, ...MCP_ACCEPT },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params }),
      });
    const bad = await initialize(7, { protocolVersion: 3, capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('mcp-session-id'), null, 'no session');
    const answer = (await bad.json()) as RawMcpAnswer;
    assert.equal(answer.id, 7, JSON.stringify(answer));
    assert.equal(answer.error?.code, -32602, JSON.stringify(answer));
    assert.match(answer.error.message, /initialize.*protocolVersion/);
    const good = await initialize(8, { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    assert.equal(good.status, 200);
    assert.ok(good.headers.get('mcp-session-id'), 'a sound initialize opens its session');
    await good.text();
  } finally {
    await host.stop();
  }
});
