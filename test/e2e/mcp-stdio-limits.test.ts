/**
 * `serve --mcp` holds `limits.max_message_bytes` on its stdio lines, as the
 * daemon's own stdio does on its frames: a line over the cap is answered at
 * once with -32600 (`id: null`) and dropped as it streams, and the server
 * goes on serving the same connection. A line that is not JSON (-32700) or
 * not a JSON-RPC message (-32600) is answered too, never met with silence.
 * Spoken raw, one JSON-RPC message per line, as MCP frames stdio.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';

type Msg = { id?: number | null; result?: unknown; error?: { code: number; message: string } };

test('serve --mcp: a line over limits.max_message_bytes gets -32600 at once, is dropped as it streams, and the server goes on; a malformed line is answered', { timeout: 60_000 }, async () => {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['memory'], allowed_actions: ['memory.*'] } }, limits: { max_message_bytes: 4096 } }));
  const proc = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--mcp', '--db', join(dir, 'toolgate.db'), '--config', config], {
    env: { PATH: process.env.PATH, TOOLGATE_HOME: tempDir(), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: await mintBearer('lena') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const received: Msg[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: proc.stdout }).on('line', (line) => {
    received.push(JSON.parse(line) as Msg);
    for (const w of waiters.splice(0)) w();
  });
  let gone = false;
  void exited.then(() => {
    gone = true;
    for (const w of waiters.splice(0)) w();
  });
  /** The first message `pred` accepts; fails (rather than hangs) when it has not come within 15 s or the server exited. */
  const next = async (pred: (m: Msg, i: number) => boolean): Promise<Msg> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const m = received.find(pred);
      if (m) return m;
      if (gone || Date.now() > deadline) throw new Error(`no such message (server ${gone ? 'exited' : 'silent'}); got ${JSON.stringify(received)}\n${stderr}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 1000).unref();
      });
    }
  };
  const line = (m: unknown) => `${JSON.stringify(m)}\n`;
  try {
    proc.stdin.write(line({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'limits', version: '1' } } }));
    await next((m) => m.id === 1);
    proc.stdin.write(line({ jsonrpc: '2.0', method: 'notifications/initialized' }));

    // 40 KiB of one message, written in pieces: refused once its first 4 KiB have passed, before it ends.
    const big = line({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'project_cli', arguments: { module: 'memory', method: 'update', input: { key: 'big', content: 'x'.repeat(40 * 1024) } } } });
    proc.stdin.write(big.slice(0, 8 * 1024));
    const refused = await next((m) => m.id === null);
    assert.equal(refused.error?.code, -32600);
    assert.match(refused.error!.message, /max_message_bytes/);
    proc.stdin.write(big.slice(8 * 1024));

    // The same connection still serves: the line after the dropped one is answered, the dropped one never is.
    proc.stdin.write(line({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'project_cli', arguments: { module: 'memory', method: 'update', input: { key: 'small', content: 'fits' } } } }));
    const ok = await next((m) => m.id === 3);
    assert.equal((ok.result as { isError?: boolean }).isError, false, stderr);
    assert.ok(!received.some((m) => m.id === 2), 'the oversized call was not run');
    assert.match(stderr, /mcp stdio message too large/);

    // A line that is not JSON, or JSON that is no JSON-RPC message, is answered (the SDK alone says nothing); a blank line is not.
    const before = received.length;
    // A malformed *response* (no method) is never answered: JSON-RPC forbids replying to one.
    proc.stdin.write(`this is not json\n\n   \n${line({ jsonrpc: '2.0', id: 77, error: { code: 1 } })}`);
    const parse = await next((m, i) => i >= before && m.id === null);
    assert.equal(parse.error?.code, -32700);
    proc.stdin.write(line({ jsonrpc: '2.0', id: 4, method: 5 }));
    const invalid = await next((m, i) => i > received.indexOf(parse) && m.id === null);
    assert.equal(invalid.error?.code, -32600);
    // A line that is not UTF-8 is refused, never decoded to U+FFFD and run (contract section 21).
    proc.stdin.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"x":"a'), Buffer.from([0xff]), Buffer.from('"}}}\n')]));
    const notUtf8 = await next((m, i) => i > received.indexOf(invalid) && m.id === null);
    assert.deepEqual([notUtf8.error?.code, notUtf8.error?.message], [-32700, 'parse error: the line is not UTF-8']);
    proc.stdin.write(line({ jsonrpc: '2.0', id: 5, method: 'tools/list' }));
    await next((m) => m.id === 5);
    assert.ok(!received.some((m) => m.id === 6), 'the line that is not UTF-8 never ran');
    const answers = received.slice(before).filter((m) => 'id' in m);
    assert.equal(answers.length, 4, 'one answer each: none for the blank lines or the malformed response');
  } finally {
    proc.stdin.end();
  }
  assert.equal(await exited, 0, stderr);
});
