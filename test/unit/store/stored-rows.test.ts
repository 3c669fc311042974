/**
 * Stored rows are checked when written and at migration, not on every read (issue 11):
 * a tool message whose ToolAgentOutput the protocol does not allow is never written (the
 * call fails, nothing of it is stored), and a migration that meets such a row in an older
 * database refuses, names the row and leaves the file at its version.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createDaemon } from '../../../src/app/serve.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { SubprocessExecutor } from '../../../src/calls/subprocess-executor.js';
import { buildToolAgentOutput } from '../../../src/codec/tool-output.js';
import { deriveUiHints } from '../../../src/codec/ui-hints.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { openStore } from '../../../src/store/open-store.js';
import { STORED_ROW_CHECK, StoredRowError, toolMessageMetadata } from '../../../src/store/stored-rows.js';
import { checkedToolMessage } from '../../../src/calls/tool-message.js';
import { execute } from '../../../src/cli-router/core.js';
import { ActionError } from '../../../src/cli-router/errors.js';
import type { ActionDefinition } from '../../../src/cli-router/action.js';
import type { CredentialClaims } from '../../../src/cli-router/credential.js';
import { z } from 'zod';
import { DatabaseOpenError } from '../../../src/store/database.js';
import type { CliDocument, ToolAgentOutput, ToolCallArgs } from '../../../src/protocol/index.js';
import { tempDir } from '../../helpers/repo.js';
import { TEST_BEARER_SECRET } from '../../helpers/tokens.js';

const ARGS: ToolCallArgs = { module: 'memory', method: 'read', input: {} };
const OK_DOC: CliDocument = { ok: true, module: 'memory', method: 'read', data: { memories: [] } };
const goodOutput = (): ToolAgentOutput => buildToolAgentOutput(OK_DOC, ARGS, 'c1', deriveUiHints);

test('toolMessageMetadata writes a ToolAgentOutput and refuses anything else', () => {
  assert.deepEqual(JSON.parse(toolMessageMetadata(goodOutput())), { tool_agent_output: goodOutput() });
  assert.throws(() => toolMessageMetadata({ ...goodOutput(), status: 'done' as never }), StoredRowError);
  const { ui_hints: _dropped, ...withoutHints } = goodOutput();
  assert.throws(() => toolMessageMetadata(withoutHints as ToolAgentOutput), /tool_agent_output\.ui_hints/);
});

test('a call whose output is no ToolAgentOutput fails and stores nothing — no message, no thread', async () => {
  const daemon = await createDaemon(
    { transport: 'stdio', db: join(tempDir(), 'toolgate.db'), dev: false, executor: 'inprocess', env: { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET } },
    createLogger(() => {}, 'error'),
  );
  try {
    // A project-cli that prints a document the executor accepts (ok:false, a string code) but the protocol does not.
    const lying = new SubprocessExecutor(async () => ({
      doc: { ok: false, module: 'memory', method: 'read', error: { code: 'NOT_A_CODE', message: 'x' } } as unknown as CliDocument,
    }));
    daemon.executor = lying;
    const session = daemon.sessions.open({ userId: 'ria', connectionId: 'p1', source: 'session', jobId: null, enabledSkills: [], allowedActions: ['memory.read'] });
    await daemon.store.transaction((tx) => tx.users.ensure('ria'));
    const heard: unknown[] = [];
    const peer = { id: 'p1', trusted: false, notify: (_m: string, p: unknown) => heard.push(p) };
    await assert.rejects(
      daemon.toolCalls.invoke(session, { threadId: 't1', toolCallId: 'c1', args: ARGS }, { signal: new AbortController().signal, to: { ...peer, transport: 'stdio' }, log: daemon.log }),
      (err: unknown) => err instanceof StoredRowError && /tool_agent_output\.error\.code/.test((err as Error).message),
    );
    assert.equal(await daemon.store.read((tx) => tx.threads.exists('ria', 't1')), false, 'no half-written thread');
    assert.equal(await daemon.store.read((tx) => tx.messages.getToolMessage('ria', 't1', 'c1')), undefined);
    assert.deepEqual(heard, [], 'nobody heard of a call that was not stored');
  } finally {
    await daemon.store.close();
  }
});

test('a call record whose outcome is no CLI document is refused before it is recorded; its unit leaves nothing', async () => {
  const store = await openStore(join(tempDir(), 'toolgate.db'));
  try {
    // A handler whose error the protocol does not allow (its code is no tool error code).
    const lying: ActionDefinition = {
      module: 'memory',
      method: 'read',
      summary: 'lies',
      input: z.object({}),
      run: async () => {
        throw new ActionError('NOT_A_CODE' as never, 'x');
      },
    };
    const now = Math.floor(Date.now() / 1000);
    const claims: CredentialClaims = {
      iss: 'toolgate',
      aud: 'project_cli',
      sub: 'ria',
      jti: 'j1',
      iat: now,
      exp: now + 60,
      actions: ['memory.read'],
      call: { thread_id: 't1', tool_call_id: 'c1', args_sha256: 'h' },
    };
    // The in-process executor's hook: the record's document becomes the tool message, checked before either is written.
    const checkRecord = (doc: Parameters<typeof checkedToolMessage>[0]) => void checkedToolMessage(doc, { module: 'memory', method: 'read', input: {} }, 'c1');
    const call = { claims, module: 'memory', method: 'read', input: {}, checkRecord };
    await assert.rejects(
      store.transaction((tx) => execute(tx, lying, call)),
      (err: unknown) => err instanceof StoredRowError && /tool_agent_output\.error\.code/.test((err as Error).message),
    );
    assert.equal(await store.read((tx) => tx.toolCalls.get('ria', 't1', 'c1')), undefined, 'nothing recorded');
  } finally {
    await store.close();
  }
});

/** A version-3 file (before credential_keys) holding one user, one thread and the given rows. */
function versionThreeFile(rows: { toolMetadata: string; status: string; args?: string; outcome?: string }): string {
  const file = join(tempDir(), 'toolgate.db');
  const db = new Database(file);
  for (const m of MIGRATIONS.slice(0, 3)) db.exec(m);
  db.pragma('user_version = 3');
  const at = '2026-01-01T00:00:00.000Z';
  db.prepare('INSERT INTO users (id, created_at, updated_at) VALUES (?, ?, ?)').run('ria', at, at);
  db.prepare('INSERT INTO threads (user_id, id, last_seq, created_at, updated_at) VALUES (?, ?, 2, ?, ?)').run('ria', 't1', at, at);
  const insert = db.prepare(
    'INSERT INTO messages (id, user_id, thread_id, thread_seq, role, content, metadata, tool_call_id, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  insert.run('m1', 'ria', 't1', 1, 'user', 'hello', '{}', null, null, at);
  insert.run('m2', 'ria', 't1', 2, 'tool', '{"status":"success"}', rows.toolMetadata, 'c1', rows.status, at);
  db.prepare('INSERT INTO tool_calls (user_id, thread_id, tool_call_id, action, args, args_sha256, outcome, exit_code, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
    .run('ria', 't1', 'c1', 'memory.read', rows.args ?? JSON.stringify(ARGS), 'h', rows.outcome ?? JSON.stringify(OK_DOC), 0, at);
  db.close();
  return file;
}

const versionOf = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
};

test('migration: an older database whose rows match the protocol migrates', async () => {
  const file = versionThreeFile({ toolMetadata: JSON.stringify({ tool_agent_output: goodOutput() }), status: 'success' });
  const store = await openStore(file, { checkRows: STORED_ROW_CHECK });
  await store.close();
  assert.equal(versionOf(file), MIGRATIONS.length);
});

test('migration: a malformed message row is refused by name, and the file stays at its version', async () => {
  const file = versionThreeFile({ toolMetadata: JSON.stringify({ tool_agent_output: { ...goodOutput(), status: 'done' } }), status: 'done' });
  await assert.rejects(openStore(file, { checkRows: STORED_ROW_CHECK }), (err: unknown) => {
    assert.ok(err instanceof DatabaseOpenError);
    assert.match(err.message, /migrating the schema from version 3 to \d+ refused: 1 stored row\(s\) do not match the protocol/);
    assert.match(err.message, /messages m2 \(user ria, thread t1\): metadata\.tool_agent_output\.status/);
    return true;
  });
  assert.equal(versionOf(file), 3, 'nothing migrated');
});

test('migration: malformed call records and a status that disagrees with the output are named too', async () => {
  const file = versionThreeFile({
    toolMetadata: JSON.stringify({ tool_agent_output: goodOutput() }),
    status: 'failure',
    outcome: JSON.stringify({ ok: true, module: 'memory' }),
  });
  await assert.rejects(openStore(file, { checkRows: STORED_ROW_CHECK }), (err: Error) => {
    assert.match(err.message, /2 stored row\(s\)/);
    assert.match(err.message, /messages m2 .*status: failure is not the output's success/);
    assert.match(err.message, /tool_calls \(user ria, thread t1, tool_call_id c1\): outcome/);
    return true;
  });
  assert.equal(versionOf(file), 3);
});

test('the daemon migrates with the check: serve refuses such a database before serving', async () => {
  const file = versionThreeFile({ toolMetadata: '{"tool_agent_output":{"status":"success"}}', status: 'success' });
  await assert.rejects(
    createDaemon({ transport: 'stdio', db: file, dev: false, executor: 'inprocess', env: { TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET } }, createLogger(() => {}, 'error')),
    /messages m2 \(user ria, thread t1\): metadata\.tool_agent_output/,
  );
  assert.equal(versionOf(file), 3);
});
