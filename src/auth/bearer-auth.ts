import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWK, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { createPublicKey, randomBytes, type JsonWebKeyInput } from 'node:crypto';
import { join } from 'node:path';
import { readOrCreateSecretFile } from '../config/data-dir.js';
import { BoundedFileError, readBoundedFile } from '../cli-router/bounded-file.js';
import { ConfigError } from '../config/config-error.js';
import { findSecret } from '../codec/secret-scan.js';

/** Verified identity of a user bearer token. */
export interface BearerIdentity {
  userId: string;
  /** The token's `exp`, in milliseconds since the epoch: nothing opened with it outlives it. */
  expiresAt: number;
  name?: string;
  phone?: string;
  role?: string;
}

export type BearerKeySource =
  | { kind: 'secret'; secret: Uint8Array; origin: 'env' | 'dev' }
  | { kind: 'jwks'; jwks: JWTVerifyGetKey; path: string };

export { DEV_SECRET_FILE } from './local-secrets.js';
import { DEV_SECRET_FILE } from './local-secrets.js';

/** A key file an environment variable names: a regular file of at most 1 MiB, else a one-line ConfigError. */
export function readKeyFile(variable: string, path: string): string {
  try {
    return readBoundedFile(path);
  } catch (err) {
    if (err instanceof BoundedFileError) throw new ConfigError(`${variable}: ${path}: ${err.message}`);
    throw err;
  }
}

/**
 * Where user bearer tokens are verified from: TOOLGATE_BEARER_SECRET (HS256),
 * else TOOLGATE_BEARER_JWKS (a JWKS file), else — only when `allowDev` — a
 * local secret kept in the data folder. Returns null when nothing is set.
 */
export function resolveBearerKeys(env: NodeJS.ProcessEnv, dataDir: string, allowDev: boolean): BearerKeySource | null {
  if (env.TOOLGATE_BEARER_SECRET) {
    return { kind: 'secret', secret: new TextEncoder().encode(env.TOOLGATE_BEARER_SECRET), origin: 'env' };
  }
  if (env.TOOLGATE_BEARER_JWKS) {
    const path = env.TOOLGATE_BEARER_JWKS;
    let jwks: JWTVerifyGetKey;
    let set: unknown;
    try {
      set = JSON.parse(readKeyFile('TOOLGATE_BEARER_JWKS', path));
      jwks = createLocalJWKSet(set as JSONWebKeySet);
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new ConfigError(`TOOLGATE_BEARER_JWKS: cannot load a JWKS from ${path}: ${(err as Error).message}`);
    }
    // A set no key of which verifies would refuse every token later, each refusal blaming the token.
    if (!(set as JSONWebKeySet).keys.some(canVerify)) {
      throw new ConfigError(
        `TOOLGATE_BEARER_JWKS: ${path}: no key that can verify a token (a public RSA, EC P-256/384/521 or Ed25519 signing key; HS256 is refused with a JWKS)`,
      );
    }
    return { kind: 'jwks', jwks, path };
  }
  if (allowDev) {
    const devFile = join(dataDir, DEV_SECRET_FILE);
    const secret = readOrCreateSecretFile(devFile, () => randomBytes(32).toString('base64url'));
    return { kind: 'secret', secret: new TextEncoder().encode(secret.trim()), origin: 'dev' };
  }
  return null;
}

/**
 * Whether a JWK of the file could verify a token: an RSA, EC or EdDSA key not
 * kept for encryption (`use`, `key_ops`, `alg`) that Node can import and
 * jose would use (an RSA modulus of at least 2048 bits).
 */
function canVerify(jwk: JWK): boolean {
  if (jwk.use !== undefined && jwk.use !== 'sig') return false;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) return false;
  if (jwk.alg !== undefined && !ASYMMETRIC_ALGS.includes(jwk.alg)) return false;
  const curves: Record<string, readonly string[] | null> = { RSA: null, EC: ['P-256', 'P-384', 'P-521'], OKP: ['Ed25519'] };
  const allowed = typeof jwk.kty === 'string' && Object.hasOwn(curves, jwk.kty) ? curves[jwk.kty] : undefined;
  if (allowed === undefined || (allowed !== null && !allowed.includes(String(jwk.crv)))) return false;
  try {
    const key = createPublicKey({ key: jwk as JsonWebKeyInput['key'], format: 'jwk' });
    // jose verifies RS/PS signatures only with a modulus of 2048 bits or more.
    return jwk.kty !== 'RSA' || (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048;
  } catch {
    return false;
  }
}

/** What `auth` in the config adds to the checks. */
export interface BearerPolicy {
  /** `auth.max_token_lifetime_s`: `exp - min(iat, now)` (`exp - now` without `iat`) may not exceed it. */
  maxLifetimeS?: number | undefined;
}

/**
 * A `sub` is a user id: non-empty printable text (no control, format or
 * private-use characters) without surrounding whitespace, at most 200 long —
 * so `alice`, ` alice` and `alice\u0000` cannot become three users — and
 * carrying no token (secret-scan.ts): a user id is stored in every row of
 * the user's and sent on the wire (contract section 7).
 */
export function isUsableSub(sub: unknown): sub is string {
  return typeof sub === 'string' && sub.length > 0 && sub.length <= 200 && !/[\p{C}\p{Zl}\p{Zp}]/u.test(sub) && sub.trim() === sub && findSecret(sub) === null;
}

/**
 * Users are namespaced by trust source (contract section 21): a token of the daemon's own keys (the HS256
 * secret or the JWKS file) names the user `sub` itself, exactly as before; an access token of `auth.issuer`
 * names the user `oauth:<sub>`. The prefix is reserved: a token of the daemon's own keys whose `sub` starts
 * with it is refused, so the two namespaces never meet.
 */
const ISSUER_USER_PREFIX = 'oauth:';

/** Who vouched for a token: the daemon's own keys, or `auth.issuer`. */
export type TrustSource = 'own-keys' | 'issuer';

export class Unauthorized extends Error {
  override name = 'Unauthorized';
}

/**
 * Verifies a user bearer token. `iss`/`aud` are checked only when
 * TOOLGATE_BEARER_ISSUER / TOOLGATE_BEARER_AUDIENCE are set. With a JWKS,
 * only asymmetric algorithms are accepted (an HS256 token is refused).
 * The error never echoes the token.
 */
export async function verifyBearer(
  token: string,
  keys: BearerKeySource,
  env: NodeJS.ProcessEnv,
  policy: BearerPolicy = {},
): Promise<BearerIdentity> {
  const options = {
    ...(env.TOOLGATE_BEARER_ISSUER ? { issuer: env.TOOLGATE_BEARER_ISSUER } : {}),
    ...(env.TOOLGATE_BEARER_AUDIENCE ? { audience: env.TOOLGATE_BEARER_AUDIENCE } : {}),
    // Contract section 13: a token without `exp` would be accepted forever.
    requiredClaims: ['exp'],
  };
  let payload: JWTPayload;
  try {
    if (keys.kind === 'secret') {
      ({ payload } = await jwtVerify(token, keys.secret, { ...options, algorithms: ['HS256'] }));
    } else {
      ({ payload } = await jwtVerify(token, keys.jwks, { ...options, algorithms: ASYMMETRIC_ALGS }));
    }
  } catch (err) {
    throw new Unauthorized(`bearer token refused: ${whyRefused(err, keys, options)}`);
  }
  return identityOf(payload, policy);
}

const ASYMMETRIC_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** Seconds since the epoch as an ISO time, for a refusal (`expired at …`). */
const isoOf = (seconds: unknown) => (typeof seconds === 'number' && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') : 'an unreadable time');

/**
 * Which check a token failed, in words a person can act on (issue 42: a login refusal says why). Built from
 * jose's error code and the configuration only — never from the token's text, so nothing of it is echoed
 * (the one value taken from it, `exp`, is a time).
 */
function whyRefused(err: unknown, keys: BearerKeySource, options: { issuer?: string; audience?: string }): string {
  const e = err as { code?: unknown; claim?: unknown; reason?: unknown; payload?: JWTPayload };
  const by = keys.kind === 'jwks' ? 'the keys of TOOLGATE_BEARER_JWKS' : keys.origin === 'dev' ? 'the dev secret' : 'the configured secret (TOOLGATE_BEARER_SECRET)';
  switch (e.code) {
    case 'ERR_JWT_EXPIRED':
      return `expired at ${isoOf(e.payload?.exp)}`;
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return `its signature does not verify with ${by}`;
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return 'not a JWT (expected three base64url parts, header.payload.signature, with a JSON header and claims)';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return keys.kind === 'jwks' ? 'signed with a symmetric or unknown algorithm: TOOLGATE_BEARER_JWKS verifies RS, PS, ES and EdDSA signatures only' : `signed with another algorithm than HS256, the one ${by} verifies`;
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'no single key of TOOLGATE_BEARER_JWKS matches its kid and algorithm';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      if (e.claim === 'exp' && e.reason === 'missing') return 'it has no "exp" claim (a bearer token must expire)';
      if (e.claim === 'iss') return `issuer mismatch: its "iss" is not ${options.issuer ?? 'TOOLGATE_BEARER_ISSUER'} (TOOLGATE_BEARER_ISSUER)`;
      if (e.claim === 'aud') return `audience mismatch: its "aud" does not name ${options.audience ?? 'TOOLGATE_BEARER_AUDIENCE'} (TOOLGATE_BEARER_AUDIENCE)`;
      if (e.claim === 'nbf') return `not valid before ${isoOf(e.payload?.nbf)}`;
      return typeof e.claim === 'string' && /^[a-z_]{1,20}$/.test(e.claim) ? `its "${e.claim}" claim is ${e.reason === 'missing' ? 'missing' : 'invalid'}` : 'a claim is invalid';
    }
    default:
      return `it does not verify with ${by}`;
  }
}

/**
 * The identity of a verified token's claims (`exp` already required):
 * refused when it lives longer than the policy allows or has no usable `sub`.
 * Shared by every way a token is verified (secret, JWKS file, issuer).
 */
export function identityOf(payload: JWTPayload, policy: BearerPolicy = {}, source: TrustSource = 'own-keys'): BearerIdentity {
  if (policy.maxLifetimeS !== undefined) {
    // From min(iat, now): an `iat` in the future must not stretch how long the token is accepted.
    const now = Math.floor(Date.now() / 1000);
    const from = typeof payload.iat === 'number' ? Math.min(payload.iat, now) : now;
    const lifetime = payload.exp! - from;
    if (lifetime > policy.maxLifetimeS) {
      throw new Unauthorized(`bearer token refused: it lives ${lifetime} s from min(iat, now), longer than auth.max_token_lifetime_s (${policy.maxLifetimeS} s)`);
    }
  }
  if (!isUsableSub(payload.sub)) throw new Unauthorized('bearer token refused: it has no usable "sub" claim (1-200 printable characters, no surrounding space, no token in it)');
  let userId = payload.sub;
  if (source === 'issuer') {
    userId = `${ISSUER_USER_PREFIX}${payload.sub}`;
    // A user id is at most 200 characters everywhere (calendar.share names users by it).
    if (!isUsableSub(userId)) throw new Unauthorized(`bearer token refused: its "sub" is longer than ${200 - ISSUER_USER_PREFIX.length} characters`);
  } else if (payload.sub.startsWith(ISSUER_USER_PREFIX)) {
    throw new Unauthorized(`bearer token refused: its sub starts with "${ISSUER_USER_PREFIX}", reserved for users of auth.issuer`);
  }
  // Profile claims are stored (users) and shown to others (contacts.read): one carrying a token is not kept.
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 200 && findSecret(v) === null ? v : undefined);
  const identity: BearerIdentity = { userId, expiresAt: payload.exp! * 1000 };
  const name = str(payload.name), phone = str(payload.phone), role = str(payload.role);
  if (name) identity.name = name;
  if (phone) identity.phone = phone;
  if (role) identity.role = role;
  return identity;
}
