import { createLocalJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readOrCreateSecretFile } from './data-dir.js';

/** Verified identity of a user bearer token. */
export interface BearerIdentity {
  userId: string;
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
      jwks = createLocalJWKSet(JSON.parse(readFileSync(path, 'utf8')));
    } catch (err) {
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

export class Unauthorized extends Error {
  override name = 'Unauthorized';
}

/**
 * Verifies a user bearer token. `iss`/`aud` are checked only when
 * TOOLGATE_BEARER_ISSUER / TOOLGATE_BEARER_AUDIENCE are set. With a JWKS,
 * only asymmetric algorithms are accepted (an HS256 token is refused).
 * The error never echoes the token.
 */
export async function verifyBearer(token: string, keys: BearerKeySource, env: NodeJS.ProcessEnv): Promise<BearerIdentity> {
  const options = {
    ...(env.TOOLGATE_BEARER_ISSUER ? { issuer: env.TOOLGATE_BEARER_ISSUER } : {}),
    ...(env.TOOLGATE_BEARER_AUDIENCE ? { audience: env.TOOLGATE_BEARER_AUDIENCE } : {}),
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
  if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 200) {
    throw new Unauthorized('bearer token has no usable sub claim');
  }
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : undefined);
  const identity: BearerIdentity = { userId: payload.sub };
  const name = str(payload.name), phone = str(payload.phone), role = str(payload.role);
  if (name) identity.name = name;
  if (phone) identity.phone = phone;
  if (role) identity.role = role;
  return identity;
}
