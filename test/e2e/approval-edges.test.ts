/**
 * Approval (contract section 17) at its edges, from outside:
 *
 * - the HTTP approval route refuses a deny reason no engine stores as it is
 *   (U+0000, an unpaired surrogate) exactly as `call/deny` does (contract
 *   section 21): 400, nothing decided, the call still pending.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession } from '../helpers/host.js';
import { startInProcess, type InProcessHost } from '../helpers/in-process.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import { dbCount } from '../helpers/db.js';
import type { Client } from '../helpers/host.js';
import type { CallGetResult, ToolApprovalNotification, ToolResponse } from '../../src/protocol/index.js';
import { askConfig } from '../helpers/approval-config.js';

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
