/**
 * Contract section 5 at the dispatcher: a request whose host- or
 * model-supplied text (message content, worker output, ids, names…) carries
 * a token or a configured secret is refused with -32602 before any handler
 * runs — refused, never redacted and stored. The fields that are *meant* to
 * carry a secret (the bearer token of `session/open`, the service key of
 * `initialize`) are verified, never stored, and are not scanned; a tool
 * call's `args` are left to `tool/invoke`, which answers an `UNAUTHENTICATED`
 * tool failure instead.
 */
import { findSecretIn } from '../codec/secret-scan.js';
import { invalidParams } from './errors.js';

const NOT_SCANNED: Readonly<Record<string, readonly string[]>> = {
  initialize: ['service_key'],
  'session/open': ['auth'],
  'tool/invoke': ['args'],
};

export function refuseSecretsInParams(method: string, params: unknown, secrets: readonly string[] = []): void {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return;
  const skip = Object.hasOwn(NOT_SCANNED, method) ? NOT_SCANNED[method]! : [];
  for (const [key, value] of Object.entries(params)) {
    if (skip.includes(key)) continue;
    const path = findSecretIn(value, secrets, key);
    if (path !== null) {
      throw invalidParams(`${method}: ${path} carries a bearer token or credential; such text is refused and nothing was stored`, {
        code: 'CREDENTIAL_REFUSED',
        path,
      });
    }
  }
}
