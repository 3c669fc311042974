/**
 * Exactly once across the process boundary: project-cli commits the action
 * and the record of the call together, so a daemon that dies before storing
 * the tool message recovers it — on retry or on restart — without running
 * the action a second time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dbCount } from '../helpers/db.js';
import { pgDatabaseFor, TEST_PG_URL } from '../helpers/pg.js';
import { SignJWT, importJWK, type JWK } from 'jose';
import { openSession } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { PROJECT_CLI_BIN, tempDir } from '../helpers/repo.js';
import { argsSha256 } from '../../src/codec/canonical-json.js';

/**
 * Plays the part of a daemon that issued the credential and started
 * project-cli, then died before storing the result: the CLI commits alone.
 */
async function runCliAsDaemonWouldHave(dataDir: string, user: string, threadId: string, toolCallId: string, args: { module: string; method: string; input: Record<string, unknown> }) {
  const jwk = JSON.parse(readFileSync(join(dataDir, 'credential-signing-key.jwk'), 'utf8')) as JWK;
  const key = await importJWK(jwk, 'EdDSA');
  const credential = await new SignJWT({ actions: [`${args.module}.${args.method}`], call: { thread_id: threadId, tool_call_id: toolCallId, args_sha256: argsSha256(args) } })
    .setProtectedHeader({ alg: 'EdDSA' })
    .setIssuer('toolgate').setAudience('project_cli').setSubject(user).setJti(`jti-${toolCallId}`).setIssuedAt().setExpirationTime('5m')
    .sign(key);
  const { d: _d, ...publicJwk } = jwk;
  const r = spawnSync(process.execPath, [PROJECT_CLI_BIN, args.module, args.method], {
    input: JSON.stringify(args.input),
    env: {
      PROJECT_CLI_CREDENTIAL: credential,
      PROJECT_CLI_VERIFY_KEY: JSON.stringify(publicJwk),
      TOOLGATE_DB: TEST_PG_URL ? await pgDatabaseFor(dataDir) : join(dataDir, 'toolgate.db'),
    },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  return JSON.parse(r.stdout) as { ok: boolean; data: { event: { id: string } } };
}

const args = { module: 'calendar', method: 'create', input: { title: 'Exactly once', start_at: '2026-09-01T09:00:00Z', end_at: '2026-09-01T10:00:00Z' } };

function count(dbPath: string, sql: string): Promise<number> {
  return dbCount(dbPath, sql);
}

for (const executor of ['subprocess', 'inprocess'] as const) {
  // In process on PostgreSQL a new call is not read first (Tx.assumeNewCall): the committed record must still win.
  test(`a retry after the daemon lost the result returns the committed outcome without running again (${executor} executor)`, async () => {
    const host = await startInProcess({ executor });
    try {
      const s = await openSession(host, await mintBearer('alice'));
      await host.request('message/append', { session_id: s.session_id, thread_id: 'crash-1', role: 'user', content: 'book it' });
      const committed = await runCliAsDaemonWouldHave(host.dataDir, 'alice', 'crash-1', 'call-x', args);
      const retry = await host.request<{ status: string; content: Array<{ text: string }> }>('tool/invoke', {
        session_id: s.session_id, thread_id: 'crash-1', tool_call_id: 'call-x', args,
      });
      assert.equal(retry.status, 'success');
      assert.equal(JSON.parse(retry.content[0]!.text).data.event.id, committed.data.event.id);
      assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM events WHERE title = 'Exactly once'"), 1);
      assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM messages WHERE tool_call_id = 'call-x'"), 1);
    } finally {
      await host.stop();
    }
  });
}

test('on restart the daemon turns a committed call without a message into its tool message', async () => {
  const dataDir = tempDir();
  const first = await startInProcess({ executor: 'subprocess', dataDir });
  const s = await openSession(first, await mintBearer('alice'));
  await first.request('message/append', { session_id: s.session_id, thread_id: 'crash-2', role: 'user', content: 'book it' });
  await first.stop();

  const committed = await runCliAsDaemonWouldHave(dataDir, 'alice', 'crash-2', 'call-y', args);

  const second = await startInProcess({ executor: 'subprocess', dataDir });
  try {
    const s2 = await openSession(second, await mintBearer('alice'));
    const history = await second.request<{ messages: Array<{ role: string; content: string; tool_call_id?: string }> }>('history/get', {
      session_id: s2.session_id, thread_id: 'crash-2', view: 'context',
    });
    assert.deepEqual(history.messages.map((m) => m.role), ['user', 'tool']);
    const tool = history.messages[1]!;
    assert.equal(tool.tool_call_id, 'call-y');
    assert.equal(JSON.parse(tool.content).data.event.id, committed.data.event.id);

    const retry = await second.request<{ content: Array<{ text: string }> }>('tool/invoke', {
      session_id: s2.session_id, thread_id: 'crash-2', tool_call_id: 'call-y', args,
    });
    assert.equal(retry.content[0]!.text, tool.content, 'the retry answers with the recovered message, byte for byte');
    assert.equal(await count(second.dbPath, "SELECT count(*) AS n FROM events WHERE title = 'Exactly once'"), 1);
    assert.equal(await count(second.dbPath, "SELECT count(*) AS n FROM messages WHERE tool_call_id = 'call-y'"), 1);
  } finally {
    await second.stop();
  }
});
