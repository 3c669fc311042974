/**
 * Contract §12 from outside: two daemons, each with its own data folder (its
 * own signing key), serving one PostgreSQL database at once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession, startHost, type Client, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { dbCount, dbRows } from '../helpers/db.js';
import { freshPgDatabase, needsPg } from '../helpers/pg.js';
type Executor = 'inprocess' | 'subprocess';
import type { ToolResponse } from '../../src/protocol/index.js';
import { waitFor } from '../helpers/wait-for.js';

const EXECUTORS: Executor[] = ['inprocess', 'subprocess'];


const create = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' },
});

async function twoDaemons(executor: Executor): Promise<{ a: Host; b: Host; db: string }> {
  const { url } = await freshPgDatabase();
  const args = ['--executor', executor];
  const [a, b] = await Promise.all([startHost({ transport: 'ws', db: url, args }), startHost({ transport: 'ws', db: url, args })]);
  return { a, b, db: url };
}

async function session(c: Client, user = 'alice'): Promise<string> {
  return (await openSession(c, await mintBearer(user))).session_id;
}

for (const executor of EXECUTORS) {
  describe(`two daemons on one PostgreSQL database (${executor})`, needsPg, () => {
    test('the same tool_call_id sent to both at once creates one event, and both answers are byte-identical', async () => {
      const { a, b, db } = await twoDaemons(executor);
      try {
        const [sa, sb] = await Promise.all([session(a), session(b)]);
        for (let round = 0; round < 3; round++) {
          const title = `Raced ${round}`;
          const params = (s: string) => ({ session_id: s, thread_id: 'race', tool_call_id: `call-${round}`, args: create(title) });
          const [ra, rb] = await Promise.all([
            a.request<ToolResponse>('tool/invoke', params(sa)),
            b.request<ToolResponse>('tool/invoke', params(sb)),
          ]);
          assert.equal(ra.status, 'success', JSON.stringify(ra));
          assert.equal(JSON.stringify(ra), JSON.stringify(rb), 'byte-identical answers');
          assert.equal(await dbCount(db, 'SELECT count(*) AS n FROM events WHERE title = ?', [title]), 1, 'one event');
          assert.equal(await dbCount(db, 'SELECT count(*) AS n FROM messages WHERE tool_call_id = ?', [`call-${round}`]), 1, 'one tool message');
        }
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });

    test('a WebSocket client subscribed through daemon A receives the tool/result of a call made through daemon B', async () => {
      const { a, b } = await twoDaemons(executor);
      try {
        const [sa, sb] = await Promise.all([session(a), session(b)]);
        await a.request('thread/subscribe', { session_id: sa, thread_id: 'shared' });
        // Calls through B, and one through another connection of A in between: the subscriber sees the thread's order.
        const otherA = await a.connect();
        const so = await session(otherA);
        const calls = ['one', 'two', 'three'];
        for (const [i, title] of calls.entries()) {
          const [via, s] = i === 1 ? [otherA, so] : [b, sb];
          await via.request('tool/invoke', { session_id: s, thread_id: 'shared', tool_call_id: `c${i}`, args: create(title) });
        }
        const seen = () =>
          a.wire.filter((e) => e.kind === 'notification' && e.method === 'tool/result').map((e) => e.payload as { tool_call_id: string; final: boolean; thread_id: string });
        // One more call through B is the barrier: a repeat of an earlier call would reach A before it.
        const barrier = async (id: string) => {
          await b.request('tool/invoke', { session_id: sb, thread_id: 'shared', tool_call_id: id, args: create(id) });
          await waitFor(() => seen().some((n) => n.tool_call_id === id), () => `A saw ${JSON.stringify(seen())}`);
        };
        await barrier('c3');
        assert.deepEqual(seen().map((n) => n.tool_call_id), ['c0', 'c1', 'c2', 'c3'], 'each call once, in the thread order');
        assert.ok(seen().every((n) => n.final && n.thread_id === 'shared'));
        // Another user's thread of the same id is not theirs to watch.
        const sc = await session(a, 'carol');
        await b.request('tool/invoke', { session_id: await session(b, 'carol'), thread_id: 'shared', tool_call_id: 'carol-1', args: create('carol') });
        // carol's thread is another thread: the barrier orders it only where a leak would put it, in alice's
        // thread (a thread keyed without its user), where it would come before c4.
        await barrier('c4');
        assert.ok(!seen().some((n) => n.tool_call_id === 'carol-1'), 'no other user leaks in');
        void sc;
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });

    test('an AG-UI stream on daemon A gets B’s and A’s calls in thread order; Last-Event-ID resumes it on daemon B', async () => {
      const { a, b } = await twoDaemons(executor);
      const token = await mintBearer('alice');
      const streams: SseIds[] = [];
      try {
        const [sa, sb] = await Promise.all([session(a), session(b)]);
        const invoke = (h: Host, s: string, id: string) => h.request<ToolResponse>('tool/invoke', { session_id: s, thread_id: 'agui', tool_call_id: id, args: create(id) });
        await invoke(b, sb, 'b1'); // the thread exists (a stream of an unknown thread is a 404)
        const onA = await sseIds(a.port!, 'agui', token, { replay: false });
        streams.push(onA);
        await invoke(b, sb, 'b2');
        await invoke(a, sa, 'a3');
        await invoke(b, sb, 'b4');
        await onA.until(3);
        assert.deepEqual(onA.ids, ['2', '3', '4'], 'one run per call, ids = thread_seq, in order');
        onA.close();
        // The front end reconnects through the other daemon with the last id it saw but one: the rest follows, nothing twice.
        const onB = await sseIds(b.port!, 'agui', token, { lastEventId: '2' });
        streams.push(onB);
        await onB.until(2);
        await invoke(a, sa, 'a5');
        await onB.until(3);
        // One more call is the barrier: a run sent twice would come before its run.
        await invoke(a, sa, 'a6');
        await onB.until(4);
        assert.deepEqual(onB.ids, ['3', '4', '5', '6']);
      } finally {
        for (const s of streams) s.close();
        await Promise.all([a.stop(), b.stop()]);
      }
    });

    test('SIGKILL of daemon A during a burst loses no acknowledged call, and daemon B keeps serving', async () => {
      const { a, b, db } = await twoDaemons(executor);
      try {
        const [sa, sb] = await Promise.all([session(a), session(b)]);
        const acked: string[] = [];
        const burstA = Array.from({ length: 24 }, (_, i) =>
          a
            .request<ToolResponse>('tool/invoke', { session_id: sa, thread_id: `burst-${i % 3}`, tool_call_id: `a-${i}`, args: create(`a-${i}`) })
            .then((r) => {
              if (r.status === 'success') acked.push(`a-${i}`);
              if (acked.length === 4) a.proc.kill('SIGKILL');
            }, () => {}),
        );
        const burstB = Array.from({ length: 24 }, (_, i) =>
          b.request<ToolResponse>('tool/invoke', { session_id: sb, thread_id: `burst-${i % 3}`, tool_call_id: `b-${i}`, args: create(`b-${i}`) }),
        );
        const answersB = await Promise.all(burstB);
        // Requests A never answered stay pending on the dead socket: stop waiting once A is gone.
        await Promise.race([Promise.allSettled(burstA), a.exited.then(() => new Promise((r) => setTimeout(r, 500)))]);
        await a.exited;
        assert.ok(acked.length >= 4, `A acknowledged ${acked.length} calls before it died`);
        assert.deepEqual(answersB.filter((r) => r.status !== 'success'), [], 'B answered every call of its burst with success');
        for (const id of acked) {
          assert.equal(await dbCount(db, 'SELECT count(*) AS n FROM messages WHERE tool_call_id = ?', [id]), 1, `${id} stored once`);
          assert.equal(await dbCount(db, 'SELECT count(*) AS n FROM events WHERE title = ?', [id]), 1, `${id} ran once`);
        }
        // Nothing half-written: every event of the burst belongs to a recorded call.
        const events = await dbRows<{ title: string }>(db, "SELECT title FROM events WHERE title LIKE 'a-%' OR title LIKE 'b-%'");
        const recorded = new Set((await dbRows<{ tool_call_id: string }>(db, 'SELECT tool_call_id FROM tool_calls')).map((r) => r.tool_call_id));
        for (const e of events) assert.ok(recorded.has(e.title), `event ${e.title} has its call record`);
        // B still serves, and a retry of an acknowledged call through B is answered from the store.
        const after = await b.request<ToolResponse>('tool/invoke', { session_id: sb, thread_id: 'after', tool_call_id: 'after-1', args: create('after') });
        assert.equal(after.status, 'success');
        const retried = await b.request<ToolResponse>('tool/invoke', {
          session_id: sb, thread_id: `burst-${Number(acked[0]!.slice(2)) % 3}`, tool_call_id: acked[0], args: create(acked[0]!),
        });
        assert.equal(retried.status, 'success');
        assert.equal(await dbCount(db, 'SELECT count(*) AS n FROM events WHERE title = ?', [acked[0]]), 1, 'the retry did not run again');
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });
  });
}

describe('message timestamps across two daemons', needsPg, () => {
  test('two daemons writing one thread at once: created_at never decreases along the thread order', async () => {
    const { a, b, db } = await twoDaemons('inprocess');
    try {
      const [sa, sb] = await Promise.all([session(a), session(b)]);
      // Several connections per daemon, so each daemon has calls in flight on several pooled connections at once.
      const clients = [a, b, await a.connect(), await b.connect(), await a.connect(), await b.connect()];
      const sessions = await Promise.all(clients.map((c, i) => (i < 2 ? [sa, sb][i]! : session(c))));
      const CALLS = 20;
      await Promise.all(
        clients.map(async (c, i) => {
          for (let n = 0; n < CALLS; n++) {
            const id = `c${i}-${n}`;
            const res = await c.request<ToolResponse>('tool/invoke', { session_id: sessions[i], thread_id: 'clock', tool_call_id: id, args: create(id) });
            assert.equal(res.status, 'success', JSON.stringify(res));
          }
        }),
      );
      const history = await a.request<{ messages: { id: string; created_at: string }[] }>('history/get', { session_id: sa, thread_id: 'clock', limit: 500 });
      assert.equal(history.messages.length, clients.length * CALLS);
      const seqs = new Map((await dbRows<{ id: string; thread_seq: number }>(db, 'SELECT id, thread_seq FROM messages')).map((r) => [r.id, r.thread_seq]));
      const order = history.messages.map((m) => seqs.get(m.id)!);
      assert.deepEqual(order, [...order].sort((x, y) => x - y), 'history/get is in thread order');
      const backwards = history.messages.flatMap((m, i) => (i > 0 && m.created_at < history.messages[i - 1]!.created_at ? [`${history.messages[i - 1]!.created_at} → ${m.created_at} at #${i}`] : []));
      assert.deepEqual(backwards, [], 'created_at never decreases along the thread order');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

interface SseIds {
  /** The `id:` of every frame that carries one (RUN_FINISHED: one per stored message). */
  ids: string[];
  until(n: number): Promise<void>;
  close(): void;
}

/** A bare SSE reader of a thread's AG-UI stream that keeps the event ids. */
async function sseIds(port: number, thread: string, token: string, opts: { replay?: boolean; lastEventId?: string }): Promise<SseIds> {
  const abort = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (opts.lastEventId !== undefined) headers['last-event-id'] = opts.lastEventId;
  const res = await fetch(`http://127.0.0.1:${port}/threads/${thread}/events${opts.replay === false ? '?replay=0' : ''}`, { headers, signal: abort.signal });
  assert.equal(res.status, 200);
  const ids: string[] = [];
  let buffer = '';
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        const id = /^id: ?(.*)$/m.exec(frame)?.[1];
        if (id !== undefined) ids.push(id);
      }
    }
  })().catch(() => {});
  return {
    ids,
    until: async (n) => void (await waitFor(() => ids.length >= n, () => `ids ${ids.join(',')}`)),
    close: () => {
      abort.abort();
      void reading;
    },
  };
}
