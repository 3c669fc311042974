/**
 * The task of a call (src/mcp/mcp-tasks.ts): its id names the call and only
 * the call, and the one status mapping — awaiting approval is
 * `input_required` on both revisions, a tool failure `failed` on 2025-11-25
 * and `completed` on 2026-07-28, CANCELLED `cancelled`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callOfTaskId, taskIdOf, taskStatusOf } from '../../../src/mcp/mcp-tasks.js';
import type { CallGetResult, ToolResponse } from '../../../src/protocol/index.js';

const call = (state: CallGetResult['state'], outcome?: ToolResponse): CallGetResult => ({
  thread_id: 't',
  tool_call_id: 'c',
  action: 'memory.update',
  args_sha256: 'a'.repeat(64),
  state,
  created_at: '2026-12-06T00:00:00.000Z',
  updated_at: '2026-12-06T00:00:00.000Z',
  ...(outcome ? { outcome } : {}),
});
const response = (projection: Record<string, unknown>): ToolResponse => ({
  tool_call_id: 'c',
  status: projection.status as ToolResponse['status'],
  content: [{ type: 'text', text: JSON.stringify(projection) }],
});

test('a task id names its call and round-trips; anything else names none', () => {
  const id = taskIdOf('thread one', 'mcp-1');
  assert.deepEqual(callOfTaskId(id), { threadId: 'thread one', toolCallId: 'mcp-1' });
  assert.match(id, /^[A-Za-z0-9_-]+$/);
  for (const forged of ['', 'not base64 at all!', Buffer.from('["only one"]').toString('base64url'), Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url')]) {
    assert.equal(callOfTaskId(forged), undefined, forged);
  }
});

test("a call's state maps to one task status per revision", () => {
  const ok = response({ status: 'success', module: 'memory', method: 'update', data: {} });
  const failed = response({ status: 'failure', error: { code: 'NOT_FOUND', message: 'no such key' } });
  const cancelled = response({ status: 'failure', error: { code: 'CANCELLED', message: 'stopped' } });
  for (const modern of [false, true]) {
    assert.equal(taskStatusOf(call('running'), modern).status, 'working');
    assert.equal(taskStatusOf(call('awaiting_approval'), modern).status, 'input_required');
    assert.equal(taskStatusOf(call('done', ok), modern).status, 'completed');
    assert.equal(taskStatusOf(call('done', cancelled), modern).status, 'cancelled');
  }
  assert.deepEqual(taskStatusOf(call('done', failed), false), { status: 'failed', statusMessage: 'no such key' });
  assert.deepEqual(taskStatusOf(call('done', failed), true), { status: 'completed', statusMessage: 'no such key' });
});
