/**
 * What only the WebSocket transport has: many connections and users on one
 * daemon, live subscriptions, frame limits, cancellation, disconnects,
 * timeouts and a graceful SIGTERM.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dbCount } from '../helpers/db.js';
import WebSocket from 'ws';
import { CancellationTokenSource, ResponseError } from 'vscode-jsonrpc/node';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/repo.js';
import { startHost, openSession, connectWs, type Host, type Client } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import type { ToolResponse } from '../../src/protocol/index.js';
import { waitFor } from '../helpers/wait-for.js';


const createArgs = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-03-03T09:00:00Z', end_at: '2026-03-03T10:00:00Z' },
});

/** Sends raw text frames and collects raw replies. */
async function rawSocket(port: number): Promise<{ ws: WebSocket; next(): Promise<any> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/rpc`);
  const inbox: unknown[] = [];
  const waiters: Array<(m: unknown) => void> = [];
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    const w = waiters.shift();
    if (w) w(m);
    else inbox.push(m);
  });
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  return { ws, next: () => (inbox.length ? Promise.resolve(inbox.shift()) : new Promise((r) => waiters.push(r))) };
}


function count(dbPath: string, sql: string, ...params: unknown[]): Promise<number> {
  return dbCount(dbPath, sql, params);
}

describe('one daemon, many connections', () => {
  let host: Host;
  before(async () => {
    // The in-process executor: this suite is the WebSocket transport's (many connections, 100-call bursts);
    // the subprocess executor's own path is e2e/executors' and the other suites'.
    host = await startHost({ transport: 'ws', args: ['--executor', 'inprocess'] });
  });
  after(async () => {
    await host.stop();
  });

  test('prints the listening line and serves only loopback by default', () => {
    assert.match(host.stderr(), /^\{"listening":\{"host":"127\.0\.0\.1","port":\d+\}\}$/m);
  });

  test('subscriptions deliver a thread’s tool/result to its owner’s subscribers only', async () => {
    const aliceToken = await mintBearer('alice');
    const a1 = await host.connect();
    const a2 = await host.connect();
    const b1 = await host.connect();
    const s1 = await openSession(a1, aliceToken);
    const s2 = await openSession(a2, aliceToken);
    const sb = await openSession(b1, await mintBearer('bob'));

    await a1.request('thread/subscribe', { session_id: s1.session_id, thread_id: 'shared-view' });
    // Threads are per user and subscribing claims nothing: bob's 'shared-view' is his own (empty) thread,
    // not alice's, and he hears none of alice's calls.
    await b1.request('thread/subscribe', { session_id: sb.session_id, thread_id: 'shared-view' });
    await b1.request('thread/subscribe', { session_id: sb.session_id, thread_id: 'bobs-own' });

    const r = await a2.request<ToolResponse>('tool/invoke', {
      session_id: s2.session_id, thread_id: 'shared-view', tool_call_id: 'sub-1', args: createArgs('Watched'),
    });
    assert.equal(r.status, 'success');
    const notes = (c: Client) => c.wire.filter((e) => e.method === 'tool/result').map((e) => (e.payload as { tool_call_id: string }).tool_call_id);
    await waitFor(() => notes(a1).includes('sub-1'), 'the subscriber to hear sub-1');
    // No fixed wait for what must not come: bob calls in his own subscribed thread. A leak of sub-1 (published
    // before a2 had its answer, so before this call was sent) would reach b1 ahead of bob's own notification.
    await b1.request('tool/invoke', { session_id: sb.session_id, thread_id: 'bobs-own', tool_call_id: 'bob-mark', args: { module: 'memory', method: 'read', input: {} } });
    assert.deepEqual(notes(a1), ['sub-1'], 'the subscriber on another connection sees the call');
    assert.deepEqual(notes(a2), ['sub-1'], 'the invoking connection sees it once');
    assert.deepEqual(notes(b1), ['bob-mark'], 'another user sees nothing of it');

    await a1.request('thread/unsubscribe', { session_id: s1.session_id, thread_id: 'shared-view' });
    await a2.request('tool/invoke', { session_id: s2.session_id, thread_id: 'shared-view', tool_call_id: 'sub-2', args: createArgs('Unwatched') });
    // The same marker: a1's own call comes after sub-2 was published, so sub-2 would have come first.
    await a1.request('tool/invoke', { session_id: s1.session_id, thread_id: 'a1-own', tool_call_id: 'a1-mark', args: { module: 'memory', method: 'read', input: {} } });
    assert.deepEqual(notes(a1), ['sub-1', 'a1-mark']);

    // A session id belongs to its connection.
    const foreign = (await a1.request('thread/list', { session_id: s2.session_id }).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(foreign.code, -32001);
    for (const c of [a1, a2, b1]) await c.close();
  });

  test('invalid JSON is -32700 and an oversized frame is a JSON-RPC error; the connection stays usable', async () => {
    const raw = await rawSocket(host.port!);
    raw.ws.send('{"jsonrpc": "2.0", "id": 1, "method": ');
    assert.equal((await raw.next()).error.code, -32700);
    raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocol_version: '1', pad: 'x'.repeat(1024 * 1024 + 10) } }));
    const big = await raw.next();
    assert.equal(big.id, 2);
    assert.equal(big.error.code, -32600);
    assert.match(big.error.message, /too large/);
    // Only the top-level id is the request's: an "id" inside the params (an input's) is not, and with the
    // request's own id past the first 4 KiB the refusal carries null (transports.md) — never the nested 77.
    raw.ws.send(`{"jsonrpc":"2.0","method":"initialize","params":{"input":{"id":77},"pad":"${'x'.repeat(1024 * 1024 + 10)}"},"id":4}`);
    assert.equal((await raw.next()).id, null);
    raw.ws.send(`{"jsonrpc":"2.0","method":"initialize","params":{"input":{"id":77}},"id":"req-5","pad":"${'x'.repeat(1024 * 1024 + 10)}"}`);
    assert.equal((await raw.next()).id, 'req-5');
    raw.ws.send('[1,2]');
    assert.equal((await raw.next()).error.code, -32600);
    raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocol_version: '1' } }));
    const ok = await raw.next();
    assert.equal(ok.id, 3);
    assert.equal(ok.result.protocol_version, '1');
    raw.ws.close();
  });

  test('a connection without the service key cannot open automation sessions', async () => {
    const c = await connectWs(host.port!);
    await c.request('initialize', { protocol_version: '1' });
    const err = (await c.request('session/open', { auth: { type: 'automation', job_id: 'job_x' } }).catch((e: unknown) => e)) as ResponseError<unknown>;
    assert.equal(err.code, -32001);
    await c.close();
  });

  test('200 concurrent requests on one connection all complete and are stored once each', async () => {
    const c = await connectWs(host.port!);
    const s = await openSession(c, await mintBearer('dana'));
    const calls = Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0
        ? c.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'burst', tool_call_id: `b${i}`, args: createArgs(`Burst ${i}`) })
        : c.request('thread/list', { session_id: s.session_id }),
    );
    const results = await Promise.allSettled(calls);
    assert.equal(results.filter((r) => r.status === 'rejected').length, 0);
    assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM messages WHERE thread_id = 'burst'"), 100);
    assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM events WHERE owner_id = 'dana'"), 100);
    await c.close();
  });

  test('a client that disconnects mid-call leaves the daemon serving and the call stored whole', async () => {
    const c = await connectWs(host.port!);
    const s = await openSession(c, await mintBearer('erin'));
    void c.request('tool/invoke', { session_id: s.session_id, thread_id: 'gone', tool_call_id: 'g1', args: createArgs('Left behind') }).catch(() => {});
    // Disconnect only once the call has started (its credential is issued), so the test cannot pass on a call that never ran.
    await waitFor(async () => (await count(host.dbPath, "SELECT count(*) AS n FROM credential_audit WHERE thread_id = 'gone' AND tool_call_id = 'g1'")) > 0, 'the call to start');
    await c.close();
    await waitFor(async () => (await count(host.dbPath, "SELECT count(*) AS n FROM messages WHERE thread_id = 'gone' AND tool_call_id = 'g1'")) > 0, 'the call that started to be stored although its client left');
    assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM events WHERE title = 'Left behind'"), 1, 'its effect exactly once');
    const again = await connectWs(host.port!);
    const s2 = await openSession(again, await mintBearer('erin'));
    const h = await again.request<{ messages: unknown[] }>('history/get', { session_id: s2.session_id, thread_id: 'gone' });
    assert.equal(h.messages.length, 1);
    await again.close();
  });

  test('a call cancelled before it starts is answered -32800 and leaves no trace, not even a thread', async () => {
    const raw = await rawSocket(host.port!);
    raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_version: '1' } }));
    await raw.next();
    raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/open', params: { auth: { type: 'bearer', token: await mintBearer('gil') } } }));
    const { session_id } = (await raw.next()).result as { session_id: string };
    // Both frames in one TCP write: the daemon reads the cancel before it dispatches the call.
    const socket = (raw.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
    socket.cork();
    raw.ws.send(
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tool/invoke', params: { session_id, thread_id: 'cancelled-early', tool_call_id: 'c', args: createArgs('Never ran') } }),
    );
    raw.ws.send(JSON.stringify({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 3 } }));
    socket.uncork();
    const reply = await raw.next();
    assert.equal(reply.id, 3);
    assert.equal(reply.error?.code, -32800, `expected the call cancelled, got ${JSON.stringify(reply)}`);
    assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM events WHERE title = 'Never ran'"), 0);
    assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM messages WHERE thread_id = 'cancelled-early'"), 0);
    assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM credential_audit WHERE thread_id = 'cancelled-early'"), 0);
    raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'history/get', params: { session_id, thread_id: 'cancelled-early' } }));
    assert.deepEqual((await raw.next()).error?.data, { code: 'THREAD_NOT_FOUND' });
    raw.ws.close();
  });

  test('a cancelled call completes, is stopped as CANCELLED with nothing written, or leaves no trace', async () => {
    const c = await connectWs(host.port!);
    const s = await openSession(c, await mintBearer('fay'));
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const source = new CancellationTokenSource();
        const work = c.rpc.sendRequest('tool/invoke', { session_id: s.session_id, thread_id: `cancel-${i}`, tool_call_id: 'c', args: createArgs(`Cancel ${i}`) }, source.token);
        if (i % 3 !== 0) setTimeout(() => source.cancel(), i % 2 ? 0 : 30);
        // Once it runs, a cancel stops it (contract section 16): a stored CANCELLED failure, nothing written.
        return work.then(
          (r) => ((r as { content: Array<{ text: string }> }).content[0]!.text.includes('"code":"CANCELLED"') ? 'stopped' : 'completed'),
          (e: ResponseError<unknown>) => `error ${e.code}`,
        );
      }),
    );
    for (const [i, outcome] of outcomes.entries()) {
      const events = await count(host.dbPath, 'SELECT count(*) AS n FROM events WHERE title = ?', `Cancel ${i}`);
      const messages = await count(host.dbPath, 'SELECT count(*) AS n FROM messages WHERE thread_id = ?', `cancel-${i}`);
      if (outcome === 'completed') assert.deepEqual([events, messages], [1, 1], `call ${i} completed`);
      else if (outcome === 'stopped') assert.deepEqual([events, messages], [0, 1], `call ${i} was stopped: its CANCELLED outcome stored, nothing it wrote`);
      else {
        assert.equal(outcome, 'error -32800');
        assert.deepEqual([events, messages], [0, 0], `call ${i} was cancelled and left nothing`);
      }
    }
    await c.close();
  });

  test('logs are JSON lines with a request id per call and no token', () => {
    const lines = host.stderr().trim().split('\n');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const toolLines = parsed.filter((l) => l.msg === 'tool call');
    assert.ok(toolLines.length > 0);
    for (const l of toolLines) assert.match(String(l.request_id), /^req_/);
    assert.ok(!/eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}/.test(host.stderr()));
  });
});

describe('limits', () => {
  test('a per-call timeout fails the call with TIMEOUT and the daemon keeps serving', async () => {
    const host = await startHost({ transport: 'ws', args: ['--call-timeout-ms', '5'] });
    try {
      const s = await openSession(host, await mintBearer('gus'));
      const r = await host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: 'slow', args: createArgs('Too slow') });
      assert.equal(r.status, 'failure');
      assert.equal(JSON.parse(r.content[0]!.text).error.code, 'TIMEOUT');
      assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM events WHERE title = 'Too slow'"), 0, 'the killed child committed nothing');
      const list = await host.request<{ threads: unknown[] }>('thread/list', { session_id: s.session_id });
      assert.equal(list.threads.length, 1);
    } finally {
      await host.stop();
    }
  });

  test('more requests in flight than allowed get -32003, the rest complete', async () => {
    const host = await startHost({ transport: 'ws', args: ['--max-in-flight', '2'] });
    try {
      const s = await openSession(host, await mintBearer('hal'));
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          host.request('tool/invoke', { session_id: s.session_id, thread_id: 't', tool_call_id: `x${i}`, args: createArgs(`Limit ${i}`) }),
        ),
      );
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.ok(rejected.length > 0);
      for (const r of rejected) assert.equal((r.reason as ResponseError<unknown>).code, -32003);
      const stored = await count(host.dbPath, "SELECT count(*) AS n FROM messages WHERE thread_id = 't'");
      assert.equal(stored, results.length - rejected.length);
    } finally {
      await host.stop();
    }
  });

  test('SIGTERM finishes in-flight calls, closes the database and exits 0', async () => {
    const host = await startHost({ transport: 'ws' });
    const s = await openSession(host, await mintBearer('ivy'));
    const calls = Array.from({ length: 5 }, (_, i) =>
      host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'term', tool_call_id: `t${i}`, args: createArgs(`Term ${i}`) }),
    );
    // SIGTERM once a call is surely in flight (its credential is audited before the child starts).
    await waitFor(async () => (await count(host.dbPath, "SELECT count(*) AS n FROM credential_audit WHERE thread_id = 'term'")) > 0, 'a call in flight');
    host.proc.kill('SIGTERM');
    const results = await Promise.allSettled(calls);
    assert.equal(await host.exited, 0);
    const answered = results.filter((r) => r.status === 'fulfilled').length;
    assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM messages WHERE thread_id = 'term'"), answered, 'every answered call is stored');
    assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM events WHERE owner_id = 'ivy'"), answered);
    assert.match(host.stderr(), /"msg":"stopped"/);
  });

  test('a peer that stops answering pings is dropped', async () => {
    const host = await startHost({ transport: 'ws', args: ['--ping-interval-ms', '150'] });
    try {
      const dead = new WebSocket(`ws://127.0.0.1:${host.port}/rpc`, { autoPong: false });
      await new Promise((r) => dead.once('open', r));
      const closedAfter = await new Promise<number>((resolve) => {
        const t = Date.now();
        dead.once('close', () => resolve(Date.now() - t));
      });
      assert.ok(closedAfter < 5000);
      // A peer that answers pings (ws answers them itself) is still served after several of them.
      const alive = new WebSocket(`ws://127.0.0.1:${host.port}/rpc`);
      let pings = 0;
      alive.on('ping', () => pings++);
      await new Promise((r) => alive.once('open', r));
      await waitFor(() => pings >= 3, () => `three pings, got ${pings}`);
      const reply = new Promise<{ result: { protocol_version: string } }>((r) => alive.once('message', (d) => r(JSON.parse(d.toString()))));
      alive.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_version: '1' } }));
      assert.equal((await reply).result.protocol_version, '1', 'a peer that answers pings stays connected');
      alive.close();
    } finally {
      await host.stop();
    }
  });

  test('over stdio, SIGTERM also drains and exits 0', async () => {
    const host = await startHost({ transport: 'stdio' });
    const s = await openSession(host, await mintBearer('jon'));
    const pending = host.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'term', tool_call_id: 't0', args: createArgs('Stdio term') });
    await waitFor(async () => (await count(host.dbPath, "SELECT count(*) AS n FROM credential_audit WHERE thread_id = 'term'")) > 0, 'the call in flight');
    host.proc.kill('SIGTERM');
    const outcome = await pending.then(() => 'answered', () => 'dropped');
    assert.equal(await host.exited, 0);
    const stored = await count(host.dbPath, "SELECT count(*) AS n FROM messages WHERE thread_id = 'term'");
    assert.equal(outcome, 'answered', 'the in-flight call is answered before the daemon exits');
    assert.equal(stored, 1);
    assert.equal(await count(host.dbPath, "SELECT count(*) AS n FROM events WHERE title = 'Stdio term'"), stored);
  });

  test('a client that reads slowly is paused, others are served meanwhile, and nothing is lost when it reads again', async () => {
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({
      agents: { default: { enabled_skills: ['calendar'], allowed_actions: ['calendar.read'] } },
      limits: { ws_high_water_bytes: 256 * 1024, ws_max_buffered_bytes: 256 * 1024 * 1024 },
    }));
    const host = await startHost({ transport: 'ws', dataDir: dir, args: ['--config', config] });
    try {
      const s = await openSession(host, await mintBearer('kim'));
      const big = 'x'.repeat(900_000);
      await host.request('message/append', { session_id: s.session_id, thread_id: 'big', role: 'user', content: big });

      const raw = await rawSocket(host.port!);
      const send = (id: number, method: string, params: unknown) => raw.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      send(1, 'initialize', { protocol_version: '1' });
      await raw.next();
      send(2, 'session/open', { auth: { type: 'bearer', token: await mintBearer('kim') } });
      const sessionId = (await raw.next()).result.session_id as string;

      // Stop reading at the TCP level, then ask for 40 replies of ~900 kB each.
      const tcp = (raw.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      tcp.pause();
      for (let i = 0; i < 40; i++) send(100 + i, 'history/get', { session_id: sessionId, thread_id: 'big', view: 'context' });
      await waitFor(() => /backpressure: stopped reading a slow peer/.test(host.stderr()), 'the daemon to stop reading the slow peer');

      const other = await host.request<{ threads: unknown[] }>('thread/list', { session_id: s.session_id });
      assert.equal(other.threads.length, 1, 'another connection is served while the slow one is paused');

      tcp.resume();
      const ids = new Set<number>();
      while (ids.size < 40) {
        const reply = await raw.next();
        assert.equal(reply.result.messages[0].content.length, big.length);
        ids.add(reply.id);
      }
      // Log lines of one event-loop turn leave stderr together, so the line may follow the last reply.
      await waitFor(() => /backpressure: reading again/.test(host.stderr()), 'the daemon to read the peer again');
      raw.ws.close();
    } finally {
      await host.stop();
    }
  });
});
