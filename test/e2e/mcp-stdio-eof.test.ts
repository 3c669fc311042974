/**
 * `serve --mcp` answers what it read before stdin ended: a host that pipes
 * `initialize`, `notifications/initialized` and a `tools/call` and then
 * closes stdin gets all its answers, the call is stored, and the server
 * exits 0 after the last answer (in-flight calls finish, as on every
 * transport). Spoken raw, one JSON-RPC message per line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';

for (const executor of ['inprocess', 'subprocess'] as const) {
  test(`serve --mcp (${executor}): a tools/call piped before stdin ends is answered and stored`, { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const db = join(dir, 'toolgate.db');
    const proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--mcp', '--executor', executor, '--db', db], {
      env: { PATH: process.env.PATH, TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: await mintBearer('piper') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    const line = (m: unknown) => `${JSON.stringify(m)}\n`;
    proc.stdin.end(
      line({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } }) +
        line({ jsonrpc: '2.0', method: 'notifications/initialized' }) +
        line({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'project_cli', arguments: { module: 'memory', method: 'update', input: { key: 'piped', content: 'answered' } } } }),
    );
    assert.equal(await exited, 0, stderr);
    const answers = stdout.trim().split('\n').map((l) => JSON.parse(l) as { id?: number; result?: { isError?: boolean } });
    const call = answers.find((m) => m.id === 2);
    assert.ok(call, `the tools/call was answered; got ${stdout}\n${stderr}`);
    assert.equal(call.result?.isError, false, stdout);
    const conn = new Database(db, { readonly: true });
    try {
      const row = conn.prepare("SELECT count(*) AS n FROM messages WHERE role = 'tool'").get() as { n: number };
      assert.equal(row.n, 1);
    } finally {
      conn.close();
    }
  });
}
