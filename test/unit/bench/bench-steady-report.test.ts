/** The steady-state section of RESULTS.md and its target rows (bench/report.ts, bench/steady.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { render, targets, type Results } from '../../../bench/report.js';

const machine = { cpu: 'test cpu', cores: 2, memory: '1 GiB', node: 'v20', load: '0 / 0 / 0', date: '2026-12-04T00:00:00.000Z' };

function results(rows: Array<{ entry: 'b' | 'b′' | 'toolgate'; p50Ratio: number; rateRatio: number }>): Results {
  return {
    machine,
    commit: 'abc1234',
    seconds: 1,
    sideBySide: [],
    steady: { synchronous: 'FULL', warm: 3000, rounds: 7, seq: 300, conc: 600, rows: rows.map((r) => ({ ...r, p50: 0.5, rate: 3000 })) },
  } as unknown as Results;
}

test('steady-state rows judge the same three in-process targets, named as measured after the warm-up', () => {
  const r = results([
    { entry: 'b', p50Ratio: 1.6, rateRatio: 0.99 },
    { entry: 'b′', p50Ratio: 1.22, rateRatio: 1.64 },
    { entry: 'toolgate', p50Ratio: 1, rateRatio: 1 },
  ]);
  const rows = targets(r).filter((t) => t.what.includes('steady state'));
  assert.deepEqual(rows.map((t) => [t.what.split(',')[0], t.measured, t.limit, t.atLeast]), [
    ['in-process calls/s @8 ÷ b′', 1.64, 1.5, true],
    ['in-process calls/s @8 ÷ b', 0.99, 1.2, true],
    ['in-process sequential p50 ÷ b′', 1.22, 1, false],
  ]);
  assert.ok(rows.every((t) => t.what.includes('after 3,000 + 6,000 calls each')));
  const md = render(r);
  assert.match(md, /## Side by side at steady state/);
  assert.match(md, /\| in-process calls\/s @8 ÷ b′, at steady state \(after 3,000 \+ 6,000 calls each\) \| 1\.64× \| ≥ 1\.5× \| yes \|/);
  assert.match(md, /\| in-process calls\/s @8 ÷ b, at steady state .* \| 0\.99× \| ≥ 1\.2× \| \*\*no\*\*/);
  assert.match(md, /\| in-process sequential p50 ÷ b′, at steady state .* \| 1\.22× \| ≤ 1\.0× \| \*\*no\*\*/);
});

test('without a steady-state run there are no steady-state rows', () => {
  const r = { machine, commit: 'abc1234', seconds: 1, sideBySide: [] } as unknown as Results;
  assert.deepEqual(targets(r).filter((t) => t.what.includes('steady state')), []);
  assert.doesNotMatch(render(r), /steady state/);
});
