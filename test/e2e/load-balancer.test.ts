/**
 * Contract §20 from outside: three daemons on one PostgreSQL database behind
 * a real load balancer — Debian's HAProxy, round-robin, no affinity of any
 * kind — and every transport through it: WebSocket `/rpc` with subscriptions
 * fed by calls on other daemons, MCP 2025-11-25 sessions (initialize, calls,
 * the GET stream, DELETE; caps, expiry and user binding) and 2026-07-28
 * sessionless requests, AG-UI streams resumed with `Last-Event-ID`, the OAuth
 * metadata, `call/get` and `call/cancel`. Then a daemon SIGKILLed under load:
 * its clients reconnect, nothing acknowledged is lost, and retried calls
 * return their stored outcome.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { ToolgateClient } from '../../src/client/index.js';
import type { CallGetResult, ToolResponse } from '../../src/protocol/index.js';
import { makeClient, openSession, startHost, type Client, type Host } from '../helpers/host.js';
import { freshPgDatabase, needsPg } from '../helpers/pg.js';
import { needsHaproxy, startHaproxy, type Balancer } from '../helpers/haproxy.js';
import { freePort } from '../helpers/doc-run.js';
import { connectMcp } from '../helpers/mcp-hosts.js';
import { MCP_ACCEPT, MCP_INIT } from '../helpers/mcp-raw.js';
import { startTestIssuer, type TestIssuer } from '../helpers/oauth-issuer.js';
import { mintBearer } from '../helpers/tokens.js';
import { dbCount, dbRows } from '../helpers/db.js';
import { tempDir } from '../helpers/repo.js';
import { waitFor } from '../helpers/wait-for.js';

const skip = needsPg.skip ?? needsHaproxy.skip;
const AGENTS = { default: { enabled_skills: ['calendar', 'contacts', 'memory'], allowed_actions: ['calendar.*', 'contacts.read', 'memory.*'] } };
const DAEMONS = 3;

const create = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' },
});

/** The daemons whose log names this value (a session id): which daemons served it. */
const servedBy = (daemons: readonly Host[], value: string) => daemons.filter((d) => d.stderr().includes(value)).length;

/** One SSE reader: the `id:` of each event as it arrives. */
interface SseIds {
  ids: string[];
  ended: Promise<void>;
  until(n: number): Promise<void>;
  close(): void;
}

async function readSse(url: string, headers: Record<string, string>): Promise<SseIds & { status: number }> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const ids: string[] = [];
  let buffer = '';
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
        const id = /^id: ?(.*)$/m.exec(buffer.slice(0, i))?.[1];
        buffer = buffer.slice(i + 2);
        if (id !== undefined) ids.push(id);
      }
    }
  })().catch(() => {});
  return {
    status: res.status,
    ids,
    ended,
    until: async (n) => void (await waitFor(() => ids.length >= n, () => `${n} ids, saw ${ids.join(',')}`)),
    close: () => abort.abort(),
  };
}

describe('three daemons on one PostgreSQL behind HAProxy (round-robin, no affinity)', { skip, timeout: 300_000 }, () => {
  let db: string;
  let daemons: Host[] = [];
  let lb: Balancer;
  let issuer: TestIssuer;
  const clients: Client[] = [];

  /** A WebSocket client through the balancer. */
  const viaLb = async (): Promise<Client> => {
    const c = makeClient(await ToolgateClient.connect(`ws://127.0.0.1:${lb.port}/rpc`));
    clients.push(c);
    return c;
  };
  const mcpUrl = () => `${lb.url}/mcp`;

  before(async () => {
    db = (await freshPgDatabase()).url;
    issuer = await startTestIssuer();
    const lbPort = await freePort();
    const dir = tempDir('toolgate-lb-');
    const config = join(dir, 'config.json');
    // Every daemon names the balancer as the URL its clients reach; tokens of the issuer are for it.
    writeFileSync(config, JSON.stringify({ agents: AGENTS, auth: { issuer: issuer.issuer }, http: { public_url: `http://127.0.0.1:${lbPort}` } }));
    const args = ['--executor', 'inprocess', '--config', config];
    daemons = await Promise.all(Array.from({ length: DAEMONS }, () => startHost({ transport: 'ws', db, args })));
    lb = await startHaproxy(
      daemons.map((d) => d.port!),
      lbPort,
    );
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await lb?.stop();
    await Promise.all(daemons.map((d) => d.stop().catch(() => {})));
    await issuer?.close();
  });

  test('the balancer spreads consecutive requests over every daemon (no affinity)', async () => {
    const before = daemons.map((d) => d.stderr().length);
    // Each WebSocket session is logged by the daemon that opened it: three connections in a row reach three daemons.
    for (let i = 0; i < DAEMONS; i++) {
      const c = await viaLb();
      const s = await openSession(c, await mintBearer('spread'));
      // Log lines leave a daemon in batches: wait for the one naming the session.
      await waitFor(() => servedBy(daemons, s.session_id) === 1, `one daemon to log session ${s.session_id}`);
    }
    assert.ok(
      daemons.every((d, i) => d.stderr().slice(before[i]).includes('"msg":"session opened"')),
      'each daemon opened one of the three sessions',
    );
  });

  test('WebSocket /rpc: a subscriber gets, in thread order, the calls made through every daemon', async () => {
    const watcher = await viaLb();
    const sw = await openSession(watcher, await mintBearer('wsuser'));
    await watcher.request('thread/subscribe', { session_id: sw.session_id, thread_id: 'lb' });
    const feeders: Array<{ c: Client; s: { session_id: string } }> = [];
    for (let i = 0; i < DAEMONS; i++) {
      const c = await viaLb();
      feeders.push({ c, s: await openSession(c, await mintBearer('wsuser')) });
    }
    const others = feeders.filter((f) => daemons.findIndex((d) => d.stderr().includes(f.s.session_id)) !== daemons.findIndex((d) => d.stderr().includes(sw.session_id)));
    assert.ok(others.length >= 2, 'at least two feeders are on other daemons than the subscriber');
    const ids: string[] = [];
    for (let round = 0; round < 2; round++) {
      for (const [i, f] of feeders.entries()) {
        const id = `ws-${round}-${i}`;
        ids.push(id);
        const r = await f.c.request<ToolResponse>('tool/invoke', { session_id: f.s.session_id, thread_id: 'lb', tool_call_id: id, args: create(id) });
        assert.equal(r.status, 'success');
      }
    }
    const seen = () => watcher.wire.filter((e) => e.method === 'tool/result').map((e) => (e.payload as { tool_call_id: string }).tool_call_id);
    await waitFor(() => seen().length >= ids.length, () => `the subscriber saw ${seen().join(',')}`);
    assert.deepEqual(seen(), ids, 'each call once, in the order they were made');
  });

  test('MCP 2025-11-25: one session serves initialize, calls, the GET stream and DELETE on every daemon', async () => {
    const token = await mintBearer('mcp-ann');
    const host = await connectMcp('http', { port: lb.port, token });
    const sid = host.sessionId()!;
    assert.match(sid, /^ses_/);
    const tools = await host.client.listTools();
    assert.deepEqual(tools.tools.map((t) => t.name), ['project_cli']);
    for (let i = 0; i < 2 * DAEMONS; i++) {
      const r = await host.client.callTool({ name: 'project_cli', arguments: create(`mcp ${i}`) });
      assert.equal(r.isError, false, JSON.stringify(r));
    }
    // Every daemon served the session (the others restored it from the database), and its calls share its thread.
    await waitFor(() => servedBy(daemons, sid) === DAEMONS, () => `daemons that served ${sid}: ${servedBy(daemons, sid)}`);
    assert.equal(await dbCount(db, 'SELECT count(*) AS n FROM messages WHERE thread_id = ? AND role = ?', [`mcp-${sid}`, 'tool']), 2 * DAEMONS);

    const session = { ...MCP_ACCEPT, authorization: `Bearer ${token}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    // Another user's token names the session on every daemon: not found, as an unknown id.
    const bob = { ...session, authorization: `Bearer ${await mintBearer('mcp-bob')}` };
    for (let i = 0; i < DAEMONS; i++) {
      const res = await fetch(mcpUrl(), { method: 'POST', headers: bob, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
      assert.equal(res.status, 404);
      await res.text();
    }
    // The SDK client's DELETE reaches one daemon: the session is gone on every daemon.
    await host.close();
    for (let i = 0; i < DAEMONS; i++) {
      const res = await fetch(mcpUrl(), { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list' }) });
      assert.equal(res.status, 404, 'a deleted session is not found on any daemon');
      await res.text();
    }
    assert.equal(await dbCount(db, 'SELECT count(*) AS n FROM mcp_sessions WHERE id = ?', [sid]), 0);
  });

  test('MCP 2025-11-25: a GET stream on one daemon ends when a DELETE reaches another', async () => {
    const token = await mintBearer('mcp-stream');
    const opened = await fetch(mcpUrl(), { method: 'POST', headers: { ...MCP_ACCEPT, authorization: `Bearer ${token}` }, body: JSON.stringify(MCP_INIT) });
    assert.equal(opened.status, 200);
    const sid = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const session = { authorization: `Bearer ${token}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const stream = await readSse(mcpUrl(), { ...session, accept: 'text/event-stream' });
    assert.equal(stream.status, 200);
    const deleted = await fetch(mcpUrl(), { method: 'DELETE', headers: session });
    assert.equal(deleted.status, 200);
    await deleted.text();
    // The balancer sent the GET and the DELETE to two daemons: the stream's daemon learns it from the database.
    // Two or three of them, as the rotation stood after the tests before (the balancer's health checks do not move it).
    assert.ok(servedBy(daemons, sid) >= 2, 'the session was opened on one daemon and restored on another');
    await stream.ended;
  });

  test('MCP 2025-11-25: the cap of 32 sessions per user holds across daemons, under a race', async () => {
    const headers = { ...MCP_ACCEPT, authorization: `Bearer ${await mintBearer('mcp-capped')}` };
    const answers = await Promise.all(
      Array.from({ length: 36 }, async () => {
        const res = await fetch(mcpUrl(), { method: 'POST', headers, body: JSON.stringify(MCP_INIT) });
        const body = await res.text();
        return res.status === 200 || res.status === 429 ? res.status : `${res.status} ${body}`;
      }),
    );
    assert.equal(answers.filter((s) => s === 200).length, 32, `statuses: ${answers.join(',')}\n${lb.output()}`);
    assert.equal(answers.filter((s) => s === 429).length, 4);
  });

  test('MCP 2025-11-25: a session ends at its token’s exp on every daemon, its stream too', async () => {
    const token = await mintBearer('mcp-short', {}, { expiresIn: '6s' });
    const headers = { ...MCP_ACCEPT, authorization: `Bearer ${token}` };
    const opened = await fetch(mcpUrl(), { method: 'POST', headers, body: JSON.stringify(MCP_INIT) });
    assert.equal(opened.status, 200);
    const sid = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const session = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
    const list = () => fetch(mcpUrl(), { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    const stream = await readSse(mcpUrl(), { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
    assert.equal(stream.status, 200, 'the GET stream opens before exp');
    await stream.ended;
    // The stream ended at exp. The token is refused from then on (401), and the session is gone on every daemon:
    // a fresh token of the same user does not bring it back (404).
    const late = await list();
    assert.equal(late.status, 401);
    await late.text();
    const fresh = { ...session, authorization: `Bearer ${await mintBearer('mcp-short')}` };
    for (let i = 0; i < DAEMONS; i++) {
      const res = await fetch(mcpUrl(), { method: 'POST', headers: fresh, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }) });
      assert.equal(res.status, 404);
      await res.text();
    }
  });

  test('MCP 2026-07-28: sessionless requests are served by any daemon', async () => {
    const host = await connectMcp('http-2026', { port: lb.port, token: await mintBearer('mcp-modern') });
    try {
      for (let i = 0; i < DAEMONS; i++) {
        const r = await host.client.callTool({ name: 'project_cli', arguments: create(`modern ${i}`), _meta: { 'toolgate/thread_id': 'modern' } });
        assert.equal(r.isError, false, JSON.stringify(r));
      }
      assert.equal(host.sessionId(), undefined);
    } finally {
      await host.close();
    }
  });

  test('OAuth: every daemon serves the same protected-resource metadata, and an issuer token works on all', async () => {
    const bodies: unknown[] = [];
    for (let i = 0; i < DAEMONS; i++) {
      const res = await fetch(`${lb.url}/.well-known/oauth-protected-resource/mcp`);
      assert.equal(res.status, 200);
      bodies.push(await res.json());
    }
    assert.deepEqual(bodies[0], { ...(bodies[0] as object), resource: `${lb.url}/mcp`, authorization_servers: [issuer.issuer] });
    assert.ok(bodies.every((b) => JSON.stringify(b) === JSON.stringify(bodies[0])));
    const challenge = await fetch(mcpUrl(), { method: 'POST', headers: MCP_ACCEPT, body: JSON.stringify(MCP_INIT) });
    assert.equal(challenge.status, 401);
    assert.match(challenge.headers.get('www-authenticate') ?? '', new RegExp(`resource_metadata="${lb.url}/.well-known/oauth-protected-resource/mcp"`));
    await challenge.text();
    const host = await connectMcp('http', { port: lb.port, token: await issuer.mint('oauth-lb', { aud: `${lb.url}/mcp` }) });
    try {
      for (let i = 0; i < DAEMONS; i++) {
        const r = await host.client.callTool({ name: 'project_cli', arguments: { module: 'memory', method: 'read', input: {} } });
        assert.equal(r.isError, false, JSON.stringify(r));
      }
    } finally {
      await host.close();
    }
  });

  test('AG-UI: a stream through the balancer resumes with Last-Event-ID on whichever daemon it reaches', async () => {
    const token = await mintBearer('agui-lb');
    const c = await viaLb();
    const s = await openSession(c, token);
    const invoke = (id: string) => c.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: 'agui', tool_call_id: id, args: create(id) });
    await invoke('g1');
    const headers = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
    const first = await readSse(`${lb.url}/threads/agui/events`, headers);
    assert.equal(first.status, 200);
    await invoke('g2');
    await first.until(2);
    assert.deepEqual(first.ids, ['1', '2']);
    first.close();
    // Reconnects land on the other daemons in turn: each resumes after the id it is given, nothing twice.
    for (const [i, last] of ['1', '2'].entries()) {
      await invoke(`g${3 + i}`);
      const again = await readSse(`${lb.url}/threads/agui/events`, { ...headers, 'last-event-id': last });
      const expected = Array.from({ length: 3 + i - Number(last) }, (_, k) => String(Number(last) + 1 + k));
      await again.until(expected.length);
      assert.deepEqual(again.ids, expected);
      again.close();
    }
  });

  test('call/get and call/cancel through the balancer reach a call running on another daemon', async () => {
    const token = await mintBearer('calls-lb');
    const caller = await viaLb();
    const sc = await openSession(caller, token);
    const lock = new pg.Client({ connectionString: db });
    await lock.connect();
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    let locked = true;
    try {
      const pending = caller.request<ToolResponse>('tool/invoke', { session_id: sc.session_id, thread_id: 'c', tool_call_id: 'held', args: create('held') });
      const other = await viaLb();
      const so = await openSession(other, token);
      assert.notEqual(
        daemons.findIndex((d) => d.stderr().includes(so.session_id)),
        daemons.findIndex((d) => d.stderr().includes(sc.session_id)),
        'the second connection is on another daemon',
      );
      await waitFor(
        async () => (await other.request<CallGetResult>('call/get', { session_id: so.session_id, thread_id: 'c', tool_call_id: 'held' }).catch(() => undefined))?.state === 'running',
        'the call to be seen running from another daemon',
      );
      const cancel = other.request<{ state: string; outcome?: ToolResponse }>('call/cancel', { session_id: so.session_id, thread_id: 'c', tool_call_id: 'held' });
      await lock.query('ROLLBACK');
      locked = false;
      const [answer, cancelled] = await Promise.all([pending, cancel]);
      assert.equal(cancelled.state, 'done');
      assert.deepEqual(cancelled.outcome, answer, 'call/cancel answers the call’s own outcome');
      const got = await other.request<CallGetResult>('call/get', { session_id: so.session_id, thread_id: 'c', tool_call_id: 'held' });
      assert.deepEqual(got.outcome, answer);
    } finally {
      if (locked) await lock.query('ROLLBACK');
      await lock.end();
    }
  });

  test('a daemon SIGKILLed under load: clients reconnect, nothing acknowledged is lost, retries return the stored outcome', async () => {
    const WORKERS = 6;
    const CALLS = 8;
    const token = await mintBearer('kill-lb');
    /** Every answer a worker got, by tool_call_id (the first one; a retry must match it). */
    const acknowledged = new Map<string, string>();
    let killed = false;
    let reconnects = 0;
    /**
     * A connection and a session through the balancer, retried as a host would: under load a fresh connection
     * can meet a daemon still dying (the balancer's health check has not caught up) or a pool that answers
     * "database unavailable: retry the request".
     */
    const connect = () =>
      waitFor(async () => {
        const c = await viaLb();
        return { c, s: await openSession(c, token) };
      }, 'a connection and a session through the balancer');
    const worker = async (w: number) => {
      let { c, s } = await connect();
      for (let i = 0; i < CALLS; i++) {
        const id = `kill-${w}-${i}`;
        const params = () => ({ session_id: s.session_id, thread_id: `kill-${w}`, tool_call_id: id, args: create(id) });
        for (;;) {
          try {
            const r = await c.request<ToolResponse>('tool/invoke', params());
            acknowledged.set(id, JSON.stringify(r));
            break;
          } catch {
            // The connection died with its daemon: reconnect through the balancer and retry the same call.
            assert.ok(killed, `call ${id} failed before any daemon was killed`);
            reconnects += 1;
            ({ c, s } = await connect());
          }
        }
        if (w === 0 && i === 2) {
          killed = true;
          // The daemon this worker is on (found by its session in the daemon's log): its next call fails for
          // sure. A fixed daemon could have no worker left: the balancer may pass over one whose health check
          // was slow under load, and then nothing reconnects.
          const victim = daemons.find((d) => d.stderr().includes(s.session_id));
          assert.ok(victim, 'the daemon of worker 0 is found by its session');
          victim.proc.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    assert.ok(reconnects > 0, 'some clients were on the killed daemon and reconnected');
    assert.equal(acknowledged.size, WORKERS * CALLS);
    // Nothing acknowledged is lost, nothing ran twice: one tool message and one event per call.
    const rows = await dbRows<{ tool_call_id: string; n: number }>(
      db,
      "SELECT tool_call_id, count(*) AS n FROM messages WHERE role = 'tool' AND tool_call_id LIKE 'kill-%' GROUP BY tool_call_id",
    );
    assert.equal(rows.length, WORKERS * CALLS);
    assert.ok(rows.every((r) => Number(r.n) === 1));
    assert.equal(await dbCount(db, "SELECT count(*) AS n FROM events WHERE title LIKE 'kill-%'"), WORKERS * CALLS);
    // Retrying every call on the surviving daemons returns its stored outcome, byte for byte.
    const c = await viaLb();
    const s = await openSession(c, token);
    for (const [id, first] of acknowledged) {
      const w = id.split('-')[1];
      const again = await c.request<ToolResponse>('tool/invoke', { session_id: s.session_id, thread_id: `kill-${w}`, tool_call_id: id, args: create(id) });
      assert.equal(JSON.stringify(again), first, `the retry of ${id}`);
    }
    assert.equal(await dbCount(db, "SELECT count(*) AS n FROM events WHERE title LIKE 'kill-%'"), WORKERS * CALLS, 'the retries ran nothing');
  });
});
