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

const line = (m: unknown) => `${JSON.stringify(m)}\n`;
const INITIALIZE =
  line({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } }) +
  line({ jsonrpc: '2.0', method: 'notifications/initialized' });

/** `serve --mcp ARGS` for `user`, with `input` piped and stdin closed at once: its exit code and output. */
async function pipedMcp(args: string[], user: string, input: string, signal?: AbortSignal): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--mcp', ...args], {
    env: { PATH: process.env.PATH, TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: await mintBearer(user) },
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(signal ? { signal, killSignal: 'SIGKILL' as const } : {}),
  });
  proc.on('error', () => {}); // the abort as the test times out
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  proc.stdin.end(input);
  return { code: await exited, stdout, stderr };
}

for (const executor of ['inprocess', 'subprocess'] as const) {
  test(`serve --mcp (${executor}): a tools/call piped before stdin ends is answered and stored`, { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const db = join(dir, 'toolgate.db');
    const { code, stdout, stderr } = await pipedMcp(
      ['--executor', executor, '--db', db],
      'piper',
      INITIALIZE + line({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'project_cli', arguments: { module: 'memory', method: 'update', input: { key: 'piped', content: 'answered' } } } }),
    );
    assert.equal(code, 0, stderr);
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

test('serve --mcp: a tools/call the host cancelled is waited for no more once stdin ends; the server exits', { timeout: 60_000 }, async (t) => {
  const dir = tempDir();
  // A call timeout of 2 minutes: a server that waited for the cancelled call's answer would outlive this test
  // (and is killed as it times out).
  const args = ['--executor', 'inprocess', '--call-timeout-ms', '120000', '--db', join(dir, 'toolgate.db')];
  // The SDK sends no response to a request cancelled while it runs: the server waited for one until the call
  // timeout plus 5 s (35 s by default) after stdin ended, though an MCP host's close SIGTERMs a server that has
  // not exited 2 s after it closed stdin.
  const { code, stdout, stderr } = await pipedMcp(
    args,
    'canceller',
    INITIALIZE +
      line({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'project_cli', arguments: { module: 'memory', method: 'update', input: { key: 'cancelled', content: 'x' } } } }) +
      line({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'the host changed its mind' } }),
    t.signal,
  );
  assert.equal(code, 0, stderr);
  const answers = stdout.trim().split('\n').map((l) => JSON.parse(l) as { id?: number });
  assert.ok(answers.some((m) => m.id === 1), `initialize was answered; got ${stdout}`);
  assert.ok(!answers.some((m) => m.id === 2), `the cancelled tools/call got no response; got ${stdout}`);
});
