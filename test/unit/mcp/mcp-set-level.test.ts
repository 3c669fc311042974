/**
 * `logging/setLevel` with a level MCP does not define (`"loud"`) is the
 * client's mistake: -32602 (invalid params) naming the levels, on stdio
 * (`serve --mcp`) and Streamable HTTP (`/mcp` on `serve --ws`) alike —
 * never -32603 (internal error). A valid level is still acknowledged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess } from '../../helpers/in-process.js';
import { openRawMcpSession, openRawMcpStdio, type RawMcpAnswer } from '../../helpers/mcp-raw.js';
import { mintBearer } from '../../helpers/tokens.js';

function assertInvalidLevel(answer: RawMcpAnswer, where: string): void {
  assert.equal(answer.error?.code, -32602, `${where}: ${JSON.stringify(answer)}`);
  assert.match(answer.error.message, /level/, where);
  assert.match(answer.error.message, /debug/, `${where}: the message names the levels`);
}

test('logging/setLevel with an unknown level answers -32602 on stdio MCP', async () => {
  const mcp = await openRawMcpStdio(await mintBearer('mia'));
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
