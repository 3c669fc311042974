/**
 * Anchor (b): the official MCP SDK server (`@modelcontextprotocol/server` 2.x,
 * stdio) doing the work of one `calendar.create`: zod validation of the same
 * input and one SQLite insert (better-sqlite3, WAL, the `synchronous` setting
 * given on the command line), answering with the same kind of projection.
 *
 *   node mcp-server.js DB_FILE FULL|NORMAL
 */
import Database from 'better-sqlite3';
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { CalendarCreateInput, EVENTS_DDL, INSERT_EVENT, newEvent } from './calendar-input.js';

const [dbFile, synchronous = 'FULL'] = process.argv.slice(2);
if (!dbFile || !['FULL', 'NORMAL'].includes(synchronous)) {
  process.stderr.write('usage: mcp-server DB_FILE FULL|NORMAL\n');
  process.exit(2);
}
const db = new Database(dbFile);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${synchronous}`);
db.exec(EVENTS_DDL);
// A careful server prepares its statement once.
const insert = db.prepare(INSERT_EVENT);

const server = new McpServer({ name: 'bench-mcp-anchor', version: '1.0.0' }, { capabilities: { tools: {} } });
server.registerTool(
  'project_cli',
  {
    description: 'calendar.create: validates the input and inserts one event',
    inputSchema: z.object({ module: z.literal('calendar'), method: z.literal('create'), input: CalendarCreateInput }),
  },
  async ({ input }) => {
    const now = new Date().toISOString();
    const event = newEvent(input, now);
    insert.run({ ...event, start_ms: Date.parse(input.start_at), end_ms: Date.parse(input.end_at) });
    const structured = { status: 'success', module: 'calendar', method: 'create', data: { event } };
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  },
);
await server.connect(new StdioServerTransport());
