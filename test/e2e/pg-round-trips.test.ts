/**
 * How many times one call waits on PostgreSQL, counted from outside: the
 * daemon (in-process executor) reaches its database through a wire proxy
 * (test/helpers/pg-wire-proxy.ts) that counts every Sync and simple Query
 * message — one round trip each. After warm-up calls (pool connections open,
 * statements prepared), one `calendar.create`, one `calendar.read`, and a
 * replayed duplicate each take at most 3, and the call is stored whole.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { openSession, startHost, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { dbCount } from '../helpers/db.js';
import { freshPgDatabase, needsPg, type FreshDatabase } from '../helpers/pg.js';
import { startPgWireProxy, type PgWireProxy } from '../helpers/pg-wire-proxy.js';
import type { ToolResponse } from '../../src/protocol/index.js';

const MAX_ROUND_TRIPS = 3;

const create = (title: string) => ({
  module: 'calendar',
  method: 'create',
  input: { title, start_at: '2026-10-01T09:00:00Z', end_at: '2026-10-01T10:00:00Z' },
});
const read = { module: 'calendar', method: 'read', input: { mode: 'range', start_at: '2026-10-01T00:00:00Z', end_at: '2026-10-02T00:00:00Z' } };

describe('round trips to PostgreSQL per call (in-process executor)', needsPg, () => {
  let db: FreshDatabase;
  let proxy: PgWireProxy;
  let host: Host;
  let session: string;
  // The LISTEN connection's own traffic is the server's, never counted; a thread nobody watches has no fan-out reads.
  const invoke = (toolCallId: string, args: unknown) =>
    host.request<ToolResponse>('tool/invoke', { session_id: session, thread_id: 'rt', tool_call_id: toolCallId, args });

  /** The round trips of one call, after the calls before it have settled. */
  async function counted(t: TestContext, toolCallId: string, args: unknown): Promise<{ res: ToolResponse; trips: number }> {
    proxy.reset();
    const res = await invoke(toolCallId, args);
    const trips = proxy.roundTrips();
    t.diagnostic(`${toolCallId}: ${trips} round trips`);
    return { res, trips };
  }

  before(async () => {
    db = await freshPgDatabase();
    proxy = await startPgWireProxy(db.url);
    host = await startHost({ transport: 'ws', db: proxy.url, args: ['--executor', 'inprocess'] });
    session = (await openSession(host, await mintBearer('alice'))).session_id;
    // Warm-up: every pooled connection the calls may use has run each statement once.
    for (let i = 0; i < 12; i++) {
      assert.equal((await invoke(`warm-c${i}`, create(`warm ${i}`))).status, 'success');
      assert.equal((await invoke(`warm-r${i}`, read)).status, 'success');
    }
  });
  after(async () => {
    await host?.stop();
    await proxy?.stop();
  });

  test(`calendar.create: at most ${MAX_ROUND_TRIPS} round trips, stored whole`, async (t) => {
    const { res, trips } = await counted(t, 'rt-create', create('Counted'));
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.ok(trips <= MAX_ROUND_TRIPS, `calendar.create took ${trips} round trips (at most ${MAX_ROUND_TRIPS})`);
    assert.equal(await dbCount(db.url, 'SELECT count(*) AS n FROM events WHERE title = ?', ['Counted']), 1, 'the event');
    assert.equal(await dbCount(db.url, "SELECT count(*) AS n FROM tool_calls WHERE tool_call_id = 'rt-create'"), 1, 'the call record');
    assert.equal(await dbCount(db.url, "SELECT count(*) AS n FROM credential_audit WHERE tool_call_id = 'rt-create'"), 1, 'the audit row');
    assert.equal(await dbCount(db.url, "SELECT count(*) AS n FROM messages WHERE tool_call_id = 'rt-create'"), 1, 'the tool message');
  });

  test(`calendar.read: at most ${MAX_ROUND_TRIPS} round trips`, async (t) => {
    const { res, trips } = await counted(t, 'rt-read', read);
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.match(res.content[0]!.text, /Counted/, 'the read sees the event');
    assert.ok(trips <= MAX_ROUND_TRIPS, `calendar.read took ${trips} round trips (at most ${MAX_ROUND_TRIPS})`);
  });

  test(`a replayed duplicate: at most ${MAX_ROUND_TRIPS} round trips, the same answer, nothing new stored`, async (t) => {
    const first = await invoke('rt-dup', create('Once'));
    const { res, trips } = await counted(t, 'rt-dup', create('Once'));
    assert.equal(JSON.stringify(res), JSON.stringify(first), 'answered from the store');
    assert.ok(trips <= MAX_ROUND_TRIPS, `the replay took ${trips} round trips (at most ${MAX_ROUND_TRIPS})`);
    assert.equal(await dbCount(db.url, 'SELECT count(*) AS n FROM events WHERE title = ?', ['Once']), 1, 'one event');
  });
});
