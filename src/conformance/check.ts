/**
 * A check is one named behaviour of the public protocol. It passes by
 * returning and fails by throwing a `CheckFailure` whose message is the
 * readable reason; it may also declare itself not applicable (`Skip`).
 */
import { isDeepStrictEqual } from 'node:util';
import type { Outcome, WireError } from './client.js';

export class CheckFailure extends Error {}
export class Skip extends Error {}

export function fail(reason: string): never {
  throw new CheckFailure(reason);
}

export function expect(condition: unknown, reason: string): asserts condition {
  if (!condition) fail(reason);
}

export function expectSame(actual: unknown, expected: unknown, what: string): void {
  if (isDeepStrictEqual(actual, expected)) return;
  if (typeof actual === 'string' && typeof expected === 'string') fail(`${what}: ${stringDifference(actual, expected)}`);
  fail(`${what}: expected ${brief(expected)}, got ${brief(actual)}`);
}

/** Where two long texts part, with a little context, so a one-byte difference is visible. */
function stringDifference(actual: string, expected: string): string {
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i++;
  const from = Math.max(0, i - 30);
  const around = (t: string) => `${from > 0 ? '…' : ''}${JSON.stringify(t.slice(from, i + 30)).slice(1, -1)}${t.length > i + 30 ? '…' : ''}`;
  return `differs at character ${i} (${actual.length} characters, expected ${expected.length}): expected ${around(expected)}, got ${around(actual)}`;
}

/** A short, one-line rendering of a value for the report. */
export function brief(value: unknown, max = 160): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The result of a request that must succeed. */
export function ok<R>(outcome: Outcome<R>, what: string): R {
  if (!outcome.ok) fail(`${what} failed: ${describeError(outcome.error)}`);
  return outcome.result;
}

/** The error of a request that must fail with `code` (and, when given, `data.code`). */
export function rpcError(outcome: Outcome<unknown>, code: number, what: string, dataCode?: string): WireError {
  if (outcome.ok) fail(`${what}: expected JSON-RPC error ${code}${dataCode ? ` (${dataCode})` : ''}, got result ${brief(outcome.result)}`);
  const e = outcome.error;
  if (e.code !== code) fail(`${what}: expected JSON-RPC error ${code}, got ${describeError(e)}`);
  if (dataCode !== undefined) {
    const actual = (e.data as { code?: unknown } | undefined)?.code;
    if (actual !== dataCode) fail(`${what}: expected data.code ${dataCode}, got ${brief(e.data)}`);
  }
  return e;
}

export function describeError(e: WireError): string {
  return Number.isNaN(e.code) ? e.message : `${e.code} ${JSON.stringify(e.message)}${e.data === undefined ? '' : ` data ${brief(e.data, 120)}`}`;
}
