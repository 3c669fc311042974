import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionRegistry } from '../../src/daemon/sessions.js';
import { SubscriptionRegistry } from '../../src/daemon/subscriptions.js';
import { ThreadEventBus } from '../../src/daemon/thread-events.js';
import type { Peer } from '../../src/daemon/peer.js';
import { DaemonError } from '../../src/daemon/errors.js';

const fields = (connectionId: string) => ({ userId: 'u', connectionId, source: 'session' as const, jobId: null, enabledSkills: [], allowedActions: [] });
const conn = (id: string): Peer => ({ id, trusted: false, notify: () => {} });
/** The daemon says OVERLOADED; the rpc layer's table makes it -32003 (test/unit/rpc-errors.test.ts). */
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
