import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backpressure } from '../../../src/rpc/backpressure.js';

test('pauses past the high-water mark, resumes below half of it, once each', () => {
  const flow = new Backpressure(1000, 10_000);
  assert.deepEqual([0, 900, 1001, 5000, 800, 499, 300, 1200].map((b) => flow.update(b)), [
    'none', 'none', 'pause', 'none', 'none', 'resume', 'none', 'pause',
  ]);
  assert.equal(flow.isPaused, true);
});

test('drops a peer past the hard limit, paused or not', () => {
  assert.equal(new Backpressure(1000, 10_000).update(10_001), 'drop');
  const flow = new Backpressure(1000, 10_000);
  flow.update(2000);
  assert.equal(flow.update(20_000), 'drop');
});
