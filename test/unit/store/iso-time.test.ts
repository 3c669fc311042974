import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isoOfMs } from '../../../src/store/iso-time.js';

/** What `isoOfMs` must equal: the Date's own text, or the error it throws. */
function expected(ms: number): string {
  try {
    return new Date(ms).toISOString();
  } catch (err) {
    return `throws ${(err as Error).name}`;
  }
}

function actual(ms: number): string {
  try {
    return isoOfMs(ms);
  } catch (err) {
    return `throws ${(err as Error).name}`;
  }
}

test('isoOfMs is toISOString at the edges: day bounds, negative and fractional times, extended years, invalid times', () => {
  const day = 86_400_000;
  const edges = [
    0, -0, 1, -1, 0.5, -0.5, 1.9, -1.9, day - 1, day, -day, -day - 1, 999, 1000, 59_999, 3_599_999,
    Date.UTC(2026, 11, 7, 23, 59, 59, 999), Date.UTC(2024, 1, 29, 12), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1),
    Date.UTC(0, 0, 1) - 1, -62_198_755_200_000, 8.64e15, -8.64e15, 8.64e15 + 1, -8.64e15 - 1, NaN, Infinity, -Infinity,
  ];
  for (const ms of edges) assert.equal(actual(ms), expected(ms), `at ${ms}`);
});

test('isoOfMs is toISOString over a spread of times, the same day again and again or a new day each time', () => {
  // A fixed linear congruential sequence: the same times on every run.
  let seed = 7;
  const next = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
  const now = Date.UTC(2026, 11, 7, 9);
  for (let i = 0; i < 20_000; i++) {
    const r = next();
    const ms = i % 2 === 0 ? now + Math.floor(r * 3_600_000) : (r - 0.5) * 2 * 8.64e15;
    assert.equal(actual(ms), expected(ms), `at ${ms}`);
  }
});
