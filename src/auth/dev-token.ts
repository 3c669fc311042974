import { SignJWT } from 'jose';
import { isUsableSub, resolveBearerKeys } from './bearer-auth.js';
import { ConfigError } from '../config/config-error.js';
import { keysDir } from '../config/data-dir.js';

export interface DevTokenOptions {
  user: string;
  phone?: string | undefined;
  name?: string | undefined;
  role?: string | undefined;
  ttlSeconds: number;
  env: NodeJS.ProcessEnv;
}

/**
 * Signs a user bearer token with the configured HS256 secret, or with the
 * data folder's development secret (created when missing; the data folder
 * whatever database is used, so the token works with every `serve --dev`). It cannot sign
 * for a JWKS issuer: those tokens come from the issuer.
 */
export async function devToken(opts: DevTokenOptions): Promise<string> {
  // A `sub` every daemon would refuse (section 13) is the caller's mistake, told now, not at session/open.
  if (!isUsableSub(opts.user)) throw new ConfigError('--user: a user id is printable text without surrounding spaces, at most 200 characters');
  const keys = resolveBearerKeys(opts.env, keysDir(opts.env), true);
  if (!keys || keys.kind !== 'secret') throw new ConfigError('dev-token needs an HS256 secret (TOOLGATE_BEARER_SECRET or the dev secret); a JWKS issuer signs its own tokens');
  const claims: Record<string, string> = {};
  if (opts.phone) claims.phone = opts.phone;
  if (opts.name) claims.name = opts.name;
  if (opts.role) claims.role = opts.role;
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(opts.user).setIssuedAt().setExpirationTime(`${opts.ttlSeconds}s`);
  if (opts.env.TOOLGATE_BEARER_ISSUER) jwt = jwt.setIssuer(opts.env.TOOLGATE_BEARER_ISSUER);
  if (opts.env.TOOLGATE_BEARER_AUDIENCE) jwt = jwt.setAudience(opts.env.TOOLGATE_BEARER_AUDIENCE);
  return jwt.sign(keys.secret);
}
