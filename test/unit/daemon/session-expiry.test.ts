/**
 * A session lives no longer than its bearer token (contract section 13):
 * after the token's `exp`, requests on a WebSocket session get -32001 with
 * a message that says to open a new session, its subscriptions end, an
 * AG-UI stream is closed (and a reconnect with a fresh token resumes by
 * Last-Event-ID), and an MCP session over HTTP is ended. Each test mints a
 * token that expires a few seconds ahead and waits for the event. The tests
 * share one daemon (each its own user and threads) and wait side by side; its
 * executor is the in-process one: what expires is the session, before any
 * executor runs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession } from '../../helpers/host.js';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import { waitFor } from '../../helpers/wait-for.js';

/** A token whose `exp` is two seconds ahead (exp has whole seconds: it lives one to two). */
// Four seconds: long enough for the first request on a loaded machine, short enough to wait for (never a fixed sleep).
const shortLived = (sub: string) => mintBearer(sub, {}, { expiresIn: Math.floor(Date.now() / 1000) + 4 });
const readArgs = { module: 'calendar', method: 'read', input: { mode: 'day', date: '2026-04-21' } };
const codeOf = (err: unknown) => (err as { code?: number }).code;

let host: InProcessHost;

describe('a session lives no longer than its token', { concurrency: true }, () => {
  before(async () => {
    host = await startInProcess({ transport: 'ws' });
    // The first /mcp request loads the MCP SDK (seconds on a loaded machine): load it before any short token's clock runs.
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const warm = await fetch(`http://127.0.0.1:${host.port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${await mintBearer('warm-up')}` },
      body: JSON.stringify(init),
    });
    assert.equal(warm.status, 200, await warm.text());
  });
  after(() => host.stop());

  test('WebSocket: after exp the session answers -32001 (open a new one) and its subscriptions end', { timeout: 30_000 }, async () => {
    const watcher = await host.connect();
    const short = await openSession(watcher, await shortLived('mia'));
    const lasting = await openSession(watcher, await mintBearer('mia'));
    await watcher.request('thread/subscribe', { session_id: short.session_id, thread_id: 'short' });
    await watcher.request('thread/subscribe', { session_id: lasting.session_id, thread_id: 'lasting' });
    const ok = await watcher.request<{ status: string }>('tool/invoke', { session_id: short.session_id, thread_id: 'own', tool_call_id: 'c0', args: readArgs });
    assert.equal(ok.status, 'success', 'before exp the session works');

    const refusal = await waitFor(async () => {
      try {
        await watcher.request('skills/list', { session_id: short.session_id });
        return null;
      } catch (err) {
        return err as { code: number; message: string };
      }
    }, 'the short session to expire');
    assert.equal(refusal.code, -32001);
    assert.match(refusal.message, /expired.*open a new session/);
    await assert.rejects(
      watcher.request('tool/invoke', { session_id: short.session_id, thread_id: 'own', tool_call_id: 'c1', args: readArgs }),
      (err) => codeOf(err) === -32001,
    );
    assert.equal((await watcher.request<{ skills: unknown[] }>('skills/list', { session_id: lasting.session_id })).skills.length > 0, true, 'the other session lives on');

    // Another connection calls in both threads, `short` first: the watcher hears `lasting`'s call, and by then
    // it would have heard `short`'s, had that subscription survived its session.
    const caller = await host.connect();
    const s = await openSession(caller, await mintBearer('mia'));
    await caller.request('tool/invoke', { session_id: s.session_id, thread_id: 'short', tool_call_id: 'k1', args: readArgs });
    await caller.request('tool/invoke', { session_id: s.session_id, thread_id: 'lasting', tool_call_id: 'k2', args: readArgs });
    const threadsHeard = () =>
      watcher.wire.filter((w) => w.method === 'tool/result').map((w) => (w.payload as { thread_id: string }).thread_id);
    await waitFor(() => threadsHeard().includes('lasting'), 'the lasting subscription’s tool/result');
    assert.deepEqual(threadsHeard().filter((t) => t !== 'own'), ['lasting']);
    assert.match(host.stderr(), new RegExp(`"msg":"session expired".*"session_id":"${short.session_id}"`));
  });

  test('AG-UI: the stream ends at its token’s exp; a fresh token resumes by Last-Event-ID', { timeout: 30_000 }, async () => {
    const s = await openSession(host, await mintBearer('noa'));
    await host.request('message/append', { session_id: s.session_id, thread_id: 'room', role: 'user', content: 'one' });
    const res = await fetch(`http://127.0.0.1:${host.port}/threads/room/events`, { headers: { authorization: `Bearer ${await shortLived('noa')}` } });
    assert.equal(res.status, 200);
    // The body completes only when the daemon ends the stream.
    const body = await res.text();
    const ids = [...body.matchAll(/^id: *(\d+)$/gm)].map((m) => m[1]!);
    assert.equal(ids.length, 1, 'the replayed run');
    assert.match(body, /"delta":"one"/);

    await host.request('message/append', { session_id: s.session_id, thread_id: 'room', role: 'user', content: 'two' });
    const ac = new AbortController();
    const resumed = await fetch(`http://127.0.0.1:${host.port}/threads/room/events`, {
      headers: { authorization: `Bearer ${await mintBearer('noa')}`, 'last-event-id': ids[0]! },
      signal: ac.signal,
    });
    assert.equal(resumed.status, 200);
    const reader = resumed.body!.getReader();
    let text = '';
    while (!/RUN_FINISHED/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    assert.match(text, /"delta":"two"/);
    assert.doesNotMatch(text, /"delta":"one"/, 'resumed after the last whole run');
  });

  test('MCP over HTTP: a session ends at the exp of the latest token used on it', { timeout: 30_000 }, async () => {
    const post = (token: string, body: unknown, sid?: string) =>
      fetch(`http://127.0.0.1:${host.port}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const short = await shortLived('ola');
    const opened = await post(short, init);
    assert.equal(opened.status, 200);
    const sid = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    await waitFor(async () => {
      const r = await post(short, list, sid);
      await r.text();
      return r.status === 401;
    }, 'the short token to expire');
    // A fresh token does not revive a session whose token expired: the host initializes again.
    const late = await post(await mintBearer('ola'), list, sid);
    await late.text();
    assert.equal(late.status, 404);
  });
});
