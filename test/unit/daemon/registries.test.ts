import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionRegistry } from '../../../src/sessions/sessions.js';
import { SubscriptionRegistry } from '../../../src/threads/subscriptions.js';
import { ThreadEventBus } from '../../../src/threads/thread-events.js';
import type { Peer } from '../../../src/runtime/peer.js';
import { DaemonError } from '../../../src/runtime/errors.js';

const fields = (connectionId: string) => ({ userId: 'u', connectionId, source: 'session' as const, jobId: null, enabledSkills: [], allowedActions: [] });
const conn = (id: string): Peer => ({ id, trusted: false, notify: () => {} });
/** The daemon says OVERLOADED; the rpc layer's table makes it -32003 (test/unit/rpc/rpc-errors.test.ts). */
const overloaded = (e: unknown) => e instanceof DaemonError && e.code === 'OVERLOADED';

test('a closed connection’s sessions are freed and its cap starts over', () => {
  const r = new SessionRegistry(2);
  const a = r.open(fields('c1'));
  r.open(fields('c1'));
  assert.throws(() => r.open(fields('c1')), overloaded);
  r.closeConnection('c1');
  assert.equal(r.countFor('c1'), 0);
  assert.equal(r.get(a.id, 'c1'), undefined);
  r.open(fields('c1'));
  assert.equal(r.countFor('c1'), 1);
});

test('subscriptions count per connection and are freed with it', () => {
  const bus = new ThreadEventBus();
  const r = new SubscriptionRegistry(bus, 2);
  r.subscribe('alice', 't1', conn('c1'), 's1');
  r.subscribe('alice', 't2', conn('c1'), 's1');
  assert.throws(() => r.subscribe('alice', 't3', conn('c1'), 's1'), overloaded);
  // Threads are per user: bob's t1 is another thread, which alice's subscription never reaches.
  assert.equal(bus.count('bob', 't1'), 0);
  assert.equal(bus.count('alice', 't1'), 1);
  r.dropConnection('c1');
  r.subscribe('alice', 't3', conn('c1'), 's1');
  r.subscribe('alice', 't4', conn('c1'), 's1');
});

test('a reserved place counts at once: concurrent opens cannot pass a cap together, and a released one frees it', () => {
  const r = new SessionRegistry(2);
  const a = r.reserve('c1');
  const b = r.reserve('c1');
  assert.throws(() => r.reserve('c1'), overloaded, 'two places held, none opened yet');
  a.release();
  a.release(); // a second release does nothing
  const c = r.reserve('c1');
  b.open({ userId: 'u', source: 'session', jobId: null, enabledSkills: [], allowedActions: [] });
  c.open({ userId: 'u', source: 'session', jobId: null, enabledSkills: [], allowedActions: [] });
  assert.equal(r.countFor('c1'), 2);
  // Per-user pools hold across connections.
  const pool = { name: 'MCP sessions', userId: 'mia', max: 1 };
  r.reserve('m1', pool);
  assert.throws(() => r.reserve('m2', pool), overloaded);
  r.reserve('m3', { ...pool, userId: 'bob' });
});

test('a session ends at its expiresAt: its id then says expired, its end callbacks run, its place is free', async () => {
  const r = new SessionRegistry(1);
  const expired: string[] = [];
  r.onExpire((s) => expired.push(s.id));
  const s = r.reserve('c1').open({ userId: 'u', source: 'session', jobId: null, enabledSkills: [], allowedActions: [], expiresAt: Date.now() + 30 });
  let ended = false;
  r.onEnd(s.id, () => (ended = true));
  assert.equal(r.require(s.id, 'c1'), s);
  assert.throws(() => r.require(s.id, 'c2'), (e: unknown) => e instanceof DaemonError && e.message === 'unknown session');
  // The registry's timers are unref'd (they never keep a daemon alive); this one keeps the test's loop up meanwhile.
  const alive = setTimeout(() => {}, 10_000);
  await new Promise<void>((resolve) => r.onExpire(() => resolve()));
  clearTimeout(alive);
  assert.ok(ended);
  assert.deepEqual(expired, [s.id]);
  assert.throws(() => r.require(s.id, 'c1'), (e: unknown) => e instanceof DaemonError && e.code === 'UNAUTHORIZED' && /expired.*open a new session/.test(e.message));
  assert.equal(r.countFor('c1'), 0);
  r.reserve('c1');
});

test('extend moves the end later; a lookup past expiresAt never answers, even before the timer ran', () => {
  const r = new SessionRegistry();
  const s = r.open({ userId: 'u', connectionId: 'c', source: 'session', jobId: null, enabledSkills: [], allowedActions: [], expiresAt: Date.now() + 60_000 });
  r.extend(s.id, Date.now() + 120_000);
  assert.ok(s.expiresAt! > Date.now() + 60_000);
  s.expiresAt = Date.now() - 1;
  assert.equal(r.get(s.id, 'c'), undefined);
  r.closeConnection('c');
});
