/**
 * A call's lifecycle from outside (contract section 16), on a daemon over
 * stdio and WebSocket with both executors, on the pass's engine:
 * `call/get` of a running and of a done call, `call/cancel` and
 * `$/cancelRequest` stopping a call that is running (held by a database lock
 * another process holds), per-action time limits, and a cancel raced against
 * the commit many times — never a half-written call, never a cancelled call
 * whose writes are visible.
 *
 * The daemons run in this process (test/helpers/in-process.ts), each test on
 * its own: what is checked is the call's life on the wire, in the database
 * and in project-cli's process, not the daemon's process (daemon-skeleton,
 * ws-transport and executors keep spawned ones) — but `$/cancelRequest` on
 * the subprocess executor stays spawned, over the binary's own stdio. The
 * lock a test holds is taken on a connection of its own, which the store
 * waits for on timers.
 * Two daemons on one PostgreSQL database stay spawned.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHost, openSession, rpcError, type Client, type Transport } from '../helpers/host.js';
import { startInProcess } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { tempDir } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait-for.js';
import { holdWriteLock } from '../helpers/write-lock.js';
import { dbCount, dbRows } from '../helpers/db.js';
import { TEST_ENGINE, freshPgDatabase, needsPg } from '../helpers/pg.js';
import { connectMcp, type McpKind } from '../helpers/mcp-hosts.js';
import type { CallCancelResult, CallGetResult, ToolResponse } from '../../src/protocol/index.js';
import { CallStopped } from '../../src/calls/call-stopped.js';

type Executor = 'subprocess' | 'inprocess';
const CASES: Array<{ transport: Transport; executor: Executor }> = [
  { transport: 'stdio', executor: 'subprocess' },
  { transport: 'stdio', executor: 'inprocess' },
  { transport: 'ws', executor: 'subprocess' },
  { transport: 'ws', executor: 'inprocess' },
];

/** What these tests use of a daemon, spawned or in this process. */
interface Host extends Client {
  dbPath: string;
  stderr(): string;
}

const create = (title: string) => ({ module: 'calendar', method: 'create', input: { title, start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' } });

const eventsTitled = (host: Host, title: string) => dbCount(host.dbPath, 'SELECT count(*) AS n FROM events WHERE title = ?', [title]);

/**
 * On PostgreSQL the in-process executor sends a call's whole unit as one statement at its end: a stop that
 * comes while that statement waits for a lock cannot undo it, so the call ends with the outcome it committed
 * (contract section 16: committed writes stand). Everywhere else a call held by the lock is stopped.
 */
const stoppable = (executor: Executor) => !(TEST_ENGINE === 'postgres' && executor === 'inprocess');

/** A stopped call: failed with `code` and nothing written; or (not stoppable there) committed, its event stored once. */
async function assertStopped(host: Host, executor: Executor, answer: ToolResponse, code: string, title: string): Promise<void> {
  if (!stoppable(executor) && answer.status === 'success') {
    assert.equal(await eventsTitled(host, title), 1);
    return;
  }
  assert.equal(failureCode(answer), code, answer.content[0]!.text);
  assert.equal(await eventsTitled(host, title), 0);
}

const failureCode = (r: ToolResponse | undefined) => (r ? (JSON.parse(r.content[0]!.text) as { error?: { code?: string } }).error?.code : undefined);

async function started(host: Host, client: Client, sessionId: string, thread: string, id: string): Promise<CallGetResult> {
  return waitFor(async () => {
    const got = await client.request<CallGetResult>('call/get', { session_id: sessionId, thread_id: thread, tool_call_id: id }).catch(() => undefined);
    return got?.state === 'running' ? got : undefined;
  }, () => `call ${id} to be running\n${host.stderr().slice(-2000)}`);
}

/**
 * The daemon has stopped the call's work: in process at once; a subprocess call once its child is gone, or
 * when it was stopped before a child started (waiting for the lock to record its credential) — so a lock
 * released now cannot let it commit. Or the call has answered: stopped after its credential was recorded
 * but before its child started (PostgreSQL, whose lock holds only the events table: a stop that lands in
 * that gap ends the call unrun and logs neither line), it is done, and nothing of it can commit any more.
 */
async function stopTookEffect(host: Host, executor: Executor, before: number, answer: Promise<unknown>): Promise<void> {
  // Subprocess: "tool call stopped", not the child's exit ("project-cli stopped"): on PostgreSQL a statement the
  // killed child sent may still wait in the server for the lock this test holds, and run to its COMMIT if the lock
  // came free before its session is ended — the call would then rightly stand with its real outcome. The call
  // service logs "tool call stopped" once the child's sessions are ended and the stop is final.
  const lines = executor === 'subprocess' ? ['"tool call stopped"'] : ['"tool call stopping"'];
  let answered = false;
  void answer.then(
    () => (answered = true),
    () => (answered = true),
  );
  await waitFor(() => answered || lines.some((l) => host.stderr().slice(before).includes(l)), () => `a log line ${lines.join(' or ')}, or the call's answer\n${host.stderr().slice(-2000)}`);
}

for (const { transport, executor } of CASES) {
  test(`call/get and call/cancel stop a running call (${transport}, ${executor})`, { timeout: 60_000 }, async () => {
    const host = await startInProcess({ transport, executor });
    try {
      const alice = await openSession(host, await mintBearer('alice'));
      // The canceller: another connection of the same user on WebSocket; the same connection on stdio (one pipe).
      const other = transport === 'ws' ? await host.connect() : host;
      const aliceThere = other === host ? alice : await openSession(other, await mintBearer('alice'));
      const bobClient = transport === 'ws' ? await host.connect() : undefined;
      const bob = bobClient ? { client: bobClient, ...(await openSession(bobClient, await mintBearer('bob'))) } : undefined;

      const release = await holdWriteLock(host.dbPath);
      let released = false;
      try {
        const args = create('to cancel');
        const pending = host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'c1', args });
        const running = await started(host, other, aliceThere.session_id, 't', 'c1');
        assert.equal(running.action, 'calendar.create');
        assert.match(running.args_sha256, /^[0-9a-f]{64}$/);
        assert.equal(running.outcome, undefined);
        // The daemon keeps answering every connection while another process holds the lock.
        await other.request('skills/list', { session_id: aliceThere.session_id });
        if (bob) {
          // Another user's call is not found, the same answer as a call that never existed.
          const err = await rpcError(bob.client.request('call/get', { session_id: bob.session_id, thread_id: 't', tool_call_id: 'c1' }));
          assert.equal(err.code, -32602);
          assert.deepEqual(err.data, { code: 'CALL_NOT_FOUND' });
          const cancelErr = await rpcError(bob.client.request('call/cancel', { session_id: bob.session_id, thread_id: 't', tool_call_id: 'c1' }));
          assert.deepEqual(cancelErr.data, { code: 'CALL_NOT_FOUND' });
        }
        const before = host.stderr().length;
        const cancel = other.request<CallCancelResult>('call/cancel', { session_id: aliceThere.session_id, thread_id: 't', tool_call_id: 'c1' });
        await stopTookEffect(host, executor, before, pending);
        await release();
        released = true;
        const [answer, cancelled] = await Promise.all([pending, cancel]);
        // Nothing the call would have written survives; the call is done with its stored failure.
        await assertStopped(host, executor, answer, 'CANCELLED', 'to cancel');
        assert.equal(cancelled.state, 'done');
        assert.deepEqual(cancelled.outcome, answer);
        const done = await other.request<CallGetResult>('call/get', { session_id: aliceThere.session_id, thread_id: 't', tool_call_id: 'c1' });
        assert.equal(done.state, 'done');
        assert.equal(done.args_sha256, running.args_sha256);
        assert.deepEqual(done.outcome, answer);
        // A re-invocation with the same id and args returns that very result; cancelling again changes nothing.
        const again = await host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'c1', args });
        assert.deepEqual(again, answer);
        const twice = await other.request<CallCancelResult>('call/cancel', { session_id: aliceThere.session_id, thread_id: 't', tool_call_id: 'c1' });
        assert.deepEqual(twice, { state: 'done', outcome: answer });
      } finally {
        if (!released) await release();
      }

      // A call that was never made: CALL_NOT_FOUND.
      const none = await rpcError(host.request('call/get', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'never' }));
      assert.deepEqual(none.data, { code: 'CALL_NOT_FOUND' });
      // A done call that succeeded: its outcome as tool/invoke answered it.
      const ok = await host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'c2', args: create('kept') });
      assert.equal(ok.status, 'success');
      const kept = await host.request<CallCancelResult>('call/cancel', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'c2' });
      assert.deepEqual(kept, { state: 'done', outcome: ok });
      assert.equal(await eventsTitled(host, 'kept'), 1);
    } finally {
      if (process.env.DEBUG_CALLS) console.error(host.stderr());
      await host.stop();
    }
  });
}

for (const executor of ['subprocess', 'inprocess'] as const) {
  test(`$/cancelRequest on a running tool/invoke stops it and answers CANCELLED (${executor})`, { timeout: 60_000 }, async () => {
    // The subprocess case on a spawned daemon, over its real stdin/stdout: a running call cancelled from
    // outside the process (ws-transport.test.ts spawns WebSocket's; two spawned daemons on PostgreSQL below).
    const host = executor === 'subprocess' ? await startHost({ args: ['--executor', executor] }) : await startInProcess({ executor });
    try {
      const s = await openSession(host, await mintBearer('alice'));
      const release = await holdWriteLock(host.dbPath);
      let released = false;
      try {
        const source = new AbortController();
        const { CancellationTokenSource } = await import('vscode-jsonrpc');
        const cts = new CancellationTokenSource();
        source.signal.addEventListener('abort', () => cts.cancel());
        const pending = host.rpc.sendRequest<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: 'c1', args: create('cancel request') }, cts.token);
        await started(host, host, s.session_id, 't', 'c1');
        const before = host.stderr().length;
        source.abort();
        await stopTookEffect(host, executor, before, pending);
        await release();
        released = true;
        const answer = await pending;
        await assertStopped(host, executor, answer, 'CANCELLED', 'cancel request');
      } finally {
        if (!released) await release();
      }
    } finally {
      await host.stop();
    }
  });

  test(`limits.action_timeout_ms stops a call past its action's limit as TIMEOUT (${executor})`, { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.*'] } }, limits: { action_timeout_ms: { 'calendar.create': 300 } } }));
    const host = await startInProcess({ dataDir: dir, executor, args: ['--config', config] });
    try {
      const s = await openSession(host, await mintBearer('alice'));
      const release = await holdWriteLock(host.dbPath);
      let released = false;
      try {
        const pending = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: 'slow', args: create('too slow') });
        await stopTookEffect(host, executor, 0, pending);
        await release();
        released = true;
        const answer = await pending;
        await assertStopped(host, executor, answer, 'TIMEOUT', 'too slow');
      } finally {
        if (!released) await release();
      }
      // Other actions keep the default limit.
      const read = await host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: 'read', args: { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-10-10' } } });
      assert.equal(read.status, 'success');
    } finally {
      await host.stop();
    }
  });

  test(`a cancel raced against the commit never leaves a half-written or a cancelled-but-visible call (${executor})`, { timeout: 120_000 }, async () => {
    const host = await startInProcess({ transport: 'ws', executor });
    try {
      const s = await openSession(host, await mintBearer('alice'));
      const canceller = await host.connect();
      const cs = await openSession(canceller, await mintBearer('alice'));
      const seen = { CANCELLED: 0, success: 0 };
      for (let i = 0; i < 20; i++) {
        const title = `race ${i}`;
        const pending = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'race', tool_call_id: `r${i}`, args: create(title) });
        // Spread the cancels over the call's life: sometimes before it runs, sometimes at its commit, sometimes after.
        await new Promise((r) => setTimeout(r, (i * 7) % (executor === 'subprocess' ? 120 : 6)));
        const cancelled = await canceller
          .request<CallCancelResult>('call/cancel', { session_id: cs.session_id, thread_id: 'race', tool_call_id: `r${i}` })
          .catch((err: unknown) => err);
        const answer = await pending;
        const events = await eventsTitled(host, title);
        if (answer.status === 'success') {
          seen.success++;
          assert.equal(events, 1, `call ${i} succeeded: its event is stored once`);
        } else {
          assert.equal(failureCode(answer), 'CANCELLED', answer.content[0]!.text);
          seen.CANCELLED++;
          assert.equal(events, 0, `call ${i} was cancelled: nothing it wrote is visible`);
        }
        // The cancel answered the call's real, stored outcome (or the call was not yet known to it: not found).
        if (!(cancelled instanceof Error)) assert.deepEqual((cancelled as CallCancelResult).outcome, answer);
        const stored = await host.request<CallGetResult>('call/get', { session_id: s.session_id, thread_id: 'race', tool_call_id: `r${i}` });
        assert.deepEqual(stored.outcome, answer);
        assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM messages WHERE thread_id = 'race' AND tool_call_id = ?", [`r${i}`]), 1);
      }
      assert.ok(seen.CANCELLED + seen.success === 20, JSON.stringify(seen));
      // A child takes tens of milliseconds: cancels sent 0-120 ms in stop some of them (a daemon ignoring them fails here).
      if (executor === 'subprocess') assert.ok(seen.CANCELLED > 0, `no cancel took effect: ${JSON.stringify(seen)}`);
    } finally {
      await host.stop();
    }
  });
}

for (const executor of ['subprocess', 'inprocess'] as const) {
  test(`$/cancelRequest on a retry of a running call stops the call, not only the retry's run (${executor})`, { timeout: 60_000 }, async () => {
    // A host retries a call still running (its first connection dropped, say: a disconnect does not stop a
    // call), then its user stops it: the retry's cancel acts as call/cancel, so the first run stops too.
    const host = await startInProcess({ transport: 'ws', executor, env: { TOOLGATE_LOG_LEVEL: 'debug' } });
    try {
      const first = await openSession(host, await mintBearer('alice'));
      const retrier = await host.connect();
      const retry = await openSession(retrier, await mintBearer('alice'));
      const runs = () => host.stderr().split('\n').filter((l) => l.includes('"tool call running"') && l.includes('"tool_call_id":"twice"')).length;
      const release = await holdWriteLock(host.dbPath);
      let released = false;
      try {
        const args = create('retried then cancelled');
        const original = host.request<ToolResponse>('tool/invoke', { session_id: first.session_id, thread_id: 't', tool_call_id: 'twice', args });
        await waitFor(() => runs() === 1, () => `the first run\n${host.stderr().slice(-1500)}`);
        const { CancellationTokenSource } = await import('vscode-jsonrpc');
        const cts = new CancellationTokenSource();
        const retried = retrier.rpc.sendRequest<ToolResponse>('tool/invoke', { session_id: retry.session_id, thread_id: 't', tool_call_id: 'twice', args }, cts.token);
        await waitFor(() => runs() === 2, () => `the retry's run\n${host.stderr().slice(-1500)}`);
        const before = host.stderr().length;
        cts.cancel();
        await waitFor(() => host.stderr().slice(before).includes('"tool call stopping"'), 'the call to be stopped');
        await release();
        released = true;
        const [a, b] = await Promise.all([original, retried]);
        assert.deepEqual(a, b);
        if (!stoppable(executor) && a.status === 'success') {
          // PostgreSQL in process: the first run's one statement was waiting for the lock; its commit stands, for both.
          assert.equal(await eventsTitled(host, 'retried then cancelled'), 1);
        } else {
          // Nothing of the call was committed when it was cancelled: it is CANCELLED for both, and wrote nothing.
          assert.equal(failureCode(b), 'CANCELLED', b.content[0]!.text);
          assert.equal(await eventsTitled(host, 'retried then cancelled'), 0);
        }
        const stored = await host.request<CallGetResult>('call/get', { session_id: first.session_id, thread_id: 't', tool_call_id: 'twice' });
        assert.deepEqual(stored.outcome, b);
      } finally {
        if (!released) await release();
      }
    } finally {
      await host.stop();
    }
  });
}

for (const executor of ['subprocess', 'inprocess'] as const) {
  test(`a call reusing a running call's id with other args is refused, even when the running call is cancelled (${executor})`, { timeout: 60_000 }, async () => {
    // The id belongs to the call that came first: cancelled, it is stored CANCELLED with its own args, and the
    // call with other args is DUPLICATE_TOOL_CALL_ID — nothing of it runs, nothing of it is written.
    const host = await startInProcess({ transport: 'ws', executor, env: { TOOLGATE_LOG_LEVEL: 'debug' } });
    try {
      const s = await openSession(host, await mintBearer('alice'));
      const other = await host.connect();
      const o = await openSession(other, await mintBearer('alice'));
      const runs = () => host.stderr().split('\n').filter((l) => l.includes('"tool call running"') && l.includes('"tool_call_id":"shared"')).length;
      const release = await holdWriteLock(host.dbPath);
      let released = false;
      try {
        const { CancellationTokenSource } = await import('vscode-jsonrpc');
        const cts = new CancellationTokenSource();
        const firstArgs = create('first, cancelled');
        const first = host.rpc.sendRequest<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: 'shared', args: firstArgs }, cts.token);
        await waitFor(() => runs() === 1, () => `the first call to run\n${host.stderr().slice(-1500)}`);
        const second = other.request<ToolResponse>('tool/invoke', { session_id: o.session_id, thread_id: 't', tool_call_id: 'shared', args: create('second, other args') });
        await waitFor(() => runs() === 2, () => `the second call to run\n${host.stderr().slice(-1500)}`);
        const before = host.stderr().length;
        cts.cancel();
        await waitFor(() => host.stderr().slice(before).includes('"tool call stopping"'), 'the first call to be stopped');
        await release();
        released = true;
        const [a, b] = await Promise.all([first, second]);
        await assertStopped(host, executor, a, 'CANCELLED', 'first, cancelled');
        assert.equal(failureCode(b), 'DUPLICATE_TOOL_CALL_ID', b.content[0]!.text);
        assert.equal(await eventsTitled(host, 'second, other args'), 0, 'nothing of the refused call is written');
        const stored = await host.request<CallGetResult>('call/get', { session_id: s.session_id, thread_id: 't', tool_call_id: 'shared' });
        assert.deepEqual(stored.outcome, a);
      } finally {
        if (!released) await release();
      }
    } finally {
      await host.stop();
    }
  });
}

for (const executor of ['subprocess', 'inprocess'] as const) {
  test(`a call waiting to count against its quota is running: call/get finds it and call/cancel stops it (${executor})`, { timeout: 60_000 }, async () => {
    // "running: admitted and running, from its admission until its outcome is stored" (methods.md). Counting a
    // call against its quota is a write, which waits while another process holds the database's write lock.
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.*'], quotas: { 'calendar.create': { per_minute: 100 } } } } }));
    const host = await startInProcess({ transport: 'ws', dataDir: dir, executor, args: ['--config', config] });
    try {
      const s = await openSession(host, await mintBearer('alice'));
      const other = await host.connect();
      const o = await openSession(other, await mintBearer('alice'));
      const release = await holdWriteLock(host.dbPath);
      let released = false;
      try {
        const pending = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: 'counted', args: create('stopped while counted') });
        const running = await started(host, other, o.session_id, 't', 'counted');
        assert.equal(running.action, 'calendar.create');
        const before = host.stderr().length;
        const cancel = other.request<CallCancelResult>('call/cancel', { session_id: o.session_id, thread_id: 't', tool_call_id: 'counted' });
        await waitFor(() => host.stderr().slice(before).includes('"tool call stopping"'), 'the call to be stopped');
        await release();
        released = true;
        const [answer, cancelled] = await Promise.all([pending, cancel]);
        // On PostgreSQL the test's lock holds only the events table: the count goes through and the stop meets
        // the call in its unit (assertStopped says what stands there).
        await assertStopped(host, executor, answer, 'CANCELLED', 'stopped while counted');
        assert.deepEqual(cancelled, { state: 'done', outcome: answer });
      } finally {
        if (!released) await release();
      }
    } finally {
      await host.stop();
    }
  });
}

/**
 * A daemon whose profile counts calendar.delete against a quota and asks before it, with a second connection of
 * the same user, and a call of it (`toolCallId`) sent on the first: it goes on to await approval.
 */
async function askedWithQuota(toolCallId: string) {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  const profile = { enabled_skills: ['calendar'], allowed_actions: ['calendar.*'], quotas: { 'calendar.delete': { per_minute: 100 } }, approval: { ask: ['calendar.delete'], ttl_s: 600 } };
  writeFileSync(config, JSON.stringify({ agents: { default: profile } }));
  const host = await startInProcess({ transport: 'ws', dataDir: dir, args: ['--config', config] });
  const s = await openSession(host, await mintBearer('alice'));
  const other = await host.connect();
  const o = await openSession(other, await mintBearer('alice'));
  const key = { thread_id: 't', tool_call_id: toolCallId };
  const args = { module: 'calendar', method: 'delete', input: { event_id: 'evt_none' } };
  const asked = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, ...key, args });
  // Answered only at the end: a failure before then must not surface as its rejection at stop.
  asked.catch(() => {});
  return { host, other, o, key, args, asked };
}

test('a retry of a call awaiting approval, while it counts against its quota, leaves the call awaiting approval and a cancel ends it whole', { timeout: 60_000, skip: TEST_ENGINE === 'postgres' && 'the test lock on PostgreSQL holds only the events table: counting a call is not held by it' }, async () => {
  const { host, other, o, key, args, asked } = await askedWithQuota('asked');
  try {
    await waitFor(async () => (await other.request<CallGetResult>('call/get', { session_id: o.session_id, ...key }).catch(() => undefined))?.state === 'awaiting_approval', 'the call to await approval');
    const release = await holdWriteLock(host.dbPath);
    let released = false;
    try {
      // The retry is admitted and waits to be counted (a write) while the lock is held.
      const retried = other.request<ToolResponse>('tool/invoke', { session_id: o.session_id, ...key, args });
      retried.catch(() => {});
      await waitFor(() => host.services.calls.size === 1, 'the retry to be admitted');
      const seen = await other.request<CallGetResult>('call/get', { session_id: o.session_id, ...key });
      assert.equal(seen.state, 'awaiting_approval');
      const before = host.stderr().length;
      const cancel = other.request<CallCancelResult>('call/cancel', { session_id: o.session_id, ...key });
      await waitFor(() => host.stderr().slice(before).includes('"tool call stopping"'), 'the retry to be stopped');
      await release();
      released = true;
      const [first, second, cancelled] = await Promise.all([asked, retried, cancel]);
      assert.equal(failureCode(first), 'CANCELLED', first.content[0]!.text);
      assert.deepEqual(second, first);
      assert.deepEqual(cancelled, { state: 'done', outcome: first });
      // Nothing is left awaiting approval.
      const listed = await other.request<{ calls: unknown[] }>('call/list', { session_id: o.session_id });
      assert.deepEqual(listed.calls, []);
    } finally {
      if (!released) await release();
    }
  } finally {
    await host.stop();
  }
});

test('shutdown stopping a retry of a call awaiting approval, while it counts against its quota, leaves the call awaiting approval', { timeout: 60_000, skip: TEST_ENGINE === 'postgres' && 'the test lock on PostgreSQL holds only the events table: counting a call is not held by it' }, async () => {
  // Contract section 16: on shutdown running calls are cancelled, calls awaiting approval stay stored.
  const { host, other, o, key, args, asked } = await askedWithQuota('kept');
  try {
    const pending = await waitFor(async () => {
      const got = await other.request<CallGetResult>('call/get', { session_id: o.session_id, ...key }).catch(() => undefined);
      return got?.state === 'awaiting_approval' ? got : undefined;
    }, 'the call to await approval');
    const release = await holdWriteLock(host.dbPath);
    let released = false;
    try {
      const retried = other.request<ToolResponse>('tool/invoke', { session_id: o.session_id, ...key, args });
      retried.catch(() => {});
      await waitFor(() => host.services.calls.size === 1, 'the retry to be admitted');
      // What serve does past its grace: every running call is stopped.
      const stopped = host.services.calls.stopAll(CallStopped.shutdown());
      await release();
      released = true;
      await stopped;
      const after = await other.request<CallGetResult>('call/get', { session_id: o.session_id, ...key });
      assert.equal(after.state, 'awaiting_approval');
      assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM messages WHERE tool_call_id = 'kept'"), 0);
      // Still decidable: both requests answer the decision.
      const denied = await other.request<CallCancelResult>('call/deny', { session_id: o.session_id, ...key, args_sha256: pending.args_sha256 });
      const [first, second] = await Promise.all([asked, retried]);
      assert.equal(failureCode(first), 'APPROVAL_DENIED', first.content[0]!.text);
      assert.deepEqual(second, first);
      assert.deepEqual(denied.outcome, first);
    } finally {
      if (!released) await release();
    }
  } finally {
    await host.stop();
  }
});

test('call/cancel ends a running project-cli child (SIGTERM) and nothing it would have written survives', { timeout: 90_000 }, async () => {
  const host = await startInProcess({ executor: 'subprocess' });
  try {
    const s = await openSession(host, await mintBearer('alice'));
    // The child must be running when the lock is taken: the lock goes in right after the daemon has recorded
    // the call's credential (the child starts then). A child quicker than that is tried again under a new id.
    for (let attempt = 0; ; attempt++) {
      assert.ok(attempt < 8, 'the child always finished before the lock could be taken');
      const id = `k${attempt}`;
      const title = `kill ${attempt}`;
      const pending = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: id, args: create(title) });
      let release: (() => Promise<void>) | undefined;
      if (/^postgres/i.test(host.dbPath)) {
        release = await holdWriteLock(host.dbPath);
        // The events table is locked, the credential is not: once it is recorded the child is starting, so
        // the cancel below meets a child (sent before it, on a loaded machine, it met none, and no stop line came).
        await waitFor(() => dbCount(host.dbPath, 'SELECT count(*) AS n FROM credential_audit WHERE tool_call_id = ?', [id]), 'the credential audit row', 15_000, 2);
      } else {
        await waitFor(() => dbCount(host.dbPath, 'SELECT count(*) AS n FROM credential_audit WHERE tool_call_id = ?', [id]), 'the credential audit row', 15_000, 2);
        release = await holdWriteLock(host.dbPath);
      }
      let released = false;
      try {
        const early = await Promise.race([pending, new Promise<undefined>((r) => setTimeout(() => r(undefined), 150))]);
        if (early) {
          await release();
          released = true;
          if (!/^postgres/i.test(host.dbPath)) continue;
          assert.fail(`the call finished while the events table was locked: ${early.content[0]!.text}`);
        }
        const before = host.stderr().length;
        const cancelled = host.request<CallCancelResult>('call/cancel', { session_id: s.session_id, thread_id: 't', tool_call_id: id });
        await waitFor(() => host.stderr().slice(before).includes('"project-cli stopped"'), 'the child to be stopped');
        assert.match(host.stderr().slice(before), /"project-cli stopped".*"signal":"SIG(TERM|KILL)"/);
        await release();
        released = true;
        const [answer, result] = await Promise.all([pending, cancelled]);
        assert.equal(failureCode(answer), 'CANCELLED', answer.content[0]!.text);
        assert.deepEqual(result.outcome, answer);
        assert.equal(await eventsTitled(host, title), 0);
        // The call's record is its stop (it keeps a run elsewhere from committing), never the killed child's.
        const records = await dbRows<{ outcome: string }>(host.dbPath, 'SELECT outcome FROM tool_calls WHERE tool_call_id = ?', [id]);
        assert.deepEqual(records.map((r) => (JSON.parse(r.outcome) as { error?: { code?: string } }).error?.code), ['CANCELLED'], 'no call record of the killed child');
        break;
      } finally {
        if (!released) await release();
      }
    }
  } finally {
    await host.stop();
  }
});

for (const kind of ['stdio', 'http', 'http-2026'] as const satisfies readonly McpKind[]) {
  test(`MCP notifications/cancelled stops a running tools/call; the call is stored CANCELLED (${kind})`, { timeout: 60_000 }, async () => {
    // Debug lines say when the call runs (`tool call running`): the cancel must find it running.
    const debug = { TOOLGATE_LOG_LEVEL: 'debug' };
    // Over HTTP: a daemon on the binary's default executor, subprocess.
    const daemon = kind === 'stdio' ? undefined : await startInProcess({ transport: 'ws', executor: 'subprocess', env: debug });
    const dataDir = tempDir();
    const dbPath = daemon?.dbPath ?? (TEST_ENGINE === 'postgres' ? (await import('../helpers/pg.js')).pgDatabaseFor(dataDir) : join(dataDir, 'toolgate.db'));
    const db = await dbPath;
    const token = await mintBearer('alice');
    const mcp = await connectMcp(kind, {
      token,
      ...(daemon ? { port: daemon.port! } : {}),
      dbPath: db,
      env: debug,
    });
    const stderr = () => daemon?.stderr() ?? mcp.stderr();
    const release = await holdWriteLock(db);
    let released = false;
    try {
      const abort = new AbortController();
      const meta = { 'toolgate/thread_id': 'mcp-cancel', 'toolgate/tool_call_id': `m-${kind}` };
      const pending = mcp.client.callTool({ name: 'project_cli', arguments: create(`mcp ${kind}`), _meta: meta }, { signal: abort.signal });
      await waitFor(() => stderr().includes(`"tool call running"`) && stderr().includes(`"tool_call_id":"m-${kind}"`), () => `the call to run\n${stderr().slice(-1500)}`);
      const before = stderr().length;
      abort.abort();
      await assert.rejects(pending);
      // The call's last line says it stopped: the stop final (subprocess: its child gone and, on PostgreSQL, its
      // server sessions ended — see stopTookEffect), its unit undone (in process), or its outcome stored.
      const ends = ['"tool call stopped"', `"msg":"tool call","transport":"mcp"`];
      await waitFor(() => ends.some((l) => stderr().slice(before).includes(l)), () => `the call to stop\n${stderr().slice(-1500)}`);
      await release();
      released = true;
      const row = await waitFor(
        async () => (await dbCount(db, 'SELECT count(*) AS n FROM messages WHERE tool_call_id = ?', [meta['toolgate/tool_call_id']])) > 0,
        'the cancelled call to be stored',
      );
      assert.ok(row);
      const content = await import('../helpers/db.js').then((m) => m.dbRows<{ content: string }>(db, 'SELECT content FROM messages WHERE tool_call_id = ?', [meta['toolgate/tool_call_id']]));
      assert.equal((JSON.parse(content[0]!.content) as { error: { code: string } }).error.code, 'CANCELLED');
      assert.equal(await dbCount(db, 'SELECT count(*) AS n FROM events WHERE title = ?', [`mcp ${kind}`]), 0);
    } finally {
      if (!released) await release();
      await mcp.close();
      await daemon?.stop();
    }
  });
}

for (const executor of ['subprocess', 'inprocess'] as const) {
  test(`two daemons on PostgreSQL: call/get and call/cancel on one reach the call running on the other (${executor})`, { ...needsPg, timeout: 90_000 }, async () => {
    const { url } = await freshPgDatabase();
    const args = ['--executor', executor];
    const [a, b] = await Promise.all([startHost({ transport: 'ws', db: url, args }), startHost({ transport: 'ws', db: url, args })]);
    try {
      const sa = await openSession(a, await mintBearer('alice'));
      const sb = await openSession(b, await mintBearer('alice'));
      const bob = await openSession(b, await mintBearer('bob'), {});
      const release = await holdWriteLock(url);
      let released = false;
      try {
        const pending = a.request<ToolResponse>('tool/invoke', { session_id: sa.session_id, thread_id: 't', tool_call_id: 'x1', args: create('across') });
        const seen = await waitFor(async () => {
          const got = await b.request<CallGetResult>('call/get', { session_id: sb.session_id, thread_id: 't', tool_call_id: 'x1' }).catch(() => undefined);
          return got?.state === 'running' ? got : undefined;
        }, () => `daemon B to see the call running\n${a.stderr().slice(-1500)}`);
        assert.equal(seen.action, 'calendar.create');
        // Another user asking B: the same answer as for no call.
        const err = await rpcError(b.request('call/get', { session_id: bob.session_id, thread_id: 't', tool_call_id: 'x1' }));
        assert.deepEqual(err.data, { code: 'CALL_NOT_FOUND' });
        const before = a.stderr().length;
        const cancel = b.request<CallCancelResult>('call/cancel', { session_id: sb.session_id, thread_id: 't', tool_call_id: 'x1' });
        // A hears it within a second (LISTEN), well inside waitFor's ceiling.
        await stopTookEffect(a, executor, before, pending);
        await release();
        released = true;
        const [answer, cancelled] = await Promise.all([pending, cancel]);
        await assertStopped(a, executor, answer, 'CANCELLED', 'across');
        assert.equal(cancelled.state, 'done');
        assert.deepEqual(cancelled.outcome, answer);
        const onB = await b.request<CallGetResult>('call/get', { session_id: sb.session_id, thread_id: 't', tool_call_id: 'x1' });
        assert.deepEqual(onB.outcome, answer);
        await waitFor(async () => (await dbCount(url, 'SELECT count(*) AS n FROM calls')) === 0, 'the running row to be removed');
      } finally {
        if (!released) await release();
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
}

/** Two daemons (WebSocket, the subprocess executor) on one fresh PostgreSQL database, alice's session on each. */
async function onTwoPgDaemons(work: (t: { url: string; a: Host; b: Host; sa: { session_id: string }; sb: { session_id: string } }) => Promise<void>): Promise<void> {
  const { url } = await freshPgDatabase();
  const args = ['--executor', 'subprocess'];
  const [a, b] = await Promise.all([startHost({ transport: 'ws', db: url, args }), startHost({ transport: 'ws', db: url, args })]);
  try {
    await work({ url, a, b, sa: await openSession(a, await mintBearer('alice')), sb: await openSession(b, await mintBearer('alice')) });
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
}

test('two daemons on PostgreSQL: a call just started on one is running to the other at once, never CALL_NOT_FOUND, and its cancel there stops it', { ...needsPg, timeout: 90_000 }, async () => {
  await onTwoPgDaemons(async ({ url, a, b, sa, sb }) => {
  // A warm call first: the daemon's first call loads its executor, which would outlast the window below.
  await a.request<ToolResponse>('tool/invoke', { session_id: sa.session_id, thread_id: 't', tool_call_id: 'warm', args: create('warm') });
  const release = await holdWriteLock(url);
  let released = false;
  try {
    const key = { thread_id: 't', tool_call_id: 'early' };
    const pending = a.request<ToolResponse>('tool/invoke', { session_id: sa.session_id, ...key, args: create('early') });
    // Running on A from its admission; B is asked the moment A says so — well inside A's first 100 ms,
    // before A shares the call with the other daemons.
    await started(a, a, sa.session_id, 't', 'early');
    const seen = await b.request<CallGetResult>('call/get', { session_id: sb.session_id, ...key });
    assert.equal(seen.state, 'running');
    const before = a.stderr().length;
    const cancel = b.request<CallCancelResult>('call/cancel', { session_id: sb.session_id, ...key });
    await stopTookEffect(a, 'subprocess', before, pending);
    await release();
    released = true;
    const [answer, cancelled] = await Promise.all([pending, cancel]);
    await assertStopped(a, 'subprocess', answer, 'CANCELLED', 'early');
    assert.deepEqual([cancelled.state, cancelled.outcome], ['done', answer]);
  } finally {
    if (!released) await release();
  }
  });
});

test('two daemons on PostgreSQL: a retry cancelled on one never leaves the other\'s child committing under CANCELLED (subprocess)', { ...needsPg, timeout: 90_000 }, async () => {
  // The same call runs on A and, retried, on B (each daemon's running calls know only its own run). A cancel on
  // B stops B's run at once; A's child, held by the lock, commits only after B stored the call's outcome. That
  // outcome is the call's one answer, and if it is CANCELLED nothing the call wrote may be visible.
  await onTwoPgDaemons(async ({ url, a, b, sa, sb }) => {
  const key = { thread_id: 't', tool_call_id: 'twin' };
  const title = 'twin cancelled on B';
  const audits = () => dbCount(url, 'SELECT count(*) AS n FROM credential_audit WHERE tool_call_id = ?', [key.tool_call_id]);
  const release = await holdWriteLock(url);
  let released = false;
  try {
    const first = a.request<ToolResponse>('tool/invoke', { session_id: sa.session_id, ...key, args: create(title) });
    // Each run's child starts once its credential is recorded; both then wait for the events table.
    await waitFor(async () => (await audits()) >= 1, 'A\'s credential audit row');
    const retry = b.request<ToolResponse>('tool/invoke', { session_id: sb.session_id, ...key, args: create(title) });
    await waitFor(async () => (await audits()) >= 2, 'B\'s credential audit row');
    const cancelled = await b.request<CallCancelResult>('call/cancel', { session_id: sb.session_id, ...key });
    await release();
    released = true;
    const [ra, rb] = await Promise.all([first, retry]);
    assert.equal(cancelled.state, 'done');
    assert.deepEqual(rb, cancelled.outcome, 'the retry answers the call\'s outcome');
    assert.deepEqual(ra, cancelled.outcome, 'the first try answers the call\'s outcome');
    const events = await dbCount(url, 'SELECT count(*) AS n FROM events WHERE title = ?', [title]);
    if (failureCode(ra) === 'CANCELLED') assert.equal(events, 0, 'a CANCELLED call whose event is visible');
    else assert.equal(events, 1);
  } finally {
    if (!released) await release();
  }
  });
});
