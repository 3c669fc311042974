/** Small statistics for the bench: order statistics and medians of per-round ratios. */

export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const s = [...samples].sort((a, b) => a - b);
  // Nearest rank: the value below which a fraction q of the samples fall.
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export const median = (samples: readonly number[]): number => quantile(samples, 0.5);
export const p99 = (samples: readonly number[]): number => quantile(samples, 0.99);

/**
 * The median over rounds of `num[r] / den[r]`: each round's entries ran
 * back to back, so machine noise (8 workers share 2 cores here) hits both
 * sides of a ratio alike, and the median drops the rounds it did not.
 */
export function medianRatio(num: readonly number[], den: readonly number[]): number {
  const ratios: number[] = [];
  for (let r = 0; r < Math.min(num.length, den.length); r++) {
    if (den[r]! > 0 && Number.isFinite(num[r]!)) ratios.push(num[r]! / den[r]!);
  }
  return median(ratios);
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 0) return `−${fmtMs(-ms)}`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  return `${(ms * 1000).toFixed(0)} µs`;
}

export const fmtRatio = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');
export const fmtRate = (x: number): string => (Number.isFinite(x) ? x.toFixed(0) : 'n/a');
export const fmtMb = (bytes: number): string => (Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : 'n/a');
