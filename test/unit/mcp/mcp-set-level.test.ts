/**
 * `logging/setLevel` with a level MCP does not define (`"loud"`) is the
 * client's mistake: -32602 (invalid params) naming the levels, on stdio
 * (`serve --mcp`) and Streamable HTTP (`/mcp` on `serve --ws`) alike —
 * never -32603 (internal error). A valid level is still acknowledged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { createDaemon } from '../../../src/app/serve.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { openMcpStdioPrincipal } from '../../../src/mcp/mcp-session.js';
import { serveMcpStdio } from '../../../src/mcp/mcp-stdio.js';
import { serveContext } from '../../../src/rpc/serve-context.js';
import { startInProcess } from '../../helpers/in-process.js';
import { openRawMcpSession, type RawMcpAnswer } from '../../helpers/mcp-raw.js';
import { tempDir } from '../../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../../helpers/tokens.js';

const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };

/** `serve --mcp` in this process, spoken to line by line: each request answers its response. */
async function rawStdio(): Promise<{ request(method: string, params: Record<string, unknown>): Promise<RawMcpAnswer>; close(): Promise<void> }> {
  const token = await mintBearer('mia');
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
  await request('initialize', INIT);
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

function assertInvalidLevel(answer: RawMcpAnswer, where: string): void {
  assert.equal(answer.error?.code, -32602, `${where}: ${JSON.stringify(answer)}`);
  assert.match(answer.error.message, /level/, where);
  assert.match(answer.error.message, /debug/, `${where}: the message names the levels`);
}

test('logging/setLevel with an unknown level answers -32602 on stdio MCP', async () => {
  const mcp = await rawStdio();
  try {
    assertInvalidLevel(await mcp.request('logging/setLevel', { level: 'loud' }), 'loud');
    assertInvalidLevel(await mcp.request('logging/setLevel', { level: 3 }), 'a number');
    assertInvalidLevel(await mcp.request('logging/setLevel', {}), 'no level');
    assert.deepEqual((await mcp.request('logging/setLevel', { level: 'warning' })).result, {});
  } finally {
    await mcp.close();
  }
});

test('logging/setLevel with an unknown level answers -32602 on Streamable HTTP', async () => {
  const host = await startInProcess({ transport: 'ws' });
  try {
    const mcp = await openRawMcpSession(host.port!, await mintBearer('mia'));
    assertInvalidLevel(await mcp('logging/setLevel', { level: 'loud' }), 'loud');
    assertInvalidLevel(await mcp('logging/setLevel', {}), 'no level');
    assert.deepEqual((await mcp('logging/setLevel', { level: 'warning' })).result, {});
  } finally {
    await host.stop();
  }
});
