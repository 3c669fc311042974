/**
 * Approval bound to the exact call (contract section 17), from outside, on a
 * daemon over stdio and WebSocket with both executors, on the pass's
 * engine: a call to an `ask` action is stored `awaiting_approval` with no
 * credential issued, `tool/approval` carries its digest and a confirmation
 * card, and it runs only after `call/approve` — exactly once; a wrong digest
 * changes nothing; a deny, an expiry and a cancel each end it with nothing
 * written by the action; racing approve/deny pairs leave each call decided once.
 *
 * The daemons run in this process (test/helpers/in-process.ts) on the real
 * transports and executors; the process boundary is not what is checked here
 * (daemon-skeleton, ws-transport and executors keep spawned ones). A daemon
 * that dies and the one started after it (the sweep at start is `serve`'s)
 * are spawned, and so are two daemons on one PostgreSQL database.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHost, openSession, rpcError, type Client, type Transport } from '../helpers/host.js';
import { startInProcess, type InProcessHost } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { tempDir } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait-for.js';
import { dbCount, dbRows } from '../helpers/db.js';
import { validateUiSchema } from '../helpers/ui-schema-validator.js';
import type { CallCancelResult, CallGetResult, ToolApprovalNotification, ToolResponse } from '../../src/protocol/index.js';
import { argsSha256 } from '../../src/codec/canonical-json.js';
import { freshPgDatabase, needsPg } from '../helpers/pg.js';
import { askConfig } from '../helpers/approval-config.js';
import { gateNextTransaction, holdAfterApproval, type ApprovalHold } from '../helpers/hold-approval.js';
import { verifySse } from '../helpers/ag-ui-client.js';

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
  port?: number;
  stderr(): string;
}

const failure = (r: ToolResponse) => (JSON.parse(r.content[0]!.text) as { error?: { code?: string; reason?: string } }).error;

/** The `tool/approval` of this call as the client received it. */
function approvalOf(client: Client, toolCallId: string): Promise<ToolApprovalNotification> {
  return waitFor(
    () => client.wire.find((e) => e.method === 'tool/approval' && (e.payload as ToolApprovalNotification).tool_call_id === toolCallId)?.payload as ToolApprovalNotification | undefined,
    `tool/approval of ${toolCallId}`,
  );
}

const credentialsFor = (host: Host, toolCallId: string) => dbCount(host.dbPath, 'SELECT count(*) AS n FROM credential_audit WHERE tool_call_id = ?', [toolCallId]);
const eventExists = (host: Host, id: string) => dbCount(host.dbPath, 'SELECT count(*) AS n FROM events WHERE id = ?', [id]);
const decisions = (host: Host, toolCallId: string) =>
  dbRows<{ decision: string; surface: string; args_sha256: string }>(host.dbPath, 'SELECT decision, surface, args_sha256 FROM approval_audit WHERE tool_call_id = ? ORDER BY seq', [toolCallId]);

async function createEvent(host: Host, sessionId: string, id: string, title: string): Promise<string> {
  const r = await host.request<ToolResponse>('tool/invoke', {
    session_id: sessionId,
    thread_id: 't',
    tool_call_id: id,
    args: { module: 'calendar', method: 'create', input: { title, start_at: '2026-10-10T08:00:00Z', end_at: '2026-10-10T09:00:00Z' } },
  });
  assert.equal(r.status, 'success', r.content[0]!.text);
  return (JSON.parse(r.content[0]!.text) as { data: { event: { id: string } } }).data.event.id;
}

/**
 * One daemon per transport and executor on the ask config, shared by the tests that need nothing else
 * of it: each acts as users of its own, and its call ids are its own (the audit tables are read by
 * call id). Stopped after the file.
 */
const daemons = new Map<string, Promise<InProcessHost>>();
function daemon(transport: Transport, executor: Executor): Promise<InProcessHost> {
  const key = `${transport} ${executor}`;
  let host = daemons.get(key);
  if (!host) {
    host = startInProcess({ transport, executor, args: ['--config', askConfig()] });
    daemons.set(key, host);
  }
  return host;
}
after(async () => {
  await Promise.all([...daemons.values()].map(async (h) => (await h).stop()));
});

for (const { transport, executor } of CASES) {
  test(`an ask call runs only after approval, exactly once; wrong digest, deny, expiry and cancel end it unrun (${transport}, ${executor})`, { timeout: 90_000 }, async () => {
    const host = await daemon(transport, executor);
    {
      const alice = await openSession(host, await mintBearer('alice'));
      // The approver: another connection of the same user on WebSocket (a subscriber of the thread); the same pipe on stdio.
      const other = transport === 'ws' ? await host.connect() : host;
      const approver = other === host ? alice : await openSession(other, await mintBearer('alice'));
      if (other !== host) await other.request('thread/subscribe', { session_id: approver.session_id, thread_id: 't' });
      const eventId = await createEvent(host, alice.session_id, 'create-1', 'to delete');

      // --- asked: stored awaiting approval, nothing run, no credential.
      const args = { module: 'calendar', method: 'delete', input: { event_id: eventId } };
      const pending = host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'del-1', args });
      const asked = await approvalOf(host, 'del-1');
      assert.equal(asked.action, 'calendar.delete');
      assert.deepEqual(asked.tool_call_args, args);
      assert.equal(asked.args_sha256, argsSha256(args));
      assert.ok(Date.parse(asked.expires_at) > Date.now());
      assert.ok(asked.ui_schema, 'a confirmation card');
      assert.ok(validateUiSchema(asked.ui_schema).ok);
      assert.match(JSON.stringify(asked.ui_schema), /Will be deleted/);
      assert.match(JSON.stringify(asked.ui_schema), /to delete/, 'the card shows the event about to be deleted');
      // Every subscriber of the thread is asked too.
      if (other !== host) assert.deepEqual(await approvalOf(other, 'del-1'), asked);
      const got = await other.request<CallGetResult>('call/get', { session_id: approver.session_id, thread_id: 't', tool_call_id: 'del-1' });
      assert.equal(got.state, 'awaiting_approval');
      assert.equal(got.args_sha256, asked.args_sha256);
      assert.equal(await credentialsFor(host, 'del-1'), 0, 'no credential before approval');
      assert.equal(await eventExists(host, eventId), 1);

      // --- a wrong digest changes nothing.
      const wrong = await rpcError(other.request('call/approve', { session_id: approver.session_id, thread_id: 't', tool_call_id: 'del-1', args_sha256: '0'.repeat(64) }));
      assert.equal(wrong.code, -32602);
      assert.deepEqual(wrong.data, { code: 'ARGS_MISMATCH' });
      assert.equal((await other.request<CallGetResult>('call/get', { session_id: approver.session_id, thread_id: 't', tool_call_id: 'del-1' })).state, 'awaiting_approval');

      // --- approved: runs once, its credential issued only now; the pending tool/invoke answers with the outcome.
      const approved = await other.request<CallCancelResult>('call/approve', { session_id: approver.session_id, thread_id: 't', tool_call_id: 'del-1', args_sha256: asked.args_sha256 });
      const answer = await pending;
      assert.equal(answer.status, 'success', answer.content[0]!.text);
      assert.deepEqual(approved, { state: 'done', outcome: answer });
      assert.equal(await eventExists(host, eventId), 0);
      assert.equal(await credentialsFor(host, 'del-1'), 1);
      // Its `tool call` log line carries the run's `ms`, as every call's does (security.md, operations.md).
      const logged = await waitFor(
        () => host.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'tool call' && l.tool_call_id === 'del-1'),
        'the approved call\'s tool call log line',
      );
      assert.equal(typeof logged.ms, 'number', JSON.stringify(logged));
      // A second decision finds it decided; a deny after it changes nothing; re-invoking answers the stored outcome.
      assert.deepEqual(await other.request('call/approve', { session_id: approver.session_id, thread_id: 't', tool_call_id: 'del-1', args_sha256: asked.args_sha256 }), approved);
      assert.deepEqual(await other.request('call/deny', { session_id: approver.session_id, thread_id: 't', tool_call_id: 'del-1', args_sha256: asked.args_sha256 }), approved);
      assert.deepEqual(await host.request('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'del-1', args }), answer);
      assert.equal(await credentialsFor(host, 'del-1'), 1, 'ran exactly once');
      assert.equal(await dbCount(host.dbPath, 'SELECT count(*) AS n FROM tool_calls WHERE tool_call_id = ?', ['del-1']), 1);
      assert.deepEqual(await decisions(host, 'del-1'), [{ decision: 'approve', surface: transport, args_sha256: asked.args_sha256 }]);
      const tool = await host.request<{ messages: Array<{ tool_call_id?: string; content: string }> }>('history/get', { session_id: alice.session_id, thread_id: 't', view: 'context' });
      assert.equal(tool.messages.filter((m) => m.tool_call_id === 'del-1').length, 1);

      // --- denied: failure APPROVAL_DENIED with the reason; nothing written, no credential.
      await host.request('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'mem-1', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'keep me' } } });
      const forget = { module: 'memory', method: 'forget', input: { key: 'k' } };
      const pendingForget = host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'forget-1', args: forget });
      const askedForget = await approvalOf(host, 'forget-1');
      assert.match(JSON.stringify(askedForget.ui_schema), /keep me/, 'the card shows the memory about to be forgotten');
      const denied = await other.request<CallCancelResult>('call/deny', {
        session_id: approver.session_id,
        thread_id: 't',
        tool_call_id: 'forget-1',
        args_sha256: askedForget.args_sha256,
        reason: 'keep that memory',
      });
      const deniedAnswer = await pendingForget;
      assert.equal(deniedAnswer.status, 'failure');
      assert.deepEqual({ code: failure(deniedAnswer)?.code, reason: failure(deniedAnswer)?.reason }, { code: 'APPROVAL_DENIED', reason: 'keep that memory' });
      assert.deepEqual(denied, { state: 'done', outcome: deniedAnswer });
      assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM memories WHERE key = 'k'"), 1);
      assert.equal(await credentialsFor(host, 'forget-1'), 0);
      assert.deepEqual((await decisions(host, 'forget-1')).map((d) => d.decision), ['deny']);
      // An approval after the deny finds it done.
      assert.deepEqual(await other.request('call/approve', { session_id: approver.session_id, thread_id: 't', tool_call_id: 'forget-1', args_sha256: askedForget.args_sha256 }), denied);

      // --- cancelled while awaiting approval: CANCELLED, nothing written.
      const cancelArgs = { module: 'calendar', method: 'delete', input: { event_id: await createEvent(host, alice.session_id, 'create-2', 'kept') } };
      const pendingCancel = host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'del-2', args: cancelArgs });
      await approvalOf(host, 'del-2');
      const cancelled = await other.request<CallCancelResult>('call/cancel', { session_id: approver.session_id, thread_id: 't', tool_call_id: 'del-2' });
      const cancelledAnswer = await pendingCancel;
      assert.equal(failure(cancelledAnswer)?.code, 'CANCELLED');
      assert.deepEqual(cancelled, { state: 'done', outcome: cancelledAnswer });
      assert.equal(await eventExists(host, cancelArgs.input.event_id), 1);
      assert.equal(await credentialsFor(host, 'del-2'), 0);

      // --- expired: nobody decided within ttl_s (1 s on the `quick` profile).
      const quick = await openSession(host, await mintBearer('alice'), { agent: 'quick' });
      const expiring = { module: 'calendar', method: 'delete', input: { event_id: cancelArgs.input.event_id } };
      const expired = await host.request<ToolResponse>('tool/invoke', { session_id: quick.session_id, thread_id: 't', tool_call_id: 'del-3', args: expiring });
      assert.equal(failure(expired)?.code, 'APPROVAL_EXPIRED', expired.content[0]!.text);
      assert.equal(await eventExists(host, cancelArgs.input.event_id), 1);
      assert.equal(await credentialsFor(host, 'del-3'), 0);
      const late = await other.request<CallCancelResult>('call/approve', { session_id: approver.session_id, thread_id: 't', tool_call_id: 'del-3', args_sha256: argsSha256(expiring) });
      assert.deepEqual(late, { state: 'done', outcome: expired });

      // --- an invalid call to an ask action fails at once, as any call: nothing awaits approval.
      const invalid = await host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'del-4', args: { module: 'calendar', method: 'delete', input: {} } });
      assert.equal(failure(invalid)?.code, 'INVALID_ACTION_INPUT');

      // --- another user's call is not found; nor can they decide it.
      if (transport === 'ws') {
        const bobClient = await host.connect();
        const bob = await openSession(bobClient, await mintBearer('bob'));
        const err = await rpcError(bobClient.request('call/approve', { session_id: bob.session_id, thread_id: 't', tool_call_id: 'del-1', args_sha256: asked.args_sha256 }));
        assert.deepEqual(err.data, { code: 'CALL_NOT_FOUND' });
        await bobClient.close();
      }
      if (other !== host) await other.close();
    }
  });
}

test('100 raced approve/deny pairs leave each call decided exactly once (ws, inprocess)', { timeout: 120_000 }, async () => {
  const host = await daemon('ws', 'inprocess');
  const a = await host.connect();
  const b = await host.connect();
  try {
    const alice = await openSession(host, await mintBearer('racer'));
    const sa = await openSession(a, await mintBearer('racer'));
    const sb = await openSession(b, await mintBearer('racer'));
    const N = 100;
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        host.request('tool/invoke', { session_id: alice.session_id, thread_id: 'race', tool_call_id: `m-${i}`, args: { module: 'memory', method: 'update', input: { key: `k${i}`, content: 'x' } } }),
      ),
    );
    const answers = Array.from({ length: N }, (_, i) =>
      host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 'race', tool_call_id: `f-${i}`, args: { module: 'memory', method: 'forget', input: { key: `k${i}` } } }),
    );
    const asked = await Promise.all(Array.from({ length: N }, (_, i) => approvalOf(host, `f-${i}`)));
    const decided = await Promise.all(
      asked.map((n, i) => {
        const p = { thread_id: 'race', tool_call_id: n.tool_call_id, args_sha256: n.args_sha256 };
        const approve = a.request<CallCancelResult>('call/approve', { session_id: sa.session_id, ...p });
        const deny = b.request<CallCancelResult>('call/deny', { session_id: sb.session_id, ...p, reason: `no ${i}` });
        return Promise.all([approve, deny]);
      }),
    );
    const outcomes = await Promise.all(answers);
    for (let i = 0; i < N; i++) {
      const id = `f-${i}`;
      const rows = await decisions(host, id);
      assert.equal(rows.length, 1, `${id} decided once: ${JSON.stringify(rows)}`);
      const memory = await dbCount(host.dbPath, 'SELECT count(*) AS n FROM memories WHERE key = ?', [`k${i}`]);
      if (rows[0]!.decision === 'approve') {
        assert.equal(outcomes[i]!.status, 'success', outcomes[i]!.content[0]!.text);
        assert.equal(memory, 0);
        assert.equal(await credentialsFor(host, id), 1);
      } else {
        assert.equal(failure(outcomes[i]!)?.code, 'APPROVAL_DENIED');
        assert.equal(memory, 1);
        assert.equal(await credentialsFor(host, id), 0);
      }
      // Both racers answer the call's state; whichever finished last saw it done with the one outcome.
      for (const r of decided[i]!) if (r.state === 'done') assert.deepEqual(r.outcome, outcomes[i]);
    }
  } finally {
    await a.close();
    await b.close();
  }
});

for (const executor of ['subprocess', 'inprocess'] as const) {
  test(`two daemons on one PostgreSQL database: asked on one, decided on the other (${executor})`, { ...needsPg, timeout: 90_000 }, async () => {
    const { url } = await freshPgDatabase();
    const args = ['--executor', executor, '--config', askConfig()];
    const [a, b] = await Promise.all([startHost({ transport: 'ws', db: url, args }), startHost({ transport: 'ws', db: url, args })]);
    try {
      const onA = await openSession(a, await mintBearer('alice'));
      const onB = await openSession(b, await mintBearer('alice'));
      const eventId = await createEvent(a, onA.session_id, 'pg-create-1', 'shared delete');
      const del = { module: 'calendar', method: 'delete', input: { event_id: eventId } };

      // Approved on B: runs once (on B), and A's pending tool/invoke answers with the outcome.
      const pending = a.request<ToolResponse>('tool/invoke', { session_id: onA.session_id, thread_id: 't', tool_call_id: 'pg-del-1', args: del });
      const asked = await approvalOf(a, 'pg-del-1');
      assert.equal((await b.request<CallGetResult>('call/get', { session_id: onB.session_id, thread_id: 't', tool_call_id: 'pg-del-1' })).state, 'awaiting_approval');
      assert.equal(await credentialsFor(a, 'pg-del-1'), 0);
      const wrong = await rpcError(b.request('call/approve', { session_id: onB.session_id, thread_id: 't', tool_call_id: 'pg-del-1', args_sha256: 'f'.repeat(64) }));
      assert.deepEqual(wrong.data, { code: 'ARGS_MISMATCH' });
      const [approved, denied] = await Promise.all([
        b.request<CallCancelResult>('call/approve', { session_id: onB.session_id, thread_id: 't', tool_call_id: 'pg-del-1', args_sha256: asked.args_sha256 }),
        a.request<CallCancelResult>('call/deny', { session_id: onA.session_id, thread_id: 't', tool_call_id: 'pg-del-1', args_sha256: asked.args_sha256 }),
      ]);
      const answer = await pending;
      const rows = await decisions(a, 'pg-del-1');
      assert.equal(rows.length, 1, JSON.stringify(rows));
      if (rows[0]!.decision === 'approve') {
        assert.equal(answer.status, 'success', answer.content[0]!.text);
        assert.equal(await eventExists(a, eventId), 0);
        assert.equal(await credentialsFor(a, 'pg-del-1'), 1);
      } else {
        assert.equal(failure(answer)?.code, 'APPROVAL_DENIED');
        assert.equal(await eventExists(a, eventId), 1);
        assert.equal(await credentialsFor(a, 'pg-del-1'), 0);
      }
      for (const r of [approved, denied]) if (r.state === 'done') assert.deepEqual(r.outcome, answer);

      // Cancelled on B while A waits: CANCELLED, nothing written.
      const keepId = await createEvent(a, onA.session_id, 'pg-create-2', 'kept');
      const pendingCancel = a.request<ToolResponse>('tool/invoke', { session_id: onA.session_id, thread_id: 't', tool_call_id: 'pg-del-2', args: { ...del, input: { event_id: keepId } } });
      await approvalOf(a, 'pg-del-2');
      const cancelled = await b.request<CallCancelResult>('call/cancel', { session_id: onB.session_id, thread_id: 't', tool_call_id: 'pg-del-2' });
      const cancelledAnswer = await pendingCancel;
      assert.equal(failure(cancelledAnswer)?.code, 'CANCELLED');
      assert.deepEqual(cancelled, { state: 'done', outcome: cancelledAnswer });
      assert.equal(await eventExists(a, keepId), 1);

      // Denied on B: A answers APPROVAL_DENIED with the reason.
      const pendingDeny = a.request<ToolResponse>('tool/invoke', { session_id: onA.session_id, thread_id: 't', tool_call_id: 'pg-del-3', args: { ...del, input: { event_id: keepId } } });
      const askedDeny = await approvalOf(a, 'pg-del-3');
      await b.request('call/deny', { session_id: onB.session_id, thread_id: 't', tool_call_id: 'pg-del-3', args_sha256: askedDeny.args_sha256, reason: 'not that one' });
      const deniedAnswer = await pendingDeny;
      assert.deepEqual({ code: failure(deniedAnswer)?.code, reason: failure(deniedAnswer)?.reason }, { code: 'APPROVAL_DENIED', reason: 'not that one' });
      assert.equal(await eventExists(a, keepId), 1);
      assert.equal(await credentialsFor(a, 'pg-del-3'), 0);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
}

test('a call whose asker died expires anyway: the next daemon sweeps it at start (APPROVAL_EXPIRED, audited, nothing run)', { timeout: 60_000 }, async () => {
  const dataDir = tempDir();
  const args = ['--executor', 'inprocess', '--config', askConfig()];
  const asker = await startHost({ transport: 'ws', dataDir, args });
  let eventId: string;
  let expiresAt: string;
  try {
    const { session_id } = await openSession(asker, await mintBearer('alice'), { agent: 'quick' });
    eventId = await createEvent(asker, session_id, 'sweep-create', 'outlives its asker');
    void asker
      .request('tool/invoke', { session_id, thread_id: 't', tool_call_id: 'sweep-del', args: { module: 'calendar', method: 'delete', input: { event_id: eventId } } })
      .catch(() => {});
    expiresAt = (await approvalOf(asker, 'sweep-del')).expires_at;
  } finally {
    // Dies while the call waits: nobody is left to expire it, and nobody asks for it.
    asker.proc.kill('SIGKILL');
    await new Promise((resolve) => asker.proc.once('exit', resolve));
  }
  await waitFor(() => Date.now() > Date.parse(expiresAt) || undefined, 'the call to pass its expires_at');
  assert.equal(await dbCount(asker.dbPath, "SELECT count(*) AS n FROM calls WHERE tool_call_id = 'sweep-del'"), 1, 'still pending in the database');
  const next = await startHost({ transport: 'ws', dataDir, args });
  try {
    // Swept before the daemon listened: no call/get needed.
    const [stored] = await dbRows<{ content: string }>(next.dbPath, "SELECT content FROM messages WHERE tool_call_id = 'sweep-del'");
    assert.equal((JSON.parse(stored!.content) as { error?: { code?: string } }).error?.code, 'APPROVAL_EXPIRED', stored?.content);
    assert.deepEqual((await decisions(next, 'sweep-del')).map((d) => [d.decision, d.surface]), [['expire', 'ttl']]);
    assert.equal(await dbCount(next.dbPath, "SELECT count(*) AS n FROM calls WHERE tool_call_id = 'sweep-del'"), 0);
    assert.equal(await eventExists(next, eventId), 1, 'nothing ran');
    assert.equal(await credentialsFor(next, 'sweep-del'), 0);
  } finally {
    await next.stop();
  }
});

test('HTTP for front ends: GET the call, POST its approval, GET /calls (404 not yours, 409 wrong digest, 401 without a token)', { timeout: 60_000 }, async () => {
  const host = await daemon('ws', 'inprocess');
  {
    const aliceToken = await mintBearer('http-alice');
    const alice = await openSession(host, aliceToken);
    const base = `http://127.0.0.1:${host.port}/threads/t/calls`;
    const http = (path: string, token: string | undefined, body?: unknown) =>
      fetch(`${base}/${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    await host.request('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'http-m', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } } });
    const pending = host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'http-f', args: { module: 'memory', method: 'forget', input: { key: 'k' } } });
    const asked = await approvalOf(host, 'http-f');

    const got = await http('http-f', aliceToken);
    assert.equal(got.status, 200);
    const call = (await got.json()) as CallGetResult;
    assert.equal(call.state, 'awaiting_approval');
    assert.equal(call.args_sha256, asked.args_sha256);
    assert.equal((await http('http-f', undefined)).status, 401);
    assert.equal((await http('http-f', await mintBearer('bob'))).status, 404, "another user's call is not found");
    assert.equal((await http('http-f/approval', await mintBearer('bob'), { decision: 'approve', args_sha256: asked.args_sha256 })).status, 404);
    assert.equal((await http('http-f/approval', aliceToken, { decision: 'approve', args_sha256: 'a'.repeat(64) })).status, 409);
    assert.equal((await http('http-f/approval', aliceToken, { decision: 'maybe', args_sha256: asked.args_sha256 })).status, 400);
    // GET /calls: the user's calls awaiting approval, as call/list answers them.
    const calls = (query: string, token: string | undefined, method = 'GET') =>
      fetch(`http://127.0.0.1:${host.port}/calls${query}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
    const listed = await calls('?state=awaiting_approval', aliceToken);
    assert.equal(listed.status, 200);
    assert.deepEqual(await listed.json(), { calls: [asked], next_cursor: null });
    assert.deepEqual(await (await calls('', await mintBearer('bob'))).json(), { calls: [], next_cursor: null }, "not another user's");
    assert.equal((await calls('', undefined)).status, 401);
    assert.equal((await calls('?limit=0', aliceToken)).status, 400);
    // A limit is a decimal integer, as call/list's schema has it: no hex, exponent, sign, fraction or padding.
    for (const limit of ['0x10', '1e1', '5.0', '+5', '%205', '5%20', '0005']) {
      assert.equal((await calls(`?limit=${limit}`, aliceToken)).status, 400, `limit=${limit}`);
    }
    assert.equal((await calls('?cursor=bm90LWEtY3Vyc29y', aliceToken)).status, 400);
    assert.equal((await calls('', aliceToken, 'POST')).status, 405);
    assert.equal(await credentialsFor(host, 'http-f'), 0);

    const approved = await http('http-f/approval', aliceToken, { decision: 'approve', args_sha256: asked.args_sha256 });
    assert.equal(approved.status, 200);
    const answer = await pending;
    assert.equal(answer.status, 'success', answer.content[0]!.text);
    assert.deepEqual(await approved.json(), { state: 'done', outcome: answer });
    assert.deepEqual(await decisions(host, 'http-f'), [{ decision: 'approve', surface: 'http', args_sha256: asked.args_sha256 }]);
    assert.equal(await credentialsFor(host, 'http-f'), 1);
    assert.equal((await http('nope', aliceToken)).status, 404);
  }
});

test('AG-UI: a call awaiting approval is a CUSTOM toolgate.approval event in a run of its own, accepted by the AG-UI verifier', { timeout: 60_000 }, async () => {
  const host = await daemon('ws', 'inprocess');
  const abort = new AbortController();
  try {
    const token = await mintBearer('agui-alice');
    const alice = await openSession(host, token);
    await host.request('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'agui-m', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } } });
    const res = await fetch(`http://127.0.0.1:${host.port}/threads/t/events`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
    assert.equal(res.status, 200);
    let body = '';
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const readUntil = async (text: string) => {
      while (!body.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${text}`);
        body += decoder.decode(value, { stream: true });
      }
    };
    await readUntil('event: RUN_FINISHED'); // the replay of the stored message: the stream is live from here
    const pending = host.request<ToolResponse>('tool/invoke', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'agui-f', args: { module: 'memory', method: 'forget', input: { key: 'k' } } });
    const asked = await approvalOf(host, 'agui-f');
    await readUntil('toolgate.approval');
    await host.request('call/deny', { session_id: alice.session_id, thread_id: 't', tool_call_id: 'agui-f', args_sha256: asked.args_sha256, reason: 'no' });
    await pending;
    await readUntil('APPROVAL_DENIED');
    // Up to the end of the outcome's run, then the official client's verifier reads it all.
    const finished = () => {
      const at = body.indexOf('event: RUN_FINISHED', body.indexOf('APPROVAL_DENIED'));
      return at < 0 ? -1 : body.indexOf('\n\n', at);
    };
    while (finished() < 0) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended inside a run');
      body += decoder.decode(value, { stream: true });
    }
    const events = await verifySse(body.slice(0, finished() + 2));
    const custom = events.find((e) => e.type === 'CUSTOM') as unknown as { name: string; value: ToolApprovalNotification } | undefined;
    assert.ok(custom, 'a CUSTOM event');
    assert.equal(custom.name, 'toolgate.approval');
    assert.deepEqual(custom.value, asked);
    assert.ok(events.some((e) => e.type === 'TOOL_CALL_RESULT' && JSON.stringify(e).includes('APPROVAL_DENIED')), 'the outcome as the usual TOOL_CALL_RESULT');
  } finally {
    abort.abort();
  }
});

interface TwoDaemonRace {
  a: InProcessHost;
  b: InProcessHost;
  onA: { session_id: string };
  onB: { session_id: string };
  key: { userId: string; threadId: string; toolCallId: string };
  argsSha256: string;
  /** The holds the race puts in: each restored whatever happens. */
  holds: ApprovalHold[];
}

/**
 * Two daemons on one PostgreSQL database: a `calendar.delete` asked on A, approved on A and cancelled on B in
 * the order `race` forces. B's cancel stops it whatever the order: CANCELLED everywhere, the event still there.
 */
async function cancelOnBRacingApproval(id: string, race: (r: TwoDaemonRace) => Promise<{ cancelled: Promise<CallCancelResult>; approved: Promise<CallCancelResult> }>): Promise<void> {
  const { url } = await freshPgDatabase();
  const args = ['--config', askConfig()];
  const [a, b] = await Promise.all([startInProcess({ transport: 'ws', executor: 'inprocess', db: url, args }), startInProcess({ transport: 'ws', executor: 'inprocess', db: url, args })]);
  const holds: ApprovalHold[] = [];
  try {
    const onA = await openSession(a, await mintBearer('alice'));
    const onB = await openSession(b, await mintBearer('alice'));
    const key = { userId: onA.user_id, threadId: 't', toolCallId: id };
    const eventId = await createEvent(a, onA.session_id, `${id}-create`, 'kept');
    const pending = a.request<ToolResponse>('tool/invoke', { session_id: onA.session_id, thread_id: 't', tool_call_id: id, args: { module: 'calendar', method: 'delete', input: { event_id: eventId } } });
    pending.catch(() => {});
    const asked = await approvalOf(a, id);
    const { cancelled, approved } = await race({ a, b, onA, onB, key, argsSha256: asked.args_sha256, holds });

    const result = await cancelled;
    assert.equal(result.state, 'done', JSON.stringify(result));
    assert.equal(failure(result.outcome!)?.code, 'CANCELLED');
    assert.equal(failure(await pending)?.code, 'CANCELLED');
    assert.equal((await approved).state, 'done');
    const read = await b.request<ToolResponse>('tool/invoke', { session_id: onB.session_id, thread_id: 't', tool_call_id: `${id}-read`, args: { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-10-10' } } });
    assert.match(read.content[0]!.text, new RegExp(eventId), 'the event was deleted by a cancelled call');
  } finally {
    for (const hold of holds) hold.restore();
    await Promise.all([a.stop(), b.stop()]);
  }
}

/** A's approval and B's cancel of the race's call; a failure is the test's, read when it is awaited. */
function approveOnA(r: TwoDaemonRace): Promise<CallCancelResult> {
  const answer = r.a.request<CallCancelResult>('call/approve', { session_id: r.onA.session_id, thread_id: 't', tool_call_id: r.key.toolCallId, args_sha256: r.argsSha256 });
  answer.catch(() => {});
  return answer;
}
function cancelOnB(r: TwoDaemonRace): Promise<CallCancelResult> {
  const answer = r.b.request<CallCancelResult>('call/cancel', { session_id: r.onB.session_id, thread_id: 't', tool_call_id: r.key.toolCallId });
  answer.catch(() => {});
  return answer;
}

/** Settles once B's cancel is answered or has reached A (A's run stopped), whichever comes first. */
async function cancelReachedA(r: TwoDaemonRace, cancelled: Promise<CallCancelResult>): Promise<void> {
  let answered = false;
  void cancelled.then(() => (answered = true), () => (answered = true));
  await waitFor(() => answered || r.a.services.calls.find(r.key)?.signal.aborted, 'the cancel to reach A');
}

test('two daemons on PostgreSQL: a call/cancel on B between A\'s approval commit and A\'s run stops the call (CANCELLED, nothing written)', { ...needsPg, timeout: 90_000 }, () =>
  cancelOnBRacingApproval('gap-del', async (r) => {
    // A's approval commits, and A is held before it goes on to run the call (so its mark is not taken yet).
    const hold = holdAfterApproval(r.a.services.store, r.key);
    r.holds.push(hold);
    const approved = approveOnA(r);
    await hold.committed;
    const cancelled = cancelOnB(r);
    // Without the fix B answers `running` here while the call goes on.
    await cancelReachedA(r, cancelled);
    hold.release();
    return { cancelled, approved };
  }));

test('two daemons on PostgreSQL: a call/cancel on B that read the call awaiting approval, then lost to A\'s approval, still stops it', { ...needsPg, timeout: 90_000 }, () =>
  cancelOnBRacingApproval('lost-del', async (r) => {
    // B's cancel reads the call awaiting approval, and is held before it ends it, while A's approval commits.
    const gate = gateNextTransaction(r.b.services.store);
    const cancelled = cancelOnB(r);
    await gate.entered;
    const hold = holdAfterApproval(r.a.services.store, r.key);
    r.holds.push(hold);
    const approved = approveOnA(r);
    await hold.committed;
    gate.release();
    await cancelReachedA(r, cancelled);
    hold.release();
    return { cancelled, approved };
  }));
