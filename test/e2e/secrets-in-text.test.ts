/**
 * Contract section 5: a token or configured secret offered in host or model
 * text — however embedded — is refused, never redacted and stored: tool input
 * → UNAUTHENTICATED failure, message/append → -32602; nothing reaches the
 * wire, stderr or any database file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ResponseError } from 'vscode-jsonrpc/node';
import { openSession } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { TEST_BEARER_SECRET, mintBearer } from '../helpers/tokens.js';

const b64 = (s: string) => Buffer.from(s).toString('base64url');

test('tokens glued to text, with a spaced header, or a configured secret are refused everywhere and stored nowhere', async () => {
  const host = await startInProcess({ executor: 'subprocess' });
  const token = await mintBearer('alice');
  const spaced = `${b64(' {"alg":"HS256","typ":"JWT"}')}.${b64('{"sub":"alice"}')}.c3BhY2Vkc2lnbmF0dXJlX3h5eg`;
  const marks = [token.split('.')[2]!, 'c3BhY2Vkc2lnbmF0dXJlX3h5eg', TEST_BEARER_SECRET];
  const offers = [`x${token}`, `auth_${token}`, `see ${spaced} here`, `secret=${TEST_BEARER_SECRET}`];
  try {
    const s = await openSession(host, token);
    const wireStart = host.wire.length;
    for (const [i, text] of offers.entries()) {
      for (const [j, args] of [
        { module: 'memory', method: 'update', input: { key: `k${i}`, content: text } },
        { module: 'calendar', method: 'create', input: { title: 'Sync', description: text, start_at: '2026-01-01T00:00:00Z', end_at: '2026-01-01T01:00:00Z' } },
      ].entries()) {
        const r = await host.request<{ status: string; content: Array<{ text: string }> }>('tool/invoke', {
          session_id: s.session_id, thread_id: 'paste', tool_call_id: `c${i}-${j}`, args,
        });
        assert.equal(r.status, 'failure');
        assert.equal(JSON.parse(r.content[0]!.text).error.code, 'UNAUTHENTICATED', text);
      }
      for (const params of [
        { content: text },
        { content: 'fine', role: 'assistant', worker_output: { status: 'success', answer: text } },
        { content: 'fine', role: 'assistant', worker_output: { status: 'success', answer: 'ok', suggested_actions: [{ note: text }] } },
      ]) {
        const err = (await host
          .request('message/append', { session_id: s.session_id, thread_id: 'paste', role: 'user', ...params })
          .catch((e: unknown) => e)) as ResponseError<{ code: string }>;
        assert.equal(err.code, -32602, text);
        assert.equal(err.data?.code, 'CREDENTIAL_REFUSED');
        assert.match(err.message, /bearer token or credential/);
      }
    }
    // Nothing was stored: no thread, no memory.
    assert.deepEqual((await host.request<{ threads: unknown[] }>('thread/list', { session_id: s.session_id })).threads, []);
    const mem = await host.request<{ content: Array<{ text: string }> }>('tool/invoke', {
      session_id: s.session_id, thread_id: 'check', tool_call_id: 'r', args: { module: 'memory', method: 'read', input: {} },
    });
    assert.equal(JSON.parse(mem.content[0]!.text).data.count, 0);
    const wire = JSON.stringify(host.wire.slice(wireStart));
    for (const m of marks) assert.ok(!wire.includes(m), 'not on the wire');
  } finally {
    await host.stop();
  }
  for (const m of marks) assert.ok(!host.stderr().includes(m), 'not in stderr');
  for (const f of readdirSync(host.dataDir).filter((n) => n.startsWith('toolgate.db'))) {
    const bytes = readFileSync(join(host.dataDir, f)).toString('latin1');
    for (const m of marks) assert.ok(!bytes.includes(m), `not in ${f}`);
  }
});

test('project-cli never echoes a token given in argv (module, method or flag name)', async () => {
  const { spawnSync } = await import('node:child_process');
  const { PROJECT_CLI_BIN, tempDir } = await import('../helpers/repo.js');
  const { ALL_ACTIONS, mintCredential, recordTrustedKey } = await import('../helpers/credentials.js');
  const db = join(tempDir('toolgate-argv-'), 'toolgate.db');
  await recordTrustedKey(db);
  const credential = await mintCredential({ sub: 'alice', actions: ALL_ACTIONS });
  const token = await mintBearer('alice');
  const mark = token.split('.')[2]!;
  for (const argv of [['memory', `x${token}`], [`auth_${token}`, 'read'], ['memory', 'update', `--k${token}`, 'v'], ['--credential', `x${token}`]]) {
    const r = spawnSync(process.execPath, [PROJECT_CLI_BIN, ...argv], { input: '', env: { PROJECT_CLI_CREDENTIAL: credential, TOOLGATE_DB: db }, encoding: 'utf8' });
    const doc = JSON.parse(r.stdout) as { ok: boolean };
    assert.equal(doc.ok, false);
    assert.ok(!(r.stdout + r.stderr).includes(mark), `not echoed: ${argv[0]} ${argv[1]!.slice(0, 10)}`);
  }
});
