/**
 * Regressions from review: hostile or careless input that once crashed,
 * froze or leaked. Each stays fixed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ResponseError } from 'vscode-jsonrpc/node';
import { startHost, openSession, connectWs, type Host } from '../helpers/host.js';
import { dbCount } from '../helpers/db.js';
import { mintBearer } from '../helpers/tokens.js';
import { waitFor } from '../helpers/wait-for.js';

// One WebSocket daemon for the cases that need nothing of their own (flags, a log read to its end, an
// exit): each has its own user and its own connections.
describe('one WebSocket daemon', () => {
  let host: Host;
  before(async () => {
    host = await startHost({ transport: 'ws' });
  });
  after(async () => {
    await host.stop();
  });

  test('a malformed upgrade request line does not take the WebSocket daemon down', async () => {
    await new Promise<void>((resolve) => {
      const sock = connect(host.port!, '127.0.0.1', () => {
        sock.write('GET http://[::1 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
      });
      sock.on('data', () => {});
      sock.on('close', () => resolve());
      sock.on('error', () => resolve());
      setTimeout(() => {
        sock.destroy();
        resolve();
      }, 1000).unref();
    });
    const c = await connectWs(host.port!);
    const init = await c.request<{ protocol_version: string }>('initialize', { protocol_version: '1' });
    assert.equal(init.protocol_version, '1');
    await c.close();
    assert.equal(host.proc.exitCode, null, 'still running');
  });

  test('a replayed call reaches its caller only, not the thread’s subscribers again', async () => {
    const token = await mintBearer('rita');
    const caller = await host.connect();
    const watcher = await host.connect();
    const ws = await openSession(watcher, token);
    const s = await openSession(caller, token);
    await watcher.request('thread/subscribe', { session_id: ws.session_id, thread_id: 'replay' });
    const args = { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } };
    await caller.request('tool/invoke', { session_id: s.session_id, thread_id: 'replay', tool_call_id: 'r1', args });
    await caller.request('tool/invoke', { session_id: s.session_id, thread_id: 'replay', tool_call_id: 'r1', args });
    await caller.request('tool/invoke', { session_id: s.session_id, thread_id: 'replay', tool_call_id: 'r1', args: { ...args, input: { key: 'k', content: 'w' } } });
    // No fixed wait for what must not come: a new call after the replays; the watcher hears it last.
    await caller.request('tool/invoke', { session_id: s.session_id, thread_id: 'replay', tool_call_id: 'r2', args: { module: 'memory', method: 'read', input: {} } });
    const seen = (c: { wire: Array<{ method?: string; payload: unknown }> }) => c.wire.filter((e) => e.method === 'tool/result').map((e) => (e.payload as { tool_call_id: string }).tool_call_id);
    await waitFor(() => seen(watcher).includes('r2'), 'the watcher to hear r2');
    assert.deepEqual(seen(caller), ['r1', 'r1', 'r1', 'r2'], 'the caller hears every answer');
    assert.deepEqual(seen(watcher), ['r1', 'r2'], 'the subscriber hears the one call that ran');
    await watcher.close();
    await caller.close();
  });

  test('a raw frame nested 100,000 levels deep is refused without harm', async () => {
    const c = await connectWs(host.port!);
    const s = await openSession(c, await mintBearer('nell'));
    await c.close();
    const { default: WebSocket } = await import('ws');
    const raw = new WebSocket(`ws://127.0.0.1:${host.port}/rpc`);
    await new Promise((r) => raw.once('open', r));
    const replies: Array<{ id: number; error?: { code: number } }> = [];
    raw.on('message', (d) => replies.push(JSON.parse(d.toString())));
    raw.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_version: '1' } }));
    const deep = `${'{"d":'.repeat(100_000)}{}${'}'.repeat(100_000)}`;
    raw.send(`{"jsonrpc":"2.0","id":2,"method":"tool/invoke","params":{"session_id":"${s.session_id}","thread_id":"t","tool_call_id":"c","args":{"module":"memory","method":"read","input":${deep}}}}`);
    raw.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'thread/list', params: { session_id: 'nope' } }));
    await waitFor(() => replies.length >= 3, () => `three replies, got ${JSON.stringify(replies).slice(0, 300)}`);
    const byId = new Map(replies.map((r) => [r.id, r]));
    assert.ok([-32602, -32001, -32700].includes(byId.get(2)?.error?.code ?? 0), JSON.stringify(byId.get(2)));
    assert.equal(byId.get(3)?.error?.code, -32001, 'the connection keeps answering');
    raw.close();
  });

  test('one user may hold at most 16 AG-UI streams; the 17th is 429, and closing one frees a slot', { timeout: 20_000 }, async () => {
    const controllers: AbortController[] = [];
    try {
      const token = await mintBearer('sam');
      const s = await openSession(host, token);
      await host.request('message/append', { session_id: s.session_id, thread_id: 'sse', role: 'user', content: 'hi' });
      // Keep every response referenced: an unreferenced body may be collected, closing its stream early.
      const responses: Response[] = [];
      const open = async () => {
        const ac = new AbortController();
        controllers.push(ac);
        const r = await fetch(`http://127.0.0.1:${host.port}/threads/sse/events`, { headers: { authorization: `Bearer ${token}` }, signal: ac.signal });
        responses.push(r);
        return r;
      };
      for (let i = 0; i < 16; i++) assert.equal((await open()).status, 200);
      const refused = await open();
      assert.equal(refused.status, 429);
      controllers[0]!.abort();
      // The slot is free once the daemon saw the close: a refused attempt holds nothing, so try until one is let in.
      await waitFor(async () => (await open()).status === 200, 'a closed stream to free its slot');
    } finally {
      for (const c of controllers) c.abort();
    }
  });
});

test('a huge unknown method name is refused and keeps the daemon responsive; it is not logged', async () => {
  const host = await startHost({ transport: 'ws' });
  try {
    const c = await connectWs(host.port!);
    const huge = 'eyJ'.repeat(300_000);
    const err = (await c.request(huge, {}).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(err.code, -32002);
    const other = await connectWs(host.port!);
    await other.request('initialize', { protocol_version: '1' });
    await other.close();
    await c.close();
  } finally {
    await host.stop();
  }
  assert.ok(!host.stderr().includes('eyJeyJeyJ'), 'the raw method string never reaches the log');
});

test('a credential pasted into the input is refused, and appears in no notification, response or database byte', async () => {
  const host = await startHost();
  const token = await mintBearer('alice');
  try {
    const s = await openSession(host, token);
    const mark = host.wire.length;
    for (const [i, input] of [
      { token, title: 'x' },
      { title: `use ${token}`, start_at: '2026-01-01T00:00:00Z', end_at: '2026-01-01T01:00:00Z' },
      { items: [{ credential: token }] },
    ].entries()) {
      const r = await host.request<{ status: string; content: Array<{ text: string }> }>('tool/invoke', {
        session_id: s.session_id, thread_id: 'paste', tool_call_id: `p${i}`, args: { module: 'calendar', method: 'create', input },
      });
      assert.equal(r.status, 'failure');
      assert.equal(JSON.parse(r.content[0]!.text).error.code, 'UNAUTHENTICATED');
    }
    assert.ok(!JSON.stringify(host.wire.slice(mark)).includes(token.split('.')[2]!), 'not on the wire');
  } finally {
    await host.stop();
  }
  for (const f of readdirSync(host.dataDir).filter((n) => n.startsWith('toolgate.db'))) {
    assert.ok(!readFileSync(join(host.dataDir, f)).toString('latin1').includes(token.split('.')[2]!), `not in ${f}`);
  }
});

test('input nested deeper than the limit is -32602 and leaves no thread behind', async () => {
  const host = await startHost();
  try {
    const s = await openSession(host, await mintBearer('alice'));
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i++) deep = { d: deep };
    const err = (await host
      .request('tool/invoke', { session_id: s.session_id, thread_id: 'deep', tool_call_id: 'd1', args: { module: 'memory', method: 'read', input: deep } })
      .catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(err.code, -32602);
    const list = await host.request<{ threads: unknown[] }>('thread/list', { session_id: s.session_id });
    assert.deepEqual(list.threads, []);
  } finally {
    await host.stop();
  }
});

test('a call in flight when the host closes stdin is still answered before the daemon exits', async () => {
  const host = await startHost();
  try {
    const s = await openSession(host, await mintBearer('alice'));
    const pending = host.request<{ status: string }>('tool/invoke', {
      session_id: s.session_id, thread_id: 'eof', tool_call_id: 'e1', args: { module: 'memory', method: 'update', input: { key: 'k', content: 'v' } },
    });
    // End stdin once the call is surely in flight (its credential is audited before the child starts),
    // not after a fixed sleep: on a loaded machine the request may not even be written yet.
    await waitFor(async () => (await dbCount(host.dbPath, 'SELECT count(*) AS n FROM credential_audit')) > 0, 'the call in flight', 15_000, 5);
    host.proc.stdin.end();
    const r = await pending;
    assert.equal(r.status, 'success');
    assert.equal(await host.exited, 0);
    assert.doesNotMatch(host.stderr(), /handler failed/);
  } finally {
    await host.stop();
  }
});
