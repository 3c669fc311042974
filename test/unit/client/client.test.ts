/**
 * toolgate/client on its own, against a scripted JSON-RPC peer over an
 * in-memory stream pair: the method names and params it puts on the wire,
 * the session id its Session fills in, the notifications
 * invokeWithNotifications keeps (its own call's, in order, none of another
 * call's), what the tap sees, and the clear error of openSession without a
 * token. The e2e suites use the same client against the real daemon
 * (test/helpers/host.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { ToolgateClient, type Direction, type Message } from '../../../src/client/index.js';

function pair() {
  const toPeer = new PassThrough();
  const fromPeer = new PassThrough();
  const peer = createMessageConnection(new StreamMessageReader(toPeer), new StreamMessageWriter(fromPeer));
  const seen: Array<{ method: string; params: unknown }> = [];
  peer.onRequest((method, params) => {
    seen.push({ method, params });
    switch (method) {
      case 'initialize':
        return { protocol_version: '1', server_info: { name: 'scripted', version: '0' }, capabilities: {}, tool: { name: 'project_cli', description: '', input_schema: {} } };
      case 'session/open':
        return { session_id: 'ses_x', user_id: 'alice', enabled_skills: [], allowed_actions: ['memory.update'] };
      case 'tool/invoke': {
        const p = params as { thread_id: string; tool_call_id: string; args: unknown };
        const note = (tool_call_id: string, final: boolean) => ({
          thread_id: p.thread_id,
          tool_call_id,
          tool_name: 'project_cli',
          tool_call_args: p.args,
          status: 'success',
          final,
        });
        // Another call's notification on the same thread (a subscription), then this call's two.
        void peer.sendNotification('tool/result', note('someone-else', true));
        void peer.sendNotification('tool/result', note(p.tool_call_id, false));
        void peer.sendNotification('tool/result', note(p.tool_call_id, true));
        return { tool_call_id: p.tool_call_id, status: 'success', content: [{ type: 'text', text: '{"status":"success"}' }] };
      }
      case 'history/get':
        return { messages: [], next_before: null };
      case 'shutdown':
        return null;
      default:
        throw new Error(`unexpected ${method}`);
    }
  });
  peer.listen();
  return { toPeer, fromPeer, peer, seen };
}

test('the typed client puts the protocol method names and params on the wire, and its Session fills in the session id', async () => {
  const { toPeer, fromPeer, peer, seen } = pair();
  const tapped: Array<[Direction, string]> = [];
  const client = ToolgateClient.fromStreams(fromPeer, toPeer, {
    token: 'tok',
    tap: (d, m: Message) => tapped.push([d, (m as { method?: string }).method ?? 'response']),
  });
  try {
    const init = await client.initialize({ client_info: { name: 'test', version: '1' } });
    assert.equal(init.server_info.name, 'scripted');
    const session = await client.openSession();
    assert.equal(session.id, 'ses_x');
    const { response, notifications } = await session.invokeWithNotifications('t', 'c1', { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } });
    assert.equal(response.status, 'success');
    assert.deepEqual(
      notifications.map((n) => [n.tool_call_id, n.final]),
      [
        ['c1', false],
        ['c1', true],
      ],
      'its own notifications, in order, all before the response',
    );
    await session.history('t', { view: 'context' });
    await client.shutdown();
    assert.deepEqual(seen, [
      { method: 'initialize', params: { protocol_version: '1', client_info: { name: 'test', version: '1' } } },
      { method: 'session/open', params: { auth: { type: 'bearer', token: 'tok' } } },
      { method: 'tool/invoke', params: { session_id: 'ses_x', thread_id: 't', tool_call_id: 'c1', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } } } },
      { method: 'history/get', params: { session_id: 'ses_x', thread_id: 't', view: 'context' } },
      { method: 'shutdown', params: undefined },
    ]);
    assert.deepEqual(tapped.slice(0, 4), [
      ['send', 'initialize'],
      ['receive', 'response'],
      ['send', 'session/open'],
      ['receive', 'response'],
    ]);
    assert.deepEqual(
      tapped.filter(([, m]) => m === 'tool/result').length,
      3,
      'the tap sees every notification, also those of other calls',
    );
  } finally {
    await client.close();
    peer.dispose();
  }
});

test('openSession without any token fails before anything is sent', async () => {
  const { toPeer, fromPeer, peer, seen } = pair();
  const client = ToolgateClient.fromStreams(fromPeer, toPeer);
  try {
    await assert.rejects(client.openSession(), /needs a token/);
    assert.deepEqual(seen, []);
  } finally {
    await client.close();
    peer.dispose();
  }
});
