import { importJWK, jwtVerify, errors as joseErrors, type JWK } from 'jose';
import { z } from 'zod';

export const CREDENTIAL_ISSUER = 'toolgate';
export const CREDENTIAL_AUDIENCE = 'project_cli';
export const CREDENTIAL_ALGORITHMS = ['EdDSA', 'ES256'];
/** Contract section 7: a lifetime of 5–10 minutes. */
export const MIN_LIFETIME_S = 5 * 60;
export const MAX_LIFETIME_S = 10 * 60;
export const CLOCK_SKEW_S = 30;

const ActionName = z.string().regex(/^[a-z_]+\.[a-z_]+$/, 'exact module.method, no wildcards');

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
});
export type CredentialClaims = z.infer<typeof CredentialClaims>;

/**
 * Imported verify keys, by their JWK text. The in-process executor verifies
 * every call with the same daemon key: importing it once saves the work on
 * each call. Bounded, since a key only changes when the daemon's does.
 */
const importedKeys = new Map<string, Promise<Awaited<ReturnType<typeof importJWK>>>>();
const MAX_IMPORTED_KEYS = 8;

function importVerifyKey(jwk: JWK): Promise<Awaited<ReturnType<typeof importJWK>>> {
  const id = JSON.stringify(jwk);
  let key = importedKeys.get(id);
  if (!key) {
    if (importedKeys.size >= MAX_IMPORTED_KEYS) importedKeys.clear();
    key = importJWK(jwk, jwk.alg ?? (jwk.kty === 'OKP' ? 'EdDSA' : 'ES256'));
    // A key that fails to import is not remembered.
    key.catch(() => importedKeys.delete(id));
    importedKeys.set(id, key);
  }
  return key;
}

export class CredentialError extends Error {
  override name = 'CredentialError';
}

/**
 * Verifies a controlled credential with the daemon's public key. Every claim
 * is checked; the reason for a refusal never includes the token.
 */
export async function verifyCredential(token: string, verifyKey: JWK): Promise<CredentialClaims> {
  let payload: unknown;
  try {
    const key = await importVerifyKey(verifyKey);
    ({ payload } = await jwtVerify(token, key, {
      issuer: CREDENTIAL_ISSUER,
      audience: CREDENTIAL_AUDIENCE,
      algorithms: CREDENTIAL_ALGORITHMS,
      requiredClaims: ['sub', 'jti', 'iat', 'exp'],
    }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new CredentialError('credential expired');
    if (err instanceof joseErrors.JWTClaimValidationFailed) throw new CredentialError(`credential claim "${err.claim}" is not valid`);
    throw new CredentialError('credential signature or format is not valid');
  }
  return checkClaims(payload);
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
