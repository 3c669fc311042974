/**
 * The signing keys of an OAuth / OpenID authorization server (`auth.issuer`),
 * fetched over HTTP and cached: `auth.jwks_url`, or the `jwks_uri` its metadata
 * names — RFC 8414 `/.well-known/oauth-authorization-server` first, then
 * OpenID Connect Discovery `/.well-known/openid-configuration`, in the order
 * the MCP authorization spec tries them. Keys come from `jose`'s remote JWKS:
 * cached for CACHE_MAX_AGE_MS, fetched again on an unknown `kid` at most once
 * per COOLDOWN_MS (so a rotated key is accepted within seconds, and tokens with
 * made-up `kid`s cannot make the daemon hammer the issuer).
 *
 * A fetch that fails (the issuer down, slow, or answering garbage) never
 * throws anything but IssuerUnavailable, is bounded by FETCH_TIMEOUT_MS, and
 * for FAILURE_BACKOFF_MS afterwards requests fail at once instead of each
 * waiting on the issuer again. Nothing of a token is logged.
 */
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { isLoopbackHostname } from '../protocol/config.js';
import type { Logger } from './logger.js';

/** A refetch on an unknown `kid` waits at least this long after the last fetch (contract section 11: at most 5 s). */
export const COOLDOWN_MS = 5_000;
/** Keys are fetched again after this long even when every `kid` is known (a revoked key stops working). */
export const CACHE_MAX_AGE_MS = 10 * 60_000;
/** One metadata or JWKS request may take this long. */
export const FETCH_TIMEOUT_MS = 5_000;
/** After a failed fetch, requests fail at once for this long rather than queue on a dead issuer. */
export const FAILURE_BACKOFF_MS = 1_000;

/** The issuer's keys could not be had: the token may be fine, the daemon cannot tell. */
export class IssuerUnavailable extends Error {
  override name = 'IssuerUnavailable';
}

/** Where the metadata of `issuer` may be, in the order they are tried (RFC 8414 section 3.1, OIDC Discovery 4). */
export function metadataUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const path = u.pathname.replace(/\/+$/, '');
  const origin = u.origin;
  if (path === '') return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

/** https, or plain http on a loopback host only: keys fetched in the clear could be swapped on the way. */
export function isSafeKeyUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHostname(u.hostname));
  } catch {
    return false;
  }
}

async function fetchJson(url: string): Promise<unknown> {
  const res = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new Error(`HTTP ${res.status}`);
  }
  return res.json();
}

/** The issuer's `jwks_uri` from its metadata; the metadata must name the same issuer (RFC 8414 section 3.3). */
export async function discoverJwksUrl(issuer: string): Promise<string> {
  const tried: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let doc: unknown;
    try {
      doc = await fetchJson(url);
    } catch (err) {
      tried.push(`${url}: ${(err as Error).message}`);
      continue;
    }
    const meta = (doc ?? {}) as { issuer?: unknown; jwks_uri?: unknown };
    if (meta.issuer !== issuer) throw new IssuerUnavailable(`the metadata at ${url} names another issuer than auth.issuer`);
    if (typeof meta.jwks_uri !== 'string' || !isSafeKeyUrl(meta.jwks_uri)) {
      throw new IssuerUnavailable(`the metadata at ${url} has no usable jwks_uri (https, or http on loopback)`);
    }
    return meta.jwks_uri;
  }
  throw new IssuerUnavailable(`no authorization server metadata for auth.issuer (${tried.join('; ')})`);
}

/**
 * A jose key resolver for the issuer's tokens. The JWKS URL is discovered
 * on first use (and again after a failure), so a daemon starts while its
 * issuer is down and recovers when it comes back.
 */
export function issuerKeys(issuer: string, jwksUrl: string | undefined, log: Logger): JWTVerifyGetKey {
  let keys: JWTVerifyGetKey | undefined;
  let resolving: Promise<JWTVerifyGetKey> | undefined;
  let failedAt = -Infinity;
  let lastFailure = '';

  const resolve = (): Promise<JWTVerifyGetKey> =>
    (resolving ??= (async () => {
      const url = jwksUrl ?? (await discoverJwksUrl(issuer));
      keys = createRemoteJWKSet(new URL(url), { cooldownDuration: COOLDOWN_MS, cacheMaxAge: CACHE_MAX_AGE_MS, timeoutDuration: FETCH_TIMEOUT_MS });
      return keys;
    })().finally(() => {
      resolving = undefined;
    }));

  const fail = (err: unknown): never => {
    failedAt = Date.now();
    const why = err instanceof Error ? err.message : String(err);
    if (why !== lastFailure) log.log('warn', "the issuer's signing keys could not be fetched: its tokens are refused until they can", { issuer, err: why });
    lastFailure = why;
    throw new IssuerUnavailable("the authorization server's signing keys are unavailable; try again shortly");
  };

  return async (header, token) => {
    if (Date.now() - failedAt < FAILURE_BACKOFF_MS) throw new IssuerUnavailable("the authorization server's signing keys are unavailable; try again shortly");
    let getKey: JWTVerifyGetKey;
    try {
      getKey = keys ?? (await resolve());
    } catch (err) {
      return fail(err);
    }
    try {
      const key = await getKey(header, token);
      lastFailure = '';
      return key;
    } catch (err) {
      // No key for this kid / alg is the token's problem; anything else is the fetch's.
      const code = (err as { code?: string }).code;
      if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' || code === 'ERR_JOSE_NOT_SUPPORTED') throw err;
      return fail(err);
    }
  };
}
