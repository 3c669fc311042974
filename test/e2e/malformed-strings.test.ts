/**
 * Contract section 21: U+0000 and unpaired surrogates, in any string of a
 * call, are refused at admission on every engine and with both executors —
 * tool input as an `INVALID_ACTION_INPUT` tool failure naming the field, ids
 * and appended text as -32602 — at once, never -32603, never stored (on
 * SQLite `\ud800` would become U+FFFD; PostgreSQL refuses both). The pass
 * with `TOOLGATE_TEST_PG_URL` set runs the same cases on PostgreSQL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startInProcess, startMcpInProcess } from '../helpers/in-process.js';
import { openSession, rpcError } from '../helpers/host.js';
import { dbCount } from '../helpers/db.js';
import { mintBearer } from '../helpers/tokens.js';
import { PROJECT_CLI_BIN, tempDir } from '../helpers/repo.js';
import { ALL_ACTIONS, TEST_VERIFY_KEY_JSON, mintCredential, recordTrustedKey } from '../helpers/credentials.js';
import { argsSha256 } from '../../src/codec/canonical-json.js';
import { mcpPost } from '../helpers/mcp-raw.js';

/** Each malformed shape, in a string a call may carry. */
const BAD = { nul: 'a\u0000b', high: 'a\ud800b', low: 'a\udc00b', trailing: 'tail\ud83d' } as const;

interface Invoked {
  status: string;
  content: Array<{ text: string }>;
}

for (const executor of ['inprocess', 'subprocess'] as const) {
  test(`${executor}: a NUL or lone surrogate in tool input is INVALID_ACTION_INPUT naming the field, and nothing is stored`, { timeout: 60_000 }, async () => {
    const host = await startInProcess({ executor });
    try {
      const s = await openSession(host, await mintBearer('alice'));
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ module: 'memory', method: 'update', input: { key: 'k', content: BAD.nul } }, 'input.content'],
        [{ module: 'memory', method: 'update', input: { key: BAD.high, content: 'x' } }, 'input.key'],
        [{ module: 'memory', method: 'update', input: { key: 'k', content: BAD.low } }, 'input.content'],
        [{ module: 'calendar', method: 'create', input: { items: [{ title: BAD.trailing }] } }, 'input.items.0.title'],
        [{ module: 'memory', method: 'read', input: { [BAD.nul]: 1 } }, 'input.(key)'],
        [{ module: `memory${BAD.nul}`, method: 'read', input: {} }, 'module'],
      ];
      for (const [i, [args, path]] of cases.entries()) {
        const started = performance.now();
        const r = await host.request<Invoked>('tool/invoke', { session_id: s.session_id, thread_id: 'strings', tool_call_id: `c${i}`, args });
        assert.ok(performance.now() - started < 10_000, 'answered at once');
        assert.equal(r.status, 'failure', JSON.stringify(args));
        const error = JSON.parse(r.content[0]!.text).error as { code: string; message: string; issues: Array<{ path: string }> };
        assert.equal(error.code, 'INVALID_ACTION_INPUT');
        assert.equal(error.issues[0]!.path, path);
        assert.match(error.message, new RegExp(path.replace(/[.()]/g, '\\$&')));
      }
      // Refused, never stored: no thread, no message, no call record, no memory.
      for (const table of ['threads', 'messages', 'tool_calls', 'memories']) {
        assert.equal(await dbCount(host.dbPath, `SELECT COUNT(*) AS n FROM ${table}`), 0, table);
      }
      // The same session still works.
      const ok = await host.request<Invoked>('tool/invoke', {
        session_id: s.session_id, thread_id: 'strings', tool_call_id: 'fine', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'fine' } },
      });
      assert.equal(ok.status, 'success');
    } finally {
      await host.stop();
    }
  });
}

test('ids, appended text and worker output holding a NUL or lone surrogate are -32602, and nothing is stored', async () => {
  const host = await startInProcess();
  try {
    const s = await openSession(host, await mintBearer('alice'));
    const args = { module: 'memory', method: 'read', input: {} };
    const refused: Array<[string, Record<string, unknown>, string]> = [
      ['tool/invoke', { session_id: s.session_id, thread_id: BAD.nul, tool_call_id: 'x', args }, 'thread_id'],
      // Two ids SQLite would both have stored as `k\ufffd`: neither is taken.
      ['tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: `k${BAD.high}`, args }, 'tool_call_id'],
      ['tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: `k${BAD.low}`, args }, 'tool_call_id'],
      ['tool/invoke', { session_id: `${s.session_id}\u0000`, thread_id: 't', tool_call_id: 'x', args }, 'session_id'],
      ['message/append', { session_id: s.session_id, thread_id: 't', role: 'user', content: BAD.nul }, 'content'],
      ['message/append', { session_id: s.session_id, thread_id: 't', role: 'user', content: BAD.trailing }, 'content'],
      ['message/append', { session_id: s.session_id, thread_id: 't', role: 'assistant', content: 'ok', worker_output: { status: 'success', answer: BAD.high } }, 'worker_output.answer'],
      ['message/append', { session_id: s.session_id, thread_id: BAD.low, role: 'user', content: 'ok' }, 'thread_id'],
      ['history/get', { session_id: s.session_id, thread_id: BAD.nul }, 'thread_id'],
      ['thread/subscribe', { session_id: s.session_id, thread_id: BAD.high }, 'thread_id'],
    ];
    for (const [method, params, path] of refused) {
      const err = await rpcError(host.request(method, params));
      assert.equal(err.code, -32602, `${method} ${path}: ${err.message}`);
      const data = err.data as { code: string; issues: Array<{ path: string }> };
      assert.equal(data.code, 'MALFORMED_STRING');
      assert.equal(data.issues[0]!.path, path);
    }
    for (const table of ['threads', 'messages', 'tool_calls']) {
      assert.equal(await dbCount(host.dbPath, `SELECT COUNT(*) AS n FROM ${table}`), 0, table);
    }
    // A paired surrogate (an emoji) is well-formed text: stored and read back as sent.
    await host.request('message/append', { session_id: s.session_id, thread_id: 't😀', role: 'user', content: 'ok 😀' });
    const history = await host.request<{ messages: Array<{ content: string }> }>('history/get', { session_id: s.session_id, thread_id: 't😀' });
    assert.equal(history.messages[0]!.content, 'ok 😀');
  } finally {
    await host.stop();
  }
});

test('MCP: a NUL in the arguments is INVALID_ACTION_INPUT; one in _meta\'s thread id is invalid params', async () => {
  const mcp = await startMcpInProcess(await mintBearer('alice'));
  try {
    const r = (await mcp.client.callTool({ name: 'project_cli', arguments: { module: 'memory', method: 'update', input: { key: 'k', content: BAD.nul } } })) as {
      isError?: boolean;
      structuredContent?: { error?: { code: string; issues: Array<{ path: string }> } };
    };
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent?.error?.code, 'INVALID_ACTION_INPUT');
    assert.equal(r.structuredContent?.error?.issues[0]!.path, 'input.content');
    const meta = (await mcp.client
      .callTool({ name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} }, _meta: { 'toolgate/thread_id': BAD.high } })
      .catch((e: unknown) => e)) as { isError?: boolean; content?: Array<{ text: string }>; code?: number };
    // The SDK hands a protocol error of a tool back as an error result (or rejects): either way, refused by name.
    const text = meta.content?.[0]?.text ?? String(meta);
    assert.match(text, /unpaired UTF-16 surrogate/);
    for (const table of ['threads', 'messages', 'tool_calls', 'memories']) {
      assert.equal(await dbCount(mcp.dbPath, `SELECT COUNT(*) AS n FROM ${table}`), 0, table);
    }
  } finally {
    await mcp.stop();
  }
});

test('MCP tasks and the call routes: an id or cursor holding a NUL or lone surrogate names nothing (-32602, 404), never -32603', { timeout: 60_000 }, async () => {
  const host = await startInProcess({ transport: 'ws' });
  try {
    const token = await mintBearer('alice');
    const port = host.port!;
    const init = await mcpPost(port, token, {}, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' };
    await mcpPost(port, token, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
    let id = 0;
    const request = async (method: string, params: Record<string, unknown>) => (await mcpPost(port, token, session, { jsonrpc: '2.0', id: ++id, method, params })).answer;
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
    // A real call in the thread `t\ufffd`: what a lone surrogate would be rewritten to (SQLite, PostgreSQL's driver).
    const made = await request('tools/call', { name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} }, _meta: { 'toolgate/thread_id': 't\ufffd', 'toolgate/tool_call_id': 'c' } });
    assert.ok(made.result, JSON.stringify(made));
    assert.equal((await request('tasks/get', { taskId: b64(['t\ufffd', 'c']) })).result?.status, 'completed', 'its own task id names it');
    const none = await request('tasks/get', { taskId: b64(['no', 'such']) });
    assert.equal(none.error?.code, -32602, JSON.stringify(none));
    for (const taskId of [b64([`t${BAD.nul}`, 'c']), b64(['t\ud800', 'c']), b64(['t', BAD.low])]) {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        const answer = await request(method, { taskId });
        assert.deepEqual(answer.error, none.error, `${method} ${JSON.stringify(answer)}`);
      }
    }
    for (const cursor of [b64([`2026${BAD.nul}`, 'x']), b64(['2026', BAD.high])]) {
      const answer = await request('tasks/list', { cursor });
      assert.equal(answer.error?.code, -32602, JSON.stringify(answer));
    }
    // The HTTP call route: a NUL in a path id names no call (as a lone surrogate's invalid UTF-8 does not).
    for (const path of ['/threads/t%00/calls/c', '/threads/t/calls/c%00', '/threads/t%00/calls/c/approval']) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method: path.endsWith('/approval') ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(path.endsWith('/approval') ? { body: JSON.stringify({ decision: 'approve', args_sha256: 'a'.repeat(64) }) } : {}),
      });
      assert.equal(res.status, 404, `${path}: ${await res.text()}`);
    }
    assert.doesNotMatch(host.stderr(), /"level":"error"/);
  } finally {
    await host.stop();
  }
});

test('project-cli refuses a NUL or lone surrogate in its stdin input itself: exit 2, nothing recorded', async () => {
  const dir = tempDir('toolgate-cli-');
  const db = join(dir, 'toolgate.db');
  await recordTrustedKey(db);
  for (const [i, content] of [BAD.nul, BAD.high].entries()) {
    const input = { key: 'k', content };
    const call = { thread_id: 't', tool_call_id: `c${i}`, args_sha256: argsSha256({ module: 'memory', method: 'update', input }) };
    const token = await mintCredential({ sub: 'alice', actions: ALL_ACTIONS, call });
    const run = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [PROJECT_CLI_BIN, 'memory', 'update'], {
        env: { PROJECT_CLI_CREDENTIAL: token, PROJECT_CLI_VERIFY_KEY: TEST_VERIFY_KEY_JSON, TOOLGATE_DB: db },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout }));
      child.stdin.end(JSON.stringify(input));
    });
    assert.equal(run.code, 2, run.stdout);
    const doc = JSON.parse(run.stdout) as { ok: boolean; error: { code: string; issues: Array<{ path: string }> } };
    assert.equal(doc.error.code, 'INVALID_ACTION_INPUT');
    assert.equal(doc.error.issues[0]!.path, 'input.content');
  }
  assert.equal(await dbCount(db, 'SELECT COUNT(*) AS n FROM tool_calls'), 0);
  assert.equal(await dbCount(db, 'SELECT COUNT(*) AS n FROM memories'), 0);
});
