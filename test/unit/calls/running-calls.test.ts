/**
 * The running calls' time limit, on a mocked clock: a call registered
 * without one (an approval in flight registers its run before the approval
 * commits) is never timed out until `arm` sets it, and then exactly at it;
 * `arm` again sets it anew from then; `finish` ends it, timer and all.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { RunningCalls } from '../../../src/calls/running-calls.js';
import { CallStopped } from '../../../src/calls/call-stopped.js';

const call = { userId: 'u', threadId: 't', toolCallId: 'c', action: 'memory.forget', argsSha256: 'a'.repeat(64) };
const stopCode = (signal: AbortSignal) => (signal.reason instanceof CallStopped ? signal.reason.code : undefined);

/** The test's own mocked setTimeout (reset when it ends): the unit suites share one process, so never the global one. */
function clock(t: TestContext) {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  return t.mock.timers;
}

test('a call started without a time limit runs on until arm sets one, then stops TIMEOUT exactly at it', (t) => {
  const timers = clock(t);
  const calls = new RunningCalls();
  const { running, arm, finish } = calls.start(call, undefined);
  timers.tick(24 * 3600 * 1000);
  assert.equal(running.signal.aborted, false, 'timed out before any limit was set');
  arm(300);
  timers.tick(299);
  assert.equal(running.signal.aborted, false);
  timers.tick(1);
  assert.equal(stopCode(running.signal), 'TIMEOUT');
  finish();
  assert.equal(calls.size, 0);
});

test('arm sets the limit anew from now, and finish clears it', (t) => {
  const timers = clock(t);
  const calls = new RunningCalls();
  const first = calls.start(call, 100);
  timers.tick(90);
  first.arm(100);
  timers.tick(90);
  assert.equal(first.running.signal.aborted, false, 'the first limit still ran');
  timers.tick(10);
  assert.equal(stopCode(first.running.signal), 'TIMEOUT');
  first.finish();

  const second = calls.start(call, 100);
  second.finish();
  timers.tick(1000);
  assert.equal(second.running.signal.aborted, false, 'a finished call was timed out');
});
