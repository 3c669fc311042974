/**
 * Entries (b) and (b′): the MCP SDK servers, called by the SDK's own client
 * over stdio — the thin anchor (zod + one insert) and the equal-work anchor
 * (zod + toolgate's writes in one transaction).
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BENCH_DIST, childEnv } from '../env.js';
import { calendarInput } from '../anchors/calendar-input.js';
import type { Target } from '../target.js';

export type McpAnchor = 'thin' | 'equal';

const SERVER: Record<McpAnchor, { file: string; name: string }> = {
  thin: { file: 'mcp-server.js', name: 'MCP SDK server (zod + 1 insert' },
  equal: { file: 'mcp-equal-server.js', name: 'MCP SDK server (zod + toolgate’s writes' },
};

export async function startMcp(dbFile: string, synchronous: 'FULL' | 'NORMAL', anchor: McpAnchor = 'thin'): Promise<Target> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(BENCH_DIST, 'anchors', SERVER[anchor].file), dbFile, synchronous],
    env: childEnv(),
    stderr: 'pipe',
  });
  const client = new Client({ name: 'toolgate-bench', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid ?? Number.NaN;
  // The equal-work anchor keys its call record by thread and tool call id, as toolgate does.
  const ids = (i: number) => (anchor === 'equal' ? { thread_id: 'bench-mcp', tool_call_id: `c${i}` } : {});
  return {
    name: `${SERVER[anchor].name}, ${synchronous})`,
    pid,
    async call(i) {
      const result = await client.callTool({
        name: 'project_cli',
        arguments: { ...ids(i), module: 'calendar', method: 'create', input: calendarInput(i) },
      });
      if (result.isError) throw new Error(`MCP anchor failed: ${JSON.stringify(result.content).slice(0, 300)}`);
    },
    async stop() {
      await client.close();
    },
  };
}
