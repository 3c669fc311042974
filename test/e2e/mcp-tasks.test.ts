/**
 * MCP Tasks from outside (contract section 18), in raw JSON-RPC as a host
 * that speaks tasks sends it (the SDK's v2 client has no task API): over
 * stdio (`serve --mcp`) and Streamable HTTP, each on 2025-11-25 (`params.task`,
 * `tasks/get`, `tasks/result`, `tasks/cancel`) and 2026-07-28 (the
 * `io.modelcontextprotocol/tasks` extension: `resultType: "task"`,
 * `tasks/get` with the result inline, `tasks/cancel` acknowledged), on the
 * pass's engine; and two daemons on one PostgreSQL database, the task made
 * on one and read and cancelled on the other. A call held by a write lock
 * stays running long enough to be seen working and cancelled.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHost } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer, TEST_BEARER_SECRET } from '../helpers/tokens.js';
import { TOOLGATE_BIN, tempDir } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait-for.js';
import { dbCount, dbRows } from '../helpers/db.js';
import { TEST_ENGINE, freshPgDatabase, needsPg, pgDatabaseFor } from '../helpers/pg.js';
import { holdWriteLock } from '../helpers/write-lock.js';

type Era = '2025' | '2026';
/** What these tests use of a `serve --ws` daemon, spawned or in this process. */
interface Host {
  port?: number;
  dbPath: string;
  stderr(): string;
  stop(): Promise<unknown>;
}
interface Answer {
  result?: Record<string, unknown> & { task?: Record<string, unknown> };
  error?: { code: number; message: string };
}

/** One raw MCP connection: a request gets its response (the notifications around it are ignored). */
interface RawMcp {
  era: Era;
  request(method: string, params: Record<string, unknown>, opts?: { declareTasks?: boolean }): Promise<Answer>;
  stderr(): string;
  close(): Promise<void>;
}

const TASKS_EXT = 'io.modelcontextprotocol/tasks';
const envelope = (declareTasks: boolean) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-host', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': declareTasks ? { extensions: { [TASKS_EXT]: {} } } : {},
});

const create = (title: string) => ({ module: 'calendar', method: 'create', input: { title, start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' } });

/** `serve --mcp` spoken to line by line: opened with `initialize` (2025-11-25) or `server/discover` (2026-07-28). */
async function rawStdio(era: Era, token: string, db: string, extraArgs: string[] = []): Promise<RawMcp> {
  const child = spawn(process.execPath, [TOOLGATE_BIN, 'serve', '--mcp', '--db', db, ...extraArgs], {
    env: { PATH: process.env.PATH ?? '', TOOLGATE_HOME: tempDir('toolgate-mcp-home-'), TOOLGATE_BEARER_SECRET: TEST_BEARER_SECRET, TOOLGATE_MCP_TOKEN: token, TOOLGATE_LOG_LEVEL: 'debug' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const waiting = new Map<number, (a: Answer) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as Answer & { id?: number };
    if (typeof m.id === 'number') waiting.get(m.id)?.(m);
  });
  let next = 0;
  const request = (method: string, params: Record<string, unknown>, opts: { declareTasks?: boolean } = {}) =>
    new Promise<Answer>((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      // 2026-07-28: every request carries its own envelope (the Tasks extension declared unless told otherwise).
      const withEnvelope = era === '2026' ? { ...params, _meta: { ...(params._meta as object), ...envelope(opts.declareTasks ?? true) } } : params;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: withEnvelope })}\n`);
    });
  if (era === '2026') {
    const discovered = await request('server/discover', {}, { declareTasks: false });
    assert.ok(discovered.result, JSON.stringify(discovered));
  } else {
    const init = await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-host', version: '1' } });
    assert.ok(init.result, JSON.stringify(init));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }
  return {
    era,
    request,
    stderr: () => stderr,
    async close() {
      child.stdin.end();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** POST /mcp; the response is JSON or an SSE stream holding it. */
async function post(port: number, token: string, headers: Record<string, string>, body: Record<string, unknown>): Promise<{ headers: Headers; answer: Answer }> {
  const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const messages = (res.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)) as Answer & { id?: unknown })
    : text
      ? [JSON.parse(text) as Answer & { id?: unknown }]
      : [];
  return { headers: res.headers, answer: messages.find((m) => m.id === body.id) ?? { error: { code: res.status, message: text } } };
}

/** Streamable HTTP at /mcp of a `serve --ws` daemon: a 2025-11-25 session, or sessionless 2026-07-28 requests. */
async function rawHttp(era: Era, host: Host, token: string): Promise<RawMcp> {
  let next = 0;
  const port = host.port!;
  if (era === '2026') {
    return {
      era,
      async request(method, params, opts = {}) {
        const id = ++next;
        const name = typeof params.name === 'string' ? params.name : typeof params.taskId === 'string' ? params.taskId : undefined;
        const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) };
        const body = { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...(params._meta as object), ...envelope(opts.declareTasks ?? true) } } };
        return (await post(port, token, headers, body)).answer;
      },
      stderr: () => host.stderr(),
      close: async () => {},
    };
  }
  const init = await post(port, token, {}, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw-host', version: '1' } } });
  const sid = init.headers.get('mcp-session-id')!;
  assert.ok(sid, JSON.stringify(init.answer));
  const session = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...session },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  }).then((r) => r.text());
  return {
    era,
    request: async (method, params) => (await post(port, token, session, { jsonrpc: '2.0', id: ++next, method, params })).answer,
    stderr: () => host.stderr(),
    close: async () => {
      await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, ...session } }).then((r) => r.text());
    },
  };
}

/** A task-augmented `tools/call` in the connection's revision; the task id it answers. */
async function callAsTask(mcp: RawMcp, args: unknown, meta: Record<string, unknown> = {}): Promise<{ taskId: string; answer: Answer }> {
  const params = { name: 'project_cli', arguments: args, _meta: meta };
  const answer = await mcp.request('tools/call', mcp.era === '2025' ? { ...params, task: { ttl: 60_000 } } : params);
  assert.ok(answer.result, JSON.stringify(answer));
  if (mcp.era === '2025') {
    assert.equal(answer.result.content, undefined, 'a CreateTaskResult, not a CallToolResult');
    return { taskId: String(answer.result.task!.taskId), answer };
  }
  assert.equal(answer.result.resultType, 'task');
  return { taskId: String(answer.result.taskId), answer };
}

const statusOf = (a: Answer) => (a.result as { status?: string } | undefined)?.status;

/**
 * The subprocess executor's stop of the call is final: its child gone and, on PostgreSQL, the child's server
 * sessions ended ("tool call stopped"). Not the child's exit ("project-cli stopped"): a statement the killed
 * child sent may still wait in the server for the test's lock, and commit if the lock came free first.
 */
const stopped = (mcp: RawMcp, before: number) =>
  waitFor(() => mcp.stderr().slice(before).includes('"tool call stopped"'), () => `the call to stop\n${mcp.stderr().slice(-1500)}`);

type Kind = 'stdio' | 'stdio-2026' | 'http' | 'http-2026';
const KINDS: Kind[] = ['stdio', 'stdio-2026', 'http', 'http-2026'];

/**
 * The two tests of a kind share its daemon: one `serve --mcp` per stdio kind (it acts for one user,
 * `alice-<kind>`), and one `serve --ws` for both HTTP kinds, where each kind's users are its own.
 * Their calls are told apart by id and title; the daemons stop after the file. The HTTP daemon runs
 * in this process on its real listener, on the binary's default executor (subprocess): /mcp is what
 * is checked, not the daemon's process; `serve --mcp` is spawned, its stdio being the transport.
 */
const stdioDaemons = new Map<Kind, Promise<{ mcp: RawMcp; db: string }>>();
let wsDaemon: Promise<Host> | undefined;
after(async () => {
  await Promise.all([...stdioDaemons.values()].map(async (d) => (await d).mcp.close()));
  await (await wsDaemon)?.stop();
});

const userOf = (kind: Kind) => `alice-${kind}`;

/** The kind's connection for `userOf(kind)`; `close` ends what is the test's own (an HTTP session), not the daemon. */
async function open(kind: Kind): Promise<{ mcp: RawMcp; db: string; host?: Host; close(): Promise<void> }> {
  if (kind === 'stdio' || kind === 'stdio-2026') {
    let shared = stdioDaemons.get(kind);
    if (!shared) {
      shared = (async () => {
        const dataDir = tempDir();
        const db = TEST_ENGINE === 'postgres' ? await pgDatabaseFor(dataDir) : join(dataDir, 'toolgate.db');
        return { mcp: await rawStdio(kind === 'stdio' ? '2025' : '2026', await mintBearer(userOf(kind)), db), db };
      })();
      stdioDaemons.set(kind, shared);
    }
    return { ...(await shared), close: async () => {} };
  }
  wsDaemon ??= startInProcess({ transport: 'ws', executor: 'subprocess', env: { TOOLGATE_LOG_LEVEL: 'debug' } });
  const host = await wsDaemon;
  const mcp = await rawHttp(kind === 'http' ? '2025' : '2026', host, await mintBearer(userOf(kind)));
  return { mcp, db: host.dbPath, host, close: () => mcp.close() };
}

for (const kind of KINDS) {
  test(`a task-augmented call answers at once with its task; tasks/get and tasks/cancel follow the stored call (${kind})`, { timeout: 60_000 }, async () => {
    const { mcp, db, host, close } = await open(kind);
    // Another user, provisioned (a write) before the lock is taken.
    const bob = host ? await rawHttp(mcp.era, host, await mintBearer(`bob-${kind}`)) : undefined;
    const none = await bob?.request('tasks/get', { taskId: 'WyJ0YXNrcyIsIm5vbmUiXQ' });
    // And alice too (2026-07-28 requests stand alone: her first one provisions her).
    assert.equal((await mcp.request('tasks/get', { taskId: 'WyJ0YXNrcyIsIm5vbmUiXQ' })).error?.code, -32602);
    const release = await holdWriteLock(db);
    let released = false;
    try {
      const { taskId } = await callAsTask(mcp, create(`task ${kind}`), { 'toolgate/thread_id': 'tasks' });
      // Answered while the call is held: the task is working, from any request of the user.
      const got = await mcp.request('tasks/get', { taskId });
      assert.equal(statusOf(got), 'working', JSON.stringify(got));
      assert.equal((got.result as { createdAt?: unknown }).createdAt !== undefined, true);
      if (bob) {
        // Another user: the same answer as a task id that never existed.
        const theirs = await bob.request('tasks/get', { taskId });
        assert.equal(theirs.error?.code, -32602);
        assert.deepEqual(theirs.error, none?.error);
        assert.equal((await bob.request('tasks/cancel', { taskId })).error?.code, -32602);
      }
      if (mcp.era === '2025') {
        // Listed, working, on the first page (the running calls come first).
        const listed = (await mcp.request('tasks/list', {})).result?.tasks as Array<{ taskId: string; status: string }>;
        assert.equal(listed.find((t) => t.taskId === taskId)?.status, 'working', JSON.stringify(listed));
      }
      const before = mcp.stderr().length;
      const cancel = mcp.request('tasks/cancel', { taskId });
      await stopped(mcp, before);
      await release();
      released = true;
      const cancelled = await cancel;
      assert.ok(cancelled.result, JSON.stringify(cancelled));
      if (mcp.era === '2025') assert.equal(statusOf(cancelled), 'cancelled');
      else assert.deepEqual(Object.keys(cancelled.result).filter((k) => k !== '_meta' && k !== 'resultType'), []);
      const after = await mcp.request('tasks/get', { taskId });
      assert.equal(statusOf(after), 'cancelled', JSON.stringify(after));
      if (mcp.era === '2025') {
        // The result is what the plain call returns: the stored CANCELLED failure.
        const result = await mcp.request('tasks/result', { taskId });
        assert.equal(result.result?.isError, true);
        const text = (result.result?.content as Array<{ text: string }>)[0]!.text;
        assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, 'CANCELLED');
        // Cancelling a task that has ended: -32602, nothing changes.
        assert.equal((await mcp.request('tasks/cancel', { taskId })).error?.code, -32602);
      }
      assert.equal(await dbCount(db, 'SELECT count(*) AS n FROM events WHERE title = ?', [`task ${kind}`]), 0);
    } finally {
      if (!released) await release();
      await bob?.close();
      await close();
    }
  });

  test(`a task-augmented call reusing an id with other args is answered DUPLICATE_TOOL_CALL_ID, never as the earlier call's task (${kind})`, { timeout: 60_000 }, async () => {
    const { mcp, close } = await open(kind);
    try {
      const meta = { 'toolgate/thread_id': 'tasks-dup', 'toolgate/tool_call_id': `dup-${kind}` };
      // A plain call first (2026-07-28: one that declares no Tasks extension).
      const first = await mcp.request('tools/call', { name: 'project_cli', arguments: create(`dup one ${kind}`), _meta: meta }, { declareTasks: false });
      assert.equal(first.result?.isError, false, JSON.stringify(first));
      const params = { name: 'project_cli', arguments: create(`dup two ${kind}`), _meta: meta };
      const again = await mcp.request('tools/call', mcp.era === '2025' ? { ...params, task: { ttl: 60_000 } } : params);
      // Answered as the plain call is: the id is another call's, nothing ran and no task stands for it.
      assert.equal(again.result?.isError, true, JSON.stringify(again));
      const text = (again.result?.content as Array<{ text: string }>)[0]!.text;
      assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, 'DUPLICATE_TOOL_CALL_ID');
    } finally {
      await close();
    }
  });

  test(`a task's result is the CallToolResult the stored call holds; a call without a task is answered as before (${kind})`, { timeout: 60_000 }, async () => {
    const { mcp, db, close } = await open(kind);
    try {
      const { taskId } = await callAsTask(mcp, { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } }, { 'toolgate/tool_call_id': `t-${kind}` });
      const [row] = await waitFor(async () => {
        const rows = await dbRows<{ content: string }>(db, 'SELECT content FROM messages WHERE tool_call_id = ?', [`t-${kind}`]);
        return rows.length ? rows : undefined;
      }, 'the task call to be stored');
      let result: Record<string, unknown>;
      if (mcp.era === '2025') {
        const answer = await mcp.request('tasks/result', { taskId });
        result = answer.result!;
        assert.deepEqual((result._meta as Record<string, unknown>)['io.modelcontextprotocol/related-task'], { taskId });
        assert.equal(statusOf(await mcp.request('tasks/get', { taskId })), 'completed');
      } else {
        const got = await mcp.request('tasks/get', { taskId });
        assert.equal(statusOf(got), 'completed', JSON.stringify(got));
        result = got.result!.result as Record<string, unknown>;
      }
      assert.deepEqual(result.content, [{ type: 'text', text: row!.content }]);
      assert.deepEqual(result.structuredContent, JSON.parse(row!.content));
      assert.equal(result.isError, false);

      // No task asked (2026: the extension not declared): the CallToolResult itself, as before.
      const plain = await mcp.request('tools/call', { name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} } }, { declareTasks: false });
      assert.ok(Array.isArray(plain.result?.content), JSON.stringify(plain));
      assert.equal(plain.result?.task, undefined);
      assert.notEqual(plain.result?.resultType, 'task');
      if (mcp.era === '2026') {
        // tasks/* from a request that did not declare the extension: -32021.
        assert.equal((await mcp.request('tasks/get', { taskId }, { declareTasks: false })).error?.code, -32021);
      } else {
        const tools = await mcp.request('tools/list', {});
        assert.deepEqual((tools.result?.tools as Array<{ execution?: unknown }>)[0]!.execution, { taskSupport: 'optional' });
      }
    } finally {
      await close();
    }
  });
}

for (const era of ['2025', '2026'] as const) {
  test(`two daemons on PostgreSQL: a task made on one is reported and cancelled by the other (${era})`, { ...needsPg, timeout: 90_000 }, async () => {
    const { url } = await freshPgDatabase();
    const env = { TOOLGATE_LOG_LEVEL: 'debug' };
    const [a, b] = await Promise.all([startHost({ transport: 'ws', db: url, env }), startHost({ transport: 'ws', db: url, env })]);
    const token = await mintBearer('alice');
    const onA = await rawHttp(era, a, token);
    const onB = await rawHttp(era, b, token);
    await onA.request('tasks/get', { taskId: 'WyJ0YXNrcyIsIm5vbmUiXQ' });
    const release = await holdWriteLock(url);
    let released = false;
    try {
      const { taskId } = await callAsTask(onA, create(`across ${era}`));
      // The CreateTaskResult came once the call was shared: B reports it at once.
      assert.equal(statusOf(await onB.request('tasks/get', { taskId })), 'working');
      const before = a.stderr().length;
      const cancel = onB.request('tasks/cancel', { taskId });
      await stopped(onA, before);
      await release();
      released = true;
      assert.ok((await cancel).result);
      const after = await waitFor(async () => {
        const got = await onB.request('tasks/get', { taskId });
        return statusOf(got) === 'cancelled' ? got : undefined;
      }, 'B to report the task cancelled');
      assert.ok(after);
      assert.equal(await dbCount(url, 'SELECT count(*) AS n FROM events WHERE title = ?', [`across ${era}`]), 0);
    } finally {
      if (!released) await release();
      await Promise.all([onA.close(), onB.close()]);
      await Promise.all([a.stop(), b.stop()]);
    }
  });
}

test('tasks/list pages the user\'s own tasks with an opaque cursor; another user\'s are never listed (2025-11-25, HTTP)', { timeout: 120_000 }, async () => {
  const host = await startInProcess({ transport: 'ws' });
  const alice = await rawHttp('2025', host, await mintBearer('alice'));
  const bob = await rawHttp('2025', host, await mintBearer('bob'));
  try {
    for (let i = 0; i < 52; i += 1) {
      const plain = i % 2 === 0;
      const args = { module: 'memory', method: 'update', input: { key: `k${i}`, content: 'v' } };
      const meta = { 'toolgate/tool_call_id': `c${i}` };
      if (plain) {
        // A call made without a task is a task too: tasks/get answers for it, so tasks/list lists it.
        assert.ok((await alice.request('tools/call', { name: 'project_cli', arguments: args, _meta: meta })).result);
      } else {
        await callAsTask(alice, args, meta);
      }
    }
    const theirs = (await callAsTask(bob, { module: 'memory', method: 'update', input: { key: 'b', content: 'v' } })).taskId;
    await waitFor(async () => statusOf(await bob.request('tasks/get', { taskId: theirs })) === 'completed', 'bob\'s task to end');
    const seen: Array<{ taskId: string; status: string }> = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await alice.request('tasks/list', cursor ? { cursor } : {});
      assert.ok(page.result, JSON.stringify(page));
      seen.push(...(page.result.tasks as typeof seen));
      cursor = page.result.nextCursor as string | undefined;
      pages += 1;
    } while (cursor && pages < 10);
    assert.equal(pages, 2);
    assert.equal(seen.length, 52);
    assert.equal(new Set(seen.map((t) => t.taskId)).size, 52);
    assert.ok(!seen.some((t) => t.taskId === theirs));
    for (const t of seen) assert.equal((await alice.request('tasks/get', { taskId: t.taskId })).result?.taskId, t.taskId);
    assert.equal((await alice.request('tasks/list', { cursor: 'not-a-cursor' })).error?.code, -32602);
  } finally {
    await Promise.all([alice.close(), bob.close()]);
    await host.stop();
  }
});

for (const era of ['2025', '2026'] as const) {
  test(`a task's result carries the call's card in _meta["toolgate/ui_schema"], as the plain call's result does (HTTP ${era})`, { timeout: 60_000 }, async () => {
    const host = await startInProcess({ transport: 'ws' });
    try {
      const mcp = await rawHttp(era, host, await mintBearer(`card-${era}`));
      const args = { module: 'memory', method: 'update', input: { key: 'card', content: 'drawn by the app' } };
      const meta = { 'toolgate/thread_id': 'cards', 'toolgate/tool_call_id': `card-${era}` };
      const { taskId } = await callAsTask(mcp, args, meta);
      const taskResult =
        era === '2025'
          ? (await mcp.request('tasks/result', { taskId })).result
          : (
              await waitFor(async () => {
                const got = await mcp.request('tasks/get', { taskId });
                return statusOf(got) === 'completed' ? got : undefined;
              }, 'the task to complete')
            ).result?.result as Record<string, unknown> | undefined;
      // The same call asked again without a task: its stored outcome, as a plain tools/call answers it.
      const plain = (await mcp.request('tools/call', { name: 'project_cli', arguments: args, _meta: meta }, { declareTasks: false })).result;
      const card = (plain?._meta as Record<string, unknown> | undefined)?.['toolgate/ui_schema'];
      assert.ok(card, JSON.stringify(plain));
      assert.deepEqual((taskResult?._meta as Record<string, unknown> | undefined)?.['toolgate/ui_schema'], card, JSON.stringify(taskResult));
      assert.deepEqual([taskResult?.content, taskResult?.structuredContent], [plain?.content, plain?.structuredContent]);
      await mcp.close();
    } finally {
      await host.stop();
    }
  });
}

test('serve --mcp: a task-augmented call over its quota is answered RATE_LIMITED, never a task', { timeout: 60_000 }, async () => {
  const dataDir = tempDir();
  const db = TEST_ENGINE === 'postgres' ? await pgDatabaseFor(dataDir) : join(dataDir, 'toolgate.db');
  const config = join(dataDir, 'quota.json');
  // per_day, as quotas.test.ts counts: windows are fixed UTC periods, and with per_minute two calls a second apart
  // straddled a minute's end now and then (CI, 2026-12-08: the second call ran, as a task).
  writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.*'], quotas: { 'calendar.create': { per_day: 1 } } } } }));
  const mcp = await rawStdio('2025', await mintBearer('quota-user'), db, ['--config', config]);
  try {
    const { taskId } = await callAsTask(mcp, create('quota one'), { 'toolgate/thread_id': 'quota' });
    await waitFor(async () => statusOf(await mcp.request('tasks/get', { taskId })) === 'completed', () => 'the first task to complete');
    // Over the quota: refused at once, counted and stored nothing — so no task stands for it (it used to answer a
    // `working` task that tasks/get then called unknown).
    const over = await mcp.request('tools/call', { name: 'project_cli', arguments: create('quota two'), _meta: { 'toolgate/thread_id': 'quota' }, task: { ttl: 60_000 } });
    assert.equal(over.result?.task, undefined, JSON.stringify(over));
    const text = (over.result?.content as Array<{ text: string }>)[0]!.text;
    assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, 'RATE_LIMITED');
  } finally {
    await mcp.close();
  }
});
