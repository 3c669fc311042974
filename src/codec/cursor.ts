/**
 * Opaque page cursors (`next_cursor` / `cursor`): a position in a read's
 * order, written by the read itself as base64url of a small JSON array.
 * Pure; each reader checks the position's shape against its own order.
 */
import { findMalformedString } from './well-formed.js';

function encodeCursor(position: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

/**
 * The position a cursor holds when it has the reader's shape (`check`),
 * else undefined: not base64url, not JSON, or holding a string no engine
 * stores (a forged cursor never reaches a query as a NUL).
 */
export function decodeCursor<T>(cursor: string, check: (position: unknown) => position is T): T | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return findMalformedString(position) === null && check(position) ? position : undefined;
}

/**
 * Whether `value` is a time as the stores write it (`Date#toISOString()` in
 * UTC with milliseconds; PostgreSQL's `to_char` writes the same): a cursor
 * holding any other text was not returned by a read.
 */
export function isStoredTime(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value)) return false;
  const ms = Date.parse(value);
  // A month 13 parses as NaN (toISOString would throw); a 30 February as another day.
  return Number.isFinite(ms) && new Date(ms).toISOString() === value;
}

/**
 * The page of `rows` (read `limit + 1` of them) and its `next_cursor`:
 * null when no row lies past the page.
 */
export function pageOf<R>(rows: R[], limit: number, positionOf: (last: R) => readonly (string | number)[]): { items: R[]; next_cursor: string | null } {
  if (rows.length <= limit) return { items: rows, next_cursor: null };
  const items = rows.slice(0, limit);
  return { items, next_cursor: encodeCursor(positionOf(items[items.length - 1]!)) };
}
