/** Entry (b): the MCP SDK server, called by the SDK's own client over stdio. */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BENCH_DIST, childEnv } from '../env.js';
import { calendarInput } from '../anchors/calendar-input.js';
import type { Target } from '../target.js';

export async function startMcp(dbFile: string, synchronous: 'FULL' | 'NORMAL'): Promise<Target> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(BENCH_DIST, 'anchors', 'mcp-server.js'), dbFile, synchronous],
    env: childEnv(),
    stderr: 'pipe',
  });
  const client = new Client({ name: 'toolgate-bench', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid ?? Number.NaN;
  return {
    name: `MCP SDK server (zod + 1 insert, ${synchronous})`,
    pid,
    async call(i) {
      const result = await client.callTool({ name: 'project_cli', arguments: { module: 'calendar', method: 'create', input: calendarInput(i) } });
      if (result.isError) throw new Error(`MCP anchor failed: ${JSON.stringify(result.content).slice(0, 300)}`);
    },
    async stop() {
      await client.close();
    },
  };
}
