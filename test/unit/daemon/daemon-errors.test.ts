/**
 * Bad input at every boundary gets the structured error the contract names,
 * and the daemon keeps serving afterwards.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openSession, rpcError, TRANSPORTS } from '../../helpers/host.js';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import type { ToolResponse } from '../../../src/protocol/index.js';

for (const transport of TRANSPORTS) describe(`over ${transport}`, () => {
  let host: InProcessHost;
  let sessionId: string;
  let aliceToken: string;

  before(async () => {
    host = await startInProcess({ executor: 'subprocess', transport });
    aliceToken = await mintBearer('alice', { name: 'Alice' });
  });
  after(async () => {
    await host.stop();
  });


  async function stillServes(): Promise<void> {
    const r = await host.request<{ threads: unknown[] }>('thread/list', { session_id: sessionId });
    assert.ok(Array.isArray(r.threads));
  }


  const invoke = (thread: string, call: string, args: unknown) =>
    host.request<ToolResponse>('tool/invoke', { session_id: sessionId, thread_id: thread, tool_call_id: call, args });

  test('a request before initialize is -32002', async () => {
    const err = await rpcError(host.request('thread/list', { session_id: 'x' }));
    assert.equal(err.code, -32002);
    await host.request('initialize', { protocol_version: '1' });
    sessionId = (await openSession(host, aliceToken)).session_id;
  });

  test('a bad, expired or wrongly signed bearer token is -32001 and the token is not echoed', async () => {
    const expired = await mintBearer('alice', {}, { expiresIn: Math.floor(Date.now() / 1000) - 60 });
    const wrongKey = await mintBearer('alice', {}, { secret: 'another-secret-another-secret-00' });
    for (const token of ['not-a-jwt', expired, wrongKey]) {
      const err = await rpcError(host.request('session/open', { auth: { type: 'bearer', token } }));
      assert.equal(err.code, -32001);
      assert.ok(!JSON.stringify({ m: err.message, d: err.data }).includes(token));
    }
    await stillServes();
  });

  test('an unknown action is a failure result UNKNOWN_ACTION', async () => {
    const r = await invoke('errors-1', 'c1', { module: 'calendar', method: 'explode', input: {} });
    assert.equal(r.status, 'failure');
    const body = JSON.parse(r.content[0]!.text) as { status: string; error: { code: string; module: string; method: string } };
    assert.deepEqual(Object.keys(body), ['status', 'error']);
    assert.equal(body.error.code, 'UNKNOWN_ACTION');
    assert.equal(body.error.module, 'calendar');
    assert.equal(body.error.method, 'explode');
    await stillServes();
  });

  test('a malformed date is INVALID_ACTION_INPUT with the input schema', async () => {
    const r = await invoke('errors-1', 'c2', { module: 'calendar', method: 'read', input: { mode: 'day', date: '21/04/2026' } });
    assert.equal(r.status, 'failure');
    const { error } = JSON.parse(r.content[0]!.text) as { error: { code: string; input_schema: unknown; issues: unknown[] } };
    assert.equal(error.code, 'INVALID_ACTION_INPUT');
    assert.equal(typeof error.input_schema, 'object');
    assert.ok(error.issues.length > 0);
    const instant = await invoke('errors-1', 'c3', {
      module: 'calendar', method: 'create', input: { title: 'x', start_at: '2026-04-21T10:00:00', end_at: '2026-04-21T11:00:00+08:00' },
    });
    assert.equal((JSON.parse(instant.content[0]!.text) as { error: { code: string } }).error.code, 'INVALID_ACTION_INPUT', 'an instant without offset');
    await stillServes();
  });

  test('a non-object input, missing args or wrong-typed params are -32602', async () => {
    for (const params of [
      { session_id: sessionId, thread_id: 't', tool_call_id: 'c', args: { module: 'calendar', method: 'read', input: [] } },
      { session_id: sessionId, thread_id: 't', tool_call_id: 'c', args: { module: 'calendar', method: 'read', input: 'x' } },
      { session_id: sessionId, thread_id: 't', tool_call_id: 'c' },
      { session_id: sessionId, thread_id: 42, tool_call_id: 'c', args: { module: 'calendar', method: 'read', input: {} } },
    ]) {
      const err = await rpcError(host.request('tool/invoke', params));
      assert.equal(err.code, -32602);
    }
    await stillServes();
  });

  test('an unknown session is -32001; an unknown method is -32601', async () => {
    const err = await rpcError(host.request('thread/list', { session_id: 'ses_nope' }));
    assert.equal(err.code, -32001);
    const missing = await rpcError(host.request('calendar/read', {}));
    assert.equal(missing.code, -32601);
    await stillServes();
  });

  test("another user's thread id behaves exactly like an unused one; history/get of either is THREAD_NOT_FOUND", async () => {
    await invoke('alice-private', 'c1', { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } });
    const bob = await openSession(host, await mintBearer('bob'));
    const errors: unknown[] = [];
    for (const thread of ['alice-private', 'never-existed']) {
      const err = await rpcError(host.request('history/get', { session_id: bob.session_id, thread_id: thread }));
      assert.equal(err.code, -32602);
      assert.equal(err.message, 'thread not found');
      assert.deepEqual(err.data, { code: 'THREAD_NOT_FOUND' });
      errors.push({ code: err.code, message: err.message, data: err.data });
    }
    assert.deepEqual(errors[0], errors[1]);
    await stillServes();
  });

  test('worker_output accepts its four keys and nothing else', async () => {
    const ok = await host.request<{ id: string }>('message/append', {
      session_id: sessionId, thread_id: 'wo', role: 'assistant', content: 'Booked.', worker_output: { status: 'success', answer: 'Booked.' },
    });
    assert.match(ok.id, /^msg_/);
    const err = await rpcError(
      host.request('message/append', {
        session_id: sessionId, thread_id: 'wo', role: 'assistant', content: 'x', worker_output: { status: 'success', answer: 'x', ui_hints: {} },
      }),
    );
    assert.equal(err.code, -32602);
    await stillServes();
  });
});
