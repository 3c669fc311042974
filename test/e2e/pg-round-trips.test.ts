/**
 * How many times one call waits on PostgreSQL, counted from outside: the
 * daemon (in-process executor) reaches its database through a wire proxy
 * (test/helpers/pg-wire-proxy.ts) that counts every Sync and simple Query
 * message — one round trip each. After warm-up calls (pool connections open,
 * statements prepared), one `calendar.create` takes one (its unit is one
 * statement), one `calendar.read` and a replayed duplicate at most 3, and
 * the call is stored whole; so
 * does one call of every action of the action table (each after warm-up
 * calls of its own), its success and its refusals alike — but two whose
 * answer is their write's own result (`most`), and what each stored is
 * checked.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { openSession, startHost, type Host } from '../helpers/host.js';
import { mintBearer } from '../helpers/tokens.js';
import { dbCount } from '../helpers/db.js';
import { freshPgDatabase, needsPg, type FreshDatabase } from '../helpers/pg.js';
import { startPgWireProxy, type PgWireProxy } from '../helpers/pg-wire-proxy.js';
import type { ToolResponse } from '../../src/protocol/index.js';
import { ACTION_NAMES, type ActionName } from '../../src/protocol/action-table.js';
import { NOTIFY_STATEMENT } from '../../src/store/pg/notifier.js';
import { RUNNING_ROW_STATEMENTS } from '../../src/store/pg/call-states.js';
import { MARK_STATEMENTS } from '../../src/store/pg/call-marks.js';

/**
 * Not the call's own waits: the fan-out's NOTIFY after the commit, and the statements that share a call
 * still running after 100 ms with other daemons (its mark and its `calls` row), which run beside the call
 * on other connections — a loaded machine makes any call that slow.
 */
const BESIDE_THE_CALL = new Set([NOTIFY_STATEMENT, ...RUNNING_ROW_STATEMENTS, ...MARK_STATEMENTS]);

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
  let bobSession: string;
  // The fan-out's NOTIFY goes after the commit, on a connection of its own (not the call's wait: `ignore`); a thread nobody watches has no fan-out reads.
  const invoke = (toolCallId: string, args: unknown) =>
    host.request<ToolResponse>('tool/invoke', { session_id: session, thread_id: 'rt', tool_call_id: toolCallId, args });

  /** The round trips of one call, after the calls before it have settled. */
  async function counted(t: TestContext, toolCallId: string, args: unknown): Promise<{ res: ToolResponse; trips: number }> {
    proxy.reset();
    const res = await invoke(toolCallId, args);
    const trips = proxy.roundTrips();
    t.diagnostic(`${toolCallId}: ${trips} round trips`);
    // A NOTIFY in the call's own transaction would serialise every daemon's commits (src/store/pg/notifier.ts).
    assert.deepEqual(proxy.statements().filter((s) => /pg_notify/i.test(s)), [], 'the call itself sends no NOTIFY');
    return { res, trips };
  }

  before(async () => {
    db = await freshPgDatabase();
    proxy = await startPgWireProxy(db.url, { ignore: (text) => BESIDE_THE_CALL.has(text) });
    host = await startHost({ transport: 'ws', db: proxy.url, args: ['--executor', 'inprocess'] });
    session = (await openSession(host, await mintBearer('alice', { name: 'Alice', phone: '+15550101' }))).session_id;
    bobSession = (await openSession(host, await mintBearer('bob', { name: 'Bob', phone: '+15550102' }))).session_id;
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

  // The issue's aim, reached: a new call's unit is one statement — no read of the stored answer first (Tx.assumeNewCall), no BEGIN, no COMMIT.
  test('calendar.create: one round trip, stored whole', async (t) => {
    const { res, trips } = await counted(t, 'rt-create', create('Counted'));
    assert.equal(res.status, 'success', JSON.stringify(res));
    assert.equal(trips, 1, `calendar.create took ${trips} round trips`);
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

  // ---------------------------------------------------------------- every action

  let seq = 0;
  /** An uncounted call whose success the case needs; its `data`. */
  async function setUp(user: 'alice' | 'bob', module: string, method: string, input: unknown): Promise<any> {
    const res = await host.request<ToolResponse>('tool/invoke', {
      session_id: user === 'alice' ? session : bobSession, thread_id: `rt-${user}`, tool_call_id: `setup-${++seq}`, args: { module, method, input },
    });
    const body = JSON.parse(res.content[0]!.text) as { status: string; data?: unknown };
    assert.equal(body.status, 'success', res.content[0]!.text);
    return body.data;
  }
  const newEvent = async (): Promise<string> => ((await setUp('alice', 'calendar', 'create', create('shared').input)) as { event: { id: string } }).event.id;
  const inviteForBob = async (): Promise<string> =>
    ((await setUp('alice', 'calendar', 'share', { event_id: await newEvent(), user_ids: ['bob'] })) as { invites: Array<{ invite_id: string }> }).invites[0]!.invite_id;

  /** One call of an action: who makes it and its input (made ready by uncounted calls), and the status it must get. */
  interface Case {
    user?: 'alice' | 'bob';
    input: () => Promise<unknown>;
    status?: ToolResponse['status'];
    /** What the call must have stored, checked from outside (its answer's `data`, its input). */
    stored?: (data: any, input: any) => Promise<void>;
    /** An action whose answer comes from its write's own result: more round trips, and why. */
    most?: { trips: number; why: string };
  }
  /** The event as a read returns it now: a held write's answer must be what the database holds. */
  const eventNow = async (id: string) => ((await setUp('alice', 'calendar', 'read', { mode: 'event', event_id: id })) as { items: unknown[] }).items[0];
  const inviteIs = (status: string) => async (data: any) =>
    assert.equal(await dbCount(db.url, 'SELECT count(*) AS n FROM invites WHERE id = ? AND status = ?', [data.invite.invite_id, status]), 1, `stored ${status}`);
  const CASES: Record<ActionName, Array<[string, Case]>> = {
    'calendar.read': [
      ['range', { input: async () => read.input }],
      ['one event', { input: async () => ({ mode: 'event', event_id: await newEvent() }) }],
    ],
    'calendar.create': [
      ['one event', { input: async () => create('one').input }],
      ['a batch of 3', { input: async () => ({ items: [create('b1').input, create('b2').input, create('b3').input] }) }],
    ],
    'calendar.update': [
      ['the title', {
        input: async () => ({ event_id: await newEvent(), title: 'Renamed' }),
        stored: async (data, input) => assert.deepEqual(data.event, await eventNow(input.event_id), 'the answer is the stored row'),
      }],
      ['not found', { input: async () => ({ event_id: 'evt_missing', title: 'x' }), status: 'failure' }],
    ],
    'calendar.delete': [['own event', {
      input: async () => ({ event_id: await newEvent() }),
      stored: async (_, input) => assert.equal(await dbCount(db.url, 'SELECT count(*) AS n FROM events WHERE id = ?', [input.event_id]), 0, 'deleted'),
    }]],
    'calendar.share': [['with bob', {
      input: async () => ({ event_id: await newEvent(), user_ids: ['bob'] }),
      most: { trips: 10, why: 'the invite upsert answers with the invite it found or made' },
    }]],
    'calendar.accept_invite': [['by bob', { user: 'bob', input: async () => ({ invite_id: await inviteForBob() }), stored: inviteIs('accepted') }]],
    'calendar.reject_invite': [['by bob', { user: 'bob', input: async () => ({ invite_id: await inviteForBob() }), stored: inviteIs('rejected') }]],
    'contacts.read': [
      ['known people', { input: async () => ({}) }],
      ['by query', { input: async () => ({ query: 'Bo' }) }],
      ['by phone', { input: async () => ({ phone: '+15550102' }) }],
    ],
    'memory.update': [['a key', { input: async () => ({ key: `k${++seq}`, content: 'remember' }) }]],
    'memory.forget': [['a key', {
      input: async () => {
        const key = `f${++seq}`;
        await setUp('alice', 'memory', 'update', { key, content: 'x' });
        return { key };
      },
      most: { trips: 8, why: 'the delete answers whether the memory was there (NOT_FOUND), under its row lock' },
    }]],
    'memory.read': [
      ['all', { input: async () => ({}) }],
      ['one key', { input: async () => ({ key: 'k1' }) }],
    ],
  };

  test('every action of the action table has a counted case', () => {
    assert.deepEqual(Object.keys(CASES).sort(), [...ACTION_NAMES]);
  });

  for (const name of ACTION_NAMES) {
    const [module, method] = name.split('.') as [string, string];
    for (const [label, c] of CASES[name]) {
      test(`${name} (${label}): at most ${c.most?.trips ?? MAX_ROUND_TRIPS} round trips`, async (t) => {
        const user = c.user ?? 'alice';
        const call = async (id: string, input: unknown) =>
          host.request<ToolResponse>('tool/invoke', {
            session_id: user === 'alice' ? session : bobSession, thread_id: `rt-${user}`, tool_call_id: id, args: { module, method, input },
          });
        // Warm-up: the pooled connections have run this action's statements.
        for (let i = 0; i < 3; i++) await call(`warm-${name}-${label}-${i}`, await c.input());
        const input = await c.input();
        const id = `rt-${name}-${label}`;
        proxy.reset();
        const res = await call(id, input);
        const trips = proxy.roundTrips();
        t.diagnostic(`${name} (${label}): ${trips} round trips`);
        assert.deepEqual(proxy.statements().filter((s) => /pg_notify/i.test(s)), [], 'the call itself sends no NOTIFY');
        assert.equal(res.status, c.status ?? 'success', res.content[0]!.text);
        const most = c.most?.trips ?? MAX_ROUND_TRIPS;
        assert.ok(trips <= most, `${name} (${label}) took ${trips} round trips (at most ${most}${c.most ? `: ${c.most.why}` : ''})`);
        await c.stored?.((JSON.parse(res.content[0]!.text) as { data?: unknown }).data, input);
        assert.equal(await dbCount(db.url, 'SELECT count(*) AS n FROM messages WHERE tool_call_id = ?', [id]), 1, 'its tool message');
        assert.equal(await dbCount(db.url, 'SELECT count(*) AS n FROM tool_calls WHERE tool_call_id = ?', [id]), 1, 'its call record');
      });
    }
  }
});
