/** The A/B sections of the bench's tables (bench/ab.ts). */
import type { AbResult, Spread } from './ab.js';
import { fmtMs, fmtRate } from './stats.js';

const ratio = (s: Spread) => `${s.median.toFixed(3)}× (${s.min.toFixed(3)}–${s.max.toFixed(3)})`;
const us = (s: Spread) => {
  const f = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(0)}`;
  return `${f(s.median)} µs (${f(s.min)} to ${f(s.max)})`;
};

export function renderAb(L: string[], a: AbResult): void {
  L.push(`## ${a.title}`, '');
  L.push(`In-process \`calendar.create\` over stdio, \`synchronous=${a.synchronous}\`. ${a.rounds} interleaved rounds (rotating order); per round and ` +
    `entry ${a.seq} sequential calls, then ${a.conc} at concurrency ${a.concurrency}. Each row against the first: the median of the per-round ` +
    'ratios, and in brackets their spread (min–max over the rounds); the per-call difference is the median of per-round differences of the ' +
    `sequential p50, and of 1 ÷ calls/s at concurrency ${a.concurrency} (the daemon's time per call when it is saturated).`, '');
  L.push(`| entry | p50 | calls/s @${a.concurrency} | p50 ÷ first | calls/s ÷ first | Δ per call, sequential | Δ per call @${a.concurrency} |`);
  L.push('|---|---:|---:|---:|---:|---:|---:|');
  for (const [i, r] of a.rows.entries()) {
    const vs = i === 0 ? ['1×', '1×', '—', '—'] : [ratio(r.p50Ratio), ratio(r.rateRatio), us(r.seqDeltaUs), us(r.concDeltaUs)];
    L.push(`| ${r.name} | ${fmtMs(r.p50)} | ${fmtRate(r.rate)} | ${vs.join(' | ')} |`);
  }
  L.push('');
  if (a.hook) {
    const h = a.hook.ns;
    L.push(`The hook alone, in the bench process (\`observeToolCall\` with tracing off and no metrics around a call that does nothing, ` +
      `against the same call without it; ${a.hook.rounds} alternating rounds of ${a.hook.calls.toLocaleString('en')} calls): ` +
      `**${h.median.toFixed(0)} ns per call** (per-round spread ${h.min.toFixed(0)}–${h.max.toFixed(0)} ns).`, '');
  }
}
