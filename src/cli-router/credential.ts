import type { JWK } from 'jose';
import type { JsonWebKey } from 'node:crypto';
import { JwsError, verifyCompactJws } from './jws.js';
import { z } from 'zod';

export const CREDENTIAL_ISSUER = 'toolgate';
export const CREDENTIAL_AUDIENCE = 'project_cli';
const CREDENTIAL_ALGORITHMS = ['EdDSA', 'ES256'];
/** Contract section 7: a lifetime of 5–10 minutes. */
const MIN_LIFETIME_S = 5 * 60;
const MAX_LIFETIME_S = 10 * 60;
const CLOCK_SKEW_S = 30;

const ActionName = z.string().regex(/^[a-z_]+\.[a-z_]+$/, 'exact module.method, no wildcards');

/** The `kid` of a compact JWS's header, when it has one; a malformed header is refused later by the signature check. */
function headerKid(token: string): unknown {
  try {
    const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8')) as { kid?: unknown };
    return header && typeof header === 'object' ? header.kid : undefined;
  } catch {
    return undefined;
  }
}

/** The claims of a controlled credential. */
export const CredentialClaims = z.object({
  iss: z.literal(CREDENTIAL_ISSUER),
  aud: z.union([z.literal(CREDENTIAL_AUDIENCE), z.array(z.string()).refine((a) => a.includes(CREDENTIAL_AUDIENCE))]),
  sub: z.string().min(1),
  jti: z.string().min(1),
  iat: z.number().int(),
  exp: z.number().int(),
  actions: z.array(ActionName),
  job_id: z.string().min(1).optional(),
  /** Binds the credential to one tool call (the idempotency key). */
  call: z
    .object({ thread_id: z.string().min(1), tool_call_id: z.string().min(1), args_sha256: z.string().regex(/^[0-9a-f]{64}$/) })
    .optional(),
  /** The largest result projection the call may answer with (`limits.max_result_bytes`); absent → the default. */
  max_result_bytes: z.number().int().positive().optional(),
});
export type CredentialClaims = z.infer<typeof CredentialClaims>;

export class CredentialError extends Error {
  override name = 'CredentialError';
}

/**
 * Verifies a controlled credential with one of the trusted keys (the ones
 * the daemon recorded; a credential naming a `kid` is checked against that
 * key only). Every claim is checked; the reason for a refusal never
 * includes the token.
 */
export async function verifyCredential(
  token: string,
  trusted: JWK | ReadonlyArray<{ kid: string; jwk: JWK }>,
): Promise<CredentialClaims> {
  // Signature (node:crypto, see jws.ts) with a key the database trusts (its
  // `kid` picks it), then every registered claim the way a JWT verifier
  // checks them: issuer, audience, required ids and times, not expired, not
  // before `nbf`; then the schema of our own claims.
  const keys = Array.isArray(trusted) ? trusted : [{ kid: undefined, jwk: trusted as JWK }];
  const kid = headerKid(token);
  const candidates = typeof kid === 'string' ? keys.filter((k) => k.kid === undefined || k.kid === kid) : keys;
  if (candidates.length === 0) throw new CredentialError('credential signed by a key this database does not trust');
  let payload: Record<string, unknown> | undefined;
  for (const candidate of candidates) {
    try {
      ({ payload } = verifyCompactJws(token, candidate.jwk as JsonWebKey, CREDENTIAL_ALGORITHMS));
      break;
    } catch (err) {
      if (!(err instanceof JwsError)) throw err;
    }
  }
  if (payload === undefined) throw new CredentialError('credential signature or format is not valid');
  const nowS = Math.floor(Date.now() / 1000);
  for (const claim of ['sub', 'jti', 'iat', 'exp'] as const) {
    if (!(claim in payload)) throw new CredentialError(`credential claim "${claim}" is not valid`);
  }
  for (const claim of ['iat', 'exp', 'nbf'] as const) {
    if (claim in payload && typeof payload[claim] !== 'number') throw new CredentialError(`credential claim "${claim}" is not valid`);
  }
  if (payload.iss !== CREDENTIAL_ISSUER) throw new CredentialError('credential claim "iss" is not valid');
  const aud = payload.aud;
  if (!(aud === CREDENTIAL_AUDIENCE || (Array.isArray(aud) && aud.includes(CREDENTIAL_AUDIENCE)))) {
    throw new CredentialError('credential claim "aud" is not valid');
  }
  if ((payload.exp as number) <= nowS) throw new CredentialError('credential expired');
  if (typeof payload.nbf === 'number' && payload.nbf > nowS) throw new CredentialError('credential claim "nbf" is not valid');
  return checkClaims(payload, nowS);
}

/**
 * Every claim check of a controlled credential except its signature: issuer,
 * audience, subject, id, the exact actions, the 5–10 minute lifetime, not
 * issued in the future, not expired. `verifyCredential` runs it after the
 * signature; the in-process executor hands it the claims object it issued,
 * so both executors refuse exactly the same credentials.
 */
export function checkClaims(payload: unknown, nowS: number = Math.floor(Date.now() / 1000)): CredentialClaims {
  const parsed = CredentialClaims.safeParse(payload);
  if (!parsed.success) throw new CredentialError('credential claims are not valid');
  const lifetime = parsed.data.exp - parsed.data.iat;
  if (lifetime < MIN_LIFETIME_S || lifetime > MAX_LIFETIME_S) throw new CredentialError('credential lifetime is out of bounds');
  // A credential "issued" in the future would outlive its lifetime: refuse it (small clock skew allowed).
  if (parsed.data.iat > nowS + CLOCK_SKEW_S) throw new CredentialError('credential issued in the future');
  if (parsed.data.exp <= nowS) throw new CredentialError('credential expired');
  return parsed.data;
}
