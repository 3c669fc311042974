/**
 * Approval (contract section 17) at its edges, from outside:
 *
 * - the HTTP approval route refuses a deny reason no engine stores as it is
 *   (U+0000, an unpaired surrogate) exactly as `call/deny` does (contract
 *   section 21): 400, nothing decided, the call still pending;
 * - a call approved on one daemon is `running`, not unknown, to another
 *   daemon on the same SQLite file while it runs there (a `serve --mcp`
 *   beside a `serve --ws`: approval.md), so `call/get` — and MCP `tasks/get`,
 *   which reads the same state — never answers CALL_NOT_FOUND for it, nor
 *   `call/cancel`, which cannot reach it there and says it runs on;
 * - a decision on a running call that never asked (approve or deny) answers
 *   its state, `running`, as `call/get` does — never CALL_NOT_FOUND; a wrong
 *   digest is ARGS_MISMATCH, another user's call not found; once done it
 *   answers the outcome, and nothing about the call changed;
 * - a cancel is audited with the surface it came from, as approvals and
 *   denials are: `call/cancel` with its transport, MCP `tasks/cancel` with
 *   `mcp` — and the MCP task and the JSON-RPC call agree on the state;
 * - a `call/cancel` of an approved call stops it wherever it is on its way
 *   to run: while its run takes its mark, and between the approval's commit
 *   and the run (CANCELLED, nothing written).
 *
 * The first daemon of the second test is spawned (its project-cli child is
 * held by a write lock this process takes), the others run in this process.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { openSession, startHost } from '../helpers/host.js';
import { startInProcess, type InProcessHost } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import { dbCount, dbRows } from '../helpers/db.js';
import { TEST_ENGINE } from '../helpers/pg.js';
import type { Client } from '../helpers/host.js';
import type { CallCancelResult, CallGetResult, ToolApprovalNotification, ToolResponse } from '../../src/protocol/index.js';
import { askConfig } from '../helpers/approval-config.js';
import { openRawMcpSession } from '../helpers/mcp-raw.js';
import { holdWriteLock } from '../helpers/write-lock.js';
import { rpcError } from '../helpers/host.js';
import { gateNextTransaction, holdAfterApproval, type ApprovalHold } from '../helpers/hold-approval.js';

let shared: Promise<InProcessHost> | undefined;
const daemon = () => (shared ??= startInProcess({ transport: 'ws', executor: 'inprocess', args: ['--config', askConfig()] }));
after(async () => {
  if (shared) await (await shared).stop();
});

function approvalOf(client: Client, toolCallId: string): Promise<ToolApprovalNotification> {
  return waitFor(
    () => client.wire.find((e) => e.method === 'tool/approval' && (e.payload as ToolApprovalNotification).tool_call_id === toolCallId)?.payload as ToolApprovalNotification | undefined,
    `tool/approval of ${toolCallId}`,
  );
}

test('HTTP approval: a deny reason holding U+0000 or a lone surrogate is refused (400) like call/deny\'s; nothing is decided', { timeout: 60_000 }, async () => {
  const host = await daemon();
  const token = await mintBearer('edge-http');
  const s = await openSession(host, token);
  await host.request('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: 'm', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } } });
  const pending = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: 'f', args: { module: 'memory', method: 'forget', input: { key: 'k' } } });
  const asked = await approvalOf(host, 'f');
  const deny = (reason: string) =>
    fetch(`http://127.0.0.1:${host.port}/threads/t/calls/f/approval`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      // JSON.stringify writes both as escapes (\u0000, \ud800): the body is valid JSON and UTF-8.
      body: JSON.stringify({ decision: 'deny', args_sha256: asked.args_sha256, reason }),
    });
  for (const reason of ['no\u0000pe', 'half \ud800 a pair']) {
    const res = await deny(reason);
    const body = await res.text();
    assert.equal(res.status, 400, body);
    assert.match(body, /reason/);
  }
  const got = await host.request<CallGetResult>('call/get', { session_id: s.session_id, thread_id: 't', tool_call_id: 'f' });
  assert.equal(got.state, 'awaiting_approval', 'nothing was decided');
  assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM approval_audit WHERE tool_call_id = 'f'"), 0);
  // A well-formed reason still decides it.
  const denied = await deny('not now');
  assert.equal(denied.status, 200);
  const answer = await pending;
  assert.match(answer.content[0]!.text, /"code":"APPROVAL_DENIED".*"reason":"not now"/);
});

test('an approved call running on another daemon of the SQLite file is running to call/get and call/cancel, never CALL_NOT_FOUND', { skip: TEST_ENGINE !== 'sqlite' && 'SQLite file shared by two daemons', timeout: 90_000 }, async () => {
  const config = askConfig();
  const a = await startHost({ transport: 'ws', args: ['--executor', 'subprocess', '--config', config] });
  let b: InProcessHost | undefined;
  let lock: Database.Database | undefined;
  try {
    const token = await mintBearer('edge-two');
    const onA = await openSession(a, token);
    const created = await a.request<ToolResponse>('tool/invoke', {
      session_id: onA.session_id,
      thread_id: 't',
      tool_call_id: 'create',
      args: { module: 'calendar', method: 'create', input: { title: 'shared file', start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' } },
    });
    const eventId = (JSON.parse(created.content[0]!.text) as { data: { event: { id: string } } }).data.event.id;
    const pending = a.request<ToolResponse>('tool/invoke', { session_id: onA.session_id, thread_id: 't', tool_call_id: 'del', args: { module: 'calendar', method: 'delete', input: { event_id: eventId } } });
    // Handled at once: a failure below stops the daemon, which rejects them.
    pending.catch(() => {});
    const asked = await approvalOf(a, 'del');

    // The other daemon on the same file, opened before the lock (opening writes).
    b = await startInProcess({ db: a.dbPath, args: ['--config', config] });
    const onB = await openSession(b, token);

    // The approved run is held before it writes: the write lock is taken the moment the call is stored
    // `running` (project-cli, still starting, has written nothing yet).
    lock = new Database(a.dbPath, { timeout: 10_000 });
    const running = lock.prepare("SELECT count(*) AS n FROM calls WHERE tool_call_id = 'del' AND state = 'running'");
    const approved = a.request<unknown>('call/approve', { session_id: onA.session_id, thread_id: 't', tool_call_id: 'del', args_sha256: asked.args_sha256 });
    approved.catch(() => {});
    const deadline = Date.now() + 15_000;
    while ((running.get() as { n: number }).n === 0) {
      if (Date.now() > deadline) throw new Error('the call was never approved');
      await turn();
    }
    lock.exec('BEGIN IMMEDIATE');
    assert.equal((lock.prepare("SELECT count(*) AS n FROM messages WHERE tool_call_id = 'del'").get() as { n: number }).n, 0, 'held before its outcome');

    const got = await b.request<CallGetResult>('call/get', { session_id: onB.session_id, thread_id: 't', tool_call_id: 'del' });
    assert.deepEqual([got.state, got.action, got.args_sha256], ['running', 'calendar.delete', asked.args_sha256]);
    // Out of this daemon's reach (SQLite tells it nothing): running, said so, rather than unknown.
    assert.deepEqual(await b.request('call/cancel', { session_id: onB.session_id, thread_id: 't', tool_call_id: 'del' }), { state: 'running' });

    lock.exec('ROLLBACK');
    lock.close();
    lock = undefined;
    const answer = await pending;
    assert.equal(answer.status, 'success', answer.content[0]!.text);
    await approved;
    const done = await b.request<CallGetResult>('call/get', { session_id: onB.session_id, thread_id: 't', tool_call_id: 'del' });
    assert.deepEqual([done.state, done.outcome], ['done', answer]);
  } finally {
    if (lock?.inTransaction) lock.exec('ROLLBACK');
    lock?.close();
    await b?.stop();
    await a.stop();
  }
});

test('approve or deny of a running call that never asked answers running (its state), not CALL_NOT_FOUND; it runs on unchanged', { timeout: 60_000 }, async () => {
  const host = await daemon();
  const alice = await openSession(host, await mintBearer('edge-running'));
  const other = await host.connect();
  const bob = await openSession(other, await mintBearer('edge-running-bob'));
  const key = { thread_id: 't-running', tool_call_id: 'create' };
  const release = await holdWriteLock(host.dbPath);
  let released = false;
  try {
    const pending = host.request<ToolResponse>('tool/invoke', {
      session_id: alice.session_id,
      ...key,
      args: { module: 'calendar', method: 'create', input: { title: 'runs unasked', start_at: '2026-10-11T08:00:00Z', end_at: '2026-10-11T09:00:00Z' } },
    });
    pending.catch(() => {});
    const running = await waitFor(async () => {
      const got = await host.request<CallGetResult>('call/get', { session_id: alice.session_id, ...key }).catch(() => undefined);
      return got?.state === 'running' ? got : undefined;
    }, 'the call to be running');
    const digest = running.args_sha256;
    assert.deepEqual(await host.request('call/approve', { session_id: alice.session_id, ...key, args_sha256: digest }), { state: 'running' });
    assert.deepEqual(await host.request('call/deny', { session_id: alice.session_id, ...key, args_sha256: digest, reason: 'no' }), { state: 'running' });
    const mismatch = await rpcError(host.request('call/approve', { session_id: alice.session_id, ...key, args_sha256: '0'.repeat(64) }));
    assert.deepEqual([mismatch.code, mismatch.data], [-32602, { code: 'ARGS_MISMATCH' }]);
    const notBobs = await rpcError(other.request('call/approve', { session_id: bob.session_id, ...key, args_sha256: digest }));
    assert.deepEqual([notBobs.code, notBobs.data], [-32602, { code: 'CALL_NOT_FOUND' }]);
    await release();
    released = true;
    const answer = await pending;
    // The deny changed nothing: the call ran, and a decision now answers its outcome.
    assert.equal(answer.status, 'success', answer.content[0]!.text);
    assert.deepEqual(await host.request('call/deny', { session_id: alice.session_id, ...key, args_sha256: digest }), { state: 'done', outcome: answer });
    assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM approval_audit WHERE thread_id = 't-running'"), 0, 'no decision was audited');
  } finally {
    if (!released) await release();
  }
});

test('a cancel is audited with its surface (the transport of call/cancel, mcp for tasks/cancel); task, task list and call agree', { timeout: 60_000 }, async () => {
  const host = await daemon();
  const token = await mintBearer('edge-cancel');
  const s = await openSession(host, token);
  const audit = (id: string) => dbRows<{ decision: string; surface: string }>(host.dbPath, 'SELECT decision, surface FROM approval_audit WHERE tool_call_id = ? ORDER BY seq', [id]);
  const forget = (key: string) => ({ module: 'memory', method: 'forget', input: { key } });
  for (const key of ['a', 'b']) {
    await host.request('tool/invoke', { session_id: s.session_id, thread_id: 'c', tool_call_id: `save-${key}`, args: { module: 'memory', method: 'update', input: { key, content: 'keep me' } } });
  }

  // call/cancel on another WebSocket connection of the user.
  const pending = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'c', tool_call_id: 'cancel-rpc', args: forget('a') });
  await approvalOf(host, 'cancel-rpc');
  const other = await host.connect();
  const o = await openSession(other, token);
  const cancelled = await other.request<{ state: string }>('call/cancel', { session_id: o.session_id, thread_id: 'c', tool_call_id: 'cancel-rpc' });
  assert.equal(cancelled.state, 'done');
  assert.match((await pending).content[0]!.text, /"code":"CANCELLED"/);
  assert.deepEqual((await audit('cancel-rpc')).map((r) => [r.decision, r.surface]), [['cancel', 'ws']]);

  // tasks/cancel of an MCP task awaiting approval (2025-11-25 over HTTP).
  const mcp = await openRawMcpSession(host.port!, token);
  const created = await mcp('tools/call', { name: 'project_cli', arguments: forget('b'), task: { ttl: 60_000 }, _meta: { 'toolgate/thread_id': 'c', 'toolgate/tool_call_id': 'cancel-task' } });
  const taskId = created.result?.task?.taskId;
  assert.ok(taskId, JSON.stringify(created));
  // The task is created `working` and turns `input_required` once its call reaches the approval: wait for it.
  await waitFor(async () => (await mcp('tasks/get', { taskId })).result?.status === 'input_required', 'the task to await approval (input_required)');
  const viaRpc = await host.request<CallGetResult>('call/get', { session_id: s.session_id, thread_id: 'c', tool_call_id: 'cancel-task' });
  assert.equal(viaRpc.state, 'awaiting_approval');
  // Listed while it awaits approval, as tasks/get reports it (tasks/list: every call of the user's).
  const listed = (await mcp('tasks/list', {})).result?.tasks as Array<{ taskId: string; status: string }> | undefined;
  assert.equal(listed?.find((t) => t.taskId === taskId)?.status, 'input_required', JSON.stringify(listed));
  const taskCancelled = await mcp('tasks/cancel', { taskId });
  assert.equal(taskCancelled.result?.status, 'cancelled', JSON.stringify(taskCancelled));
  const after = await host.request<CallGetResult>('call/get', { session_id: s.session_id, thread_id: 'c', tool_call_id: 'cancel-task' });
  assert.equal(after.state, 'done');
  assert.match(after.outcome!.content[0]!.text, /"code":"CANCELLED"/);
  const result = await mcp('tasks/result', { taskId });
  assert.equal(result.result?.isError, true, JSON.stringify(result));
  assert.deepEqual((await audit('cancel-task')).map((r) => [r.decision, r.surface]), [['cancel', 'mcp']]);
  // Nothing was forgotten by either.
  const read = await host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'c', tool_call_id: 'read', args: { module: 'memory', method: 'read', input: {} } });
  assert.equal((JSON.parse(read.content[0]!.text) as { data: { items: unknown[] } }).data.items.length, 2);
  await other.close();
});

test('a call/cancel right after an approval, while the approved run takes its mark, stops the call: CANCELLED, nothing written', { timeout: 60_000 }, async () => {
  const host = await startInProcess({ transport: 'ws', executor: 'inprocess', args: ['--config', askConfig()] });
  const store = host.services.store;
  const original = store.holdCall?.bind(store);
  try {
    const s = await openSession(host, await mintBearer('edge-race'));
    const key = { userId: s.user_id, threadId: 'r', toolCallId: 'forget' };
    await host.request('tool/invoke', { session_id: s.session_id, thread_id: 'r', tool_call_id: 'save', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'keep me' } } });
    const pending = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'r', tool_call_id: 'forget', args: { module: 'memory', method: 'forget', input: { key: 'k' } } });
    // Handled at once: a failure below stops the daemon, which rejects them.
    pending.catch(() => {});
    const asked = await approvalOf(host, 'forget');

    // The approved run is held where it takes its mark (PostgreSQL's holdCall; SQLite has none, so one is put in).
    let entered!: () => void;
    const held = new Promise<void>((r) => (entered = r));
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    store.holdCall = async (userId, threadId, toolCallId) => {
      entered();
      await gate;
      return original ? original(userId, threadId, toolCallId) : async () => {};
    };
    const approved = host.request<{ state: string }>('call/approve', { session_id: s.session_id, thread_id: 'r', tool_call_id: 'forget', args_sha256: asked.args_sha256 });
    approved.catch(() => {});
    await held;
    let answered = false;
    const cancelled = host.request<{ state: string; outcome?: ToolResponse }>('call/cancel', { session_id: s.session_id, thread_id: 'r', tool_call_id: 'forget' });
    void cancelled.then(() => (answered = true), () => (answered = true));
    // The cancel has been handled: it stopped the run, or (the defect) answered without reaching it.
    await waitFor(() => answered || host.services.calls.find(key)?.signal.aborted, 'the cancel to be handled');
    open();

    const result = await cancelled;
    assert.equal(result.state, 'done', JSON.stringify(result));
    assert.match(result.outcome!.content[0]!.text, /"code":"CANCELLED"/, 'the cancel was not acknowledged while the call ran on');
    assert.match((await pending).content[0]!.text, /"code":"CANCELLED"/);
    assert.equal((await approved).state, 'done');
    store.holdCall = original;
    const read = await host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'r', tool_call_id: 'read', args: { module: 'memory', method: 'read', input: {} } });
    assert.equal((JSON.parse(read.content[0]!.text) as { data: { items: unknown[] } }).data.items.length, 1, 'nothing was forgotten');
  } finally {
    store.holdCall = original;
    await host.stop();
  }
});

interface RaceStart {
  host: InProcessHost;
  session: { session_id: string };
  key: { userId: string; threadId: string; toolCallId: string };
  argsSha256: string;
  /** The holds the race puts in: each restored whatever happens. */
  holds: ApprovalHold[];
}

/**
 * A `memory.forget` awaiting approval on a daemon of its own, approved and cancelled by `race` in the order it
 * forces (holding the daemon where it says): the cancel stops the call whatever the order — it ends CANCELLED,
 * the pending `tool/invoke` and the approval say so, and nothing was forgotten.
 */
async function cancelRacingApproval(user: string, race: (r: RaceStart) => Promise<{ cancelled: Promise<CallCancelResult>; approved: Promise<CallCancelResult> }>): Promise<void> {
  const host = await startInProcess({ transport: 'ws', executor: 'inprocess', args: ['--config', askConfig()] });
  const holds: ApprovalHold[] = [];
  try {
    const s = await openSession(host, await mintBearer(user));
    const key = { userId: s.user_id, threadId: 'r', toolCallId: 'forget' };
    await host.request('tool/invoke', { session_id: s.session_id, thread_id: 'r', tool_call_id: 'save', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'keep me' } } });
    const pending = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'r', tool_call_id: 'forget', args: { module: 'memory', method: 'forget', input: { key: 'k' } } });
    pending.catch(() => {});
    const asked = await approvalOf(host, 'forget');
    const { cancelled, approved } = await race({ host, session: s, key, argsSha256: asked.args_sha256, holds });

    const result = await cancelled;
    assert.equal(result.state, 'done', JSON.stringify(result));
    assert.match(result.outcome!.content[0]!.text, /"code":"CANCELLED"/);
    assert.match((await pending).content[0]!.text, /"code":"CANCELLED"/);
    assert.equal((await approved).state, 'done');
    const read = await host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'r', tool_call_id: 'read', args: { module: 'memory', method: 'read', input: {} } });
    assert.equal((JSON.parse(read.content[0]!.text) as { data: { items: unknown[] } }).data.items.length, 1, 'nothing was forgotten');
  } finally {
    for (const hold of holds) hold.restore();
    await host.stop();
  }
}

/** Sends `method` for the race's call; its failure is the test's, read when it is awaited. */
function decide(r: RaceStart, method: 'call/approve' | 'call/cancel'): Promise<CallCancelResult> {
  const params = { session_id: r.session.session_id, thread_id: 'r', tool_call_id: 'forget', ...(method === 'call/approve' ? { args_sha256: r.argsSha256 } : {}) };
  const answer = r.host.request<CallCancelResult>(method, params);
  answer.catch(() => {});
  return answer;
}

/** Settles once the cancel is answered, or has stopped the approved run (the fix) — whichever comes first. */
async function cancelHandled(r: RaceStart, cancelled: Promise<CallCancelResult>): Promise<void> {
  let answered = false;
  void cancelled.then(() => (answered = true), () => (answered = true));
  await waitFor(() => answered || r.host.services.calls.find(r.key)?.signal.aborted, 'the cancel to be handled');
}

test('a call/cancel between the approval\'s commit and its run stops the call: CANCELLED, nothing written', { timeout: 60_000 }, () =>
  cancelRacingApproval('edge-commit', async (r) => {
    // The approval's transaction commits, and its caller is held before it goes on (to run the call).
    const hold = holdAfterApproval(r.host.services.store, r.key);
    r.holds.push(hold);
    const approved = decide(r, 'call/approve');
    await hold.committed;
    assert.equal((await r.host.request<CallGetResult>('call/get', { session_id: r.session.session_id, thread_id: 'r', tool_call_id: 'forget' })).state, 'running');
    const cancelled = decide(r, 'call/cancel');
    // Without the fix the cancel answers `running` here while the call goes on to run.
    await cancelHandled(r, cancelled);
    hold.release();
    return { cancelled, approved };
  }));

test('a call/cancel that read the call awaiting approval, then lost to an approval on the same daemon, still stops it', { timeout: 60_000 }, () =>
  cancelRacingApproval('edge-lost', async (r) => {
    // The cancel reads the call awaiting approval and is held before it ends it, while the approval commits.
    const gate = gateNextTransaction(r.host.services.store);
    const cancelled = decide(r, 'call/cancel');
    await gate.entered;
    const hold = holdAfterApproval(r.host.services.store, r.key);
    r.holds.push(hold);
    const approved = decide(r, 'call/approve');
    await hold.committed;
    gate.release();
    await cancelHandled(r, cancelled);
    hold.release();
    return { cancelled, approved };
  }));

test('an MCP task awaiting approval holds none of its session\'s in-flight places: the client\'s next call runs', { timeout: 60_000 }, async () => {
  const host = await startInProcess({ transport: 'ws', executor: 'inprocess', args: ['--config', askConfig(), '--max-in-flight', '1'] });
  try {
    const token = await mintBearer('edge-slots');
    const mcp = await openRawMcpSession(host.port!, token);
    const call = (args: unknown, toolCallId: string, task?: boolean) =>
      mcp('tools/call', { name: 'project_cli', arguments: args, ...(task ? { task: { ttl: 60_000 } } : {}), _meta: { 'toolgate/thread_id': 's', 'toolgate/tool_call_id': toolCallId } });
    assert.equal((await call({ module: 'memory', method: 'update', input: { key: 'k', content: 'v' } }, 'save')).result?.isError, false);

    const created = await call({ module: 'memory', method: 'forget', input: { key: 'k' } }, 'forget', true);
    const taskId = created.result?.task?.taskId;
    assert.ok(taskId, JSON.stringify(created));
    // The task is created `working` and turns `input_required` once its call reaches the approval: wait for it.
  await waitFor(async () => (await mcp('tasks/get', { taskId })).result?.status === 'input_required', 'the task to await approval (input_required)');
    // The task waits for a person; nothing of it runs. The session's one place is free for its next call.
    const read = await call({ module: 'memory', method: 'read', input: {} }, 'read');
    assert.equal(read.result?.isError, false, JSON.stringify(read));
    assert.equal((await mcp('tasks/cancel', { taskId })).result?.status, 'cancelled');
    // Ended (its place given back when it began to wait): the session's next call runs.
    assert.equal((await call({ module: 'memory', method: 'read', input: {} }, 'read2')).result?.isError, false);
  } finally {
    await host.stop();
  }
});
