/**
 * A session no connection holds (MCP over HTTP) ends once unused for its
 * `idleMs`: counted from its open and from the end of each hold, never
 * while a hold is on. The clock is node:test's mock, so nothing waits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionRegistry, type Session } from '../../../src/sessions/sessions.js';

const fields = { userId: 'ann', source: 'session' as const, jobId: null, enabledSkills: [], allowedActions: [] };

function openIdle(registry: SessionRegistry, idleMs: number | undefined): { session: Session; ended: () => boolean } {
  const session = registry.reserve('mcp_1', { name: 'MCP sessions', userId: 'ann', max: 8 }, idleMs === undefined ? {} : { idleMs }).open(fields);
  let ended = false;
  registry.onEnd(session.id, () => (ended = true));
  return { session, ended: () => ended };
}

test('an unused session ends at its idleMs, telling the idle listeners first', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const registry = new SessionRegistry();
  const heard: string[] = [];
  registry.onIdle((s) => heard.push(`${s.id} ${registry.get(s.id, 'mcp_1') ? 'open' : 'gone'}`));
  const { session, ended } = openIdle(registry, 1000);
  t.mock.timers.tick(999);
  assert.equal(ended(), false);
  t.mock.timers.tick(1);
  assert.equal(ended(), true, 'ended once idle for 1000 ms');
  assert.deepEqual(heard, [`${session.id} open`], 'the listener heard it before the end');
  assert.equal(registry.get(session.id, 'mcp_1'), undefined);
  assert.equal(registry.countInPool('MCP sessions', 'ann'), 0, 'its place in the pool is free');
});

test('a hold keeps the session however long it lasts; the idle time counts from its release', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const registry = new SessionRegistry();
  const { session, ended } = openIdle(registry, 1000);
  t.mock.timers.tick(600);
  const release = registry.hold(session.id);
  const second = registry.hold(session.id);
  t.mock.timers.tick(5000);
  assert.equal(ended(), false, 'never while held');
  release();
  t.mock.timers.tick(5000);
  assert.equal(ended(), false, 'another hold is still on');
  second();
  second(); // a second release of one hold counts once
  t.mock.timers.tick(999);
  assert.equal(ended(), false);
  t.mock.timers.tick(1);
  assert.equal(ended(), true);
});

test('a session without idleMs never ends idle, and a hold on it is harmless', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const registry = new SessionRegistry();
  const { session, ended } = openIdle(registry, undefined);
  registry.hold(session.id)();
  t.mock.timers.tick(24 * 3600_000);
  assert.equal(ended(), false);
  assert.ok(registry.get(session.id, 'mcp_1'));
});

test('a closed session stops its idle countdown', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const registry = new SessionRegistry();
  const heard: string[] = [];
  registry.onIdle((s) => heard.push(s.id));
  const { session } = openIdle(registry, 1000);
  registry.close(session.id);
  t.mock.timers.tick(2000);
  assert.deepEqual(heard, [], 'no idle end for a session already closed');
});

