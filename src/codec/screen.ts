/**
 * One walk of a request's params that says whether any of the boundary's
 * refusals could apply: a token or configured secret (secret-scan.ts), a
 * string no engine stores as it is (well-formed.ts), or a key that names a
 * credential field (redact.ts) — in any string or key, at any depth.
 *
 * It decides nothing itself. A clean request (the usual one) needs no other
 * walk; one it flags goes through the exact checks, which find the same
 * thing and answer with their own path, code and text — so screening never
 * changes what a refusal says, only that a clean request is walked once
 * instead of once per check and per top-level key. Builds no paths and
 * allocates one array.
 */
import { findSecret } from './secret-scan.js';
import { malformedReason } from './well-formed.js';
import { isCredentialField } from './redact.js';

/**
 * True when no string or key of `value` holds a token, a configured secret
 * or a malformed string, and no key is a credential field's name; the keys
 * of the top-level object listed in `skip` (the secrets a request is meant
 * to carry, verified elsewhere) are left out.
 */
export function screenClean(value: unknown, secrets: readonly string[], skip: readonly string[] = []): boolean {
  const stack: unknown[] = [];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const k of Object.keys(value)) {
      if (skip.includes(k)) continue;
      if (!cleanKey(k, secrets)) return false;
      stack.push((value as Record<string, unknown>)[k]);
    }
  } else stack.push(value);
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (malformedReason(v) !== null || findSecret(v, secrets) !== null) return false;
    } else if (v !== null && typeof v === 'object') {
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) stack.push(v[i]);
      } else {
        for (const k of Object.keys(v)) {
          if (!cleanKey(k, secrets)) return false;
          stack.push((v as Record<string, unknown>)[k]);
        }
      }
    }
  }
  return true;
}

function cleanKey(k: string, secrets: readonly string[]): boolean {
  return !isCredentialField(k) && malformedReason(k) === null && findSecret(k, secrets) === null;
}
