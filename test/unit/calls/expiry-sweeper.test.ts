/**
 * The expiry sweep (contract section 17) on the pass's engine (SQLite, or
 * PostgreSQL with TOOLGATE_TEST_PG_URL): calls past their `expires_at` end
 * `APPROVAL_EXPIRED` — stored, audited with surface `ttl`, published — and
 * a call still in time, or approved and running, is left alone; a stale row
 * (its id reused by a stored call) is removed without holding up the rest;
 * two sweeps racing end each call once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openStore } from '../../../src/store/open-store.js';
import type { PendingCallRow, Store } from '../../../src/store/store.js';
import { ExpirySweeper } from '../../../src/calls/expiry-sweeper.js';
import { ApprovalWaiters } from '../../../src/calls/approval-waiters.js';
import type { PendingDeps } from '../../../src/calls/pending-calls.js';
import type { SweepDeps } from '../../../src/calls/expiry-sweeper.js';
import { RUN_MARGIN_MS } from '../../../src/calls/recovery.js';
import { tempDir } from '../../helpers/repo.js';
import { dbRows } from '../../helpers/db.js';
import { storeOutcome } from '../../../src/calls/call.js';
import { TEST_PG_URL, pgDatabaseFor } from '../../helpers/pg.js';

const silent = { log: () => {} };

async function freshStore(): Promise<{ store: Store; target: string }> {
  const dir = tempDir();
  const target = TEST_PG_URL ? await pgDatabaseFor(dir) : join(dir, 'toolgate.db');
  return { store: await openStore(target, { log: silent }), target };
}

function pending(toolCallId: string, expiresAt: number): Omit<PendingCallRow, 'state' | 'updatedAt'> {
  return {
    userId: 'u1',
    threadId: 't1',
    toolCallId,
    action: 'memory.forget',
    argsSha256: 'a'.repeat(64),
    args: JSON.stringify({ module: 'memory', method: 'forget', input: { key: toolCallId } }),
    expiresAt: new Date(expiresAt).toISOString(),
    source: 'session',
    jobId: null,
    createdAt: new Date(expiresAt - 60_000).toISOString(),
  };
}

test('a sweep ends the expired calls only, once each, stored, audited and published', async () => {
  const { store, target } = await freshStore();
  try {
    const now = Date.now();
    await store.transaction(async (tx) => {
      // A session opened by the user (it provisions the user row) asked each call.
      await tx.users.ensure('u1');
      await tx.pendingCalls.insert(pending('late-1', now - 2_000));
      await tx.pendingCalls.insert(pending('late-2', now - 1_000));
      await tx.pendingCalls.insert(pending('in-time', now + 600_000));
      await tx.pendingCalls.insert(pending('approved', now - 1_000));
      // Stale: expired, but another call reusing its id stored a tool message first (the sweep must get past it).
      await tx.pendingCalls.insert(pending('stale', now - 3_000));
      const args = { module: 'memory', method: 'read', input: {} };
      await storeOutcome(tx, { userId: 'u1', threadId: 't1', toolCallId: 'stale', args, argsSha256: 'b'.repeat(64) }, { ok: true, module: 'memory', method: 'read', data: { items: [], count: 0, next_cursor: null } });
    });
    await store.transaction((tx) => tx.pendingCalls.approve({ userId: 'u1', threadId: 't1', toolCallId: 'approved' }, 'a'.repeat(64)));

    const published: string[] = [];
    const settled: string[] = [];
    const approvals = new ApprovalWaiters();
    const deps: SweepDeps = {
      timeoutMs: () => 30_000,
      cancelGraceMs: 2_000,
      store,
      threadEvents: { publish: (e: { row: { tool_call_id: string | null } }) => published.push(e.row.tool_call_id ?? '') } as unknown as PendingDeps['threadEvents'],
      approvals,
      announceCall: async (key) => void settled.push(key.toolCallId),
    };
    // Two daemons' sweeps at once: each call ends once.
    const [a, b] = await Promise.all([new ExpirySweeper(deps, silent).sweep(now), new ExpirySweeper(deps, silent).sweep(now)]);
    assert.equal(a + b, 2);
    assert.deepEqual(published.sort(), ['late-1', 'late-2']);
    assert.deepEqual(settled.sort(), ['late-1', 'late-2']);

    const audited = await dbRows<{ tool_call_id: string; decision: string; surface: string }>(target, 'SELECT tool_call_id, decision, surface FROM approval_audit ORDER BY tool_call_id');
    assert.deepEqual(audited.map((r) => [r.tool_call_id, r.decision, r.surface]), [['late-1', 'expire', 'ttl'], ['late-2', 'expire', 'ttl']]);
    assert.equal(await store.read((tx) => tx.pendingCalls.get({ userId: 'u1', threadId: 't1', toolCallId: 'stale' })), undefined, 'the stale row is gone');
    for (const id of ['late-1', 'late-2']) {
      const key = { userId: 'u1', threadId: 't1', toolCallId: id };
      const row = await store.read((tx) => tx.messages.getToolMessage('u1', 't1', id));
      assert.match(row?.content ?? '', /"code":"APPROVAL_EXPIRED"/);
      assert.equal(await store.read((tx) => tx.pendingCalls.get(key)), undefined);
    }
    assert.equal((await store.read((tx) => tx.pendingCalls.get({ userId: 'u1', threadId: 't1', toolCallId: 'in-time' })))?.state, 'awaiting_approval');
    assert.equal((await store.read((tx) => tx.pendingCalls.get({ userId: 'u1', threadId: 't1', toolCallId: 'approved' })))?.state, 'running');
    assert.deepEqual(await store.read((tx) => tx.pendingCalls.expired(new Date(now).toISOString(), 10)), []);
    assert.equal(await new ExpirySweeper(deps, silent).sweep(now), 0, 'nothing left to end');
    // The approved call, its runner gone: left while its run could still be going on elsewhere (its time
    // limit, the kill grace and the clock margin), ended INTERNAL by the first sweep after that.
    const approved = { userId: 'u1', threadId: 't1', toolCallId: 'approved' };
    await new ExpirySweeper(deps, silent).sweep(now + 30_000 + 2_000 + RUN_MARGIN_MS - 1_000);
    assert.equal((await store.read((tx) => tx.pendingCalls.get(approved)))?.state, 'running', 'not ended within its run limit');
    await new ExpirySweeper(deps, silent).sweep(now + 30_000 + 2_000 + RUN_MARGIN_MS + 1_000);
    assert.equal(await store.read((tx) => tx.pendingCalls.get(approved)), undefined, 'ended past it');
    assert.match((await store.read((tx) => tx.messages.getToolMessage('u1', 't1', 'approved')))?.content ?? '', /"code":"INTERNAL"/);
  } finally {
    await store.close();
  }
});
