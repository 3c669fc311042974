/**
 * The stdio MCP server in process, over injected streams: the same code as
 * `serve --mcp`, with the SDK's client on the other end of two pipes. Time
 * is moved instead of waited for, to see a token expire mid-session.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createDaemon } from '../../src/daemon/serve.js';
import { createLogger } from '../../src/daemon/logger.js';
import { openMcpStdioPrincipal } from '../../src/daemon/mcp-session.js';
import { serveMcpStdio } from '../../src/rpc/mcp-stdio.js';
import { tempDir } from '../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';

test('in process: a token that expires mid-session fails each call with UNAUTHENTICATED; the server stays up', async () => {
  const token = await mintBearer('mia', {}, { expiresIn: '10m' });
  const env = { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: token };
  const logs: string[] = [];
  const daemon = await createDaemon(
    { transport: 'mcp', db: join(tempDir(), 'toolgate.db'), dev: false, executor: 'inprocess', env },
    createLogger((line) => logs.push(line)),
  );
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const principal = await openMcpStdioPrincipal(daemon, env);
  const handle = await serveMcpStdio({ daemon, principal, track: (w) => w, accepting: () => true, maxInFlight: 8, stdin: toServer, stdout: fromServer });
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
    daemon.db.close();
  }
  assert.ok(!logs.join('').includes(token.split('.')[2]!), 'the token is never logged');
});
