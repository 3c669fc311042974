/**
 * The settings a configuration reload (SIGHUP) changes live besides the
 * profiles (configuration.md), in process: `auth.max_token_lifetime_s`
 * applies to a token the daemon has already verified (and remembers), and
 * `mcp.agent` to the MCP sessions over HTTP opened from then on, of both
 * revisions — also once the profile it named before is gone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { liveLimits, limitsOf } from '../../../src/app/serve.js';
import { reloadConfig } from '../../../src/app/config-reload.js';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { connectMcp } from '../../helpers/mcp-hosts.js';
import { openSession, rpcError } from '../../helpers/host.js';
import { mintBearer } from '../../helpers/tokens.js';
import { tempDir } from '../../helpers/repo.js';

const ALL = { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.*', 'memory.*'] };
const READER = { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] };

function reload(host: InProcessHost, file: string, config: unknown): void {
  writeFileSync(file, JSON.stringify(config));
  const outcome = reloadConfig({
    services: host.services,
    log: host.services.log,
    file,
    liveLimitsOf: (c) => liveLimits(limitsOf({ transport: 'ws', dev: false, executor: 'inprocess', env: {} }, c)),
  });
  assert.equal(outcome, 'ok');
}

test('a reload that lowers auth.max_token_lifetime_s refuses a long-lived token already verified; raised again, it is accepted', async () => {
  const file = join(tempDir(), 'toolgate.json');
  writeFileSync(file, JSON.stringify({ agents: { default: ALL } }));
  const host = await startInProcess({ transport: 'ws', args: ['--config', file] });
  try {
    const token = await mintBearer('long-lived', {}, { expiresIn: '48h' });
    await openSession(host, token);
    reload(host, file, { agents: { default: ALL }, auth: { max_token_lifetime_s: 3600 } });
    const refused = await rpcError(openSession(host, token));
    assert.equal(refused.code, -32001);
    assert.match(refused.message, /max_token_lifetime_s/);
    reload(host, file, { agents: { default: ALL } });
    await openSession(host, token);
  } finally {
    await host.stop();
  }
});

for (const kind of ['http', 'http-2026'] as const) {
  test(`a reload that changes mcp.agent gives MCP sessions over HTTP opened from then on its profile (${kind})`, async () => {
    const file = join(tempDir(), 'toolgate.json');
    writeFileSync(file, JSON.stringify({ agents: { default: ALL, reader: READER }, mcp: { agent: 'default' } }));
    const host = await startInProcess({ transport: 'ws', args: ['--config', file] });
    const token = await mintBearer('mia');
    const memoryRead = { name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} } };
    const code = (r: unknown) => (r as { structuredContent: { status: string; error?: { code: string } } }).structuredContent.error?.code ?? 'success';
    try {
      const before = await connectMcp(kind, { token, port: host.port! });
      assert.equal(code(await before.client.callTool(memoryRead)), 'success');
      await before.close();

      reload(host, file, { agents: { default: ALL, reader: READER }, mcp: { agent: 'reader' } });
      const after = await connectMcp(kind, { token, port: host.port! });
      assert.equal(code(await after.client.callTool(memoryRead)), 'ACTION_NOT_ALLOWED');
      assert.match((await after.client.listTools()).tools[0]!.description!, /Enabled skills: calendar\./);
      await after.close();

      // The profile MCP used before is gone: new sessions still open, with the one named now.
      reload(host, file, { agents: { reader: READER }, mcp: { agent: 'reader' } });
      const last = await connectMcp(kind, { token, port: host.port! });
      assert.equal(code(await last.client.callTool(memoryRead)), 'ACTION_NOT_ALLOWED');
      await last.close();
    } finally {
      await host.stop();
    }
  });
}
