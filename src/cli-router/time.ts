/**
 * Calendar-day arithmetic for the calendar's handlers. The time schemas of
 * the actions' inputs are the protocol's (src/protocol/action-fields.ts).
 */
export { isTimeZone } from '../protocol/action-fields.js';

/**
 * The UTC instants bounding a calendar day in a time zone: [start, end) in
 * epoch milliseconds. Days are not always 24 hours (DST), so both bounds are
 * resolved separately.
 */
export function dayBounds(date: string, timeZone: string): { startMs: number; endMs: number } {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const next = new Date(utcMs(y, m - 1, d + 1));
  return {
    startMs: zonedMidnight(y, m, d, timeZone),
    endMs: zonedMidnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone),
  };
}

/**
 * Epoch ms of the first instant of y-m-d in the zone: local midnight, or —
 * where a DST jump skips midnight (America/Havana, America/Santiago) — the
 * instant of the jump. Candidates come from the offsets around the guess; the
 * earliest one that falls on the wanted local date wins.
 */
function zonedMidnight(y: number, m: number, d: number, timeZone: string): number {
  const wallClock = utcMs(y, m - 1, d);
  const first = wallClock - offsetMs(wallClock, timeZone);
  const second = wallClock - offsetMs(first, timeZone);
  const wanted = wallClock / 86_400_000;
  const onDay = [first, second].filter((t) => localDay(t, timeZone) === wanted);
  return onDay.length > 0 ? Math.min(...onDay) : second;
}

/** The local calendar day of an instant, as days since the epoch. */
function localDay(instant: number, timeZone: string): number {
  return Math.floor((instant + offsetMs(instant, timeZone)) / 86_400_000);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's UTC offset at an instant, in ms (local wall clock minus UTC). */
function offsetMs(instant: number, timeZone: string): number {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      // Year 0 and before are "1 BC", "2 BC"…: the era tells them apart.
      era: 'short',
    });
    formatters.set(timeZone, f);
  }
  const parts: Record<string, number> = {};
  let beforeCommonEra = false;
  for (const p of f.formatToParts(new Date(instant))) {
    if (p.type === 'era') beforeCommonEra = p.value === 'BC' || p.value === 'B';
    else if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const year = beforeCommonEra ? 1 - parts.year! : parts.year!;
  const asUtc = utcMs(year, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * `Date.UTC` for every year: `Date.UTC` maps years 0–99 to 1900–1999, so
 * the year is set with `setUTCFullYear`, which takes it as it is (month and
 * day may overflow, as with `Date.UTC`).
 */
function utcMs(year: number, monthIndex: number, day: number, h = 0, mi = 0, s = 0): number {
  const t = new Date(0);
  t.setUTCFullYear(year, monthIndex, day);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime();
}
