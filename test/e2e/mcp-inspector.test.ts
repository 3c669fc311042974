/**
 * The MCP Inspector CLI (`@modelcontextprotocol/inspector --cli`) against
 * both transports: list the tool, call it, read a skill resource. The
 * Inspector is not a dependency (it is large and its `engines` asks for a
 * newer Node than this project's, though its CLI mode runs on Node 20): set
 * TOOLGATE_MCP_INSPECTOR to its `mcp-inspector` bin to run this, e.g.
 *
 *   npm install --prefix /tmp/insp @modelcontextprotocol/inspector@2.12.0
 *   TOOLGATE_MCP_INSPECTOR=/tmp/insp/node_modules/.bin/mcp-inspector node --test dist/test/e2e/mcp-inspector.test.js
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startHost } from '../helpers/host.js';
import { TOOLGATE_BIN } from '../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';

const INSPECTOR = process.env.TOOLGATE_MCP_INSPECTOR;
const skip = INSPECTOR ? false : 'set TOOLGATE_MCP_INSPECTOR to the mcp-inspector bin to run the Inspector CLI';

function inspect(target: string[], method: string[], env: Record<string, string> = {}): unknown {
  const r = spawnSync(INSPECTOR!, ['--cli', ...target, ...method], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  // Version banners (1.x) and the server's stderr may precede the JSON document.
  return JSON.parse(r.stdout.slice(r.stdout.indexOf('{\n')));
}

test('the MCP Inspector CLI lists, calls and reads a skill over stdio and over HTTP', { skip }, async () => {
  const token = await mintBearer('ines');
  const host = await startHost({ transport: 'ws' });
  try {
    const stdio = [
      '-e', `TOOLGATE_BEARER_SECRET=${TEST_BEARER_SECRET}`, '-e', `TOOLGATE_MCP_TOKEN=${token}`,
      process.execPath, TOOLGATE_BIN, 'serve', '--mcp', '--db', host.dbPath,
    ];
    const http = [`http://127.0.0.1:${host.port}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${token}`];
    for (const target of [stdio, http]) {
      const listed = inspect(target, ['--method', 'tools/list']) as { tools: Array<{ name: string }> };
      assert.deepEqual(listed.tools.map((t) => t.name), ['project_cli']);
      const called = inspect(target, ['--method', 'tools/call', '--tool-name', 'project_cli', '--tool-arg', 'module=memory', 'method=read', 'input={}']) as {
        structuredContent: { status: string };
      };
      assert.equal(called.structuredContent.status, 'success');
      const read = inspect(target, ['--method', 'resources/read', '--uri', 'skill://memory/SKILL.md']) as { contents: Array<{ text: string }> };
      assert.match(read.contents[0]!.text, /^---\nname: memory/);
    }
  } finally {
    await host.stop();
  }
});
