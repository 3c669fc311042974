/**
 * Contract section 21 at the dispatcher: a request whose params hold a
 * string no engine stores as it is (U+0000, an unpaired surrogate — in an
 * id, a message's content, a worker output, a key…) is refused with -32602
 * before any handler runs, on every engine alike: never stored rewritten,
 * never a database error. A tool call's `args` are left to `tool/invoke`'s
 * admission, which answers an `INVALID_ACTION_INPUT` tool failure naming the
 * field; the secrets that are only verified (the bearer token, the service
 * key) are refused by their own checks.
 */
import { findMalformedString, malformedMessage } from '../codec/well-formed.js';
import { invalidParams } from './errors.js';

const NOT_CHECKED: Readonly<Record<string, readonly string[]>> = {
  initialize: ['service_key'],
  'session/open': ['auth'],
  'tool/invoke': ['args'],
};

export function refuseMalformedStrings(method: string, params: unknown): void {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return;
  const skip = Object.hasOwn(NOT_CHECKED, method) ? NOT_CHECKED[method]! : [];
  for (const [key, value] of Object.entries(params)) {
    if (skip.includes(key)) continue;
    const found = findMalformedString(value, key);
    if (found) {
      throw invalidParams(`${method}: ${malformedMessage(found)}; nothing was stored`, {
        code: 'MALFORMED_STRING',
        issues: [{ path: found.path, message: found.reason }],
      });
    }
  }
}
