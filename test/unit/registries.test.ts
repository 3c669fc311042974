import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionRegistry } from '../../src/daemon/sessions.js';
import { SubscriptionRegistry } from '../../src/daemon/subscriptions.js';
import { ThreadEventBus } from '../../src/daemon/thread-events.js';
import type { Connection } from '../../src/daemon/daemon.js';

const fields = (connectionId: string) => ({ userId: 'u', connectionId, source: 'session' as const, jobId: null, enabledSkills: [], allowedActions: [] });
const conn = (id: string): Connection => ({ id, transport: 'ws', trusted: false, notify: () => {} });

test('a closed connection’s sessions are freed and its cap starts over', () => {
  const r = new SessionRegistry(2);
  const a = r.open(fields('c1'));
  r.open(fields('c1'));
  assert.throws(() => r.open(fields('c1')), (e: { code?: number }) => e.code === -32003);
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
  assert.throws(() => r.subscribe('alice', 't3', conn('c1'), 's1'), (e: { code?: number }) => e.code === -32003);
  // Threads are per user: bob's t1 is another thread, which alice's subscription never reaches.
  assert.equal(bus.count('bob', 't1'), 0);
  assert.equal(bus.count('alice', 't1'), 1);
  r.dropConnection('c1');
  r.subscribe('alice', 't3', conn('c1'), 's1');
  r.subscribe('alice', 't4', conn('c1'), 's1');
});
