/**
 * `call/list` (contract section 17, approval.md "Listing the pending calls"),
 * in process: the session's user's calls awaiting approval, each exactly as
 * its `tool/approval` carried it, most recently asked first, in bounded pages
 * a cursor walks; another user's calls, decided ones and expired ones are not
 * listed; a forged cursor is INVALID_CURSOR.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession, rpcError } from '../../helpers/host.js';
import { startInProcess } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { waitFor } from '../../helpers/wait-for.js';
import { askConfig } from '../../helpers/approval-config.js';
import type { CallListResult, ToolApprovalNotification, ToolResponse } from '../../../src/protocol/index.js';

test('call/list pages the user’s calls awaiting approval as tool/approval carried them; not others’, decided or expired ones', { timeout: 30_000 }, async () => {
  const host = await startInProcess({ args: ['--config', askConfig()] });
  try {
    const alice = await openSession(host, await mintBearer('alice'));
    const quick = await openSession(host, await mintBearer('alice'), { agent: 'quick' });
    const bob = await openSession(host, await mintBearer('bob'));
    const invoke = (session_id: string, thread_id: string, id: string, method: string, input: Record<string, unknown>) =>
      host.request<ToolResponse>('tool/invoke', { session_id, thread_id, tool_call_id: id, args: { module: 'memory', method, input } });
    const approvalOf = (id: string) =>
      waitFor(() => host.wire.find((e) => e.method === 'tool/approval' && (e.payload as ToolApprovalNotification).tool_call_id === id)?.payload as ToolApprovalNotification | undefined, `tool/approval of ${id}`);
    const pending: Array<Promise<ToolResponse>> = [];
    const ask = async (session_id: string, thread: string, id: string) => {
      await invoke(session_id, thread, `u-${id}`, 'update', { key: id, content: `content of ${id}` });
      const p = invoke(session_id, thread, id, 'forget', { key: id });
      p.catch(() => {}); // a failed assertion stops the host, rejecting it
      pending.push(p);
      return approvalOf(id);
    };
    // Expired: asked with a one-second ttl, listed no more once past its expires_at. Asked first, so that
    // its second runs out while the others are asked (listed, it would be the last entry of page 2).
    const expiring = await ask(quick.session_id, 't1', 'quick-1');
    const first = await ask(alice.session_id, 't1', 'f1');
    const second = await ask(alice.session_id, 't2', 'f2');
    const third = await ask(alice.session_id, 't1', 'f3');
    await ask(bob.session_id, 't1', 'bob-1');
    // Decided: not pending any more.
    const decided = await ask(alice.session_id, 't3', 'f4');
    await host.request('call/deny', { session_id: alice.session_id, thread_id: 't3', tool_call_id: 'f4', args_sha256: decided.args_sha256 });
    await waitFor(() => Date.now() > Date.parse(expiring.expires_at) || undefined, 'quick-1 to pass its expires_at');

    const page1 = await host.request<CallListResult>('call/list', { session_id: alice.session_id, limit: 2 });
    assert.deepEqual(page1.calls, [third, second], 'most recently asked first, each as its tool/approval');
    assert.ok(page1.next_cursor);
    const page2 = await host.request<CallListResult>('call/list', { session_id: alice.session_id, limit: 2, cursor: page1.next_cursor, state: 'awaiting_approval' });
    assert.deepEqual(page2, { calls: [first], next_cursor: null });
    assert.deepEqual((await host.request<CallListResult>('call/list', { session_id: bob.session_id })).calls.map((c) => c.tool_call_id), ['bob-1']);

    const forged = await rpcError(host.request('call/list', { session_id: alice.session_id, cursor: 'bm90LWEtY3Vyc29y' }));
    assert.deepEqual([forged.code, forged.data], [-32602, { code: 'INVALID_CURSOR' }]);
    assert.equal((await rpcError(host.request('call/list', { session_id: alice.session_id, limit: 101 }))).code, -32602);
  } finally {
    await host.stop();
  }
});
