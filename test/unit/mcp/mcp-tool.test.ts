/**
 * The MCP tool (src/mcp/mcp-server.ts, mcp-tool.ts) in process, through the
 * SDK's client: tools/list shows exactly `project_cli` with its input and
 * output schemas; a call's `structuredContent` is the object its text is the
 * JSON of; an action the profile's whitelist leaves out is refused; bad
 * arguments are a tool error (isError) with a structured error the model can
 * correct.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMcpInProcess, type InProcessMcp } from '../../helpers/in-process.js';
import { tempDir } from '../../helpers/repo.js';
import { dbCount } from '../../helpers/db.js';
import { mintBearer } from '../../helpers/tokens.js';
import { TOOL_DESCRIPTOR } from '../../../src/sessions/initialize.js';
import { TOOL_OUTPUT_JSON_SCHEMA } from '../../../src/mcp/mcp-server.js';

interface Called {
  isError?: boolean;
  content: Array<{ text: string }>;
  structuredContent?: { status: string; data?: unknown; error?: { code: string; module: string | null; method: string | null; issues?: unknown[] } };
}

describe('the MCP tool project_cli', () => {
  let mcp: InProcessMcp;
  const call = async (args: unknown) => (await mcp.client.callTool({ name: 'project_cli', arguments: args as Record<string, unknown> })) as Called;

  before(async () => {
    const dataDir = tempDir();
    const config = join(dataDir, 'toolgate.config.json');
    // calendar is visible but only read is allowed: calendar.create is whitelisted off.
    writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['calendar', 'memory'], allowed_actions: ['calendar.read', 'memory.read', 'memory.update'] } } }), { mode: 0o600 });
    mcp = await startMcpInProcess(await mintBearer('milo'), { dataDir, args: ['--config', config] });
  });
  after(() => mcp.stop());

  test('tools/list: exactly project_cli, with its input schema and output schema', async () => {
    const { tools } = await mcp.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['project_cli']);
    const tool = tools[0]!;
    assert.deepEqual(tool.inputSchema, TOOL_DESCRIPTOR.input_schema);
    assert.deepEqual(tool.outputSchema, TOOL_OUTPUT_JSON_SCHEMA);
    assert.match(tool.description ?? '', /calendar/);
  });

  test('tools/call: success, with structuredContent equal to the JSON of its text', async () => {
    const written = await call({ module: 'memory', method: 'update', input: { key: 'colour', content: 'teal' } });
    assert.equal(written.isError, false, JSON.stringify(written));
    assert.equal(written.content.length, 1);
    assert.deepEqual(written.structuredContent, JSON.parse(written.content[0]!.text));
    assert.equal(written.structuredContent?.status, 'success');
    const read = await call({ module: 'memory', method: 'read', input: {} });
    assert.equal(read.isError, false);
    assert.deepEqual(read.structuredContent, JSON.parse(read.content[0]!.text));
    assert.match(read.content[0]!.text, /teal/);
  });

  test('an action the whitelist leaves out is refused: isError, ACTION_NOT_ALLOWED, nothing stored', async () => {
    const r = await call({ module: 'calendar', method: 'create', input: { title: 'No', start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent?.error?.code, 'ACTION_NOT_ALLOWED');
    assert.deepEqual([r.structuredContent?.error?.module, r.structuredContent?.error?.method], ['calendar', 'create']);
    assert.deepEqual(r.structuredContent, JSON.parse(r.content[0]!.text));
    assert.equal(await dbCount(mcp.dbPath, "SELECT count(*) AS n FROM events WHERE owner_id = 'milo'"), 0, 'no event was created');
  });

  test('bad arguments: isError with INVALID_ACTION_INPUT, the issues and the input schema', async () => {
    for (const args of [{ module: 5, method: 'read', input: {} }, { module: 'memory', method: 'read' }, { module: 'memory', method: 'read', input: 'x' }]) {
      const r = await call(args);
      assert.equal(r.isError, true, JSON.stringify(args));
      const error = r.structuredContent?.error as { code: string; issues?: unknown[]; input_schema?: unknown } | undefined;
      assert.equal(error?.code, 'INVALID_ACTION_INPUT', JSON.stringify(args));
      assert.ok(Array.isArray(error?.issues) && error.issues.length > 0, 'issues say what is wrong');
      assert.deepEqual(error?.input_schema, TOOL_DESCRIPTOR.input_schema);
      assert.deepEqual(r.structuredContent, JSON.parse(r.content[0]!.text));
    }
    // An action's own input refused by its schema: a structured error too.
    const bad = await call({ module: 'calendar', method: 'read', input: { mode: 'day', date: 'tomorrow' } });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent?.status, 'failure');
    assert.equal(typeof bad.structuredContent?.error?.code, 'string');
  });
});
