/**
 * `new Date(ms).toISOString()`, the same text, made without V8's formatter
 * on every call: a call formats some five times (its rows' times, its
 * credential's issue and expiry, its log line), and each `toISOString` runs
 * V8's snprintf-based date formatting — counted at ~7,600 instructions each,
 * against a few hundred here. The date part (`YYYY-MM-DDT`, or an extended
 * year) still comes from `toISOString`, once per day; the time of day is
 * plain arithmetic.
 */

const DAY_MS = 86_400_000;
/** The largest time a Date holds (ECMA-262 TimeClip); past it `toISOString` throws. */
const MAX_TIME_MS = 8.64e15;

let prefixDay = NaN;
let prefix = '';

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** Exactly `new Date(ms).toISOString()` (which throws a RangeError for a time no Date holds). */
export function isoOfMs(ms: number): string {
  if (!(Math.abs(ms) <= MAX_TIME_MS)) return new Date(ms).toISOString();
  // As a Date keeps it: whole milliseconds, toward zero (`+ 0` turns -0 into 0).
  const t = Math.trunc(ms) + 0;
  const day = Math.floor(t / DAY_MS);
  if (day !== prefixDay) {
    const text = new Date(day * DAY_MS).toISOString();
    prefix = text.slice(0, text.indexOf('T') + 1);
    prefixDay = day;
  }
  let rest = t - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  return `${prefix}${two(h)}:${two(m)}:${two(s)}.${three(rest - s * 1000)}Z`;
}
