/**
 * Threads are a per-user namespace (contract §3): a thread is
 * `(user, thread_id)`. Two users with the same thread id get two threads;
 * another user's thread id behaves exactly like an unused one (no oracle),
 * and using an id first takes nothing from anyone (no squatting) — for
 * tool/invoke and its idempotency key, message/append, thread/subscribe,
 * history/get and thread/list, on both transports.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { openSession, rpcError, TRANSPORTS, type Client } from '../../helpers/host.js';
import { EXECUTOR_FOR, startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import type { HistoryGetResult, ToolResponse } from '../../../src/protocol/index.js';
import { waitFor } from '../../helpers/wait-for.js';

type History = HistoryGetResult;

const memoryUpdate = (key: string, content: string) => ({ module: 'memory', method: 'update', input: { key, content } });
const memoryRead = { module: 'memory', method: 'read', input: {} };


/** What a response tells a caller, with the ids and clocks that differ on every call taken out. */
function shape(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(/msg_[0-9a-f-]{36}/g, 'msg_*').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T'));
}

for (const transport of TRANSPORTS) describe(`over ${transport} (${EXECUTOR_FOR[transport]} executor)`, () => {
  let host: InProcessHost;
  let alice: string;
  let bob: string;

  before(async () => {
    host = await startInProcess({ executor: EXECUTOR_FOR[transport], transport });
    alice = (await openSession(host, await mintBearer('alice'))).session_id;
    bob = (await openSession(host, await mintBearer('bob'))).session_id;
  });
  after(async () => {
    await host.stop();
  });

  const invoke = (session: string, thread: string, id: string, args: unknown) =>
    host.request<ToolResponse>('tool/invoke', { session_id: session, thread_id: thread, tool_call_id: id, args });
  const history = (session: string, thread: string) =>
    host.request<History>('history/get', { session_id: session, thread_id: thread, view: 'context' });

  test('two users with the same thread_id get two separate threads, idempotency keys included', async () => {
    const a = await invoke(alice, 'same', 'c1', memoryUpdate('who', 'alice'));
    await host.request('message/append', { session_id: alice, thread_id: 'same', role: 'user', content: 'alice speaking' });
    // The same tool_call_id with other args in bob's thread of the same id is a new call, not a duplicate.
    const b = await invoke(bob, 'same', 'c1', memoryUpdate('who', 'bob'));
    assert.equal(a.status, 'success');
    assert.equal(b.status, 'success', b.content[0]!.text);
    assert.equal(JSON.parse(b.content[0]!.text).data.memory.content, 'bob');

    const ha = await history(alice, 'same');
    const hb = await history(bob, 'same');
    assert.deepEqual(ha.messages.map((m) => m.role), ['tool', 'user']);
    assert.deepEqual(hb.messages.map((m) => m.role), ['tool']);
    assert.equal(ha.messages[0]!.content, a.content[0]!.text);
    assert.equal(hb.messages[0]!.content, b.content[0]!.text);

    // Each retry answers from its own user's store.
    assert.deepEqual(await invoke(alice, 'same', 'c1', memoryUpdate('who', 'alice')), a);
    assert.deepEqual(await invoke(bob, 'same', 'c1', memoryUpdate('who', 'bob')), b);

    const la = await host.request<{ threads: Array<{ thread_id: string; message_count: number }> }>('thread/list', { session_id: alice });
    const lb = await host.request<{ threads: Array<{ thread_id: string; message_count: number }> }>('thread/list', { session_id: bob });
    assert.equal(la.threads.find((t) => t.thread_id === 'same')?.message_count, 2);
    assert.equal(lb.threads.find((t) => t.thread_id === 'same')?.message_count, 1);

    const db = new Database(host.dbPath, { readonly: true });
    try {
      const rows = db.prepare("SELECT user_id, thread_seq FROM messages WHERE thread_id = 'same' ORDER BY user_id, thread_seq").all();
      assert.deepEqual(rows, [
        { user_id: 'alice', thread_seq: 1 },
        { user_id: 'alice', thread_seq: 2 },
        { user_id: 'bob', thread_seq: 1 },
      ], 'thread_seq counts per (user, thread)');
    } finally {
      db.close();
    }
  });

  test("another user's thread id answers exactly like an unused one (no oracle)", async () => {
    await invoke(alice, 'alice-used', 'c1', memoryUpdate('k', 'v'));
    await host.request('message/append', { session_id: alice, thread_id: 'alice-used', role: 'user', content: 'private' });

    const probe = async (thread: string) => ({
      history: shape(await rpcError(host.request('history/get', { session_id: bob, thread_id: thread })).then((e) => ({ code: e.code, message: e.message, data: e.data }))),
      subscribe: shape({ ...(await host.request<Record<string, unknown>>('thread/subscribe', { session_id: bob, thread_id: thread })), thread_id: '*' }),
      unsubscribe: shape({ ...(await host.request<Record<string, unknown>>('thread/unsubscribe', { session_id: bob, thread_id: thread })), thread_id: '*' }),
      invoke: shape(await invoke(bob, thread, 'c1', memoryRead)),
      append: shape(await host.request('message/append', { session_id: bob, thread_id: thread, role: 'user', content: 'hi' })),
      history2: shape(await history(bob, thread)),
    });
    const used = await probe('alice-used');
    const unused = await probe('nobody-used');
    assert.deepEqual(used, unused);
    assert.deepEqual(used.history, { code: -32602, message: 'thread not found', data: { code: 'THREAD_NOT_FOUND' } });
    // thread/unsubscribe of a thread nobody has, never subscribed to: no THREAD_NOT_FOUND (methods.md, overview.md).
    assert.deepEqual(await host.request('thread/unsubscribe', { session_id: bob, thread_id: 'never-seen' }), { thread_id: 'never-seen', subscribed: false });

    // Alice's thread is untouched by all of that.
    const h = await history(alice, 'alice-used');
    assert.deepEqual(h.messages.map((m) => m.content.includes('private') || m.role === 'tool'), [true, true]);
    assert.equal(h.messages.length, 2);
  });

  test('using a predictable id first takes nothing from its owner (no squatting)', async () => {
    await host.request('message/append', { session_id: bob, thread_id: 'alice-inbox', role: 'user', content: 'squatted' });
    await invoke(bob, 'alice-inbox', 'c1', memoryUpdate('x', 'y'));
    // Alice uses the id afterwards: her thread is new and hers alone.
    const r = await invoke(alice, 'alice-inbox', 'c1', memoryRead);
    assert.equal(r.status, 'success');
    await host.request('message/append', { session_id: alice, thread_id: 'alice-inbox', role: 'user', content: 'mine' });
    const h = await history(alice, 'alice-inbox');
    assert.deepEqual(h.messages.map((m) => m.content), [r.content[0]!.text, 'mine']);
  });

  test('history/get of a thread the user does not have is -32602 THREAD_NOT_FOUND; subscribing creates none', async () => {
    await host.request('thread/subscribe', { session_id: alice, thread_id: 'watched-only' });
    const err = await rpcError(history(alice, 'watched-only'));
    assert.equal(err.code, -32602);
    assert.deepEqual(err.data, { code: 'THREAD_NOT_FOUND' });
    const list = await host.request<{ threads: Array<{ thread_id: string }> }>('thread/list', { session_id: alice });
    assert.ok(!list.threads.some((t) => t.thread_id === 'watched-only'));
  });
});

describe('subscriptions are per user (ws, several connections)', () => {
  let host: InProcessHost;
  before(async () => {
    host = await startInProcess({ executor: 'subprocess', transport: 'ws' });
  });
  after(async () => {
    await host.stop();
  });

  test("a subscriber to its own thread never hears another user's thread of the same id", async () => {
    const aWatch = await host.connect();
    const bWatch = await host.connect();
    const aCall = await host.connect();
    const bCall = await host.connect();
    const aliceToken = await mintBearer('alice');
    const bobToken = await mintBearer('bob');
    const sa = await openSession(aWatch, aliceToken);
    const sb = await openSession(bWatch, bobToken);
    const ca = await openSession(aCall, aliceToken);
    const cb = await openSession(bCall, bobToken);
    await aWatch.request('thread/subscribe', { session_id: sa.session_id, thread_id: 'room' });
    await bWatch.request('thread/subscribe', { session_id: sb.session_id, thread_id: 'room' });

    await aCall.request('tool/invoke', { session_id: ca.session_id, thread_id: 'room', tool_call_id: 'a1', args: memoryUpdate('a', '1') });
    await bCall.request('tool/invoke', { session_id: cb.session_id, thread_id: 'room', tool_call_id: 'b1', args: memoryUpdate('b', '1') });
    // No fixed wait for what must not come: one more call per user in their own 'room'. It is published after
    // the other user's call was answered, so a leak of that call would reach the watcher ahead of this one.
    await aCall.request('tool/invoke', { session_id: ca.session_id, thread_id: 'room', tool_call_id: 'a2', args: memoryUpdate('a', '2') });
    await bCall.request('tool/invoke', { session_id: cb.session_id, thread_id: 'room', tool_call_id: 'b2', args: memoryUpdate('b', '2') });
    const heard = (c: Client) => c.wire.filter((e) => e.method === 'tool/result').map((e) => (e.payload as { tool_call_id: string }).tool_call_id);
    await waitFor(() => heard(aWatch).includes('a2') && heard(bWatch).includes('b2'), () => `both watchers' own calls (a: ${heard(aWatch)}, b: ${heard(bWatch)})`);
    assert.deepEqual(heard(aWatch), ['a1', 'a2']);
    assert.deepEqual(heard(bWatch), ['b1', 'b2']);
  });
});
