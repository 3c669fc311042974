/**
 * Anchor (b′): the official MCP SDK server (`@modelcontextprotocol/server`
 * 2.x, stdio) doing the same writes a toolgate call does, in one
 * `BEGIN IMMEDIATE` transaction of prepared statements per call at the
 * `synchronous` setting given on the command line (equal-work-store.ts has
 * the statements): call-table check, audit row with the arguments' SHA-256,
 * event, call record with the projection, thread sequence bump, tool message.
 *
 *   node mcp-equal-server.js DB_FILE FULL|NORMAL
 */
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { CalendarCreateInput } from './calendar-input.js';
import { openEqualWorkStore } from './equal-work-store.js';

const [dbFile, synchronous = 'FULL'] = process.argv.slice(2);
if (!dbFile || !['FULL', 'NORMAL'].includes(synchronous)) {
  process.stderr.write('usage: mcp-equal-server DB_FILE FULL|NORMAL\n');
  process.exit(2);
}
const store = openEqualWorkStore(dbFile, synchronous as 'FULL' | 'NORMAL');

const server = new McpServer({ name: 'bench-mcp-equal-work-anchor', version: '1.0.0' }, { capabilities: { tools: {} } });
server.registerTool(
  'project_cli',
  {
    description: 'calendar.create: validates the input and stores the call the way toolgate does (audit, event, call record, sequence, message)',
    inputSchema: z.object({
      thread_id: z.string().min(1).max(200),
      tool_call_id: z.string().min(1).max(200),
      module: z.literal('calendar'),
      method: z.literal('create'),
      input: CalendarCreateInput,
    }),
  },
  async ({ thread_id: threadId, tool_call_id: toolCallId, module, method, input }) => {
    const { text, structured } = store.call(threadId, toolCallId, { module, method, input }, input);
    // structuredContent is the object the text came from (a stored answer alone is parsed back).
    return { content: [{ type: 'text', text }], structuredContent: structured };
  },
);
await server.connect(new StdioServerTransport());
