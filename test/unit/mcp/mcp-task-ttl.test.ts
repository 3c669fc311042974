/**
 * A 2025-11-25 task-augmented `tools/call` (contract section 18): the
 * `task` param is TaskMetadata, whose `ttl` — if given — is a duration in
 * milliseconds (a non-negative integer), or null. Anything else (`"x"`,
 * -1, 1.5, a `task` that is no object) is refused with -32602 and runs no
 * call; a well-formed `ttl` still gets its task (`ttl: null`, the call's
 * own lifetime), on stdio (`serve --mcp`) and Streamable HTTP alike.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess } from '../../helpers/in-process.js';
import { openRawMcpSession, openRawMcpStdio, type RawMcpAnswer } from '../../helpers/mcp-raw.js';
import { mintBearer } from '../../helpers/tokens.js';

type Request = (method: string, params: Record<string, unknown>) => Promise<RawMcpAnswer>;

const call = (n: number, task: unknown) => ({
  name: 'project_cli',
  arguments: { module: 'memory', method: 'update', input: { key: `k${n}`, content: 'v' } },
  task,
  _meta: { 'toolgate/thread_id': 'ttl-thread', 'toolgate/tool_call_id': `ttl-${n}` },
});

async function checkTtl(request: Request, where: string): Promise<void> {
  const bad: unknown[] = [{ ttl: 'x' }, { ttl: -1 }, { ttl: 1.5 }, { ttl: {} }, 'x', null, []];
  for (const [i, task] of bad.entries()) {
    const answer = await request('tools/call', call(i, task));
    assert.equal(answer.error?.code, -32602, `${where} ${JSON.stringify(task)}: ${JSON.stringify(answer)}`);
    assert.match(answer.error.message, /task/, `${where}: the message names the task param`);
    // No call was made: the task id it would have had names nothing.
    const id = Buffer.from(JSON.stringify(['ttl-thread', `ttl-${i}`]), 'utf8').toString('base64url');
    assert.equal((await request('tasks/get', { taskId: id })).error?.code, -32602, `${where}: no call ran for ${JSON.stringify(task)}`);
  }
  for (const [i, task] of [{ ttl: 60_000 }, { ttl: 0 }, { ttl: null }, {}].entries()) {
    const answer = await request('tools/call', call(100 + i, task));
    assert.equal(answer.result?.task?.status, 'working', `${where} ${JSON.stringify(task)}: ${JSON.stringify(answer)}`);
  }
}

test('a 2025-11-25 tools/call whose task ttl is no non-negative integer (or null) is refused with -32602 on stdio MCP', async () => {
  const mcp = await openRawMcpStdio(await mintBearer('mia'));
  try {
    await checkTtl(mcp.request, 'stdio');
  } finally {
    await mcp.close();
  }
});

test('a 2025-11-25 tools/call whose task ttl is no non-negative integer (or null) is refused with -32602 on Streamable HTTP', async () => {
  const host = await startInProcess({ transport: 'ws' });
  try {
    await checkTtl(await openRawMcpSession(host.port!, await mintBearer('mia')), 'http');
  } finally {
    await host.stop();
  }
});
