import { createLocalJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { readOrCreateSecretFile } from './data-dir.js';
import { BoundedFileError, readBoundedFile } from '../cli-router/bounded-file.js';

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

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const DEV_SECRET_FILE = 'dev-bearer-secret';

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
    try {
      jwks = createLocalJWKSet(JSON.parse(readKeyFile('TOOLGATE_BEARER_JWKS', path)));
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new ConfigError(`TOOLGATE_BEARER_JWKS: cannot load a JWKS from ${path}: ${(err as Error).message}`);
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

/** What `auth` in the config adds to the checks. */
export interface BearerPolicy {
  /** `auth.max_token_lifetime_s`: `exp - min(iat, now)` (`exp - now` without `iat`) may not exceed it. */
  maxLifetimeS?: number | undefined;
}

/**
 * A `sub` is a user id: non-empty printable text (no control, format or
 * private-use characters) without surrounding whitespace, at most 200 long —
 * so `alice`, ` alice` and `alice\u0000` cannot become three users.
 */
export function isUsableSub(sub: unknown): sub is string {
  return typeof sub === 'string' && sub.length > 0 && sub.length <= 200 && !/[\p{C}\p{Zl}\p{Zp}]/u.test(sub) && sub.trim() === sub;
}

/**
 * Users are namespaced by trust source (contract section 21): a token of the daemon's own keys (the HS256
 * secret or the JWKS file) names the user `sub` itself, exactly as before; an access token of `auth.issuer`
 * names the user `oauth:<sub>`. The prefix is reserved: a token of the daemon's own keys whose `sub` starts
 * with it is refused, so the two namespaces never meet.
 */
export const ISSUER_USER_PREFIX = 'oauth:';

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
      ({ payload } = await jwtVerify(token, keys.jwks, {
        ...options,
        algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      }));
    }
  } catch {
    throw new Unauthorized('invalid, expired or wrongly signed bearer token');
  }
  return identityOf(payload, policy);
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
    if (payload.exp! - from > policy.maxLifetimeS) throw new Unauthorized('bearer token lifetime exceeds auth.max_token_lifetime_s');
  }
  if (!isUsableSub(payload.sub)) throw new Unauthorized('bearer token has no usable sub claim');
  let userId = payload.sub;
  if (source === 'issuer') {
    userId = `${ISSUER_USER_PREFIX}${payload.sub}`;
    // A user id is at most 200 characters everywhere (calendar.share names users by it).
    if (!isUsableSub(userId)) throw new Unauthorized('bearer token has no usable sub claim');
  } else if (payload.sub.startsWith(ISSUER_USER_PREFIX)) {
    throw new Unauthorized(`bearer token refused: its sub starts with "${ISSUER_USER_PREFIX}", reserved for users of auth.issuer`);
  }
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : undefined);
  const identity: BearerIdentity = { userId, expiresAt: payload.exp! * 1000 };
  const name = str(payload.name), phone = str(payload.phone), role = str(payload.role);
  if (name) identity.name = name;
  if (phone) identity.phone = phone;
  if (role) identity.role = role;
  return identity;
}
