/**
 * The action set through the daemon: a two-user sharing flow, batches with
 * per-item notifications, idempotent retries and data scope.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dbCount } from '../../helpers/db.js';
import { openSession, TRANSPORTS } from '../../helpers/host.js';
import { startInProcess, type InProcessHost } from '../../helpers/in-process.js';
import { mintBearer } from '../../helpers/tokens.js';
import type { ToolResponse } from '../../../src/protocol/index.js';

for (const transport of TRANSPORTS) describe(`over ${transport}`, () => {
  let host: InProcessHost;
  const sessions: Record<string, string> = {};

  interface Projection {
    status: string;
    data?: any;
    error?: any;
  }

  let callSeq = 0;
  async function call(user: string, module: string, method: string, input: Record<string, unknown>, thread = `${user}-thread`) {
    const r = await host.request<ToolResponse>('tool/invoke', {
      session_id: sessions[user], thread_id: thread, tool_call_id: `call-${++callSeq}`, args: { module, method, input },
    });
    return { response: r, body: JSON.parse(r.content[0]!.text) as Projection };
  }

  before(async () => {
    host = await startInProcess({ transport });
    for (const [user, phone, name] of [['alice', '+15550001', 'Alice'], ['bob', '+15550002', 'Bob'], ['carol', '+15550003', 'Carol']] as const) {
      sessions[user] = (await openSession(host, await mintBearer(user, { phone, name }))).session_id;
    }
  });
  after(async () => {
    await host.stop();
  });

  test('two users: alice creates, finds bob by phone, shares; bob accepts and sees it; carol sees nothing', async () => {
    const created = await call('alice', 'calendar', 'create', {
      title: 'Launch review', start_at: '2026-05-04T09:00:00+02:00', end_at: '2026-05-04T10:00:00+02:00', description: 'Q2',
    });
    assert.equal(created.body.status, 'success');
    const eventId = created.body.data.event.id as string;

    const found = await call('alice', 'contacts', 'read', { phone: '+15550002' });
    assert.deepEqual(found.body.data, { items: [{ user_id: 'bob', name: 'Bob', phone: '+15550002' }], count: 1 });

    const before = await call('alice', 'contacts', 'read', {});
    assert.equal(before.body.data.count, 0, 'bob is not a contact before anything was shared');

    const shared = await call('alice', 'calendar', 'share', { event_id: eventId, user_ids: ['bob'] });
    assert.equal(shared.body.status, 'success');
    const invite = shared.body.data.invites[0];
    assert.deepEqual({ user_id: invite.user_id, status: invite.status }, { user_id: 'bob', status: 'pending' });

    const pendingRead = await call('bob', 'calendar', 'read', { mode: 'event', event_id: eventId });
    assert.equal(pendingRead.body.error.code, 'NOT_FOUND', 'a pending invite does not show the event yet');

    const accepted = await call('bob', 'calendar', 'accept_invite', { invite_id: invite.invite_id });
    assert.deepEqual(accepted.body.data, { invite: { invite_id: invite.invite_id, event_id: eventId, status: 'accepted' } });

    const bobDay = await call('bob', 'calendar', 'read', { mode: 'day', date: '2026-05-04', timezone: 'Europe/Berlin' });
    assert.deepEqual(bobDay.body.data.items.map((e: { id: string }) => e.id), [eventId]);
    const bobContacts = await call('bob', 'contacts', 'read', { query: 'ali' });
    assert.deepEqual(bobContacts.body.data.items.map((c: { user_id: string }) => c.user_id), ['alice']);

    const bobUpdate = await call('bob', 'calendar', 'update', { event_id: eventId, title: 'Mine now' });
    assert.equal(bobUpdate.body.error.code, 'FORBIDDEN');
    const bobShare = await call('bob', 'calendar', 'share', { event_id: eventId, user_ids: ['carol'] });
    assert.equal(bobShare.body.error.code, 'FORBIDDEN');

    // carol: the event, its invite and alice's contacts are invisible — NOT_FOUND, never FORBIDDEN.
    for (const [module, method, input] of [
      ['calendar', 'read', { mode: 'event', event_id: eventId }],
      ['calendar', 'update', { event_id: eventId, title: 'x' }],
      ['calendar', 'delete', { event_id: eventId }],
      ['calendar', 'share', { event_id: eventId, user_ids: ['bob'] }],
      ['calendar', 'accept_invite', { invite_id: invite.invite_id }],
      ['calendar', 'reject_invite', { invite_id: invite.invite_id }],
    ] as const) {
      const r = await call('carol', module, method, input);
      assert.equal(r.body.error.code, 'NOT_FOUND', `${module}.${method}`);
      assert.ok(!r.response.content[0]!.text.includes('Launch review'));
    }
    const carolDay = await call('carol', 'calendar', 'read', { mode: 'range', start_at: '2026-05-01T00:00:00Z', end_at: '2026-06-01T00:00:00Z' });
    assert.equal(carolDay.body.data.count, 0);
    const carolContacts = await call('carol', 'contacts', 'read', {});
    assert.equal(carolContacts.body.data.count, 0);

    const updated = await call('alice', 'calendar', 'update', { event_id: eventId, location: 'Room 7' });
    assert.equal(updated.body.data.event.location, 'Room 7');
    assert.equal(updated.body.data.event.title, 'Launch review');
    const deleted = await call('alice', 'calendar', 'delete', { event_id: eventId });
    assert.deepEqual(deleted.body.data, { event_id: eventId, deleted: true });
    const gone = await call('bob', 'calendar', 'read', { mode: 'event', event_id: eventId });
    assert.equal(gone.body.error.code, 'NOT_FOUND');
  });

  test('memory: upsert by key, read, forget — per user', async () => {
    await call('alice', 'memory', 'update', { key: 'tea', content: 'green' });
    const upd = await call('alice', 'memory', 'update', { key: 'tea', content: 'oolong' });
    assert.equal(upd.body.data.memory.content, 'oolong');
    const read = await call('alice', 'memory', 'read', {});
    assert.deepEqual(read.body.data.items.map((m: { key: string; content: string }) => [m.key, m.content]), [['tea', 'oolong']]);
    const bobRead = await call('bob', 'memory', 'read', { key: 'tea' });
    assert.equal(bobRead.body.data.count, 0);
    const bobForget = await call('bob', 'memory', 'forget', { key: 'tea' });
    assert.equal(bobForget.body.error.code, 'NOT_FOUND');
    const forgot = await call('alice', 'memory', 'forget', { key: 'tea' });
    assert.deepEqual(forgot.body.data, { key: 'tea', forgotten: true });
  });

  test('a batch with one bad item streams one partial per item, ends partial, stores the good ones', async () => {
    const items = [
      { title: 'A', start_at: '2026-06-01T09:00:00Z', end_at: '2026-06-01T10:00:00Z' },
      { title: 'B', start_at: '2026-06-01T11:00:00Z', end_at: '2026-06-01T10:00:00Z' },
      { title: 'C', start_at: '2026-06-02T09:00:00+09:00', end_at: '2026-06-02T10:00:00+09:00' },
    ];
    const mark = host.wire.length;
    const r = await call('alice', 'calendar', 'create', { items }, 'batch-thread');
    const wire = host.wire.slice(mark);
    assert.deepEqual(wire.map((e) => e.kind), ['notification', 'notification', 'notification', 'notification', 'response']);
    const notes = wire.slice(0, 4).map((e) => e.payload as { status: string; final: boolean; result?: { data: { index: number; ok: boolean } } });
    assert.deepEqual(notes.map((n) => [n.status, n.final]), [['partial', false], ['partial', false], ['partial', false], ['partial', true]]);
    assert.deepEqual(notes.slice(0, 3).map((n) => [n.result!.data.index, n.result!.data.ok]), [[0, true], [1, false], [2, true]]);
    assert.equal(r.response.status, 'partial');
    assert.equal(r.body.status, 'partial');
    assert.equal(r.body.data.created, 2);
    assert.equal(r.body.data.failed, 1);
    const day = await call('alice', 'calendar', 'read', { mode: 'range', start_at: '2026-06-01T00:00:00Z', end_at: '2026-06-03T00:00:00Z' });
    assert.deepEqual(day.body.data.items.map((e: { title: string }) => e.title), ['A', 'C']);

    const allBad = await call('alice', 'calendar', 'create', { items: [{ title: '' }, { nope: 1 }] }, 'batch-thread');
    assert.equal(allBad.response.status, 'failure');
    assert.equal(allBad.body.error.code, 'INVALID_ACTION_INPUT');

    const tooMany = Array.from({ length: 51 }, (_, i) => ({ title: `E${i}`, start_at: '2026-07-01T09:00:00Z', end_at: '2026-07-01T10:00:00Z' }));
    const m2 = host.wire.length;
    const over = await call('alice', 'calendar', 'create', { items: tooMany }, 'batch-thread');
    assert.equal(over.body.error.code, 'INVALID_ACTION_INPUT');
    assert.equal(host.wire.slice(m2).filter((e) => e.kind === 'notification').length, 1, 'no per-item notifications: nothing ran');
    const july = await call('alice', 'calendar', 'read', { mode: 'day', date: '2026-07-01' });
    assert.equal(july.body.data.count, 0);
  });

  test('re-sending a tool call id: same args replay without running; other args fail cleanly', async () => {
    const args = { module: 'calendar', method: 'create', input: { title: 'Once', start_at: '2026-08-01T09:00:00Z', end_at: '2026-08-01T10:00:00Z' } };
    const send = (a: unknown) => host.request<ToolResponse>('tool/invoke', { session_id: sessions.alice, thread_id: 'idem', tool_call_id: 'same-id', args: a });
    const first = await send(args);
    const mark = host.wire.length;
    const second = await send({ ...args, input: { end_at: args.input.end_at, start_at: args.input.start_at, title: 'Once' } });
    assert.deepEqual(host.wire.slice(mark).map((e) => e.kind), ['notification', 'response']);
    assert.equal(second.content[0]!.text, first.content[0]!.text);
    const other = await send({ ...args, input: { ...args.input, title: 'Twice' } });
    assert.equal(other.status, 'failure');
    assert.equal((JSON.parse(other.content[0]!.text) as Projection).error.code, 'DUPLICATE_TOOL_CALL_ID');

    assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM events WHERE title IN ('Once', 'Twice')"), 1);
    assert.equal(await dbCount(host.dbPath, "SELECT count(*) AS n FROM messages WHERE thread_id = 'idem'"), 1);
  });
});
