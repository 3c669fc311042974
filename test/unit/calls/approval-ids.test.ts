/**
 * A call awaiting approval and the ids around it (contract sections 17 and
 * 20), in process: two twins of one asked call (same id and args, raced in
 * while it is pending) count once against its quota; and a call that would
 * not ask, sent under the id of a pending call with other args, is a
 * DUPLICATE_TOOL_CALL_ID — nothing of it runs — as it is for a done call.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSession } from '../../helpers/host.js';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { tempDir } from '../../helpers/repo.js';
import { waitFor } from '../../helpers/wait-for.js';
import type { CallGetResult, ToolApprovalNotification, ToolResponse } from '../../../src/protocol/index.js';
import type { Store, Tx } from '../../../src/store/store.js';

/** memory.forget asks, and at most two of them a day count. */
function configFile(): string {
  const file = join(tempDir(), 'config.json');
  const agent = {
    enabled_skills: ['memory'],
    allowed_actions: ['memory.*'],
    approval: { ask: ['memory.forget'], ttl_s: 600 },
    quotas: { 'memory.forget': { per_day: 2 } },
  };
  writeFileSync(file, JSON.stringify({ agents: { default: agent } }));
  return file;
}

const code = (r: ToolResponse) => (JSON.parse(r.content[0]!.text) as { error?: { code?: string } }).error?.code;

/**
 * Holds every unit that counts a call against its quotas until `n` of them committed: the twins have
 * both counted before either stores the pending call (the race a reviewer found), whatever the timing.
 */
function countTogether(store: Store, n: number): void {
  const transaction = store.transaction.bind(store);
  let counted = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  const watched = async <T>(work: (tx: Tx) => Promise<T>, opts?: Parameters<Store['transaction']>[1]): Promise<T> => {
    let took = false;
    const result = await transaction(
      (tx) =>
        work(
          new Proxy(tx, {
            get(target, prop) {
              if (prop === 'quotas') took = true;
              const value: unknown = Reflect.get(target, prop, target);
              return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
            },
          }),
        ),
      opts,
    );
    if (took && ++counted <= n) {
      if (counted === n) release();
      await all;
    }
    return result;
  };
  Object.assign(store, { transaction: watched });
}

async function approvalOf(host: InProcessHost, toolCallId: string, count = 1): Promise<ToolApprovalNotification> {
  const seen = () => host.wire.filter((e) => e.method === 'tool/approval' && (e.payload as ToolApprovalNotification).tool_call_id === toolCallId);
  await waitFor(() => seen().length >= count || undefined, `${count} tool/approval of ${toolCallId}`);
  return seen()[0]!.payload as ToolApprovalNotification;
}

test('twins of an asked call, raced in while it is pending, count once against its quota', { timeout: 30_000 }, async () => {
  const host = await startInProcess({ args: ['--config', configFile()] });
  try {
    const { session_id } = await openSession(host, await mintBearer('alice'));
    const invoke = (id: string, key: string) =>
      host.request<ToolResponse>('tool/invoke', { session_id, thread_id: 't', tool_call_id: id, args: { module: 'memory', method: 'forget', input: { key } } });
    countTogether(host.services.store, 2);
    const twins = [invoke('f1', 'a'), invoke('f1', 'a')];
    // A failed assertion stops the host, rejecting these: the assertion is the failure to see.
    for (const t of twins) t.catch(() => {});
    await approvalOf(host, 'f1', 2);
    // f1 counted once: a second call still fits the quota of two, and a third does not.
    const second = invoke('f2', 'b');
    let answered: ToolResponse | undefined;
    second.then((r) => (answered = r)).catch(() => {});
    await waitFor(() => answered ?? host.wire.find((e) => e.method === 'tool/approval' && (e.payload as ToolApprovalNotification).tool_call_id === 'f2'), 'f2 asked or answered');
    assert.equal(answered, undefined, `f2 fits the quota: ${answered ? answered.content[0]!.text : ''}`);
    assert.equal(code(await invoke('f3', 'c')), 'RATE_LIMITED');
    for (const id of ['f1', 'f2']) {
      const { args_sha256 } = await host.request<CallGetResult>('call/get', { session_id, thread_id: 't', tool_call_id: id });
      await host.request('call/deny', { session_id, thread_id: 't', tool_call_id: id, args_sha256 });
    }
    for (const r of [...(await Promise.all(twins)), await second]) assert.equal(code(r), 'APPROVAL_DENIED');
  } finally {
    await host.stop();
  }
});

test('a call that does not ask, under the id of a pending call with other args, is DUPLICATE_TOOL_CALL_ID and does not run', { timeout: 30_000 }, async () => {
  const host = await startInProcess({ args: ['--config', configFile()] });
  try {
    const { session_id } = await openSession(host, await mintBearer('alice'));
    const invoke = (id: string, method: string, input: Record<string, unknown>) =>
      host.request<ToolResponse>('tool/invoke', { session_id, thread_id: 't', tool_call_id: id, args: { module: 'memory', method, input } });
    assert.equal((await invoke('u1', 'update', { key: 'k', content: 'kept' })).status, 'success');
    const pending = invoke('f1', 'forget', { key: 'k' });
    pending.catch(() => {}); // rejected when a failed assertion stops the host
    const asked = await approvalOf(host, 'f1');
    const other = await invoke('f1', 'update', { key: 'k', content: 'overwritten' });
    assert.equal(code(other), 'DUPLICATE_TOOL_CALL_ID', other.content[0]!.text);
    const read = await invoke('r1', 'read', { key: 'k' });
    assert.match(read.content[0]!.text, /"content":"kept"/, 'the other call did not run');
    assert.equal((await host.request<CallGetResult>('call/get', { session_id, thread_id: 't', tool_call_id: 'f1' })).state, 'awaiting_approval', 'the pending call is untouched');
    await host.request('call/deny', { session_id, thread_id: 't', tool_call_id: 'f1', args_sha256: asked.args_sha256 });
    assert.equal(code(await pending), 'APPROVAL_DENIED');
  } finally {
    await host.stop();
  }
});
