/**
 * `serve --mcp` from the side of any MCP host: the official SDK client
 * spawns the daemon, lists the one tool and calls it; the calls are stored
 * like any other, for the user of TOOLGATE_MCP_TOKEN.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';

interface CallResult {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
}

test('an MCP host lists project_cli and calls it; results are the projection and are stored for the token’s user', async () => {
  const dir = tempDir();
  const dbPath = join(dir, 'toolgate.db');
  const token = await mintBearer('mia', { name: 'Mia' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [TOOLGATE_BIN, 'serve', '--mcp', '--db', dbPath],
    env: { PATH: process.env.PATH ?? '', TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: token },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const client = new Client({ name: 'test-host', version: '1' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['project_cli']);
    assert.deepEqual([...(tools[0]!.inputSchema.required ?? [])].sort(), ['input', 'method', 'module']);

    const created = (await client.callTool({
      name: 'project_cli',
      arguments: { module: 'calendar', method: 'create', input: { title: 'Via MCP', start_at: '2026-05-05T09:00:00Z', end_at: '2026-05-05T10:00:00Z' } },
    })) as CallResult;
    assert.notEqual(created.isError, true);
    const body = JSON.parse(created.content[0]!.text) as { status: string; module: string; data: { event: { owner_id: string; title: string } } };
    assert.equal(body.status, 'success');
    assert.equal(body.data.event.owner_id, 'mia');

    const bad = (await client.callTool({ name: 'project_cli', arguments: { module: 'calendar', method: 'read', input: { mode: 'day', date: 'soon' } } })) as CallResult;
    assert.equal(bad.isError, true);
    assert.equal(JSON.parse(bad.content[0]!.text).error.code, 'INVALID_ACTION_INPUT');

    await assert.rejects(client.callTool({ name: 'project_cli', arguments: { module: 'calendar' } }));
    await assert.rejects(client.callTool({ name: 'other_tool', arguments: {} }));
  } finally {
    await client.close();
  }
  const db = new Database(dbPath, { readonly: true });
  const rows = db.prepare("SELECT content, metadata FROM messages WHERE role = 'tool' ORDER BY seq").all() as Array<{ content: string; metadata: string }>;
  const thread = db.prepare('SELECT user_id FROM threads').all();
  db.close();
  assert.equal(rows.length, 2);
  assert.deepEqual(thread, [{ user_id: 'mia' }]);
  assert.ok(!stderr.includes(token.split('.')[2]!), 'the token is never logged');
});

test('serve --mcp without a token, or with a bad one, stops with a clear message and exit 2', async () => {
  const dir = tempDir();
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [TOOLGATE_BIN, 'serve', '--mcp', '--db', join(dir, 'x.db')], {
      env: { PATH: process.env.PATH ?? '', TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, ...env }, input: '', encoding: 'utf8',
    });
  const none = run({});
  assert.equal(none.status, 2);
  assert.match(none.stderr, /TOOLGATE_MCP_TOKEN/);
  const badToken = await mintBearer('mia', {}, { secret: 'another-secret-another-secret-000' });
  const bad = run({ TOOLGATE_MCP_TOKEN: badToken });
  assert.equal(bad.status, 2);
  assert.ok(!bad.stderr.includes(badToken));
  assert.equal(bad.stdout, '', 'nothing but MCP on stdout');
});
